// AES-GCM: the default provider's AEAD context, IV state machine and TLS 1.2
// record mode, over the router's GcmEngine.
//
// IV lifecycle: an IV given at init is "buffered"; the message starts (and
// the engine is routed) on the first update; final "finishes" it, after which
// updates fail until a new IV is set, so an IV is never reused by accident.
// Encrypting without an IV draws a random one.
//
// This file keeps the EVP contract's state (GcmState: the IV and its state,
// tag, TLS fields), a plain value that dupctx copies whole; the message
// itself (its path, GHASH state, buffered AAD) is the GcmEngine's.
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
#include "provider/openssl/generic_ctx.h"
#include "provider/route/gcm_engine.h"

namespace aesmux::openssl {
namespace {

using core::Alg;
using core::Direction;

// tlsivfixed's length that restores a whole IV (OpenSSH).
constexpr size_t kWholeIv = static_cast<size_t>(-1);
constexpr size_t kDefaultIvLen = 12;
constexpr size_t kMaxIvLen = 128;
constexpr size_t kTagLen = 16;
// TLS 1.2 GCM records: explicit IV ‖ payload ‖ tag; 13-byte AAD.
constexpr size_t kTlsExplicitIvLen = EVP_GCM_TLS_EXPLICIT_IV_LEN;  // 8
constexpr size_t kTlsFixedIvLen = EVP_GCM_TLS_FIXED_IV_LEN;        // 4
constexpr size_t kTlsAadLen = EVP_AEAD_TLS1_AAD_LEN;               // 13

// kInterrupted: finished because a key ended the message under way
// (GcmInit). The default provider's message would go on, and its
// encrypting final would make a tag and set the tag length to 16: aesmux
// refuses that final but sets the length, and the IV is then kFinished.
enum class IvState { kUninitialised, kBuffered, kCopied, kFinished,
                     kInterrupted };

bool IsFinished(IvState state) {
  return state == IvState::kFinished || state == IvState::kInterrupted;
}

// The EVP contract's state: plain values, copied whole by dupctx (a field
// added here is copied without anyone remembering to).
struct GcmState {
  GcmState(ProviderContext *provider_context, Alg algorithm)
      : provider(provider_context),
        alg(algorithm),
        key_len(core::Info(algorithm).key_len) {}

  Direction direction() const {
    return encrypt ? Direction::kEncrypt : Direction::kDecrypt;
  }

  ProviderContext *provider;
  Alg alg;
  size_t key_len;

  bool encrypt = false;
  bool key_set = false;
  size_t iv_len = kDefaultIvLen;
  uint8_t iv[kMaxIvLen] = {};
  IvState iv_state = IvState::kUninitialised;
  bool iv_gen = false;  // TLS: the IV's last 8 bytes are a counter
  // Set by a decryption's settag or an encryption's final; until then
  // get_ctx_params reports 16.
  std::optional<size_t> tag_len;
  // The tag (set to decrypt, made by encrypting) and the TLS record header
  // (tlsaad) share one buffer, as in the default provider: a tag read
  // after tlsaad begins with the header's bytes.
  uint8_t buf[kTagLen] = {};
  static_assert(kTlsAadLen <= kTagLen);
  // A decryption's final found the tag wrong: the message may go on, but
  // no later final of it succeeds (README).
  bool tag_failed = false;
  // TLS 1.2 record mode: set by tlsaad (even one refused) for the next
  // update only; the header is the first kTlsAadLen bytes of buf.
  bool tls_record = false;
  size_t tls_aad_pad = 0;
  uint64_t tls_enc_records = 0;
};

struct GcmCtx : GcmState {
  GcmCtx(ProviderContext *provider_context, Alg algorithm)
      : GcmState(provider_context, algorithm),
        engine(provider_context->router, algorithm) {}
  ~GcmCtx() {
    OPENSSL_cleanse(iv, sizeof(iv));
    OPENSSL_cleanse(buf, sizeof(buf));
  }

