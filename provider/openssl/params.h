// OSSL_PARAM helpers shared by the cipher contexts, and the algorithm
// constants each algorithm reports through get_params.
//
// The Set* helpers do nothing when `params` does not ask for `key`; when it
// does and the value cannot be stored they raise PROV_R_FAILED_TO_SET_PARAMETER
// and return false, as the default provider does.
#ifndef AESMUX_PROVIDER_OPENSSL_PARAMS_H_
#define AESMUX_PROVIDER_OPENSSL_PARAMS_H_

// Layers (DEVELOPERS.md): only what links aesmux_edge includes this.
#if defined(AESMUX_LAYER) && !defined(AESMUX_SEES_edge)
#error "provider/openssl/params.h belongs to a layer above the one that includes it"
#endif

#include <openssl/core.h>
#include <openssl/params.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "provider/core/algorithm.h"

namespace aesmux::openssl {

// OSSL_PARAM_locate without a strcmp call per parameter: EVP asks for one
// or two parameters at a time and every get/set_ctx_params looks up each of
// its eight or so keys, so an inline comparison of these short keys (most
// differ in the first byte) replaces eight library calls. In `openssl speed
// -evp aes-128-gcm`, which re-keys and so passes through four of these calls
// per message, OSSL_PARAM_locate and strcmp were a quarter of aesmux's time
// at 16 bytes.
inline bool SameKey(const char *a, const char *b) {
  while (*a == *b && *a != '\0') {
    ++a;
    ++b;
  }
  return *a == *b;
}

inline OSSL_PARAM *FindParam(OSSL_PARAM params[], const char *key) {
  if (params == nullptr) return nullptr;
  for (OSSL_PARAM *p = params; p->key != nullptr; ++p) {
    if (SameKey(p->key, key)) return p;
  }
  return nullptr;
}
inline const OSSL_PARAM *FindParam(const OSSL_PARAM params[],
                                   const char *key) {
  return FindParam(const_cast<OSSL_PARAM *>(params), key);
}

// The index in `keys` of `key`, or N when it is none of them. The keys'
// first bytes are compared before anything else, without a call.
template <size_t N>
size_t KeyIndex(const char *key, const std::array<const char *, N> &keys) {
  const char first = key[0];
#pragma GCC unroll 16
  for (size_t i = 0; i < N; ++i) {
    if (first == keys[i][0] && SameKey(key + 1, keys[i] + 1)) return i;
  }
  return N;
}

// Calls handle(i, p) for the parameter p of `params` named keys[i], for each
// i in order (the first such parameter, as OSSL_PARAM_locate finds it),
// until a call returns false; returns false then, else true. `keys` is in
// the order the default provider looks its keys up, so that the side
// effects of an array of several keys happen in its order.
//
// EVP's controls and EVP_CIPHER_CTX_get_iv_length pass one parameter at a
// time: such an array is served by one lookup of its key, not one scan of
// it per key.
template <typename Param, size_t N, typename Handle>
bool ForEachParam(Param *params, const std::array<const char *, N> &keys,
                  Handle handle) {
  if (params == nullptr || params[0].key == nullptr) return true;
  if (params[1].key == nullptr) {
    const size_t i = KeyIndex(params[0].key, keys);
    return i == N || handle(i, &params[0]);
  }
  for (size_t i = 0; i < N; ++i) {
    Param *p = FindParam(params, keys[i]);
    if (p != nullptr && !handle(i, p)) return false;
  }
  return true;
}

// OSSL_PARAM_set_size_t, with its common case (a size_t parameter) inline:
// it sets return_size, and the value when there is room for it.
inline bool StoreSize(OSSL_PARAM *p, size_t value) {
  if (p->data_type == OSSL_PARAM_UNSIGNED_INTEGER &&
      p->data_size == sizeof(size_t)) {
    p->return_size = sizeof(size_t);
    if (p->data != nullptr) std::memcpy(p->data, &value, sizeof(value));
    return true;
  }
  return OSSL_PARAM_set_size_t(p, value);
}

bool SetSizeParam(OSSL_PARAM params[], const char *key, size_t value);
// The same for a parameter already found: raises
// PROV_R_FAILED_TO_SET_PARAMETER when it cannot hold `value`.
bool SetSize(OSSL_PARAM *p, size_t value);
bool SetUintParam(OSSL_PARAM params[], const char *key, unsigned int value);
bool SetIntParam(OSSL_PARAM params[], const char *key, int value);
// An IV is offered as an octet pointer (into the context, which outlives
// the call: deprecated EVP_CIPHER_CTX_iv() and friends) or as a copy.
bool SetIvParam(OSSL_PARAM params[], const char *key, const uint8_t *iv,
                size_t len);

// Reads an unsigned int / size_t parameter if present. Returns false (and
// raises PROV_R_FAILED_TO_GET_PARAMETER) when present but unreadable.
bool GetUintParam(const OSSL_PARAM params[], const char *key,
                  unsigned int *value, bool *found);
bool GetSizeParam(const OSSL_PARAM params[], const char *key, size_t *value,
                  bool *found);

// The constants a family's algorithms report, with the default provider's
// values: EVP_CIPH_*_MODE, default IV length, block size, AEAD, custom IV.
struct FamilyConstants {
  unsigned int mode;
  size_t iv_len;
  size_t block_size;
  int aead;
  int custom_iv;
};
FamilyConstants ConstantsOf(core::Family family);

// The constants of `alg` that OpenSSL caches at fetch time (mode, key and IV
// length, block size, flags), with the default provider's values.
bool SetAlgorithmParams(core::Alg alg, OSSL_PARAM params[]);
const OSSL_PARAM *AlgorithmGettableParams(void *provctx);

template <core::Alg kAlg>
int GetAlgorithmParams(OSSL_PARAM params[]) noexcept {
  return SetAlgorithmParams(kAlg, params) ? 1 : 0;
}

// OpenSSL needs plain function pointers in its dispatch tables.
template <typename F>
constexpr void (*DispatchFn(F *function))(void) {
  return reinterpret_cast<void (*)(void)>(function);
}

}  // namespace aesmux::openssl

#endif  // AESMUX_PROVIDER_OPENSSL_PARAMS_H_
