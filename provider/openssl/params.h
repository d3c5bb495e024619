// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
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
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>

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

// Whether `key` is kKeys[I], compared one character at a time against the
// constant's characters (terminator included), each an immediate in the
// code: the caller's key pointers are libcrypto's own string literals,
// which aesmux cannot see, so keys match by content; a key that differs
// in its first character costs one compare, and the loads of the
// caller's characters are shared between the keys tried. The fold stops
// at the first difference, so no character beyond `key`'s terminator is
// read.
template <const auto &kKeys, size_t I, size_t... J>
bool MatchesKey(const char *key, std::index_sequence<J...>) {
  return ((key[J] == kKeys[I][J]) && ...);
}
template <const auto &kKeys, size_t I>
bool MatchesKey(const char *key) {
  constexpr size_t kLen = std::char_traits<char>::length(kKeys[I]);
  return MatchesKey<kKeys, I>(key, std::make_index_sequence<kLen + 1>());
}

// The index in kKeys of `key`, or kKeys.size() when it is none of them.
template <const auto &kKeys, size_t... I>
size_t KeyIndex(const char *key, std::index_sequence<I...>) {
  size_t index = sizeof...(I);
  static_cast<void>(
      ((MatchesKey<kKeys, I>(key) ? (index = I, true) : false) || ...));
  return index;
}

// The first parameter of `params` named kKeys[I], as OSSL_PARAM_locate
// finds it, or null.
template <const auto &kKeys, size_t I, typename Param>
Param *FindKey(Param *params) {
  for (Param *p = params; p->key != nullptr; ++p) {
    if (MatchesKey<kKeys, I>(p->key)) return p;
  }
  return nullptr;
}

// ForEachParam's array of several parameters. Out of line, so that the
// common single parameter's lookup saves no registers for this loop.
template <const auto &kKeys, typename Param, typename Handle>
[[gnu::noinline]] bool ForEachKey(Param *params, Handle handle) {
  constexpr size_t kN = std::tuple_size_v<std::remove_cvref_t<decltype(kKeys)>>;
  return [&]<size_t... I>(std::index_sequence<I...>) {
    return ([&] {
      Param *p = FindKey<kKeys, I>(params);
      return p == nullptr || handle(I, p);
    }() && ...);
  }(std::make_index_sequence<kN>());
}

// Calls handle(I, p) for the parameter p of `params` named kKeys[I], for
// each I in order (the first such parameter, as OSSL_PARAM_locate finds
// it), until a call returns false; returns false then, else true. kKeys
// (a constexpr std::array of string literals) is in the order the default
// provider looks its keys up, so that the side effects of an array of
// several keys happen in its order.
//
// EVP's controls and EVP_CIPHER_CTX_get_iv_length pass one parameter at a
// time: such an array is served by one lookup of its key, not one scan of
// it per key.
template <const auto &kKeys, typename Param, typename Handle>
bool ForEachParam(Param *params, Handle handle) {
  constexpr size_t kN = std::tuple_size_v<std::remove_cvref_t<decltype(kKeys)>>;
  if (params == nullptr || params[0].key == nullptr) return true;
  if (params[1].key == nullptr) {
    const size_t i =
        KeyIndex<kKeys>(params[0].key, std::make_index_sequence<kN>());
    return i == kN || handle(i, &params[0]);
  }
  return ForEachKey<kKeys>(params, handle);
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
