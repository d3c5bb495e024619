// SimdKey: one AES key expanded for one kernel tier, with the block-mode
// operations of that tier. The tier is fixed when the key is set, so the
// operations below are plain indirect calls with no feature checks.
//
// Key material (both schedules) is wiped when the object is cleared or
// destroyed; a new key overwrites the old one, and whatever of the old
// schedules the new key does not overwrite is wiped.
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

  // Expands `key` (16, 24 or 32 bytes) for `tier`. The decryption schedule
  // is derived on first use.
  void Set(const Tier &tier, std::span<const uint8_t> key);
  void Clear();
  bool is_set() const { return tier_ != nullptr; }
  const Tier *tier() const { return tier_; }

  const aesmux_aes_key &encrypt_schedule() const { return enc_; }
  // Derived on first use (inline check: every short decryption asks).
  const aesmux_aes_key &decrypt_schedule() {
    if (!have_decrypt_) DeriveDecryptSchedule();
    return dec_;
  }

  // Whole blocks only: `len` is a multiple of 16.
  void EcbEncrypt(uint8_t *out, const uint8_t *in, size_t len) const {
    tier_->ops.ecb_encrypt(&enc_, out, in, len);
  }
  void EcbDecrypt(uint8_t *out, const uint8_t *in, size_t len) {
    tier_->ops.ecb_decrypt(&decrypt_schedule(), out, in, len);
  }
  void CbcEncrypt(uint8_t iv[16], uint8_t *out, const uint8_t *in,
                  size_t len) const {
    tier_->ops.cbc_encrypt(&enc_, iv, out, in, len);
  }
  void CbcDecrypt(uint8_t iv[16], uint8_t *out, const uint8_t *in,
                  size_t len) {
    tier_->ops.cbc_decrypt(&decrypt_schedule(), iv, out, in, len);
  }
  void Ctr(uint8_t counter[16], uint8_t *out, const uint8_t *in,
           size_t len) const {
    tier_->ops.ctr_crypt(&enc_, counter, out, in, len);
  }
  // Encrypts one block (used for GCM's E(K, J0) and keystream tails).
  void EncryptBlock(uint8_t out[16], const uint8_t in[16]) const {
    tier_->ops.ecb_encrypt(&enc_, out, in, 16);
  }

 private:
  void DeriveDecryptSchedule();

  const Tier *tier_ = nullptr;
  bool have_decrypt_ = false;
  aesmux_aes_key enc_{};
  aesmux_aes_key dec_{};
};

// XTS: a data key and a tweak key (the two halves of the XTS key).
class SimdXtsKey {
 public:
  // `key` is the full XTS key: 32 or 64 bytes.
  void Set(const Tier &tier, std::span<const uint8_t> key);
  void Clear();
  bool is_set() const { return data_.is_set(); }

  // One data unit of `len` >= 16 bytes, with ciphertext stealing.
  void Encrypt(const uint8_t iv[16], uint8_t *out, const uint8_t *in,
               size_t len) const {
    data_.tier()->ops.xts_encrypt(&data_.encrypt_schedule(),
                                  &tweak_.encrypt_schedule(), iv, out, in, len);
  }
  void Decrypt(const uint8_t iv[16], uint8_t *out, const uint8_t *in,
               size_t len) {
    data_.tier()->ops.xts_decrypt(&data_.decrypt_schedule(),
                                  &tweak_.encrypt_schedule(), iv, out, in, len);
  }

 private:
  SimdKey data_;
  SimdKey tweak_;
};

}  // namespace aesmux::kernels

#endif  // AESMUX_KERNELS_SIMD_KEY_H_
