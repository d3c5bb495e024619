// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
// One OSSL_DISPATCH table per algorithm, built from the functions of its
// family: every cipher registers all 14 classic dispatch functions.
#ifndef AESMUX_PROVIDER_OPENSSL_DISPATCH_H_
#define AESMUX_PROVIDER_OPENSSL_DISPATCH_H_

// Layers (DEVELOPERS.md): only what links aesmux_edge includes this.
#if defined(AESMUX_LAYER) && !defined(AESMUX_SEES_edge)
#error "provider/openssl/dispatch.h belongs to a layer above the one that includes it"
#endif

#include <openssl/core_dispatch.h>

#include <array>
#include <cstddef>
#include <utility>

#include "provider/openssl/params.h"
#include "provider/core/algorithm.h"

// OpenSSL 3.5's cipher pipeline functions. Their ids are ABI numbers, fixed
// since 3.5 (core_dispatch.h); older headers lack them, so they are defined
// here and the pipeline is compiled on every build. A libcrypto before 3.5
// ignores the ids it does not know.
#ifndef OSSL_FUNC_CIPHER_PIPELINE_ENCRYPT_INIT
#define OSSL_FUNC_CIPHER_PIPELINE_ENCRYPT_INIT 15
#define OSSL_FUNC_CIPHER_PIPELINE_DECRYPT_INIT 16
#define OSSL_FUNC_CIPHER_PIPELINE_UPDATE 17
#define OSSL_FUNC_CIPHER_PIPELINE_FINAL 18
#endif

namespace aesmux::openssl {

// `Family` supplies static members: template NewCtx<Alg>, FreeCtx, DupCtx,
// EncryptInit, DecryptInit, Update, Final, Cipher, GetCtxParams,
// SetCtxParams, GettableCtxParams, SettableCtxParams. The algorithm
// constants (get_params) come from params.h.
template <core::Alg kAlg, typename Family>
inline const OSSL_DISPATCH kCipherDispatch[] = {
    {OSSL_FUNC_CIPHER_NEWCTX,
     DispatchFn(Family::template NewCtx<kAlg>)},
    {OSSL_FUNC_CIPHER_FREECTX, DispatchFn(Family::FreeCtx)},
    {OSSL_FUNC_CIPHER_DUPCTX, DispatchFn(Family::DupCtx)},
    {OSSL_FUNC_CIPHER_ENCRYPT_INIT, DispatchFn(Family::EncryptInit)},
    {OSSL_FUNC_CIPHER_DECRYPT_INIT, DispatchFn(Family::DecryptInit)},
    {OSSL_FUNC_CIPHER_UPDATE, DispatchFn(Family::Update)},
    {OSSL_FUNC_CIPHER_FINAL, DispatchFn(Family::Final)},
    {OSSL_FUNC_CIPHER_CIPHER, DispatchFn(Family::Cipher)},
    {OSSL_FUNC_CIPHER_GET_PARAMS, DispatchFn(GetAlgorithmParams<kAlg>)},
    {OSSL_FUNC_CIPHER_GET_CTX_PARAMS, DispatchFn(Family::GetCtxParams)},
    {OSSL_FUNC_CIPHER_SET_CTX_PARAMS, DispatchFn(Family::SetCtxParams)},
    {OSSL_FUNC_CIPHER_GETTABLE_PARAMS, DispatchFn(AlgorithmGettableParams)},
    {OSSL_FUNC_CIPHER_GETTABLE_CTX_PARAMS,
     DispatchFn(Family::GettableCtxParams)},
    {OSSL_FUNC_CIPHER_SETTABLE_CTX_PARAMS,
     DispatchFn(Family::SettableCtxParams)},
    {0, nullptr}};

// The classic functions plus the cipher pipeline (`Family` adds
// PipelineEncryptInit, PipelineUpdate, PipelineFinal).
template <core::Alg kAlg, typename Family>
inline const OSSL_DISPATCH kCipherPipelineDispatch[] = {
    {OSSL_FUNC_CIPHER_NEWCTX,
     DispatchFn(Family::template NewCtx<kAlg>)},
    {OSSL_FUNC_CIPHER_FREECTX, DispatchFn(Family::FreeCtx)},
    {OSSL_FUNC_CIPHER_DUPCTX, DispatchFn(Family::DupCtx)},
    {OSSL_FUNC_CIPHER_ENCRYPT_INIT, DispatchFn(Family::EncryptInit)},
    {OSSL_FUNC_CIPHER_DECRYPT_INIT, DispatchFn(Family::DecryptInit)},
    {OSSL_FUNC_CIPHER_UPDATE, DispatchFn(Family::Update)},
    {OSSL_FUNC_CIPHER_FINAL, DispatchFn(Family::Final)},
    {OSSL_FUNC_CIPHER_CIPHER, DispatchFn(Family::Cipher)},
    {OSSL_FUNC_CIPHER_GET_PARAMS, DispatchFn(GetAlgorithmParams<kAlg>)},
    {OSSL_FUNC_CIPHER_GET_CTX_PARAMS, DispatchFn(Family::GetCtxParams)},
    {OSSL_FUNC_CIPHER_SET_CTX_PARAMS, DispatchFn(Family::SetCtxParams)},
    {OSSL_FUNC_CIPHER_GETTABLE_PARAMS, DispatchFn(AlgorithmGettableParams)},
    {OSSL_FUNC_CIPHER_GETTABLE_CTX_PARAMS,
     DispatchFn(Family::GettableCtxParams)},
    {OSSL_FUNC_CIPHER_SETTABLE_CTX_PARAMS,
     DispatchFn(Family::SettableCtxParams)},
    {OSSL_FUNC_CIPHER_PIPELINE_ENCRYPT_INIT,
     DispatchFn(Family::PipelineEncryptInit)},
    {OSSL_FUNC_CIPHER_PIPELINE_UPDATE, DispatchFn(Family::PipelineUpdate)},
    {OSSL_FUNC_CIPHER_PIPELINE_FINAL, DispatchFn(Family::PipelineFinal)},
    {0, nullptr}};

// Whether a family's dispatch tables add the cipher pipeline.
enum class Pipeline : bool { kNo, kYes };

// kAlg's dispatch table if kAlg is of kFamily, else null.
template <core::Family kFamily, typename Functions, Pipeline kPipeline,
          core::Alg kAlg>
constexpr const OSSL_DISPATCH *DispatchIfOf() {
  if constexpr (core::Info(kAlg).family != kFamily) {
    return nullptr;
  } else if constexpr (kPipeline == Pipeline::kYes) {
    return kCipherPipelineDispatch<kAlg, Functions>;
  } else {
    return kCipherDispatch<kAlg, Functions>;
  }
}

// The dispatch table of `alg` if it is one of kFamily's algorithms in
// core::kAlgs, else null: one table per such algorithm, made from
// `Functions` (kCipherDispatch's `Family`), so that a family's code names
// none of its algorithms.
template <core::Family kFamily, typename Functions,
          Pipeline kPipeline = Pipeline::kNo>
const OSSL_DISPATCH *FamilyDispatch(core::Alg alg) {
  static constexpr auto kTables =
      []<size_t... kIndex>(std::index_sequence<kIndex...>) {
        return std::array<const OSSL_DISPATCH *, sizeof...(kIndex)>{
            DispatchIfOf<kFamily, Functions, kPipeline,
                         static_cast<core::Alg>(kIndex)>()...};
      }(std::make_index_sequence<core::kNumAlgs>());
  return kTables[static_cast<size_t>(alg)];
}

}  // namespace aesmux::openssl

#endif  // AESMUX_PROVIDER_OPENSSL_DISPATCH_H_
