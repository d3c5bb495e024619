// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
// OSSL_PARAM arrays for the fuzz harness: a parameter is described once
// (ParamSpec, drawn from the input by DrawParam) and instantiated per
// provider (ParamArray), since a get writes into its array.
#ifndef AESMUX_TESTS_FUZZ_PARAMS_H_
#define AESMUX_TESTS_FUZZ_PARAMS_H_

#include <openssl/core.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "tests/fuzz/fuzz_input.h"

namespace aesmux::fuzz {

struct ParamSpec {
  std::string key;
  unsigned int type = 0;          // OSSL_PARAM_*
  size_t data_size = 0;           // as the OSSL_PARAM reports it
  bool null_data = false;
  std::vector<uint8_t> contents;  // what lies behind data (or behind the
                                  // pointer, for the *_PTR types)
};

class ParamArray {
 public:
  explicit ParamArray(const std::vector<ParamSpec> &specs);
  ParamArray(const ParamArray &) = delete;
  ParamArray &operator=(const ParamArray &) = delete;

  OSSL_PARAM *get() { return params_.data(); }
  const OSSL_PARAM &at(size_t i) const { return params_[i]; }
  size_t size() const { return params_.size() - 1; }
  const std::vector<uint8_t> &storage(size_t i) const { return storage_[i]; }
  // *_PTR types: the pointer the array holds (a get may have replaced it).
  void *pointer(size_t i) const { return pointers_[i]; }

 private:
  std::vector<std::vector<uint8_t>> storage_;
  std::vector<void *> pointers_;
  std::vector<OSSL_PARAM> params_;
};

const OSSL_PARAM *Find(const OSSL_PARAM *params, const char *key);
// As a provider reads them; false if absent or unreadable.
bool ReadUint(const OSSL_PARAM *p, unsigned int *value);
bool ReadSize(const OSSL_PARAM *p, size_t *value);

// One parameter: any key a cipher context answers or accepts, or one the
// AES ciphers ignore, or nonsense. `natural_only` keeps the key's real type
// and size; otherwise any type and size, sometimes null data. Arrays to
// set never carry null data with a size (the default provider copies from
// such data unchecked), nor empty or null numbers (libcrypto's own
// OSSL_PARAM functions do not check those).
ParamSpec DrawParam(FuzzInput &in, bool for_set, bool natural_only);

std::string DescribeParams(const std::vector<ParamSpec> &specs);

}  // namespace aesmux::fuzz

#endif  // AESMUX_TESTS_FUZZ_PARAMS_H_
