// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
// AES-GCM's TLS 1.2 record mode and IV generation (the tlsivgen, tlsivinv,
// tlsaad and tlsivfixed parameters and EVP_Cipher on a record), on the
// EVP contract state of gcm_ctx.h.
#include <openssl/err.h>
#include <openssl/proverr.h>

#include <cstring>

#include "provider/openssl/gcm_ctx.h"

namespace aesmux::openssl::gcm {
namespace {

// Increments the last 8 bytes of the IV as a big-endian counter.
void IncrementInvocationField(GcmCtx *ctx) {
  uint8_t *counter = ctx->iv.data() + ctx->iv_len - 8;
  for (int i = 7; i >= 0; --i) {
    if (++counter[i] != 0) break;
  }
}

// tlsivgen's checks: an IV shortened below the 8-byte invocation field
// after tlsivfixed is refused (OpenSSL 3.0 increments the bytes in front
// of its IV).
bool CanGenerateIv(const GcmCtx *ctx) {
  return ctx->iv_gen && ctx->key_set && ctx->iv_len >= kTlsExplicitIvLen;
}

// tlsivinv's checks.
bool CanSetIvInv(const GcmCtx *ctx, size_t len) {
  return ctx->iv_gen && ctx->key_set && !ctx->encrypt && len <= ctx->iv_len;
}

}  // namespace

// SP 800-38D 8.2.2: a random IV of at least 96 bits.
bool GenerateIv(GcmCtx *ctx) {
  if (ctx->iv_len < kDefaultIvLen ||
      !ctx->provider->fallback->RandomBytes(ctx->iv.data(), ctx->iv_len)) {
    return false;
  }
  ctx->iv_state = IvState::kBuffered;
  ctx->iv_generated = true;
  return true;
}

// tlsivgen: starts a message on the current IV, hands out its last
// `out_len` bytes (all of it for 0 or more than the IV) and advances the
// invocation field for the next record.
bool GetIvGen(GcmCtx *ctx, uint8_t *out, size_t out_len) {
  if (!CanGenerateIv(ctx) || !StartMessage(ctx)) return false;
  if (out_len == 0 || out_len > ctx->iv_len) out_len = ctx->iv_len;
  std::memcpy(out, ctx->iv.data() + ctx->iv_len - out_len, out_len);
  IncrementInvocationField(ctx);
  ctx->iv_state = IvState::kCopied;
  return true;
}

// tlsivinv: the peer's explicit IV replaces the IV's last `len` bytes.
bool SetIvInv(GcmCtx *ctx, const uint8_t *in, size_t len) {
  if (!CanSetIvInv(ctx, len)) return false;
  std::memcpy(ctx->iv.data() + ctx->iv_len - len, in, len);
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
  uint8_t *buffer = ctx->iv.data();
  if (len == kWholeIv) {
    std::memcpy(buffer, iv, ctx->iv_len);
  } else {
    if (len < kTlsFixedIvLen || len > ctx->iv_len ||
        ctx->iv_len - len < kTlsExplicitIvLen) {
      return false;
    }
    std::memcpy(buffer, iv, len);
    if (ctx->encrypt) {
      if (!ctx->provider->fallback->RandomBytes(buffer + len,
                                                ctx->iv_len - len)) {
        return false;
      }
      ctx->iv_generated = true;
    }
  }
  ctx->iv_gen = true;
  ctx->iv_state = IvState::kBuffered;
  return true;
}

// One TLS 1.2 record, in place: explicit IV ‖ payload ‖ tag, in one call
// of the engine. The IV steps are tlsivgen's (encrypting: the IV's last 8
// bytes go out as the explicit IV, then the invocation field advances) and
// tlsivinv's (decrypting: the record's explicit IV comes in).
int TlsRecord(GcmCtx *ctx, uint8_t *out, size_t *outl, const uint8_t *in,
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
  if (ctx->encrypt) {
    if (!CanGenerateIv(ctx)) goto done;
    std::memcpy(out, ctx->iv.data() + ctx->iv_len - kTlsExplicitIvLen,
                kTlsExplicitIvLen);
  } else {
    if (!CanSetIvInv(ctx, kTlsExplicitIvLen)) goto done;
    std::memcpy(ctx->iv.data() + ctx->iv_len - kTlsExplicitIvLen, out,
                kTlsExplicitIvLen);
  }
  BeginIvMessage(ctx);
  {
    uint8_t *payload = out + kTlsExplicitIvLen;
    const size_t payload_len = len - kTlsExplicitIvLen - kTagLen;
    const bool sealed = ctx->engine.Record(
        ctx->direction(), {ctx->iv.data(), ctx->iv_len},
        {ctx->buf, kTlsAadLen}, payload, payload, payload_len,
        payload + payload_len, route::RecordLayout::kTlsInPlace);
    // The record's IV is used: the next one's invocation field.
    if (ctx->encrypt) IncrementInvocationField(ctx);
    // The default provider sets the tag length before its final.
    ctx->tag_len = kTagLen;
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

}  // namespace aesmux::openssl::gcm