  route::GcmEngine engine;
};

// Starts the engine's message on the current IV ("setiv"); the IV state is
// the caller's to advance.
bool StartMessage(GcmCtx *ctx) {
  ctx->tag_failed = false;
  if (ctx->iv_state == IvState::kInterrupted) {
    ctx->iv_state = IvState::kFinished;
  }
  return ctx->engine.Start(ctx->direction(), {ctx->iv, ctx->iv_len});
}

// SP 800-38D 8.2.2: a random IV of at least 96 bits.
bool GenerateIv(GcmCtx *ctx) {
  if (ctx->iv_len < kDefaultIvLen ||
      !ctx->provider->fallback->RandomBytes(ctx->iv, ctx->iv_len)) {
    return false;
  }
  ctx->iv_state = IvState::kBuffered;
  return true;
}

// Increments the last 8 bytes of the IV as a big-endian counter.
void IncrementInvocationField(GcmCtx *ctx) {
  uint8_t *counter = ctx->iv + ctx->iv_len - 8;
  for (int i = 7; i >= 0; --i) {
    if (++counter[i] != 0) break;
  }
}

// tlsivgen: starts a message on the current IV, hands out its last
// `out_len` bytes (all of it for 0 or more than the IV) and advances the
// invocation field for the next record. An IV shortened below that 8-byte
// field after tlsivfixed is refused (OpenSSL 3.0 increments the bytes in
// front of its IV).
bool GetIvGen(GcmCtx *ctx, uint8_t *out, size_t out_len) {
  if (!ctx->iv_gen || !ctx->key_set || ctx->iv_len < kTlsExplicitIvLen ||
      !StartMessage(ctx)) {
    return false;
  }
  if (out_len == 0 || out_len > ctx->iv_len) out_len = ctx->iv_len;
  std::memcpy(out, ctx->iv + ctx->iv_len - out_len, out_len);
  IncrementInvocationField(ctx);
  ctx->iv_state = IvState::kCopied;
  return true;
}

// tlsivinv: the peer's explicit IV replaces the IV's last `len` bytes.
bool SetIvInv(GcmCtx *ctx, const uint8_t *in, size_t len) {
  if (!ctx->iv_gen || !ctx->key_set || ctx->encrypt || len > ctx->iv_len) {
    return false;
  }
  std::memcpy(ctx->iv + ctx->iv_len - len, in, len);
  if (!StartMessage(ctx)) return false;
  ctx->iv_state = IvState::kCopied;
  return true;
}

// tlsaad: keeps the record header for the next update and corrects its
// length field for the explicit IV (and the tag when decrypting). Returns
// the extra output the record needs (the tag), or 0 if the AAD is invalid.
size_t SetTlsAad(GcmCtx *ctx, const uint8_t *aad, size_t len) {
  if (len != kTlsAadLen) return 0;
  std::memcpy(ctx->buf, aad, len);
  ctx->tls_record = true;
  size_t record_len = (size_t{ctx->buf[len - 2]} << 8) | ctx->buf[len - 1];
  if (record_len < kTlsExplicitIvLen) return 0;
  record_len -= kTlsExplicitIvLen;
  if (!ctx->encrypt) {
    if (record_len < kTagLen) return 0;
    record_len -= kTagLen;
  }
  ctx->buf[len - 2] = static_cast<uint8_t>(record_len >> 8);
  ctx->buf[len - 1] = static_cast<uint8_t>(record_len);
  return kTagLen;
}

// tlsivfixed: the fixed part of the IV (4 bytes at least, leaving at least
// 8 for the invocation field, which is random when encrypting); length
// (size_t)-1 restores a whole IV (OpenSSH's aes*-gcm@openssh.com).
bool SetTlsIvFixed(GcmCtx *ctx, const uint8_t *iv, size_t len) {
  if (len == kWholeIv) {
    std::memcpy(ctx->iv, iv, ctx->iv_len);
  } else {
    if (len < kTlsFixedIvLen || len > ctx->iv_len ||
        ctx->iv_len - len < kTlsExplicitIvLen) {
      return false;
    }
    std::memcpy(ctx->iv, iv, len);
    if (ctx->encrypt && !ctx->provider->fallback->RandomBytes(
                            ctx->iv + len, ctx->iv_len - len)) {
      return false;
    }
  }
  ctx->iv_gen = true;
  ctx->iv_state = IvState::kBuffered;
  return true;
}

// One TLS 1.2 record, in place: explicit IV ‖ payload ‖ tag.
[[gnu::noinline]] int TlsRecord(GcmCtx *ctx, uint8_t *out, size_t *outl, const uint8_t *in,
              size_t len) {
  size_t produced = 0;
  int ok = 0;
  if (!ctx->key_set || out != in ||
      len < kTlsExplicitIvLen + kTagLen) {
    goto done;
  }
  // SP 800-38D key/IV uniqueness: stop before the record counter wraps.
  if (ctx->encrypt && ++ctx->tls_enc_records == 0) {
    ERR_raise(ERR_LIB_PROV, PROV_R_TOO_MANY_RECORDS);
    goto done;
  }
  if (ctx->encrypt ? !GetIvGen(ctx, out, kTlsExplicitIvLen)
                   : !SetIvInv(ctx, out, kTlsExplicitIvLen)) {
    goto done;
  }
  {
    uint8_t *payload = out + kTlsExplicitIvLen;
    const size_t payload_len = len - kTlsExplicitIvLen - kTagLen;
    uint8_t *record_tag = payload + payload_len;
    if (!ctx->encrypt) ctx->engine.ExpectTag({record_tag, kTagLen});
    bool sealed = ctx->engine.Aad({ctx->buf, kTlsAadLen}) &&
                  ctx->engine.Crypt(payload, payload, payload_len);
    // The default provider sets the tag length here, before its final.
    if (sealed) ctx->tag_len = kTagLen;
    sealed = sealed && ctx->engine.Finish(record_tag, kTagLen);
    if (!sealed) {
      if (!ctx->encrypt) OPENSSL_cleanse(payload, payload_len);
      goto done;
    }
    produced = ctx->encrypt ? len : payload_len;
    ok = 1;
  }
done:
  if (ctx->iv_state != IvState::kInterrupted) {
    ctx->iv_state = IvState::kFinished;
  }
  ctx->tls_record = false;
  *outl = produced;
  return ok;
}

// Out of line, as TlsRecord and FinishMessage, so that GcmProcess, run for
// every update, saves few registers (BENCHMARKS.md, "Per-record cost").
// Makes the message ready for its first update or final: starts it on the
// buffered IV, or one drawn when encrypting without. False when there is no
// message to go on with (no key, no IV, or it finished), or it cannot start.
[[gnu::noinline]] bool BeginMessage(GcmCtx *ctx, bool finalising) {
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

[[gnu::noinline]] int FinishMessage(GcmCtx *ctx) {
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
  if (!ctx->engine.Finish(ctx->buf, ctx->encrypt ? kTagLen : *ctx->tag_len)) {
    ctx->tag_failed = !ctx->encrypt;
    return 0;
  }
  if (ctx->encrypt) ctx->tag_len = kTagLen;
  ctx->iv_state = IvState::kFinished;
  return 1;
}

// The shared body of update, final and cipher: `in` null finalises, `out`
// null with `in` set is AAD. A message under way (IV state "copied", which
// implies a key) goes straight to the engine.
int GcmProcess(GcmCtx *ctx, uint8_t *out, size_t *outl, const uint8_t *in,
               size_t len) {
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

// The default provider's re-init: key, IV and parameters each optional. A
// message under way (IV state "copied") goes on in a new direction. A key
// ends it: the default provider would go on from a GCM state its key setup
// zeroed (keystream E(K, 0), E(K, 1), ... whatever the IV, the same for
// every message re-keyed that way); aesmux requires a new IV (README).
int GcmInit(GcmCtx *ctx, const unsigned char *key, size_t key_len,
            const unsigned char *iv, size_t iv_len, const OSSL_PARAM params[],
            bool encrypt) {
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
    ctx->iv_len = iv_len;
    // TLS's 12-byte IV copied inline, not by a call into libc per record.
    if (iv_len == kDefaultIvLen) {
      std::memcpy(ctx->iv, iv, kDefaultIvLen);
    } else {
      std::memcpy(ctx->iv, iv, iv_len);
    }
    ctx->iv_state = IvState::kBuffered;
  }
  if (key != nullptr) {
    if (key_len != ctx->key_len) {
      ERR_raise(ERR_LIB_PROV, PROV_R_INVALID_KEY_LENGTH);
      return 0;
    }
    ctx->engine.SetKey({key, key_len});
    ctx->key_set = true;
    ctx->tls_enc_records = 0;
    if (ctx->iv_state == IvState::kCopied) {
      ctx->iv_state = IvState::kInterrupted;
    }
  }
  ctx->engine.CancelQueued();  // what an abandoned ASYNC job left queued
  return GcmSetCtxParams(ctx, params);
}

void *GcmNewCtx(void *provctx, Alg alg) noexcept {
  auto *ctx =
      new (std::nothrow) GcmCtx(static_cast<ProviderContext *>(provctx), alg);
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
  if (ctx->iv_len > p->data_size) {
    ERR_raise(ERR_LIB_PROV, PROV_R_INVALID_IV_LENGTH);
    return false;
  }
  if (!OSSL_PARAM_set_octet_string(p, ctx->iv, ctx->iv_len) &&
      !OSSL_PARAM_set_octet_ptr(p, ctx->iv, ctx->iv_len)) {
    ERR_raise(ERR_LIB_PROV, PROV_R_FAILED_TO_SET_PARAMETER);
    return false;
  }
  return true;
}

bool GetTag(GcmCtx *ctx, OSSL_PARAM *p) {
  const size_t size = p->data_size;
  // The tag exists only after an encryption has finished.
  if (size == 0 || size > kTagLen || !ctx->encrypt || !ctx->tag_len) {
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
              kGetTlsAadPad, kGetTag, kGetTlsIvGen };
constexpr std::array<const char *, 8> kGetKeys = {
    OSSL_CIPHER_PARAM_IVLEN,          OSSL_CIPHER_PARAM_KEYLEN,
    OSSL_CIPHER_PARAM_AEAD_TAGLEN,    OSSL_CIPHER_PARAM_IV,
    OSSL_CIPHER_PARAM_UPDATED_IV,     OSSL_CIPHER_PARAM_AEAD_TLS1_AAD_PAD,
    OSSL_CIPHER_PARAM_AEAD_TAG,       OSSL_CIPHER_PARAM_AEAD_TLS1_GET_IV_GEN};

bool GetOne(GcmCtx *ctx, size_t key, OSSL_PARAM *p) {
  switch (key) {
    case kGetIvLen: return SetSize(p, ctx->iv_len);
    case kGetKeyLen: return SetSize(p, ctx->key_len);
    case kGetTagLen:
      return SetSize(p, ctx->tag_len.value_or(kTagLen));
    case kGetIv:
    case kGetUpdatedIv: return GetIv(ctx, p);
    case kGetTlsAadPad: return SetSize(p, ctx->tls_aad_pad);
    case kGetTag: return GetTag(ctx, p);
    case kGetTlsIvGen:
      return p->data != nullptr && p->data_type == OSSL_PARAM_OCTET_STRING &&
             GetIvGen(ctx, static_cast<uint8_t *>(p->data), p->data_size);
  }
  return true;
}

int GcmGetCtxParams(void *vctx, OSSL_PARAM params[]) noexcept {
  auto *ctx = static_cast<GcmCtx *>(vctx);
  return ForEachParam(params, kGetKeys,
                      [ctx](size_t key, OSSL_PARAM *p) {
                        return GetOne(ctx, key, p);
                      })
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
  if (iv_len != ctx->iv_len) {
    // An IV already set (or drawn) no longer matches: require a new one.
    if (ctx->iv_state == IvState::kBuffered ||
        ctx->iv_state == IvState::kCopied) {
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
  return ForEachParam(params, kSetKeys,
                      [ctx](size_t key, const OSSL_PARAM *p) {
                        return SetOne(ctx, key, p);
                      })
             ? 1
             : 0;
}

const OSSL_PARAM *GcmGettableCtxParams(void *, void *) noexcept {
  static const OSSL_PARAM kGettable[] = {
      OSSL_PARAM_size_t(OSSL_CIPHER_PARAM_KEYLEN, nullptr),
      OSSL_PARAM_size_t(OSSL_CIPHER_PARAM_IVLEN, nullptr),
      OSSL_PARAM_size_t(OSSL_CIPHER_PARAM_AEAD_TAGLEN, nullptr),
      OSSL_PARAM_octet_string(OSSL_CIPHER_PARAM_IV, nullptr, 0),
      OSSL_PARAM_octet_string(OSSL_CIPHER_PARAM_UPDATED_IV, nullptr, 0),
      OSSL_PARAM_octet_string(OSSL_CIPHER_PARAM_AEAD_TAG, nullptr, 0),
      OSSL_PARAM_size_t(OSSL_CIPHER_PARAM_AEAD_TLS1_AAD_PAD, nullptr),
      OSSL_PARAM_octet_string(OSSL_CIPHER_PARAM_AEAD_TLS1_GET_IV_GEN, nullptr,
                              0),
      OSSL_PARAM_END};
  return kGettable;
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

const OSSL_DISPATCH *GcmDispatch(Alg alg) {
  switch (alg) {
    case Alg::kAes128Gcm: return kCipherDispatch<Alg::kAes128Gcm, GcmFamily>;
    case Alg::kAes192Gcm: return kCipherDispatch<Alg::kAes192Gcm, GcmFamily>;
    case Alg::kAes256Gcm: return kCipherDispatch<Alg::kAes256Gcm, GcmFamily>;
    default: return nullptr;
  }
}

}  // namespace aesmux::openssl
