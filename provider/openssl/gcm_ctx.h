// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
// AES-GCM's EVP contract state (cipher_gcm.cc): shared by the dispatch
// functions there and the TLS 1.2 record mode and IV generation in
// cipher_gcm_tls.cc. Internal to the OpenSSL edge.
#ifndef AESMUX_PROVIDER_OPENSSL_GCM_CTX_H_
#define AESMUX_PROVIDER_OPENSSL_GCM_CTX_H_

#include <openssl/crypto.h>
#include <openssl/evp.h>

#include <cstddef>
#include <cstdint>

#include "provider/openssl/generic_ctx.h"
#include "provider/openssl/iv_buffer.h"
#include "provider/route/gcm_engine.h"

namespace aesmux::openssl::gcm {

using core::Alg;
using core::Direction;

// tlsivfixed's length that restores a whole IV (OpenSSH).
inline constexpr size_t kWholeIv = static_cast<size_t>(-1);
inline constexpr size_t kDefaultIvLen = 12;
inline constexpr size_t kTagLen = 16;
// TLS 1.2 GCM records: explicit IV ‖ payload ‖ tag; 13-byte AAD.
inline constexpr size_t kTlsExplicitIvLen = EVP_GCM_TLS_EXPLICIT_IV_LEN;  // 8
inline constexpr size_t kTlsFixedIvLen = EVP_GCM_TLS_FIXED_IV_LEN;        // 4
inline constexpr size_t kTlsAadLen = EVP_AEAD_TLS1_AAD_LEN;               // 13

// kStarted: buffered, with the engine's message already begun on it by the
// init that made it so (where that cannot fail), so that the first update
// or final goes straight to the engine; in every other respect kBuffered,
// and any later init makes it kBuffered again.
// kInterrupted: finished because a key ended the message under way
// (GcmInit). The default provider's message would go on, and its
// encrypting final would make a tag and set the tag length to 16: aesmux
// refuses that final but sets the length, and the IV is then kFinished.
enum class IvState : uint8_t {
  kUninitialised,
  kBuffered,
  kStarted,
  kCopied,
  kFinished,
  kInterrupted
};

inline bool IsFinished(IvState state) {
  return state == IvState::kFinished || state == IvState::kInterrupted;
}

// The EVP contract's state but the IV's storage: plain values, copied whole by
// dupctx (a field added here is copied without anyone remembering to). Lengths
// are bytes, not size_t, and the fields are in order of alignment: every keyed
// context holds one (BENCHMARKS.md, "What does loading aesmux cost: start-up
// and memory?").
struct GcmState {
  GcmState(ProviderContext *provider_context, Alg algorithm)
      : provider(provider_context), alg(algorithm) {}

  Direction direction() const {
    return encrypt ? Direction::kEncrypt : Direction::kDecrypt;
  }
  size_t key_len() const { return core::Info(alg).key_len; }

  ProviderContext *provider;
  uint64_t tls_enc_records = 0;
  // The tag (set to decrypt, made by encrypting) and the TLS record header
  // (tlsaad) share one buffer, as in the default provider: a tag read
  // after tlsaad begins with the header's bytes.
  uint8_t buf[kTagLen] = {};
  static_assert(kTlsAadLen <= kTagLen);

  Alg alg;
  bool encrypt = false;
  bool key_set = false;
  // 1..kMaxIvLen; GcmCtx::iv has room for it (IvBuffer::Reserve).
  uint8_t iv_len = kDefaultIvLen;
  static_assert(kMaxIvLen <= UINT8_MAX);
  IvState iv_state = IvState::kUninitialised;
  bool iv_gen = false;  // TLS: the IV's last 8 bytes are a counter
  // An IV was ever drawn at random ("iv-generated"): never cleared, as in
  // the default provider.
  bool iv_generated = false;
  // Set (1..16) by a decryption's settag or an encryption's final; until
  // then 0, and get_ctx_params reports 16.
  uint8_t tag_len = 0;
  // A decryption's final found the tag wrong: the message may go on, but
  // no later final of it succeeds (docs/differences.md).
  bool tag_failed = false;
  // TLS 1.2 record mode: set by tlsaad (even one refused) for the next
  // update only; the header is the first kTlsAadLen bytes of buf.
  bool tls_record = false;
  uint8_t tls_aad_pad = 0;  // 0 or kTagLen
};

// The state, the IV's storage and the engine, each copied by dupctx in its
// own way (GcmDupCtx): the two that can fail to copy are not in GcmState.
// (iv, 17 bytes aligned to 1, takes the end of GcmState's padding.)
struct GcmCtx : GcmState {
  GcmCtx(ProviderContext *provider_context, Alg algorithm)
      : GcmState(provider_context, algorithm),
        engine(provider_context->router, algorithm) {}
  ~GcmCtx() { OPENSSL_cleanse(buf, sizeof(buf)); }

  IvBuffer iv;  // iv_len bytes of it are the IV
  route::GcmEngine engine;
};

// A message begins on the current IV ("setiv"): the contract's state for
// it. The IV state is the caller's to advance.
inline void BeginIvMessage(GcmCtx *ctx) {
  ctx->tag_failed = false;
  if (ctx->iv_state == IvState::kInterrupted) {
    ctx->iv_state = IvState::kFinished;
  }
}

// Starts the engine's message on the current IV, as BeginIvMessage.
inline bool StartMessage(GcmCtx *ctx) {
  BeginIvMessage(ctx);
  return ctx->engine.Start(ctx->direction(), {ctx->iv.data(), ctx->iv_len});
}

// SP 800-38D 8.2.2: draws a random IV of at least 96 bits (buffered).
bool GenerateIv(GcmCtx *ctx);
// tlsivgen: starts a message on the current IV, hands out its last
// `out_len` bytes (all of it for 0 or more than the IV) and advances the
// invocation field for the next record.
bool GetIvGen(GcmCtx *ctx, uint8_t *out, size_t out_len);
// tlsivinv: the peer's explicit IV replaces the IV's last `len` bytes.
bool SetIvInv(GcmCtx *ctx, const uint8_t *in, size_t len);
// tlsaad: the record header for the next update; returns the extra output
// the record needs (the tag), or 0 if the AAD is invalid.
size_t SetTlsAad(GcmCtx *ctx, const uint8_t *aad, size_t len);
// tlsivfixed: the fixed part of the IV; (size_t)-1 restores a whole IV.
bool SetTlsIvFixed(GcmCtx *ctx, const uint8_t *iv, size_t len);
// One TLS 1.2 record, in place: explicit IV ‖ payload ‖ tag.
int TlsRecord(GcmCtx *ctx, uint8_t *out, size_t *outl, const uint8_t *in,
              size_t len);

}  // namespace aesmux::openssl::gcm

#endif  // AESMUX_PROVIDER_OPENSSL_GCM_CTX_H_
