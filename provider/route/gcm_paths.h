// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
// The CPU paths of a GCM message behind one interface: CpuGcm. SimdGcmPath
// runs kernels::SimdGcm on the router's tier, FallbackGcmPath the default
// provider's GCM. GcmEngine makes each when its path first serves a message
// (a context that never takes the fallback path holds none of its state)
// and runs a message on either without asking which.
//
// Both keep their key across messages and answer every call alike. The
// caller (GcmEngine) owns the message's direction and passes it to every
// call; SwitchDirection tells a path that it changed mid-message.
// - Start begins a message with a 1..128-byte IV;
// - Aad, Crypt and SwitchDirection return false when the message cannot go
//   on (AAD after the payload, a length beyond GCM's limits, a failure of
//   the default provider);
// - Finish, encrypting, writes the 16-byte tag; decrypting, it returns
//   whether the first `tag_len` bytes of `tag` (16 bytes readable) match,
//   compared in constant time.
//   Either way the message stays open, as in the default provider: after a
//   tag that did not verify more payload continues it.
// - Record runs a whole message in one call (a TLS 1.2 record: the simd
//   path in one SimdGcm call, the fallback path in one sequence of the
//   default provider's calls) with a 16-byte tag, written when encrypting,
//   checked when decrypting (false if it does not match; `out` then holds
//   the unauthenticated plaintext for the caller to wipe). It ends the
//   message under way, if any, and leaves none. A record laid out as TLS
//   1.2 sends it (RecordLayout::kTlsInPlace) goes to the default provider
//   whole, as libssl would hand it over.
// Copies (the provider's dupctx) are deep: Clone() returns null if that
// fails (with ERR_R_MALLOC_FAILURE on OpenSSL's error queue when the copy
// itself could not be allocated). Keys are wiped when replaced and on
// destruction.
#ifndef AESMUX_PROVIDER_ROUTE_GCM_PATHS_H_
#define AESMUX_PROVIDER_ROUTE_GCM_PATHS_H_

// Layers (DEVELOPERS.md): only what links aesmux_route includes this.
#if defined(AESMUX_LAYER) && !defined(AESMUX_SEES_route)
#error "provider/route/gcm_paths.h belongs to a layer above the one that includes it"
#endif

#include <cstddef>
#include <cstdint>
#include <memory>
#include <new>
#include <span>

#include "kernels/simd_gcm.h"
#include "kernels/tiers.h"
#include "provider/core/algorithm.h"
#include "provider/fallback/fallback.h"
#include "provider/route/raw_key.h"

namespace aesmux::route {

// How a record's buffers lie: anywhere, or as a TLS 1.2 record in place
// (`out` == `in`, the 8 bytes before them the IV's last 8, the tag right
// after the payload).
enum class RecordLayout { kApart, kTlsInPlace };

class CpuGcm {
 public:
  virtual ~CpuGcm() = default;

  virtual core::Path path() const = 0;
  virtual std::unique_ptr<CpuGcm> Clone() const = 0;
  // A new key (the same length as the last one or not); ends the message.
  virtual void SetKey(std::span<const uint8_t> key) = 0;

  virtual bool Start(core::Direction direction,
                     std::span<const uint8_t> iv) = 0;
  virtual bool SwitchDirection(core::Direction direction) = 0;
  virtual bool Aad(std::span<const uint8_t> aad) = 0;
  virtual bool Crypt(core::Direction direction, uint8_t *out,
                     const uint8_t *in, size_t len) = 0;
  virtual bool Finish(core::Direction direction, uint8_t tag[16],
                      size_t tag_len) = 0;
  virtual bool Record(core::Direction direction, std::span<const uint8_t> iv,
                      std::span<const uint8_t> aad, uint8_t *out,
                      const uint8_t *in, size_t len, uint8_t tag[16],
                      RecordLayout layout) = 0;
};

// Made only where the router has a tier, with its GHASH key in one heap block:
// the key first, at the block's 64-byte alignment (the VAES kernels load it
// with aligned vector loads), this object after it. Two aligned blocks would
// each be rounded up to a multiple of 64 bytes by the aligned operator new
// (BENCHMARKS.md, "What does loading aesmux cost: start-up and memory?");
// operator new, not posix_memalign, so that the allocation failure and key
// hygiene tests see the block.
class SimdGcmPath final : public CpuGcm {
 public:
  // A path keyed with `key` on `tier`; null if the block cannot be
  // allocated (nothing raised).
  static std::unique_ptr<SimdGcmPath> Make(const kernels::Tier &tier,
                                           std::span<const uint8_t> key);
  SimdGcmPath(const SimdGcmPath &) = delete;
  SimdGcmPath &operator=(const SimdGcmPath &) = delete;
  // Made only by Make and Clone; freed (delete) with its block.
  static void *operator new(size_t) = delete;
  void operator delete(SimdGcmPath *path, std::destroying_delete_t);

