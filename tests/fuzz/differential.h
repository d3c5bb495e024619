// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
// The differential harness behind the fuzz targets: it decodes an input into
// a sequence of EVP operations on up to four cipher contexts and runs every
// operation twice, on aesmux and on OpenSSL's default provider, both loaded
// into one private library context (tests/support/provider_env.h). Return
// values, outputs, output lengths, IVs, num, tags, TLS MACs and the error
// reasons on the queue must agree; the harness aborts with a description
// (and libFuzzer keeps the input) when they do not.
//
// It uses only public EVP calls, so it runs against any build of aesmux.so:
// AESMUX_TEST_MODULE=/path/to/aesmux.so overrides the module built with it.
// AESMUX_FUZZ_TRACE=1 prints every operation as it runs (to replay an input)
// and, after each input, aesmux's statistics (which paths served it).
//
// The input's first byte chooses the router configuration (RouterConfigs()):
// the default settings, each kernel tier, kernels = none, small per-family
// fallback_max_len thresholds (lengths are drawn at and around them) and
// multi-buffer batching off. A tier this CPU lacks makes the input a no-op.
#ifndef AESMUX_TESTS_FUZZ_DIFFERENTIAL_H_
#define AESMUX_TESTS_FUZZ_DIFFERENTIAL_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace aesmux::fuzz {

struct RouterConfig {
  std::string name;
  std::vector<std::string> settings;  // lines of aesmux's openssl.cnf section
};
const std::vector<RouterConfig> &RouterConfigs();

// Stateful sequences: init in every style, updates, EVP_Cipher, final,
// parameters, dupctx, reset and free, on the 14 ciphers.
void RunSequence(const uint8_t *data, size_t size);

// Parameter arrays of any keys, types, sizes and null data, set and got on
// contexts of every cipher in different states, between data operations.
void RunParams(const uint8_t *data, size_t size);

}  // namespace aesmux::fuzz

#endif  // AESMUX_TESTS_FUZZ_DIFFERENTIAL_H_
