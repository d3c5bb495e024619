// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
// The software fallback path: OpenSSL's default provider in a private
// library context.
//
// The library context is private (OSSL_LIB_CTX_new), loads only the default
// provider and never sees aesmux, so nothing fetched here can recurse into
// aesmux whatever the application's configuration prefers. It is made, and
// every cipher fetched with "provider=default", on the first request that
// needs it, not when aesmux loads: most processes that load aesmux (through a
// system-wide openssl.cnf) never take the fallback path, and making it would
// be most of what loading aesmux costs (BENCHMARKS.md, "What does loading
// aesmux cost: start-up and memory?"). Contexts call the default provider's
// cipher functions directly, not through EVP: OpenSSL 3 hands any cipher, a
// fetched one too, to an ENGINE set as the default for its algorithm
// (ENGINE_set_default_ciphers, openssl.cnf's default_algorithms), and the
// ENGINE aesmux falls back here.
//
// Errors: functions return false; what OpenSSL raised inside them is dropped
// from the queue, so that the caller raises the default provider's errors.
#ifndef AESMUX_PROVIDER_FALLBACK_FALLBACK_H_
#define AESMUX_PROVIDER_FALLBACK_FALLBACK_H_

// Layers (DEVELOPERS.md): only what links aesmux_fallback includes this.
#if defined(AESMUX_LAYER) && !defined(AESMUX_SEES_fallback)
#error "provider/fallback/fallback.h belongs to a layer above the one that includes it"
#endif

#include <openssl/evp.h>

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "provider/fallback/cipher_functions.h"
#include "provider/core/algorithm.h"

namespace aesmux::fallback {

class FallbackLibrary {
 public:
  // Makes nothing yet: the library context is made on first use.
  FallbackLibrary() = default;
  // Makes the library context and fetches every algorithm now. On failure
  // returns nullptr and describes why in `error`.
  static std::unique_ptr<FallbackLibrary> Create(std::string *error);
  ~FallbackLibrary();
  FallbackLibrary(const FallbackLibrary &) = delete;
  FallbackLibrary &operator=(const FallbackLibrary &) = delete;

  // The default provider's `alg`, and the library context, made on the
  // first call of either (by one thread; the others wait for it). Null if
  // they cannot be made, with PROV_R_UNABLE_TO_INITIALISE_CIPHERS (or
  // ERR_R_MALLOC_FAILURE) on OpenSSL's error queue; a later call tries again.
  const EVP_CIPHER *cipher(core::Alg alg) const {
    return Ready() ? ciphers_[static_cast<size_t>(alg)] : nullptr;
  }
  OSSL_LIB_CTX *libctx() const { return Ready() ? libctx_ : nullptr; }
  // Random bytes from the library context's DRBG (RAND_bytes_ex there: the
  // application's context may prefer aesmux for the DRBG's cipher).
  bool RandomBytes(uint8_t *out, size_t len) const;

 private:
  bool Ready() const {
    return ready_.load(std::memory_order_acquire) || MakeOnce();
  }
  // Makes the library (under a lock that fork() waits for) unless another
  // thread has.
  bool MakeOnce() const;
  // Makes the library; false (with `error` saying why) leaves it empty.
  bool Make(std::string *error);
  void Release();

  // Made lazily by the const accessors: what they return never changes
  // once made, so the library is logically const.
  mutable std::atomic<bool> ready_{false};
  OSSL_LIB_CTX *libctx_ = nullptr;
  OSSL_PROVIDER *provider_ = nullptr;
  std::array<EVP_CIPHER *, core::kNumAlgs> ciphers_{};
};

// One default-provider cipher context of the fallback library, keyed on
// demand. The caller keeps the raw key and passes it to every call; the
// context is (re)keyed only when it has not been keyed yet for that
// direction, so steady-state calls only set the IV.
class FallbackContext {
 public:
  FallbackContext() = default;
  ~FallbackContext();
  FallbackContext(FallbackContext &&other) noexcept;
  FallbackContext &operator=(FallbackContext &&other) noexcept;
  // Deep copy (the provider's dupctx); returns false if that fails.
  bool CopyFrom(const FallbackContext &other);

