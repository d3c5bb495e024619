// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
// AES-GCM: the default provider's AEAD context, IV state machine and TLS 1.2
// record mode, over the router's GcmEngine.
//
// IV lifecycle: an IV given at init is "buffered"; the message starts (and
// the engine is routed) on the first update, or at that init already where
// starting cannot fail ("started", otherwise the same as buffered); final
// "finishes" it, after which updates fail until a new IV is set, so an IV is
// never reused by accident. Encrypting without an IV draws a random one.
//
// This file keeps the EVP contract's state (GcmState: the IV's length and
// state, tag, TLS fields), a plain value that dupctx copies whole, and the
// IV's storage (IvBuffer, copied apart: a long IV's can fail to copy); the
// message itself (its path, GHASH state, buffered AAD) is the GcmEngine's.
#include <openssl/core_dispatch.h>
#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/proverr.h>

#include <array>
#include <cstring>
#include <new>
#include <optional>

#include "provider/openssl/dispatch.h"
#include "provider/openssl/gcm_ctx.h"

namespace aesmux::openssl {
namespace gcm {
namespace {

// Makes the message ready for its first update or final: starts it on the
// buffered IV, or one drawn when encrypting without. False when there is no
// message to go on with (no key, no IV, or it finished), or it cannot start.
bool BeginMessage(GcmCtx *ctx, bool finalising) {
  if (ctx->iv_state == IvState::kStarted) {
    ctx->iv_state = IvState::kCopied;
    return true;
  }
  if (!ctx->key_set || IsFinished(ctx->iv_state)) {
    if (finalising && ctx->iv_state == IvState::kInterrupted &&
        ctx->encrypt) {
      ctx->tag_len = kTagLen;
      // The default provider's message ended too.
      ctx->iv_state = IvState::kFinished;
    }
    return false;
  }
  if (ctx->iv_state == IvState::kUninitialised &&
      (!ctx->encrypt || !GenerateIv(ctx))) {
    return false;
  }
  if (!StartMessage(ctx)) return false;
  ctx->iv_state = IvState::kCopied;
  return true;
}

[[gnu::always_inline]] inline int FinishMessage(GcmCtx *ctx) {
  // The tag must be set before decrypting can finish. After a wrong tag
  // the default provider's message goes on, but its finish has folded the
  // lengths and E(K, J0) into its GHASH state, so a later tag is no GCM
  // tag: aesmux lets no later final succeed.
  if (!ctx->encrypt && !ctx->tag_len) return 0;
  if (ctx->tag_failed) {
    // Encrypting, the default provider's final would end the message with
    // a 16-byte tag.
    if (ctx->encrypt) {
      ctx->iv_state = IvState::kFinished;
      ctx->tag_len = kTagLen;
    }
    return 0;
  }
  if (!ctx->engine.Finish(ctx->buf, ctx->encrypt ? kTagLen : ctx->tag_len)) {
    ctx->tag_failed = !ctx->encrypt;
    return 0;
  }
  if (ctx->encrypt) ctx->tag_len = kTagLen;
  ctx->iv_state = IvState::kFinished;
  return 1;
}

// A message under way or begun by init (IV state "copied" or "started",
// which imply a key) and no TLS record pending: update and final go
// straight to the engine, and the IV is "copied" from then on. Everything
// else takes GcmProcess, out of line, so that the common case's functions
// save few registers (BENCHMARKS.md, "Instructions per record").
inline bool UnderWay(const GcmCtx *ctx) {
  return (ctx->iv_state == IvState::kStarted ||
          ctx->iv_state == IvState::kCopied) &&
         !ctx->tls_record;
}

// The shared body of update, final and cipher: `in` null finalises, `out`
// null with `in` set is AAD.
[[gnu::noinline]] int GcmProcess(GcmCtx *ctx, uint8_t *out, size_t *outl,
                                 const uint8_t *in, size_t len) {
  if (ctx->tls_record) [[unlikely]] {
    return TlsRecord(ctx, out, outl, in, len);
  }
  *outl = 0;
  if (ctx->iv_state != IvState::kCopied && !BeginMessage(ctx, in == nullptr)) {
    return 0;
  }
  if (in == nullptr) return FinishMessage(ctx);
  const bool ok = out == nullptr ? ctx->engine.Aad({in, len})
                                 : ctx->engine.Crypt(out, in, len);
  if (!ok) return 0;
  *outl = len;
  return 1;
}

int GcmSetCtxParams(void *vctx, const OSSL_PARAM params[]) noexcept;

// Init's key. Out of line: an init without one (every TLS 1.3 record's)
// saves no registers for it.
[[gnu::noinline]] bool SetKey(GcmCtx *ctx, const unsigned char *key,
                              size_t key_len) {
  if (key_len != ctx->key_len()) {
    ERR_raise(ERR_LIB_PROV, PROV_R_INVALID_KEY_LENGTH);
    return false;
  }
  ctx->engine.SetKey({key, key_len});
  ctx->key_set = true;
  ctx->tls_enc_records = 0;
  if (ctx->iv_state == IvState::kCopied) {
    ctx->iv_state = IvState::kInterrupted;
  }
  return true;
}

// The default provider's re-init: key, IV and parameters each optional. A
// message under way (IV state "copied") goes on in a new direction. A key
// ends it: the default provider would go on from a GCM state its key setup
// zeroed (keystream E(K, 0), E(K, 1), ... whatever the IV, the same for
// every message re-keyed that way); aesmux requires a new IV (docs/differences.md).
[[gnu::always_inline]] inline int GcmInit(GcmCtx *ctx, const unsigned char *key,
                                          size_t key_len,
                                          const unsigned char *iv,
                                          size_t iv_len,
                                          const OSSL_PARAM params[],
                                          bool encrypt) {
  // A message begun by an earlier init and not yet fed is that init's
  // buffered IV: this one may change what the message starts with.
  if (ctx->iv_state == IvState::kStarted) ctx->iv_state = IvState::kBuffered;
  if (ctx->iv_state == IvState::kCopied && iv == nullptr &&
      key == nullptr && encrypt != ctx->encrypt &&
      !ctx->engine.SwitchDirection(encrypt ? Direction::kEncrypt
                                           : Direction::kDecrypt)) {
    ERR_raise(ERR_LIB_PROV, PROV_R_CIPHER_OPERATION_FAILED);
    return 0;
  }
  ctx->encrypt = encrypt;
  if (iv != nullptr) {
    if (iv_len == 0 || iv_len > kMaxIvLen) {
      ERR_raise(ERR_LIB_PROV, PROV_R_INVALID_IV_LENGTH);
      return 0;
    }
    // TLS's 12-byte IV copied inline, not by a call into libc per record,
    // and with no question of room.
    if (iv_len == kDefaultIvLen) {
      std::memcpy(ctx->iv.data(), iv, kDefaultIvLen);
    } else {
      // Fails only for a caller that passes a longer IV than the IV
      // length it set (EVP passes that length), and then as an invalid
      // IV does.
      if (!ctx->iv.Reserve(iv_len)) {
        ERR_raise(ERR_LIB_PROV, ERR_R_MALLOC_FAILURE);
        return 0;
      }
      std::memcpy(ctx->iv.data(), iv, iv_len);
    }
    ctx->iv_len = iv_len;
    ctx->iv_state = IvState::kBuffered;
  }
  if (key != nullptr && !SetKey(ctx, key, key_len)) return 0;
  ctx->engine.CancelQueued();  // what an abandoned ASYNC job left queued
  // EVP_CipherInit_ex passes no parameters (every TLS 1.3 record): no call
  // to find none (BENCHMARKS.md, "Instructions per record").
  if (params != nullptr && !GcmSetCtxParams(ctx, params)) return 0;
  // The message begins now where that cannot fail (a TLS 1.3 record's init
  // gives its nonce, then come AAD, payload and final), so that its first
  // update needs no step of its own.
  if (ctx->key_set && ctx->iv_state == IvState::kBuffered &&
      ctx->engine.StartsAtOnce()) {
    BeginIvMessage(ctx);
    ctx->iv_state = IvState::kStarted;
    ctx->engine.StartAtOnce(ctx->direction(), {ctx->iv.data(), ctx->iv_len});
  }
  return 1;
}

void *GcmNewCtx(void *provctx, Alg alg) noexcept {
  GcmCtx *ctx = nullptr;
  try {
    // The engine asks the router whether a message's length matters,
    // which may settle the afalg path (Router::LengthMatters throws
    // nothing; this is the dispatch function's guard).
    ctx = new (std::nothrow)
        GcmCtx(static_cast<ProviderContext *>(provctx), alg);
  } catch (const std::bad_alloc &) {
  }
  if (ctx == nullptr) ERR_raise(ERR_LIB_PROV, ERR_R_MALLOC_FAILURE);
  return ctx;
}

void GcmFreeCtx(void *vctx) noexcept { delete static_cast<GcmCtx *>(vctx); }

void *GcmDupCtx(void *vctx) noexcept {
  const auto *in = static_cast<const GcmCtx *>(vctx);
  auto *out = new (std::nothrow) GcmCtx(in->provider, in->alg);
  if (out == nullptr) {
    ERR_raise(ERR_LIB_PROV, ERR_R_MALLOC_FAILURE);
    return nullptr;
  }
  if (!out->iv.CopyFrom(in->iv)) {
    delete out;
    ERR_raise(ERR_LIB_PROV, ERR_R_MALLOC_FAILURE);
    return nullptr;
  }
  if (!out->engine.CopyFrom(in->engine)) {
    delete out;
    return nullptr;
  }
  static_cast<GcmState &>(*out) = *in;
  return out;
}

int GcmEncryptInit(void *vctx, const unsigned char *key, size_t key_len,
                   const unsigned char *iv, size_t iv_len,
                   const OSSL_PARAM params[]) noexcept {
  return GcmInit(static_cast<GcmCtx *>(vctx), key, key_len, iv, iv_len,
                 params, true);
}

int GcmDecryptInit(void *vctx, const unsigned char *key, size_t key_len,
                   const unsigned char *iv, size_t iv_len,
                   const OSSL_PARAM params[]) noexcept {
  return GcmInit(static_cast<GcmCtx *>(vctx), key, key_len, iv, iv_len,
                 params, false);
}

int GcmUpdate(void *vctx, unsigned char *out, size_t *outl, size_t outsize,
              const unsigned char *in, size_t inl) noexcept {
  auto *ctx = static_cast<GcmCtx *>(vctx);
  // No input with a length finishes the message, as in the default
  // provider: GcmProcess.
  if (UnderWay(ctx) && in != nullptr && inl != 0 && outsize >= inl)
      [[likely]] {
    ctx->iv_state = IvState::kCopied;
    // Set before the call, so that nothing is kept across it for after.
    *outl = inl;
    if (out == nullptr ? ctx->engine.Aad({in, inl})
                       : ctx->engine.Crypt(out, in, inl)) [[likely]] {
      return 1;
    }
    *outl = 0;
    ERR_raise(ERR_LIB_PROV, PROV_R_CIPHER_OPERATION_FAILED);
    return 0;
  }
  if (inl == 0) {
    *outl = 0;
    return 1;
  }
  if (outsize < inl) {
    ERR_raise(ERR_LIB_PROV, PROV_R_OUTPUT_BUFFER_TOO_SMALL);
    return 0;
  }
  if (!GcmProcess(ctx, out, outl, in, inl)) {
    ERR_raise(ERR_LIB_PROV, PROV_R_CIPHER_OPERATION_FAILED);
    return 0;
  }
  return 1;
}

// A tag mismatch fails without an error on the queue, as in the default
// provider.
int GcmFinal(void *vctx, unsigned char *out, size_t *outl,
             size_t) noexcept {
  auto *ctx = static_cast<GcmCtx *>(vctx);
  if (UnderWay(ctx)) [[likely]] {
    ctx->iv_state = IvState::kCopied;
    *outl = 0;
    return FinishMessage(ctx);
  }
  if (!GcmProcess(ctx, out, outl, nullptr, 0)) return 0;
  *outl = 0;
  return 1;
}

int GcmCipher(void *vctx, unsigned char *out, size_t *outl, size_t outsize,
              const unsigned char *in, size_t inl) noexcept {
  auto *ctx = static_cast<GcmCtx *>(vctx);
  if (outsize < inl) {
    ERR_raise(ERR_LIB_PROV, PROV_R_OUTPUT_BUFFER_TOO_SMALL);
    return 0;
  }
  if (!GcmProcess(ctx, out, outl, in, inl)) return 0;
  *outl = inl;
  return 1;
}

// The IV as "iv" and "updated-iv": a copy first, else a pointer.
bool GetIv(GcmCtx *ctx, OSSL_PARAM *p) {
  if (ctx->iv_state == IvState::kUninitialised) return false;
  // The IV may be handed out as a pointer (EVP_CIPHER_CTX_iv_noconst) and
  // written through it: a message begun on it by init begins again, from
  // the buffer, at the first update.
  if (ctx->iv_state == IvState::kStarted) ctx->iv_state = IvState::kBuffered;
  if (ctx->iv_len > p->data_size &&
      (p->data != nullptr || !AnswersGcmSizeQueries())) {
    ERR_raise(ERR_LIB_PROV, PROV_R_INVALID_IV_LENGTH);
    return false;
  }
  if (!SetIvOctets(p, ctx->iv.data(), ctx->iv_len, false)) {
    ERR_raise(ERR_LIB_PROV, PROV_R_FAILED_TO_SET_PARAMETER);
    return false;
  }
  return true;
}

bool GetTag(GcmCtx *ctx, OSSL_PARAM *p) {
  const size_t size = p->data_size;
  // The tag exists only after an encryption has finished. Asked for
  // without a buffer, 3.6 reports the size asked for.
  if (((size == 0 || size > kTagLen) &&
       (p->data != nullptr || !AnswersGcmSizeQueries())) ||
      !ctx->encrypt || !ctx->tag_len) {
    ERR_raise(ERR_LIB_PROV, PROV_R_INVALID_TAG);
    return false;
  }
  // OSSL_PARAM_set_octet_string's common case inline: the whole tag into
  // an octet string of its size (EVP_CTRL_AEAD_GET_TAG, once per record).
  if (p->data_type == OSSL_PARAM_OCTET_STRING && p->data != nullptr &&
      size == kTagLen) {
    std::memcpy(p->data, ctx->buf, kTagLen);
    p->return_size = kTagLen;
    return true;
  }
  if (!OSSL_PARAM_set_octet_string(p, ctx->buf, size)) {
    ERR_raise(ERR_LIB_PROV, PROV_R_FAILED_TO_SET_PARAMETER);
    return false;
  }
  return true;
}

// The keys get_ctx_params serves, in the default provider's order.
enum GetKey { kGetIvLen, kGetKeyLen, kGetTagLen, kGetIv, kGetUpdatedIv,
              kGetTlsAadPad, kGetTag, kGetTlsIvGen, kGetIvGenerated };
constexpr std::array<const char *, 9> kGetKeys = {
    OSSL_CIPHER_PARAM_IVLEN,          OSSL_CIPHER_PARAM_KEYLEN,
    OSSL_CIPHER_PARAM_AEAD_TAGLEN,    OSSL_CIPHER_PARAM_IV,
    OSSL_CIPHER_PARAM_UPDATED_IV,     OSSL_CIPHER_PARAM_AEAD_TLS1_AAD_PAD,
    OSSL_CIPHER_PARAM_AEAD_TAG,       OSSL_CIPHER_PARAM_AEAD_TLS1_GET_IV_GEN,
    kIvGeneratedKey};

bool GetOne(GcmCtx *ctx, size_t key, OSSL_PARAM *p) {
  switch (key) {
    case kGetIvLen: return SetSize(p, ctx->iv_len);
    case kGetKeyLen: return SetSize(p, ctx->key_len());
    case kGetTagLen:
      return SetSize(p, ctx->tag_len != 0 ? ctx->tag_len : kTagLen);
    case kGetIv:
    case kGetUpdatedIv: return GetIv(ctx, p);
    case kGetTlsAadPad: return SetSize(p, ctx->tls_aad_pad);
    case kGetTag: return GetTag(ctx, p);
    case kGetTlsIvGen:
      return p->data != nullptr && p->data_type == OSSL_PARAM_OCTET_STRING &&
             GetIvGen(ctx, static_cast<uint8_t *>(p->data), p->data_size);
    case kGetIvGenerated:
      return !ReportsIvGenerated() ||
             OSSL_PARAM_set_uint(p, ctx->iv_generated ? 1 : 0);
  }
  return true;
}

int GcmGetCtxParams(void *vctx, OSSL_PARAM params[]) noexcept {
  auto *ctx = static_cast<GcmCtx *>(vctx);
  return ForEachParam<kGetKeys, GcmParamWalk, kGetTag>(
             params,
             [ctx](size_t key, OSSL_PARAM *p) { return GetOne(ctx, key, p); })
             ? 1
             : 0;
}

bool SetTag(GcmCtx *ctx, const OSSL_PARAM *p) {
  void *tag = ctx->buf;
  size_t size = 0;
  // OSSL_PARAM_get_octet_string's common case inline: a whole tag
  // (EVP_CTRL_AEAD_SET_TAG, once per record decrypted).
  if (p->data_type == OSSL_PARAM_OCTET_STRING && p->data != nullptr &&
      p->data_size == kTagLen) {
    std::memcpy(ctx->buf, p->data, kTagLen);
    size = kTagLen;
  } else if (!OSSL_PARAM_get_octet_string(p, &tag, kTagLen, &size)) {
    ERR_raise(ERR_LIB_PROV, PROV_R_FAILED_TO_GET_PARAMETER);
    return false;
  }
  if (size == 0 || ctx->encrypt) {
    ERR_raise(ERR_LIB_PROV, PROV_R_INVALID_TAG);
    return false;
  }
  ctx->tag_len = size;
  ctx->engine.ExpectTag({ctx->buf, size});
  return true;
}

bool SetIvLen(GcmCtx *ctx, const OSSL_PARAM *p) {
  size_t iv_len = 0;
  if (!OSSL_PARAM_get_size_t(p, &iv_len)) {
    ERR_raise(ERR_LIB_PROV, PROV_R_FAILED_TO_GET_PARAMETER);
    return false;
  }
  if (iv_len == 0 || iv_len > kMaxIvLen) {
    ERR_raise(ERR_LIB_PROV, PROV_R_INVALID_IV_LENGTH);
    return false;
  }
  if (!ctx->iv.Reserve(iv_len)) {
    ERR_raise(ERR_LIB_PROV, ERR_R_MALLOC_FAILURE);
    return false;
  }
  if (iv_len != ctx->iv_len) {
    // An IV already set (or drawn) no longer matches: require a new one.
    // A message a key interrupted ends too, as in the default provider,
    // whose final then makes no tag.
    if (ctx->iv_state != IvState::kUninitialised) {
      ctx->iv_state = IvState::kFinished;
    }
    ctx->iv_len = iv_len;
  }
  return true;
}

bool SetTlsAadParam(GcmCtx *ctx, const OSSL_PARAM *p) {
  if (p->data_type != OSSL_PARAM_OCTET_STRING) {
    ERR_raise(ERR_LIB_PROV, PROV_R_FAILED_TO_GET_PARAMETER);
    return false;
  }
  const size_t pad =
      SetTlsAad(ctx, static_cast<const uint8_t *>(p->data), p->data_size);
  if (pad == 0) {
    ERR_raise(ERR_LIB_PROV, PROV_R_INVALID_AAD);
    return false;
  }
  ctx->tls_aad_pad = pad;
  return true;
}

// The keys set_ctx_params serves, in the default provider's order.
enum SetKey { kSetTag, kSetIvLen, kSetTlsAad, kSetTlsIvFixed, kSetTlsIvInv };
constexpr std::array<const char *, 5> kSetKeys = {
    OSSL_CIPHER_PARAM_AEAD_TAG, OSSL_CIPHER_PARAM_AEAD_IVLEN,
    OSSL_CIPHER_PARAM_AEAD_TLS1_AAD, OSSL_CIPHER_PARAM_AEAD_TLS1_IV_FIXED,
    OSSL_CIPHER_PARAM_AEAD_TLS1_SET_IV_INV};

bool SetOne(GcmCtx *ctx, size_t key, const OSSL_PARAM *p) {
  switch (key) {
    case kSetTag: return SetTag(ctx, p);
    case kSetIvLen: return SetIvLen(ctx, p);
    case kSetTlsAad: return SetTlsAadParam(ctx, p);
    case kSetTlsIvFixed:
      if (p->data_type != OSSL_PARAM_OCTET_STRING ||
          !SetTlsIvFixed(ctx, static_cast<const uint8_t *>(p->data),
                         p->data_size)) {
        ERR_raise(ERR_LIB_PROV, PROV_R_FAILED_TO_GET_PARAMETER);
        return false;
      }
      return true;
    case kSetTlsIvInv:
      return p->data != nullptr && p->data_type == OSSL_PARAM_OCTET_STRING &&
             SetIvInv(ctx, static_cast<const uint8_t *>(p->data),
                      p->data_size);
  }
  return true;
}

int GcmSetCtxParams(void *vctx, const OSSL_PARAM params[]) noexcept {
  auto *ctx = static_cast<GcmCtx *>(vctx);
  return ForEachParam<kSetKeys, GcmParamWalk>(params,
                                [ctx](size_t key, const OSSL_PARAM *p) {
                                  return SetOne(ctx, key, p);
                                })
             ? 1
             : 0;
}

// "iv-generated" is listed where the running libcrypto's default provider
// reports it.
constexpr std::array<OSSL_PARAM, 10> kGettableWithIvGenerated = {{
    OSSL_PARAM_size_t(OSSL_CIPHER_PARAM_KEYLEN, nullptr),
    OSSL_PARAM_size_t(OSSL_CIPHER_PARAM_IVLEN, nullptr),
    OSSL_PARAM_size_t(OSSL_CIPHER_PARAM_AEAD_TAGLEN, nullptr),
    OSSL_PARAM_octet_string(OSSL_CIPHER_PARAM_IV, nullptr, 0),
    OSSL_PARAM_octet_string(OSSL_CIPHER_PARAM_UPDATED_IV, nullptr, 0),
    OSSL_PARAM_octet_string(OSSL_CIPHER_PARAM_AEAD_TAG, nullptr, 0),
    OSSL_PARAM_size_t(OSSL_CIPHER_PARAM_AEAD_TLS1_AAD_PAD, nullptr),
    OSSL_PARAM_octet_string(OSSL_CIPHER_PARAM_AEAD_TLS1_GET_IV_GEN, nullptr,
                            0),
    OSSL_PARAM_uint(kIvGeneratedKey, nullptr),
    OSSL_PARAM_END}};
constexpr auto kGettable = FirstParams<8>(kGettableWithIvGenerated);

const OSSL_PARAM *GcmGettableCtxParams(void *, void *) noexcept {
  return ReportsIvGenerated() ? kGettableWithIvGenerated.data()
                              : kGettable.data();
}

const OSSL_PARAM *GcmSettableCtxParams(void *, void *) noexcept {
  static const OSSL_PARAM kSettable[] = {
      OSSL_PARAM_size_t(OSSL_CIPHER_PARAM_AEAD_IVLEN, nullptr),
      OSSL_PARAM_octet_string(OSSL_CIPHER_PARAM_AEAD_TAG, nullptr, 0),
      OSSL_PARAM_octet_string(OSSL_CIPHER_PARAM_AEAD_TLS1_AAD, nullptr, 0),
      OSSL_PARAM_octet_string(OSSL_CIPHER_PARAM_AEAD_TLS1_IV_FIXED, nullptr,
                              0),
      OSSL_PARAM_octet_string(OSSL_CIPHER_PARAM_AEAD_TLS1_SET_IV_INV, nullptr,
                              0),
      OSSL_PARAM_END};
  return kSettable;
}

struct GcmFamily {
  template <Alg kAlg>
  static void *NewCtx(void *provctx) noexcept {
    return GcmNewCtx(provctx, kAlg);
  }
  static constexpr auto FreeCtx = GcmFreeCtx;
  static constexpr auto DupCtx = GcmDupCtx;
  static constexpr auto EncryptInit = GcmEncryptInit;
  static constexpr auto DecryptInit = GcmDecryptInit;
  static constexpr auto Update = GcmUpdate;
  static constexpr auto Final = GcmFinal;
  static constexpr auto Cipher = GcmCipher;
  static constexpr auto GetCtxParams = GcmGetCtxParams;
  static constexpr auto SetCtxParams = GcmSetCtxParams;
  static constexpr auto GettableCtxParams = GcmGettableCtxParams;
  static constexpr auto SettableCtxParams = GcmSettableCtxParams;
};

}  // namespace
}  // namespace gcm

const OSSL_DISPATCH *GcmDispatch(core::Alg alg) {
  return FamilyDispatch<core::Family::kGcm, gcm::GcmFamily>(alg);
}

}  // namespace aesmux::openssl
