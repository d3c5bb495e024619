// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
#include "provider/openssl/params.h"

#include <openssl/core_names.h>
#include <openssl/err.h>
#include <openssl/proverr.h>

#include <array>

namespace aesmux::openssl {
namespace {

// CRYPTO_R_PARAM_OF_INCOMPATIBLE_TYPE (OpenSSL 3.2's cryptoerr.h and
// later; the same number in every version that has it).
constexpr int kCryptoParamOfIncompatibleType = 129;

using core::Alg;

bool Failed() {
  ERR_raise(ERR_LIB_PROV, PROV_R_FAILED_TO_SET_PARAMETER);
  return false;
}

// The algorithm constants' list: 3.6's, and before 3.6 the same without
// "encrypt-then-mac".
constexpr std::array<OSSL_PARAM, 11> kAlgorithmGettableWithEtm = {{
    OSSL_PARAM_uint(OSSL_CIPHER_PARAM_MODE, nullptr),
    OSSL_PARAM_size_t(OSSL_CIPHER_PARAM_KEYLEN, nullptr),
    OSSL_PARAM_size_t(OSSL_CIPHER_PARAM_IVLEN, nullptr),
    OSSL_PARAM_size_t(OSSL_CIPHER_PARAM_BLOCK_SIZE, nullptr),
    OSSL_PARAM_int(OSSL_CIPHER_PARAM_AEAD, nullptr),
    OSSL_PARAM_int(OSSL_CIPHER_PARAM_CUSTOM_IV, nullptr),
    OSSL_PARAM_int(OSSL_CIPHER_PARAM_CTS, nullptr),
    OSSL_PARAM_int(OSSL_CIPHER_PARAM_TLS1_MULTIBLOCK, nullptr),
    OSSL_PARAM_int(OSSL_CIPHER_PARAM_HAS_RAND_KEY, nullptr),
    OSSL_PARAM_int(kEncryptThenMacKey, nullptr),
    OSSL_PARAM_END}};
constexpr auto kAlgorithmGettable = FirstParams<9>(kAlgorithmGettableWithEtm);

constexpr std::array<const char *, 10> kAlgorithmKeys = {
    OSSL_CIPHER_PARAM_MODE,       OSSL_CIPHER_PARAM_KEYLEN,
    OSSL_CIPHER_PARAM_IVLEN,      OSSL_CIPHER_PARAM_BLOCK_SIZE,
    OSSL_CIPHER_PARAM_AEAD,       OSSL_CIPHER_PARAM_CUSTOM_IV,
    OSSL_CIPHER_PARAM_CTS,        OSSL_CIPHER_PARAM_TLS1_MULTIBLOCK,
    OSSL_CIPHER_PARAM_HAS_RAND_KEY, kEncryptThenMacKey};

}  // namespace

bool SetSizeParam(OSSL_PARAM params[], const char *key, size_t value) {
  OSSL_PARAM *p = FindParam(params, key);
  return p == nullptr || SetSize(p, value);
}

bool SetSize(OSSL_PARAM *p, size_t value) {
  return StoreSize(p, value) || Failed();
}

bool SetUintParam(OSSL_PARAM params[], const char *key, unsigned int value) {
  OSSL_PARAM *p = FindParam(params, key);
  return p == nullptr || OSSL_PARAM_set_uint(p, value) || Failed();
}

bool SetIntParam(OSSL_PARAM params[], const char *key, int value) {
  OSSL_PARAM *p = FindParam(params, key);
  return p == nullptr || OSSL_PARAM_set_int(p, value) || Failed();
}

bool SetIvOctets(OSSL_PARAM *p, const uint8_t *iv, size_t len,
                 bool pointer_first) {
  if (RunningAtLeast(0x30600000UL)) {
    // OSSL_PARAM_set_octet_string_or_ptr, which the default provider calls
    // from 3.6 on (and which older libraries lack): a parameter of another
    // type fails with libcrypto's reason first.
    if (p->data_type == OSSL_PARAM_OCTET_STRING) {
      return OSSL_PARAM_set_octet_string(p, iv, len);
    }
    if (p->data_type == OSSL_PARAM_OCTET_PTR) {
      return OSSL_PARAM_set_octet_ptr(p, iv, len);
    }
    ERR_raise(ERR_LIB_CRYPTO, kCryptoParamOfIncompatibleType);
    return false;
  }
  return pointer_first ? OSSL_PARAM_set_octet_ptr(p, iv, len) ||
                             OSSL_PARAM_set_octet_string(p, iv, len)
                       : OSSL_PARAM_set_octet_string(p, iv, len) ||
                             OSSL_PARAM_set_octet_ptr(p, iv, len);
}

bool SetIvParam(OSSL_PARAM params[], const char *key, const uint8_t *iv,
                size_t len) {
  OSSL_PARAM *p = FindParam(params, key);
  return p == nullptr || SetIvOctets(p, iv, len, true) || Failed();
}

bool GetUintParam(const OSSL_PARAM params[], const char *key,
                  unsigned int *value, bool *found) {
  const OSSL_PARAM *p = FindParam(params, key);
  *found = p != nullptr;
  if (p == nullptr || OSSL_PARAM_get_uint(p, value)) return true;
  ERR_raise(ERR_LIB_PROV, PROV_R_FAILED_TO_GET_PARAMETER);
  return false;
}

bool GetSizeParam(const OSSL_PARAM params[], const char *key, size_t *value,
                  bool *found) {
  const OSSL_PARAM *p = FindParam(params, key);
  *found = p != nullptr;
  if (p == nullptr || OSSL_PARAM_get_size_t(p, value)) return true;
  ERR_raise(ERR_LIB_PROV, PROV_R_FAILED_TO_GET_PARAMETER);
  return false;
}

bool SetAlgorithmParams(Alg alg, OSSL_PARAM params[]) {
  const core::AlgInfo &info = core::Info(alg);
  const core::FamilyInfo &c = core::Info(info.family);
  if (RefusedAsRepeated<kAlgorithmKeys>(params)) return false;
  return SetUintParam(params, OSSL_CIPHER_PARAM_MODE, c.mode) &&
         SetIntParam(params, OSSL_CIPHER_PARAM_AEAD, c.aead ? 1 : 0) &&
         SetIntParam(params, OSSL_CIPHER_PARAM_CUSTOM_IV,
                     c.custom_iv ? 1 : 0) &&
         SetIntParam(params, OSSL_CIPHER_PARAM_CTS, 0) &&
         SetIntParam(params, OSSL_CIPHER_PARAM_TLS1_MULTIBLOCK, 0) &&
         SetIntParam(params, OSSL_CIPHER_PARAM_HAS_RAND_KEY, 0) &&
         (!ReportsEncryptThenMac() ||
          SetIntParam(params, kEncryptThenMacKey, 0)) &&
         SetSizeParam(params, OSSL_CIPHER_PARAM_KEYLEN, info.key_len) &&
         SetSizeParam(params, OSSL_CIPHER_PARAM_BLOCK_SIZE, c.block_size) &&
         SetSizeParam(params, OSSL_CIPHER_PARAM_IVLEN, c.iv_len);
}

const OSSL_PARAM *AlgorithmGettableParams(void *) {
  return ReportsEncryptThenMac() ? kAlgorithmGettableWithEtm.data()
                                 : kAlgorithmGettable.data();
}

}  // namespace aesmux::openssl
