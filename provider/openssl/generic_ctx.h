// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
// The context shared by the non-AEAD ciphers (ECB, CBC, CTR, XTS): key and
// IV state, partial-block buffer, and the OSSL_PARAMs every one of them
// answers the same way as the default provider's generic cipher context.
#ifndef AESMUX_PROVIDER_OPENSSL_GENERIC_CTX_H_
#define AESMUX_PROVIDER_OPENSSL_GENERIC_CTX_H_

// Layers (DEVELOPERS.md): only what links aesmux_edge includes this.
#if defined(AESMUX_LAYER) && !defined(AESMUX_SEES_edge)
#error "provider/openssl/generic_ctx.h belongs to a layer above the one that includes it"
#endif

#include <openssl/core.h>

#include <cstddef>
#include <cstdint>

#include "provider/core/boxed.h"
#include "provider/openssl/params.h"
#include "provider/openssl/provider_context.h"
#include "provider/openssl/tls_cbc.h"
#include "provider/route/block_engine.h"

namespace aesmux::openssl {

inline constexpr size_t kAesBlock = 16;

// The state is a value: dupctx is the copy constructor, each member
// copying itself (the engine and the boxed parts deeply), so a new member
// is copied without a field list to remember it in. Members are as narrow
// as their values, since every keyed context holds them (BENCHMARKS.md,
// "What does loading aesmux cost: start-up and memory?").
struct GenericCtx {
  GenericCtx(ProviderContext *provider_context, core::Alg algorithm);
  // Throws std::bad_alloc if memory runs out.
  GenericCtx(const GenericCtx &) = default;
  GenericCtx &operator=(const GenericCtx &) = delete;
  ~GenericCtx();

  // First, and [[no_unique_address]]: the small members below go into the
  // tail padding of its key schedule, and the context fits the default
  // provider's size (the static_assert in generic_ctx.cc).
  [[no_unique_address]] route::BlockEngine engine;
  core::Alg alg;
  core::Family family;
  uint8_t key_len;
  uint8_t iv_len;      // 0 for ECB
  uint8_t block_size;  // 16 for ECB and CBC, 1 for the stream-like modes

  bool encrypt = false;
  bool key_set = false;
  bool iv_set = false;
  bool pad = true;
  // XTS: the key's two halves are equal. Such a key may decrypt existing
  // data but never encrypt, whichever way the context reaches encryption
  // (a keyed init, a key-less one changing the direction, a copy).
  bool duplicated_halves = false;
  uint8_t num = 0;      // below kAesBlock
  uint8_t buf_len = 0;  // at most kAesBlock
  uint8_t iv[kAesBlock] = {};   // running IV: CBC chaining value, CTR counter
  uint8_t oiv[kAesBlock] = {};  // IV as given at init
  // ECB/CBC: the partial block held between updates (buf_len bytes). CTR:
  // the keystream block that `num` indexes into.
  uint8_t buf[kAesBlock] = {};
  ProviderContext *provider;
  // TLS record mode (CBC, CTR), set by libssl through tls-version and
  // tls-mac-size; made when either is set. The MAC of the last decrypted
  // record goes to libssl through tls-mac (tls_mac_ptr()): none until a
  // record brings one; for CBC (and ECB) held in `mac` (random if the
  // record's padding was bad), for CTR in the caller's output (`mac_out`),
  // as the default provider does.
  struct Tls {
    Tls() = default;
    Tls(const Tls &) = default;
    ~Tls();
    unsigned int version = 0;
    bool mac_held = false;
    size_t mac_size = 0;
    const uint8_t *mac_out = nullptr;
    uint8_t mac[kMaxTlsMacSize] = {};
  };
  core::Boxed<Tls> tls;
  // CBC cipher pipelines (OpenSSL 3.5+): one IV per pipe.
  struct PipeIvs {
    size_t count = 0;
    uint8_t iv[32][kAesBlock] = {};
  };
  core::Boxed<PipeIvs> pipes;