  // Forgets the key, wiping its schedule: the next call rekeys.
  void Reset();

  // ECB/CBC/CTR/XTS on `len` bytes. `iv` is the CBC chaining value or CTR
  // counter (updated on return) or the XTS tweak (unchanged); null for ECB.
  bool Blocks(const EVP_CIPHER *cipher, std::span<const uint8_t> key,
              core::Direction direction, uint8_t *iv, uint8_t *out,
              const uint8_t *in, size_t len);

  // GCM, one message: Start, then Aad/Crypt in any order the caller allows,
  // then Finish. Finish writes the 16-byte tag when encrypting and checks the
  // first `tag_len` bytes of `tag` when decrypting.
  bool GcmStart(const EVP_CIPHER *cipher, std::span<const uint8_t> key,
                core::Direction direction, std::span<const uint8_t> iv);
  bool GcmAad(std::span<const uint8_t> aad);
  bool GcmCrypt(uint8_t *out, const uint8_t *in, size_t len);
  bool GcmFinish(core::Direction direction, uint8_t tag[16], size_t tag_len);
  // Goes on with the message in `direction` (GCM's schedule serves both).
  bool GcmSwitchDirection(core::Direction direction);
  // A whole GCM message (a TLS 1.2 record) in one sequence of the
  // provider's calls: GcmStart, GcmAad, GcmCrypt and GcmFinish with a
  // 16-byte tag, under one error-queue mark.
  bool GcmRecord(const EVP_CIPHER *cipher, std::span<const uint8_t> key,
                 core::Direction direction, std::span<const uint8_t> iv,
                 std::span<const uint8_t> aad, uint8_t *out,
                 const uint8_t *in, size_t len, uint8_t tag[16]);
  // GcmRecord, in place, on the `len`-byte payload of a TLS 1.2 record:
  // the 8 bytes before `payload` are the explicit IV (the IV's last 8),
  // the 16-byte tag follows it; `aad` is the 13-byte header as GCM
  // authenticates it (its length field counting the payload only). Handed
  // to the default provider as libssl hands it a record: one
  // set_ctx_params (the IV length, tlsaad, the whole IV as tlsivfixed)
  // and one cipher call, not GcmRecord's six. A header whose length field
  // the record layer could not have sent runs as GcmRecord.
  bool GcmTlsRecord(const EVP_CIPHER *cipher, std::span<const uint8_t> key,
                    core::Direction direction, std::span<const uint8_t> iv,
                    std::span<const uint8_t> aad, uint8_t *payload,
                    size_t len);

 private:
  bool Prepare(const EVP_CIPHER *cipher, std::span<const uint8_t> key,
               core::Direction direction);
  // The provider's update over `len` bytes in chunks of at most
  // `max_chunk` (`out` null: AAD).
  bool Feed(uint8_t *out, const uint8_t *in, size_t len, size_t max_chunk);
  // Sets the IV (key and direction unchanged).
  bool SetIv(const uint8_t *iv, size_t iv_len);
  // The Gcm* calls without their error-queue mark.
  bool StartGcm(const EVP_CIPHER *cipher, std::span<const uint8_t> key,
                core::Direction direction, std::span<const uint8_t> iv);
  bool AadGcm(std::span<const uint8_t> aad);
  bool FinishGcm(core::Direction direction, uint8_t tag[16], size_t tag_len);
  void Free();

  const CipherFunctions *functions_ = nullptr;
  void *ctx_ = nullptr;  // the provider's cipher context
  size_t block_size_ = 1;
  bool keyed_ = false;
  core::Direction direction_ = core::Direction::kEncrypt;
};

}  // namespace aesmux::fallback

#endif  // AESMUX_PROVIDER_FALLBACK_FALLBACK_H_
