// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
#include "tests/fuzz/params.h"

#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/params.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string_view>

#include "tests/fuzz/report.h"

namespace aesmux::fuzz {

ParamArray::ParamArray(const std::vector<ParamSpec> &specs) {
  storage_.reserve(specs.size());
  pointers_.resize(specs.size(), nullptr);
  for (size_t i = 0; i < specs.size(); ++i) {
    const ParamSpec &spec = specs[i];
    storage_.push_back(spec.contents);
    OSSL_PARAM p{};
    p.key = spec.key.c_str();
    p.data_type = spec.type;
    p.data_size = spec.data_size;
    p.return_size = OSSL_PARAM_UNMODIFIED;
    const bool pointer = spec.type == OSSL_PARAM_OCTET_PTR ||
                         spec.type == OSSL_PARAM_UTF8_PTR;
    if (pointer) {
      pointers_[i] = storage_[i].empty() ? nullptr : storage_[i].data();
      p.data = spec.null_data ? nullptr : &pointers_[i];
    } else {
      p.data = spec.null_data || storage_[i].empty() ? nullptr
                                                     : storage_[i].data();
    }
    params_.push_back(p);
  }
  params_.push_back(OSSL_PARAM_construct_end());
}

const OSSL_PARAM *Find(const OSSL_PARAM *params, const char *key) {
  return OSSL_PARAM_locate_const(params, key);
}

bool ReadUint(const OSSL_PARAM *p, unsigned int *value) {
  return p != nullptr && OSSL_PARAM_get_uint(p, value);
}
bool ReadSize(const OSSL_PARAM *p, size_t *value) {
  return p != nullptr && OSSL_PARAM_get_size_t(p, value);
}

namespace {

// The parameter keys the fuzzer draws from: every key a cipher context
// answers or accepts, some the AES ciphers ignore, and nonsense.
constexpr const char *kParamKeys[] = {
    OSSL_CIPHER_PARAM_PADDING,
    OSSL_CIPHER_PARAM_NUM,
    OSSL_CIPHER_PARAM_IVLEN,
    OSSL_CIPHER_PARAM_KEYLEN,
    OSSL_CIPHER_PARAM_AEAD_TAG,
    OSSL_CIPHER_PARAM_AEAD_TAGLEN,
    OSSL_CIPHER_PARAM_AEAD_TLS1_AAD,
    OSSL_CIPHER_PARAM_AEAD_TLS1_IV_FIXED,
    OSSL_CIPHER_PARAM_AEAD_TLS1_GET_IV_GEN,
    OSSL_CIPHER_PARAM_AEAD_TLS1_SET_IV_INV,
    OSSL_CIPHER_PARAM_TLS_VERSION,
    OSSL_CIPHER_PARAM_TLS_MAC_SIZE,
    OSSL_CIPHER_PARAM_TLS_MAC,
    OSSL_CIPHER_PARAM_UPDATED_IV,
    OSSL_CIPHER_PARAM_IV,
    OSSL_CIPHER_PARAM_USE_BITS,
    OSSL_CIPHER_PARAM_CTS_MODE,
    OSSL_CIPHER_PARAM_AEAD_TLS1_AAD_PAD,
    OSSL_CIPHER_PARAM_BLOCK_SIZE,
    OSSL_CIPHER_PARAM_MODE,
    OSSL_CIPHER_PARAM_AEAD,
    OSSL_CIPHER_PARAM_CUSTOM_IV,
    OSSL_CIPHER_PARAM_RANDOM_KEY,
    OSSL_CIPHER_PARAM_SPEED,
    OSSL_CIPHER_PARAM_ROUNDS,
    OSSL_CIPHER_PARAM_ALGORITHM_ID_PARAMS,
    "tls1multi_maxbufsz",
    "xts_standard",
    "",
    "iv ",
    "no-such-parameter",
};

constexpr unsigned int kParamTypes[] = {
    OSSL_PARAM_INTEGER,      OSSL_PARAM_UNSIGNED_INTEGER, OSSL_PARAM_REAL,
    OSSL_PARAM_UTF8_STRING,  OSSL_PARAM_OCTET_STRING,     OSSL_PARAM_UTF8_PTR,
    OSSL_PARAM_OCTET_PTR,
};

// The type and size each key has in real use.
void NaturalShape(std::string_view key, unsigned int *type, size_t *size) {
  *type = OSSL_PARAM_UNSIGNED_INTEGER;
  *size = sizeof(unsigned int);
  if (key == OSSL_CIPHER_PARAM_IVLEN || key == OSSL_CIPHER_PARAM_KEYLEN ||
      key == OSSL_CIPHER_PARAM_AEAD_TAGLEN ||
      key == OSSL_CIPHER_PARAM_TLS_MAC_SIZE ||
      key == OSSL_CIPHER_PARAM_AEAD_TLS1_AAD_PAD ||
      key == OSSL_CIPHER_PARAM_BLOCK_SIZE) {
    *size = sizeof(size_t);
  } else if (key == OSSL_CIPHER_PARAM_AEAD_TAG) {
    *type = OSSL_PARAM_OCTET_STRING;
    *size = 16;
  } else if (key == OSSL_CIPHER_PARAM_AEAD_TLS1_AAD) {
    *type = OSSL_PARAM_OCTET_STRING;
    *size = EVP_AEAD_TLS1_AAD_LEN;
  } else if (key == OSSL_CIPHER_PARAM_AEAD_TLS1_IV_FIXED) {
    *type = OSSL_PARAM_OCTET_STRING;
    *size = EVP_GCM_TLS_FIXED_IV_LEN;
  } else if (key == OSSL_CIPHER_PARAM_AEAD_TLS1_GET_IV_GEN ||
             key == OSSL_CIPHER_PARAM_AEAD_TLS1_SET_IV_INV) {
    *type = OSSL_PARAM_OCTET_STRING;
    *size = EVP_GCM_TLS_EXPLICIT_IV_LEN;
  } else if (key == OSSL_CIPHER_PARAM_TLS_MAC) {
    *type = OSSL_PARAM_OCTET_PTR;
    *size = 20;
  } else if (key == OSSL_CIPHER_PARAM_IV ||
             key == OSSL_CIPHER_PARAM_UPDATED_IV) {
    *type = OSSL_PARAM_OCTET_STRING;
    *size = 16;
  } else if (key == OSSL_CIPHER_PARAM_CTS_MODE ||
             key == "xts_standard") {
    *type = OSSL_PARAM_UTF8_STRING;
    *size = 3;
  } else if (key == OSSL_CIPHER_PARAM_TLS_VERSION) {
    *type = OSSL_PARAM_INTEGER;
    *size = sizeof(int);
  }
}

// Values that matter somewhere: TLS versions, block and IV boundaries,
// EVP_MAX_MD_SIZE and one above it, all-ones.
constexpr uint64_t kInterestingValues[] = {
    0,      1,      4,      5,      8,      12,     13,     15,
    16,     17,     20,     32,     48,     64,     65,     128,
    129,    0x0300, 0x0301, 0x0302, 0x0303, 0xfeff, 0xfefd, 0x0100,
    0x7fffffff, 0xffffffffull, ~0ull, 0x10000, 255,  256,  1000, 3};

void StoreInteger(uint64_t value, bool negative, std::vector<uint8_t> *out) {
  // Native byte order, as OSSL_PARAM integers are; wider sizes sign- or
  // zero-extend.
  const uint8_t fill = negative ? 0xff : 0x00;
  for (size_t i = 0; i < out->size(); ++i) {
    (*out)[i] = i < 8 ? static_cast<uint8_t>(value >> (8 * i)) : fill;
  }
}

}  // namespace

// Draws one parameter. `natural` keeps the key's real type and size most of
// the time; otherwise any type and size, sometimes null data. Set arrays
// never carry null data with a non-zero size: the default provider copies
// from such data without a check (tlsaad, tlsivfixed).
ParamSpec DrawParam(FuzzInput &in, bool for_set, bool natural_only) {
  ParamSpec spec;
  spec.key = kParamKeys[in.Pick(std::size(kParamKeys))];
  NaturalShape(spec.key, &spec.type, &spec.data_size);
  const uint8_t shape = natural_only ? 0 : in.Byte();
  if (shape >= 192) spec.type = kParamTypes[in.Pick(std::size(kParamTypes))];
  if (shape >= 160) {
    constexpr size_t kSizes[] = {0, 1, 2, 3, 4, 8, 12, 13, 15, 16, 17, 20, 32,
                                 64, 65, 100, 128, 129};
    spec.data_size = kSizes[in.Pick(std::size(kSizes))];
  }
  const bool is_pointer = spec.type == OSSL_PARAM_OCTET_PTR ||
                          spec.type == OSSL_PARAM_UTF8_PTR;
  const bool is_integer = spec.type == OSSL_PARAM_INTEGER ||
                          spec.type == OSSL_PARAM_UNSIGNED_INTEGER ||
                          spec.type == OSSL_PARAM_REAL;
  // libcrypto's OSSL_PARAM_get_* read the last byte of an integer without
  // checking its size or data, and OSSL_PARAM_set_* write a real without
  // checking its data: no empty or null numbers (a limit of the library,
  // not of a provider).
  if (is_integer && spec.data_size == 0) spec.data_size = 1;
  if (spec.key == OSSL_CIPHER_PARAM_AEAD_TLS1_IV_FIXED && for_set &&
      in.Pick(4) == 0) {
    // EVP_CTRL_GCM_SET_IV_FIXED with -1: the whole IV (OpenSSH), read up
    // to the IV length (at most 128) from data.
    spec.data_size = SIZE_MAX;
    spec.contents.resize(128);
    in.Bytes(spec.contents.data(), spec.contents.size());
    return spec;
  }
  spec.contents.resize(is_pointer ? std::max<size_t>(spec.data_size, 1)
                                  : spec.data_size);
  if (is_integer && spec.type != OSSL_PARAM_REAL && !spec.contents.empty()) {
    const uint8_t pick = in.Byte();
    if (pick < 200) {
      const bool negative = spec.type == OSSL_PARAM_INTEGER && pick >= 190;
      uint64_t value = kInterestingValues[pick % std::size(kInterestingValues)];
      if (negative) value = 0 - value;
      StoreInteger(value, negative, &spec.contents);
    } else {
      in.Bytes(spec.contents.data(), spec.contents.size());
    }
  } else if (spec.type == OSSL_PARAM_REAL && spec.data_size == sizeof(double)) {
    const double value = static_cast<double>(
        kInterestingValues[in.Pick(std::size(kInterestingValues))]);
    std::memcpy(spec.contents.data(), &value, sizeof(value));
  } else {
    in.Bytes(spec.contents.data(), spec.contents.size());
  }
  if (!natural_only && in.Pick(16) == 0 && !is_integer &&
      (!for_set || spec.data_size == 0)) {
    spec.null_data = true;
  }
  return spec;
}

std::string DescribeParams(const std::vector<ParamSpec> &specs) {
  std::string out;
  for (const ParamSpec &spec : specs) {
    char buf[96];
    std::snprintf(buf, sizeof(buf), " %s(type %u size %zu%s)",
                  spec.key.c_str(), spec.type,
                  spec.data_size, spec.null_data ? " null" : "");
    out += buf;
    if (!spec.contents.empty() && !spec.null_data) {
      out += "=" + Hex(spec.contents.data(),
                       std::min<size_t>(spec.contents.size(), 24));
    }
  }
  return out;
}

}  // namespace aesmux::fuzz
