// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
// SimdGcm: AES-GCM (NIST SP 800-38D) on one tier's kernels, fed in fragments
// of any size. The kernels do whole blocks; this class owns what lies
// between them: J0 from the IV, partial AAD and data blocks across calls,
// the length block and the tag.
//
// Usage per message: Start(iv), any number of Aad() calls, then any number of
// Encrypt()/Decrypt() calls, then Finish(tag); or, for a message whose parts
// are all at hand (a TLS 1.2 record), Seal() or Open() alone. The key
// survives messages; its schedule and powers of H are wiped on Clear() and
// destruction, and the message state (derived from the key) also by
// SetKey().
#ifndef AESMUX_KERNELS_SIMD_GCM_H_
#define AESMUX_KERNELS_SIMD_GCM_H_

// Layers (DEVELOPERS.md): only what links aesmux_kernels includes this.
#if defined(AESMUX_LAYER) && !defined(AESMUX_SEES_kernels)
#error "kernels/simd_gcm.h belongs to a layer above the one that includes it"
#endif

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>

#include "kernels/kernels.h"
#include "kernels/simd_key.h"
#include "kernels/tiers.h"

namespace aesmux::kernels {

class SimdGcm {
 public:
  // Outcomes of feeding a message, and Open's tag that does not match.
  // GCM's limits on a message's length (SP 800-38D) are the caller's to
  // keep: the provider checks them once for every path
  // (provider/route/gcm_engine.h); beyond them the 32-bit counter would
  // wrap.
  enum class Status { kOk, kAadAfterData, kBadTag };

  SimdGcm() = default;
  // A copy whose GHASH key cannot be allocated is not set (is_set()).
  SimdGcm(const SimdGcm &other);
  // A copy of `other` (set) whose GHASH key is on `storage`, owned as by
  // the SetKey that takes storage.
  SimdGcm(const SimdGcm &other, aesmux_gcm_key *storage);
  SimdGcm &operator=(const SimdGcm &) = delete;
  ~SimdGcm() { Clear(); }

  // False, and nothing keyed, when the GHASH key's storage cannot be
  // allocated; only the first key and a change of tier allocate, so a new
  // key on the same tier always succeeds.
  [[nodiscard]] bool SetKey(const Tier &tier, std::span<const uint8_t> key);
  // SetKey on `storage`, which this object then owns as if it had allocated
  // it: `tier.gcm_key_bytes` or more, from ::operator new with
  // alignof(aesmux_gcm_key). For an owner that allocates the GHASH key in one
  // block with itself (route/gcm_paths.h), which saves a second aligned
  // block's rounding (BENCHMARKS.md, "What does loading aesmux cost: start-up
  // and memory?"); such an owner must keep the tier (a change of tier frees
  // the storage) and take the storage back with ReleaseKeyStorage before it is
  // destroyed.
  void SetKey(const Tier &tier, std::span<const uint8_t> key,
              aesmux_gcm_key *storage);
  // Clear(), except that the GHASH key's storage is handed back, wiped,
  // not freed (null if there was none).
  [[nodiscard]] aesmux_gcm_key *ReleaseKeyStorage();
  void Clear();
  bool is_set() const { return tier_ != nullptr && gkey_.get() != nullptr; }
  const Tier *tier() const { return tier_; }

  // Begins a message with an IV of any non-zero length.
  void Start(std::span<const uint8_t> iv);
  // Inlined wherever it is called: a record's AAD (13 bytes in TLS 1.2, 5
  // in TLS 1.3) is a copy into the partial block and no kernel call, and a
  // call to this function and back would cost as much again (BENCHMARKS.md,
  // "Instructions per record").
  [[gnu::always_inline]] Status Aad(std::span<const uint8_t> aad) {
    if (msg_.data_len != 0) return Status::kAadAfterData;
    const size_t pending = msg_.aad_len & 15;
    msg_.aad_len += aad.size();
    const uint8_t *in = aad.data();
    size_t len = aad.size();
    if (pending != 0) {
      const size_t take = std::min(len, 16 - pending);
      CopyShort(msg_.pending + pending, in, take);
      if (pending + take < 16) return Status::kOk;
      tier_->ops.ghash(gkey_.get(), msg_.xi, msg_.pending, 16);
      in += take;
      len -= take;
    }
    const size_t whole = len & ~size_t{15};
    if (whole != 0) tier_->ops.ghash(gkey_.get(), msg_.xi, in, whole);
    CopyShort(msg_.pending, in + whole, len - whole);
    return Status::kOk;
  }
  Status Encrypt(uint8_t *out, const uint8_t *in, size_t len);
  Status Decrypt(uint8_t *out, const uint8_t *in, size_t len);
  // Writes the full 16-byte tag of the message so far. The message stays
  // open: more data may follow (after a tag that did not verify), and a
  // later Finish covers it.
  void Finish(uint8_t tag[16]);
  // Decrypting: whether the first `tag_len` (1..16) bytes of `tag` (16
  // bytes readable) are those of the message's tag, compared in constant
  // time. The message stays open as after Finish.
  bool Verify(const uint8_t tag[16], size_t tag_len);