  unsigned int tls_version() const { return tls ? tls->version : 0; }
  size_t tls_mac_size() const { return tls ? tls->mac_size : 0; }
  const uint8_t *tls_mac_ptr() const {
    if (!tls) return nullptr;
    return tls->mac_held ? tls->mac : tls->mac_out;
  }

  core::Direction direction() const {
    return encrypt ? core::Direction::kEncrypt : core::Direction::kDecrypt;
  }
};

// Dispatch functions shared by the generic families.
void *NewGenericCtx(void *provctx, core::Alg alg) noexcept;
void FreeGenericCtx(void *vctx) noexcept;
void *DupGenericCtx(void *vctx) noexcept;
int GenericGetCtxParams(void *vctx, OSSL_PARAM params[]) noexcept;
const OSSL_PARAM *GenericGettableCtxParams(void *vctx, void *provctx) noexcept;
// ECB, CBC and CTR (XTS has its own init and settable parameters).
int GenericEncryptInit(void *vctx, const unsigned char *key, size_t key_len,
                       const unsigned char *iv, size_t iv_len,
                       const OSSL_PARAM params[]) noexcept;
int GenericDecryptInit(void *vctx, const unsigned char *key, size_t key_len,
                       const unsigned char *iv, size_t iv_len,
                       const OSSL_PARAM params[]) noexcept;
int GenericSetCtxParams(void *vctx, const OSSL_PARAM params[]) noexcept;
const OSSL_PARAM *GenericSettableCtxParams(void *vctx, void *provctx) noexcept;

// Raises PROV_R_CIPHER_OPERATION_FAILED (the default provider's reason)
// for a request of `len` bytes that no path served, with the algorithm,
// direction and length as its data; the path's own reason lies beneath it
// on the queue.
void RaiseNoPathServed(const GenericCtx *ctx, size_t len);

// Stores an IV given at init; raises PROV_R_INVALID_IV_LENGTH if `iv_len` is
// not the context's IV length.
bool SetInitIv(GenericCtx *ctx, const uint8_t *iv, size_t iv_len);
// The key part of an init: the length must be the algorithm's (else
// PROV_R_INVALID_KEY_LENGTH and false); the engine takes the key.
bool SetInitKey(GenericCtx *ctx, const uint8_t *key, size_t key_len);

// The dispatch functions the generic families share (dispatch.h); each
// family adds its Update, Final and Cipher, and XTS replaces a few more.
struct GenericFamily {
  template <core::Alg kAlg>
  static void *NewCtx(void *provctx) noexcept {
    return NewGenericCtx(provctx, kAlg);
  }
  static constexpr auto FreeCtx = FreeGenericCtx;
  static constexpr auto DupCtx = DupGenericCtx;
  static constexpr auto EncryptInit = GenericEncryptInit;
  static constexpr auto DecryptInit = GenericDecryptInit;
  static constexpr auto GetCtxParams = GenericGetCtxParams;
  static constexpr auto SetCtxParams = GenericSetCtxParams;
  static constexpr auto GettableCtxParams = GenericGettableCtxParams;
  static constexpr auto SettableCtxParams = GenericSettableCtxParams;
};

// Per-family dispatch tables.
const OSSL_DISPATCH *BlockDispatch(core::Alg alg);  // ECB, CBC
const OSSL_DISPATCH *CtrDispatch(core::Alg alg);
const OSSL_DISPATCH *XtsDispatch(core::Alg alg);
const OSSL_DISPATCH *GcmDispatch(core::Alg alg);
// The dispatch table of `alg`, from its family's: the provider's algorithm
// table and the ENGINE's ciphers are both made of these.
const OSSL_DISPATCH *CipherDispatch(core::Alg alg);

}  // namespace aesmux::openssl

#endif  // AESMUX_PROVIDER_OPENSSL_GENERIC_CTX_H_
