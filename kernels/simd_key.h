// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
// SimdKey: one AES key expanded for one kernel tier, with the block-mode
// operations of that tier. The tier is fixed when the key is set, so the
// operations below are plain indirect calls with no feature checks.
//
// Key material is wiped when the object is cleared or destroyed; a new key
// overwrites the old one, and whatever of the old schedule the new key does
// not overwrite is wiped.
#ifndef AESMUX_KERNELS_SIMD_KEY_H_
#define AESMUX_KERNELS_SIMD_KEY_H_

// Layers (DEVELOPERS.md): only what links aesmux_kernels includes this.
#if defined(AESMUX_LAYER) && !defined(AESMUX_SEES_kernels)
#error "kernels/simd_key.h belongs to a layer above the one that includes it"
#endif

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>

#include "kernels/kernels.h"
#include "kernels/tiers.h"

namespace aesmux::kernels {

// Overwrites `len` bytes at `ptr` in a way the compiler may not elide: the
// empty asm takes the pointer and clobbers memory, so the stores must
// happen. Inline rather than explicit_bzero, a library call, because a GCM
// message wipes five small buffers (16 to 64 bytes) on its way.
inline void SecureZero(void *ptr, size_t len) {
  std::memset(ptr, 0, len);
  __asm__ __volatile__("" : : "r"(ptr) : "memory");
}

class SimdKey {
 public:
  SimdKey() = default;
  SimdKey(const SimdKey &other) = default;
  SimdKey &operator=(const SimdKey &other) = default;
  ~SimdKey() { Clear(); }

  // Expands `key` (16, 24 or 32 bytes) for `tier`.
  void Set(const Tier &tier, std::span<const uint8_t> key);
  // Without a tier: keeps `key` (at most 64 bytes, an XTS key whole) as it
  // is, in the schedule's storage, for the paths that key themselves from
  // it; is_set() stays false.
  void SetRaw(std::span<const uint8_t> key);
  void Clear();
  // Whether there is a tier's schedule to run the operations below.
  bool is_set() const { return tier_ != nullptr; }
  // Whether a key was given (Set or SetRaw).
  bool has_key() const { return key_len_ != 0; }
  const Tier *tier() const { return tier_; }

  // Writes the key as given to Set or SetRaw into `out` (64 bytes) and
  // returns its length: an encryption schedule begins with it, and a
  // decryption schedule holds it in its last round key and, with
  // MixColumns undone, the one before. So no context keeps a second copy.
  size_t CipherKey(uint8_t out[64]) const;

  // One schedule is held, turned for the direction last asked for (a
  // context serves one direction, and a second schedule would cost every
  // context 256 bytes). Turning it costs one derivation; the inline check
  // is what every short request pays. A reference stays valid until the
  // other direction is asked for.
  const aesmux_aes_key &encrypt_schedule() {
    if (decrypting_) TurnForEncryption();
    return schedule_;
  }
  const aesmux_aes_key &decrypt_schedule() {
    if (!decrypting_) TurnForDecryption();
    return schedule_;
  }

  // Whole blocks only: `len` is a multiple of 16.
  void EcbEncrypt(uint8_t *out, const uint8_t *in, size_t len) {
    tier_->ops.ecb_encrypt(&encrypt_schedule(), out, in, len);
  }
  void EcbDecrypt(uint8_t *out, const uint8_t *in, size_t len) {
    tier_->ops.ecb_decrypt(&decrypt_schedule(), out, in, len);
  }
  void CbcEncrypt(uint8_t iv[16], uint8_t *out, const uint8_t *in,
                  size_t len) {
    tier_->ops.cbc_encrypt(&encrypt_schedule(), iv, out, in, len);
  }
  void CbcDecrypt(uint8_t iv[16], uint8_t *out, const uint8_t *in,
                  size_t len) {
    tier_->ops.cbc_decrypt(&decrypt_schedule(), iv, out, in, len);
  }
  void Ctr(uint8_t counter[16], uint8_t *out, const uint8_t *in, size_t len) {
    tier_->ops.ctr_crypt(&encrypt_schedule(), counter, out, in, len);
  }
  // Encrypts one block (used for GCM's E(K, J0) and keystream tails).
  void EncryptBlock(uint8_t out[16], const uint8_t in[16]) {
    tier_->ops.ecb_encrypt(&encrypt_schedule(), out, in, 16);
  }
  // XTS with this key as the data key: one data unit of `len` >= 16 bytes,
  // with ciphertext stealing, from `tweak`, the first block's tweak
  // already encrypted (XtsTweakKey::FirstTweak()).
  void XtsEncrypt(const uint8_t tweak[16], uint8_t *out, const uint8_t *in,
                  size_t len) {
    tier_->ops.xts_encrypt(&encrypt_schedule(), tweak, out, in, len);
  }
  void XtsDecrypt(const uint8_t tweak[16], uint8_t *out, const uint8_t *in,
                  size_t len) {
    tier_->ops.xts_decrypt(&decrypt_schedule(), tweak, out, in, len);
  }

 private:
  void TurnForEncryption();
  void TurnForDecryption();

  aesmux_aes_key schedule_{};
  const Tier *tier_ = nullptr;
  bool decrypting_ = false;
  uint8_t key_len_ = 0;
};

// XTS's tweak key: an encryption schedule only (the tweak is always
// encrypted), kept apart from the data key's SimdKey so that only XTS
// contexts hold a second schedule; and the first tweak T_0 = E(key 2, IV)
// of the IV last asked for. An OpenSSL context runs every data unit under
// the IV of its init, so T_0 is encrypted once per IV instead of once per
// call, where it stood before every block (BENCHMARKS.md, "How fast is
// aesmux against OpenSSL's default provider?"). It cannot go stale: every
// call compares the IV it was made for, and Set() forgets it. It is key
// material, wiped with the schedule.
class XtsTweakKey {
 public:
  XtsTweakKey() = default;
  XtsTweakKey(const XtsTweakKey &) = default;
  XtsTweakKey &operator=(const XtsTweakKey &) = default;
  ~XtsTweakKey() {
    SecureZero(&schedule_, sizeof(schedule_));
    Forget();
  }

  void Set(const Tier &tier, std::span<const uint8_t> key) {
    tier.ops.expand_key(&schedule_, key.data(), key.size());
    tier_ = &tier;
    Forget();
  }
  // The key given to Set (the caller knows its length): an encryption
  // schedule begins with it.
  const uint8_t *key() const { return schedule_.round_keys[0]; }

  // T_0 for `iv`, encrypted on the first call for this IV (comparing 16
  // bytes is what the others pay). Valid until the next call or Set().
  const uint8_t *FirstTweak(const uint8_t iv[16]) {
    if (!has_first_tweak_ || std::memcmp(iv, first_tweak_iv_, 16) != 0)
        [[unlikely]] {
      tier_->ops.ecb_encrypt(&schedule_, first_tweak_, iv, 16);
      std::memcpy(first_tweak_iv_, iv, 16);
      has_first_tweak_ = true;
    }
    return first_tweak_;
  }

 private:
  void Forget() {
    SecureZero(first_tweak_, sizeof(first_tweak_));
    SecureZero(first_tweak_iv_, sizeof(first_tweak_iv_));
    has_first_tweak_ = false;
  }

  aesmux_aes_key schedule_{};
  const Tier *tier_ = nullptr;
  uint8_t first_tweak_[16] = {};
  uint8_t first_tweak_iv_[16] = {};
  bool has_first_tweak_ = false;
};

}  // namespace aesmux::kernels

#endif  // AESMUX_KERNELS_SIMD_KEY_H_