  // A whole message in one call: what Start(iv), Aad(aad), Encrypt(out, in,
  // len) and Finish(tag) do, with fewer calls into the kernels and no state
  // kept between them. The message under way, if any, is given up; so is
  // this one when the call returns: the next is begun by Start, Seal or
  // Open (Finish and Verify have no message to end).
  Status Seal(std::span<const uint8_t> iv, std::span<const uint8_t> aad,
              uint8_t *out, const uint8_t *in, size_t len, uint8_t tag[16]);
  // The same, decrypting, with the 16-byte `tag` compared in constant time:
  // kBadTag if it does not match, and then `out` holds the unauthenticated
  // plaintext, which the caller wipes.
  Status Open(std::span<const uint8_t> iv, std::span<const uint8_t> aad,
              uint8_t *out, const uint8_t *in, size_t len,
              const uint8_t tag[16]);

 private:
  // Copies `len` (< 16) bytes without a call into libc: two overlapping
  // loads and stores of 8, 4 or 1 bytes. `len` is a length, never secret.
  static void CopyShort(uint8_t *out, const uint8_t *in, size_t len);
  void EncryptBlock(uint8_t out[16], const uint8_t in[16]) const {
    tier_->ops.ecb_encrypt(&enc_, out, in, 16);
  }
  template <bool kEncrypt>
  Status Crypt(uint8_t *out, const uint8_t *in, size_t len);
  // J0 of `iv` into msg_.j0_keystream (not yet encrypted) and the first
  // counter block into msg_.counter, the accumulator zeroed.
  void BeginJ0(std::span<const uint8_t> iv);
  // Seal and Open: the whole message, its tag left in msg_.xi.
  template <bool kEncrypt>
  void Record(std::span<const uint8_t> iv, std::span<const uint8_t> aad,
              uint8_t *out, const uint8_t *in, size_t len);
  template <bool kEncrypt>
  void XorPartial(uint8_t *out, const uint8_t *in, size_t len, size_t offset);
  // The schedule and powers of H of `key` on `tier`, into the GHASH key's
  // storage (there is some).
  void Expand(const Tier &tier, std::span<const uint8_t> key);
  // Everything of `other` (set), into this object's GHASH key storage.
  void CopyKeyAndMessage(const SimdGcm &other);

  // The powers of H in the tier's gcm_key_bytes (64-byte aligned heap
  // storage), not a whole aesmux_gcm_key: every keyed context holds one,
  // and the struct is sized for the largest tier. Its size is the tier's,
  // not a field: the owner passes it, and frees it (Reset, which wipes
  // it) before it is destroyed.
  class GhashKey {
   public:
    GhashKey() = default;
    GhashKey(const GhashKey &) = delete;
    GhashKey &operator=(const GhashKey &) = delete;
    // Storage for `bytes`, uninitialised; false if it cannot be allocated.
    bool Allocate(size_t bytes);
    // Storage allocated as Allocate does, owned from now on.
    void Adopt(aesmux_gcm_key *storage) { key_ = storage; }
    // Wipes the storage and frees it; Release wipes it and hands it back.
    void Reset(size_t bytes);
    aesmux_gcm_key *Release(size_t bytes);
    aesmux_gcm_key *get() const { return key_; }

   private:
    aesmux_gcm_key *key_ = nullptr;
  };

  // How many bytes of the partial block under way are filled: the AAD's
  // length modulo 16 until the payload begins (the AAD's partial block is
  // folded in then), then the payload's. Not a field: every keyed GCM
  // context holds this object (BENCHMARKS.md, "What does loading aesmux cost:
  // start-up and memory?").
  size_t PendingLen() const {
    return static_cast<size_t>(msg_.data_len != 0 ? msg_.data_len
                                                   : msg_.aad_len) & 15;
  }
  // Wipes the message's state (all of it derived from the key).
  void WipeMessage();

  // GCM only encrypts blocks: the encryption schedule alone, not a
  // SimdKey with room for a decryption schedule too.
  const Tier *tier_ = nullptr;
  GhashKey gkey_;
  aesmux_aes_key enc_{};

  // The message's state: plain values, copied whole.
  struct Message {
    uint8_t j0_keystream[16];  // E(K, J0), XORed into the tag
    uint8_t counter[16];       // next counter block
    uint8_t xi[16];            // GHASH accumulator
    // The partial block under way: its first PendingLen() bytes are AAD or
    // ciphertext; in the payload, the rest is the keystream of the block's
    // bytes still to come (zero padded away before it is hashed).
    uint8_t pending[16];
    uint64_t aad_len;
    uint64_t data_len;
  } msg_{};
};

}  // namespace aesmux::kernels

#endif  // AESMUX_KERNELS_SIMD_GCM_H_
