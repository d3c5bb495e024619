// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
// OpenSSL 3.5's opaque symmetric keys (EVP_SKEY): key management for "AES"
// and "GENERIC-SECRET", under the default provider's names and rules.
//
// EVP_CipherInit_SKEY accepts a key only from the cipher's own provider.
// Where aesmux is preferred, a key imported without a property query must
// therefore be aesmux's for aesmux's ciphers to take it, as the default
// provider's keys are for its ciphers. The ciphers need no key functions of
// their own: for a provider without them, EVP exports the raw key through
// this key management and initialises the cipher with it (evp_enc.c,
// evp_cipher_init_skey_internal). A libcrypto before 3.5 never asks for
// OSSL_OP_SKEYMGMT.
#include "provider/openssl/skey.h"

#include <openssl/core_dispatch.h>
#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/params.h>

#include <climits>
#include <cstring>

#include "provider/openssl/contract.h"
#include "provider/openssl/params.h"

// The ABI numbers of OpenSSL 3.5's core_dispatch.h and 3.6's, for older
// headers.
#ifndef OSSL_OP_SKEYMGMT
#define OSSL_OP_SKEYMGMT 15
#define OSSL_SKEYMGMT_SELECT_SECRET_KEY 0x02
#define OSSL_FUNC_SKEYMGMT_FREE 1
#define OSSL_FUNC_SKEYMGMT_IMPORT 2
#define OSSL_FUNC_SKEYMGMT_EXPORT 3
#endif
#ifndef OSSL_FUNC_SKEYMGMT_IMP_SETTABLE_PARAMS
#define OSSL_FUNC_SKEYMGMT_IMP_SETTABLE_PARAMS 6
#endif
#ifndef OSSL_SKEY_PARAM_RAW_BYTES
#define OSSL_SKEY_PARAM_RAW_BYTES "raw-bytes"
#endif

namespace aesmux::openssl {
namespace {

// A key: its bytes follow its length in one allocation, wiped when freed.
struct SecretKey {
  size_t len;
  unsigned char *bytes() { return reinterpret_cast<unsigned char *>(this + 1); }
};

void FreeKey(void *keydata) noexcept {
  auto *key = static_cast<SecretKey *>(keydata);
  if (key != nullptr) OPENSSL_clear_free(key, sizeof(*key) + key->len);
}

constexpr std::array<const char *, 1> kImportKeys = {OSSL_SKEY_PARAM_RAW_BYTES};

// The default provider's import: the raw bytes of a secret key, any
// non-zero length below INT_MAX (OPENSSL_memdup's limits), 16, 24 or 32 for
// "AES". From 3.6 it also wants an octet string, named once.
void *ImportKey(bool aes, int selection, const OSSL_PARAM params[]) noexcept {
  if ((selection & OSSL_SKEYMGMT_SELECT_SECRET_KEY) == 0) return nullptr;
  const ParamWalk walk = GenericParamWalk();
  if (walk == ParamWalk::kRefuseRepeats &&
      HasRepeatedKey<kImportKeys>(params)) {
    return nullptr;
  }
  const OSSL_PARAM *raw = FindParam(params, OSSL_SKEY_PARAM_RAW_BYTES);
  if (raw == nullptr || raw->data == nullptr || raw->data_size == 0 ||
      raw->data_size >= INT_MAX ||
      (walk == ParamWalk::kRefuseRepeats &&
       raw->data_type != OSSL_PARAM_OCTET_STRING)) {
    return nullptr;
  }
  if (aes && raw->data_size != 16 && raw->data_size != 24 &&
      raw->data_size != 32) {
    return nullptr;
  }
  auto *key = static_cast<SecretKey *>(
      OPENSSL_malloc(sizeof(SecretKey) + raw->data_size));
  if (key == nullptr) return nullptr;
  key->len = raw->data_size;
  std::memcpy(key->bytes(), raw->data, raw->data_size);
  return key;
}

void *ImportAes(void *, int selection, const OSSL_PARAM params[]) noexcept {
  return ImportKey(true, selection, params);
}

void *ImportGeneric(void *, int selection, const OSSL_PARAM params[]) noexcept {
  return ImportKey(false, selection, params);
}

int ExportKey(void *keydata, int selection, OSSL_CALLBACK *callback,
              void *arg) noexcept {
  auto *key = static_cast<SecretKey *>(keydata);
  if (key == nullptr || (selection & OSSL_SKEYMGMT_SELECT_SECRET_KEY) == 0) {
    return 0;
  }
  OSSL_PARAM params[] = {
      OSSL_PARAM_construct_octet_string(OSSL_SKEY_PARAM_RAW_BYTES,
                                        key->bytes(), key->len),
      OSSL_PARAM_END};
  return callback(params, arg);
}

const OSSL_PARAM *ImportSettable(void *) noexcept {
  static const OSSL_PARAM kSettable[] = {
      OSSL_PARAM_octet_string(OSSL_SKEY_PARAM_RAW_BYTES, nullptr, 0),
      OSSL_PARAM_END};
  return kSettable;
}

template <auto kImport>
inline const OSSL_DISPATCH kKeyManagement[] = {
    {OSSL_FUNC_SKEYMGMT_FREE, DispatchFn(FreeKey)},
    {OSSL_FUNC_SKEYMGMT_IMPORT, DispatchFn(kImport)},
    {OSSL_FUNC_SKEYMGMT_EXPORT, DispatchFn(ExportKey)},
    {OSSL_FUNC_SKEYMGMT_IMP_SETTABLE_PARAMS, DispatchFn(ImportSettable)},
    {0, nullptr}};

// The default provider's names (providers/implementations/include/prov/
// names.h): "AES" with its OID arc.
const OSSL_ALGORITHM kKeyManagers[] = {
    {"AES:2.16.840.1.101.3.4.1", "provider=aesmux", kKeyManagement<ImportAes>,
     "aesmux AES secret key"},
    {"GENERIC-SECRET", "provider=aesmux", kKeyManagement<ImportGeneric>,
     "aesmux generic secret key"},
    {nullptr, nullptr, nullptr, nullptr}};

}  // namespace

int SkeyOperation() { return OSSL_OP_SKEYMGMT; }

const OSSL_ALGORITHM *SkeyManagers() { return kKeyManagers; }

}  // namespace aesmux::openssl
