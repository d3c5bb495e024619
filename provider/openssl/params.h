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
#include <openssl/err.h>
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
#include "provider/openssl/contract.h"

namespace aesmux::openssl {

// OSSL_PARAM_locate without a strcmp call per parameter: EVP asks for one or
// two parameters at a time and every get/set_ctx_params looks up each of its
// eight or so keys, so an inline comparison of these short keys (most differ
// in the first byte) replaces eight library calls, which were a large part of
// a short message's cost where a caller re-keys per message and so passes
// through four of these calls (BENCHMARKS.md, "Instructions per record").
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

// Whether `params` names one of kKeys more than once (keys it does not know
// may repeat).
template <const auto &kKeys, typename Param>
bool HasRepeatedKey(Param *params) {
  constexpr size_t kN = std::tuple_size_v<std::remove_cvref_t<decltype(kKeys)>>;
  if (params == nullptr || params[0].key == nullptr ||
      params[1].key == nullptr) {
    return false;
  }
  bool seen[kN] = {};
  for (Param *p = params; p->key != nullptr; ++p) {
    const size_t i = KeyIndex<kKeys>(p->key, std::make_index_sequence<kN>());
    if (i == kN) continue;
    if (seen[i]) return true;
    seen[i] = true;
  }
  return false;
}

// 3.6's refusal of an array naming one of kKeys twice, for a function
// whose default provider twin walks its keys as GenericParamWalk says:
// raises PROV_R_REPEATED_PARAMETER and returns true when `params` is
// refused.
template <const auto &kKeys, typename Param>
bool RefusedAsRepeated(Param *params) {
  if (params == nullptr || params[0].key == nullptr ||
      params[1].key == nullptr ||
      GenericParamWalk() != ParamWalk::kRefuseRepeats ||
      !HasRepeatedKey<kKeys>(params)) {
    return false;
  }
  ERR_raise(ERR_LIB_PROV, kRepeatedParameterReason);
  return true;
}

// ForEachParam's array of several parameters, walked as `walk` says
// (contract.h). Out of line, so that the common single parameter's lookup
// saves no registers for this loop.
template <const auto &kKeys, typename Param, typename Handle>
[[gnu::noinline]] bool ForEachKey(Param *params, Handle handle,
                                  ParamWalk walk) {
  constexpr size_t kN = std::tuple_size_v<std::remove_cvref_t<decltype(kKeys)>>;
  if (walk == ParamWalk::kArrayOrder) {
    for (Param *p = params; p->key != nullptr; ++p) {
      const size_t i = KeyIndex<kKeys>(p->key, std::make_index_sequence<kN>());
      if (i != kN && !handle(i, p)) return false;
    }
    return true;
  }
  if (walk == ParamWalk::kRefuseRepeats && HasRepeatedKey<kKeys>(params)) {
    ERR_raise(ERR_LIB_PROV, kRepeatedParameterReason);
    return false;
  }
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
// several keys happen in its order. kWalk says how the running libcrypto's
// default provider walks such an array (contract.h), where that changed
// after 3.0.
//
// EVP's controls and EVP_CIPHER_CTX_get_iv_length pass one parameter at a
// time: such an array is served by one lookup of its key, not one scan of
// it per key, and kKeys[kFirst] is tried first (the key asked for once per
// record, such as GCM's tag: BENCHMARKS.md, "Instructions per record").
template <const auto &kKeys, ParamWalk (*kWalk)() = nullptr, size_t kFirst = 0,
          typename Param, typename Handle>
bool ForEachParam(Param *params, Handle handle) {
  constexpr size_t kN = std::tuple_size_v<std::remove_cvref_t<decltype(kKeys)>>;
  static_assert(kFirst < kN);
  if (params == nullptr || params[0].key == nullptr) return true;
  if (params[1].key == nullptr) {
    if (MatchesKey<kKeys, kFirst>(params[0].key)) {
      return handle(kFirst, &params[0]);
    }
    const size_t i =
        KeyIndex<kKeys>(params[0].key, std::make_index_sequence<kN>());
    return i == kN || handle(i, &params[0]);
  }
  return ForEachKey<kKeys>(params, handle,
                           kWalk != nullptr ? kWalk()
                                            : ParamWalk::kFirstOfEachKey);
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
// An IV into `p` as a copy or as a pointer (into the context, which
// outlives the call: deprecated EVP_CIPHER_CTX_iv() and friends). From 3.6
// the parameter's type chooses; before, the default provider tries one and
// then the other (`pointer_first`: the generic ciphers' order, else GCM's),
// and from 3.2 the try that fails leaves an error on the queue.
bool SetIvOctets(OSSL_PARAM *p, const uint8_t *iv, size_t len,
                 bool pointer_first);
bool SetUintParam(OSSL_PARAM params[], const char *key, unsigned int value);
bool SetIntParam(OSSL_PARAM params[], const char *key, int value);
// SetIvOctets for the parameter named `key`, in the generic ciphers' order.
bool SetIvParam(OSSL_PARAM params[], const char *key, const uint8_t *iv,
                size_t len);

// Reads an unsigned int / size_t parameter if present. Returns false (and
// raises PROV_R_FAILED_TO_GET_PARAMETER) when present but unreadable.
bool GetUintParam(const OSSL_PARAM params[], const char *key,
                  unsigned int *value, bool *found);
bool GetSizeParam(const OSSL_PARAM params[], const char *key, size_t *value,
                  bool *found);

// The constants of `alg` that OpenSSL caches at fetch time (mode, key and IV
// length, block size, flags): the default provider's values, from
// core::kAlgs and core::kFamilies.
bool SetAlgorithmParams(core::Alg alg, OSSL_PARAM params[]);
const OSSL_PARAM *AlgorithmGettableParams(void *provctx);

template <core::Alg kAlg>
int GetAlgorithmParams(OSSL_PARAM params[]) noexcept {
  return SetAlgorithmParams(kAlg, params) ? 1 : 0;
}

// A parameter list with the first `kKeep` entries of `list`, terminated:
// the shorter list an older default provider reports.
template <size_t kKeep, size_t kSize>
constexpr std::array<OSSL_PARAM, kKeep + 1> FirstParams(
    const std::array<OSSL_PARAM, kSize> &list) {
  static_assert(kKeep < kSize);
  std::array<OSSL_PARAM, kKeep + 1> first{};
  for (size_t i = 0; i < kKeep; ++i) first[i] = list[i];
  first[kKeep] = OSSL_PARAM_END;
  return first;
}

// OpenSSL needs plain function pointers in its dispatch tables.
template <typename F>
constexpr void (*DispatchFn(F *function))(void) {
  return reinterpret_cast<void (*)(void)>(function);
}

}  // namespace aesmux::openssl

#endif  // AESMUX_PROVIDER_OPENSSL_PARAMS_H_
