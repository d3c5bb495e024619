// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
// AES-XTS (IEEE 1619): every update is one data unit of 16 bytes to 16 MiB
// under the IV given at init, which is never advanced between calls.
#include <openssl/core_dispatch.h>
#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/proverr.h>

#include "provider/openssl/dispatch.h"
#include "provider/openssl/generic_ctx.h"

namespace aesmux::openssl {
namespace {

using core::Alg;

// IEEE 1619-2018 and SP 800-38E: at most 2^20 blocks per data unit.
constexpr size_t kMaxDataUnit = (size_t{1} << 20) * kAesBlock;

int XtsInit(GenericCtx *ctx, const unsigned char *key, size_t key_len,
            const unsigned char *iv, size_t iv_len, const OSSL_PARAM params[],
            bool encrypt);

int RefuseDuplicatedHalves() {
  ERR_raise(ERR_LIB_PROV, PROV_R_XTS_DUPLICATED_KEYS);
  return 0;
}

int XtsEncryptInit(void *vctx, const unsigned char *key, size_t key_len,
                   const unsigned char *iv, size_t iv_len,
                   const OSSL_PARAM params[]) noexcept {
  return XtsInit(static_cast<GenericCtx *>(vctx), key, key_len, iv, iv_len,
                 params, true);
}

int XtsDecryptInit(void *vctx, const unsigned char *key, size_t key_len,
                   const unsigned char *iv, size_t iv_len,
                   const OSSL_PARAM params[]) noexcept {
  return XtsInit(static_cast<GenericCtx *>(vctx), key, key_len, iv, iv_len,
                 params, false);
}

int XtsSetCtxParams(void *vctx, const OSSL_PARAM params[]) noexcept {
  auto *ctx = static_cast<GenericCtx *>(vctx);
  if (params == nullptr) return 1;
  bool found = false;
  size_t key_len = 0;
  if (!GetSizeParam(params, OSSL_CIPHER_PARAM_KEYLEN, &key_len, &found)) {
    return 0;
  }
  // The key length of XTS cannot change; the default provider refuses a
  // different one without raising an error.
  return !found || key_len == ctx->key_len;
}

const OSSL_PARAM *XtsSettableCtxParams(void *, void *) noexcept {
  static const OSSL_PARAM kSettable[] = {
      OSSL_PARAM_size_t(OSSL_CIPHER_PARAM_KEYLEN, nullptr), OSSL_PARAM_END};
  return kSettable;
}

int XtsInit(GenericCtx *ctx, const unsigned char *key, size_t key_len,
            const unsigned char *iv, size_t iv_len, const OSSL_PARAM params[],
            bool encrypt) {
  ctx->engine.CancelQueued();  // what an abandoned ASYNC job left queued
  ctx->encrypt = encrypt;
  if (iv != nullptr && !SetInitIv(ctx, iv, iv_len)) return 0;
  if (key != nullptr) {
    if (key_len != ctx->key_len) {
      ERR_raise(ERR_LIB_PROV, PROV_R_INVALID_KEY_LENGTH);
      return 0;
    }
    // Key1 == Key2 defeats XTS; like the default provider, refuse it for
    // encryption (decryption of existing data stays possible).
    const size_t half = key_len / 2;
    const bool duplicated = CRYPTO_memcmp(key, key + half, half) == 0;
    if (encrypt && duplicated) return RefuseDuplicatedHalves();
    ctx->engine.SetKey({key, key_len});
    ctx->key_set = true;
    ctx->duplicated_halves = duplicated;
  }
  // A key-less init that turns a context keyed for decryption with equal
  // halves to encrypting succeeds, as with the default provider (a program
  // may go on to give a new key); the default then goes on decrypting with
  // its old schedule (docs/differences.md), aesmux refuses every encryption
  // until a key with distinct halves is set.
  return XtsSetCtxParams(ctx, params);
}

// One data unit. Fails without an error of its own for the cases the
// default provider also reports only through its caller.
int XtsCipher(void *vctx, unsigned char *out, size_t *outl, size_t,
              const unsigned char *in, size_t inl) noexcept {
  auto *ctx = static_cast<GenericCtx *>(vctx);
  if (!ctx->key_set || !ctx->iv_set || out == nullptr || in == nullptr ||
      inl < kAesBlock) {
    return 0;
  }
  if (inl > kMaxDataUnit) {
    ERR_raise(ERR_LIB_PROV, PROV_R_XTS_DATA_UNIT_IS_TOO_LARGE);
    return 0;
  }
  if (ctx->encrypt && ctx->duplicated_halves) return RefuseDuplicatedHalves();
  if (!ctx->engine.RunDataUnit(ctx->direction(), ctx->iv, out, in, inl)) {
    RaiseNoPathServed(ctx, inl);
    return 0;
  }
  *outl = inl;
  return 1;
}

int XtsUpdate(void *vctx, unsigned char *out, size_t *outl, size_t outsize,
              const unsigned char *in, size_t inl) noexcept {
  if (outsize < inl) {
    ERR_raise(ERR_LIB_PROV, PROV_R_OUTPUT_BUFFER_TOO_SMALL);
    return 0;
  }
  const auto *ctx = static_cast<const GenericCtx *>(vctx);
  if (ctx->encrypt && ctx->duplicated_halves) return RefuseDuplicatedHalves();
  if (!XtsCipher(vctx, out, outl, outsize, in, inl)) {
    ERR_raise(ERR_LIB_PROV, PROV_R_CIPHER_OPERATION_FAILED);
    return 0;
  }
  return 1;
}

int XtsFinal(void *, unsigned char *, size_t *outl, size_t) noexcept {
  *outl = 0;
  return 1;
}

struct XtsFamily : GenericFamily {
  static constexpr auto EncryptInit = XtsEncryptInit;
  static constexpr auto DecryptInit = XtsDecryptInit;
  static constexpr auto Update = XtsUpdate;
  static constexpr auto Final = XtsFinal;
  static constexpr auto Cipher = XtsCipher;
  static constexpr auto SetCtxParams = XtsSetCtxParams;
  static constexpr auto SettableCtxParams = XtsSettableCtxParams;
};

}  // namespace

const OSSL_DISPATCH *XtsDispatch(Alg alg) {
  return FamilyDispatch<core::Family::kXts, XtsFamily>(alg);
}

}  // namespace aesmux::openssl