  core::Path path() const override { return core::Path::kSimd; }
  std::unique_ptr<CpuGcm> Clone() const override;
  void SetKey(std::span<const uint8_t> key) override {
    // The same tier (the block holds its GHASH key): the storage is kept,
    // nothing can fail.
    static_cast<void>(gcm_.SetKey(*gcm_.tier(), key));
  }

  bool Start(core::Direction, std::span<const uint8_t> iv) override {
    gcm_.Start(iv);
    return true;
  }
  // SimdGcm's state serves both directions.
  bool SwitchDirection(core::Direction) override { return true; }
  // Inlined into GcmEngine::Aad, as SimdGcm::Aad is here: a record's AAD
  // makes no call but the copy of its bytes (BENCHMARKS.md, "Instructions
  // per record").
  [[gnu::always_inline]] bool Aad(std::span<const uint8_t> aad) override {
    return gcm_.Aad(aad) == kernels::SimdGcm::Status::kOk;
  }
  bool Crypt(core::Direction direction, uint8_t *out, const uint8_t *in,
             size_t len) override {
    const auto status = direction == core::Direction::kEncrypt
                            ? gcm_.Encrypt(out, in, len)
                            : gcm_.Decrypt(out, in, len);
    return status == kernels::SimdGcm::Status::kOk;
  }
  bool Finish(core::Direction direction, uint8_t tag[16],
              size_t tag_len) override {
    if (direction == core::Direction::kEncrypt) {
      gcm_.Finish(tag);
      return true;
    }
    return gcm_.Verify(tag, tag_len);
  }
  bool Record(core::Direction direction, std::span<const uint8_t> iv,
              std::span<const uint8_t> aad, uint8_t *out, const uint8_t *in,
              size_t len, uint8_t tag[16], RecordLayout) override {
    const auto status = direction == core::Direction::kEncrypt
                            ? gcm_.Seal(iv, aad, out, in, len, tag)
                            : gcm_.Open(iv, aad, out, in, len, tag);
    return status == kernels::SimdGcm::Status::kOk;
  }

 private:
  SimdGcmPath(const kernels::Tier &tier, std::span<const uint8_t> key,
              aesmux_gcm_key *storage) {
    gcm_.SetKey(tier, key, storage);
  }
  SimdGcmPath(const SimdGcmPath &other, aesmux_gcm_key *storage)
      : gcm_(other.gcm_, storage) {}
  // A block for a path on `tier`: its GHASH key's storage, where the block
  // begins, and where the object goes; null if it cannot be allocated.
  struct Block {
    aesmux_gcm_key *key;
    void *object;
  };
  static Block AllocateBlock(const kernels::Tier &tier);

  kernels::SimdGcm gcm_;
};

// Keyed lazily by fallback::FallbackContext, from its own copy of the key.
class FallbackGcmPath final : public CpuGcm {
 public:
  FallbackGcmPath(const fallback::FallbackLibrary &library, core::Alg alg,
                  std::span<const uint8_t> key)
      : library_(&library), alg_(alg) {
    key_.Replace(key);
  }

  core::Path path() const override { return core::Path::kFallback; }
  std::unique_ptr<CpuGcm> Clone() const override;
  void SetKey(std::span<const uint8_t> key) override {
    key_.Replace(key);
    context_.Reset();
  }

  bool Start(core::Direction direction,
             std::span<const uint8_t> iv) override {
    return context_.GcmStart(library_->cipher(alg_), key_.bytes(), direction,
                             iv);
  }
  bool SwitchDirection(core::Direction direction) override {
    return context_.GcmSwitchDirection(direction);
  }
  bool Aad(std::span<const uint8_t> aad) override {
    return context_.GcmAad(aad);
  }
  bool Crypt(core::Direction, uint8_t *out, const uint8_t *in,
             size_t len) override {
    return context_.GcmCrypt(out, in, len);
  }
  bool Finish(core::Direction direction, uint8_t tag[16],
              size_t tag_len) override {
    return context_.GcmFinish(direction, tag, tag_len);
  }
  bool Record(core::Direction direction, std::span<const uint8_t> iv,
              std::span<const uint8_t> aad, uint8_t *out, const uint8_t *in,
              size_t len, uint8_t tag[16], RecordLayout layout) override {
    if (layout == RecordLayout::kTlsInPlace) {
      return context_.GcmTlsRecord(library_->cipher(alg_), key_.bytes(),
                                   direction, iv, aad, out, len);
    }
    return context_.GcmRecord(library_->cipher(alg_), key_.bytes(), direction,
                              iv, aad, out, in, len, tag);
  }

 private:
  const fallback::FallbackLibrary *library_;
  core::Alg alg_;
  GcmRawKey key_;  // the engine's, copied: the context is keyed from it lazily
  fallback::FallbackContext context_;
};

}  // namespace aesmux::route

#endif  // AESMUX_PROVIDER_ROUTE_GCM_PATHS_H_
