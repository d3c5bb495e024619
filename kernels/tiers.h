// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
// Kernel tiers: which sets of SIMD kernels exist, what each needs from the
// CPU, and how to pick one. Selection happens once per key, never in a hot
// loop: callers keep the `const Tier*` next to the expanded key.
#ifndef AESMUX_KERNELS_TIERS_H_
#define AESMUX_KERNELS_TIERS_H_

// Layers (DEVELOPERS.md): only what links aesmux_kernels includes this.
#if defined(AESMUX_LAYER) && !defined(AESMUX_SEES_kernels)
#error "kernels/tiers.h belongs to a layer above the one that includes it"
#endif

// The kernels are x86-64 assembly, which kernels/CMakeLists.txt builds for
// x86-64 targets only. For any other target this library has no tiers:
// kTiers and mb::kMbTiers are empty, so no key gets a tier, and the router
// serves every request on the afalg or fallback path; the provider's code
// is the same for every target.
#if defined(__x86_64__)
#define AESMUX_HAVE_KERNELS 1
#else
#define AESMUX_HAVE_KERNELS 0
#endif

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

#include "kernels/kernels.h"

namespace aesmux::kernels {

// CPU features the tiers depend on, as a bit set.
enum CpuFeature : uint32_t {
  kSse41 = 1u << 0,
  kAesni = 1u << 1,
  kPclmulqdq = 1u << 2,
  kAvx = 1u << 3,  // includes OS support for ymm state (XCR0)
  kAvx2 = 1u << 4,
  kBmi2 = 1u << 5,
  kVaes = 1u << 6,
  kVpclmulqdq = 1u << 7,
  kAvx512f = 1u << 8,  // includes OS support for zmm/opmask state (XCR0)
  kAvx512bw = 1u << 9,
  kAvx512vl = 1u << 10,
  // AArch64's AES and PMULL instructions (the Crypto Extensions): no tier
  // uses them, but OpenSSL's own code, the fallback path, does.
  kArmAes = 1u << 16,
  kArmPmull = 1u << 17,
};
using CpuFeatures = uint32_t;

// What this CPU (and its OS) supports: on x86-64 read once with
// CPUID/XGETBV, on AArch64 from the kernel's hardware capabilities (AT_HWCAP),
// elsewhere nothing.
CpuFeatures DetectCpuFeatures();

// Names of the features in `features`, space separated ("aesni pclmulqdq …").
std::string DescribeCpuFeatures(CpuFeatures features);

// Whether `features` include AES instructions, so that AES runs at a few
// cycles per byte on the CPU whichever code uses them (aesmux's kernels or
// OpenSSL's own).
inline bool HasAesInstructions(CpuFeatures features) {
  return (features & (kAesni | kArmAes)) != 0;
}

// The processor this library was built for, as CMake names it ("x86_64",
// "aarch64", …).
std::string_view TargetProcessor();

// Why kTiers is empty in this build ("aesmux's kernels are x86-64 code and
// this build is for aarch64"); empty when it is not.
std::string WhyNoTiers();

// One tier's entry points. Every tier implements every operation.
struct TierOps {
  void (*expand_key)(aesmux_aes_key *enc, const uint8_t *key, size_t key_len);
  void (*decrypt_key)(aesmux_aes_key *dec, const aesmux_aes_key *enc);
  void (*ecb_encrypt)(const aesmux_aes_key *enc, uint8_t *out,
                      const uint8_t *in, size_t len);
  void (*ecb_decrypt)(const aesmux_aes_key *dec, uint8_t *out,
                      const uint8_t *in, size_t len);
  void (*cbc_encrypt)(const aesmux_aes_key *enc, uint8_t iv[16], uint8_t *out,
                      const uint8_t *in, size_t len);
  void (*cbc_decrypt)(const aesmux_aes_key *dec, uint8_t iv[16], uint8_t *out,
                      const uint8_t *in, size_t len);
  void (*ctr_crypt)(const aesmux_aes_key *enc, uint8_t counter[16],
                    uint8_t *out, const uint8_t *in, size_t len);
  void (*xts_encrypt)(const aesmux_aes_key *data_key,
                      const aesmux_aes_key *tweak_key, const uint8_t iv[16],
                      uint8_t *out, const uint8_t *in, size_t len);
  void (*xts_decrypt)(const aesmux_aes_key *data_key,
                      const aesmux_aes_key *tweak_key, const uint8_t iv[16],
                      uint8_t *out, const uint8_t *in, size_t len);
  void (*gcm_init)(aesmux_gcm_key *gkey, const aesmux_aes_key *enc);
  void (*ghash)(aesmux_gcm_key *gkey, uint8_t xi[16], const uint8_t *in,
                size_t len);
  void (*gcm_encrypt)(const aesmux_aes_key *enc, aesmux_gcm_key *gkey,
                      uint8_t ctr[16], uint8_t xi[16], uint8_t *out,
                      const uint8_t *in, size_t len);
  void (*gcm_decrypt)(const aesmux_aes_key *enc, aesmux_gcm_key *gkey,
                      uint8_t ctr[16], uint8_t xi[16], uint8_t *out,
                      const uint8_t *in, size_t len);
};

struct Tier {
  std::string_view name;
  CpuFeatures required;
  TierOps ops;
  // The bytes of an aesmux_gcm_key this tier's kernels use (kernels.h).
  size_t gcm_key_bytes;
};

// Every tier built into this library, best first.
#if AESMUX_HAVE_KERNELS
inline constexpr std::array kTiers = {
    Tier{"vaes_avx512",
         kSse41 | kAesni | kPclmulqdq | kAvx | kAvx2 | kBmi2 | kVaes |
             kVpclmulqdq | kAvx512f | kAvx512bw | kAvx512vl,
         TierOps{aesmux_aes_expand_key_aesni, aesmux_aes_decrypt_key_aesni,
                 aesmux_ecb_encrypt_vaes_avx512, aesmux_ecb_decrypt_vaes_avx512,
                 aesmux_cbc_encrypt_vaes_avx512, aesmux_cbc_decrypt_vaes_avx512,
                 aesmux_ctr_crypt_vaes_avx512, aesmux_xts_encrypt_vaes_avx512,
                 aesmux_xts_decrypt_vaes_avx512, aesmux_gcm_init_vaes_avx512,
                 aesmux_ghash_vaes_avx512, aesmux_gcm_encrypt_vaes_avx512,
                 aesmux_gcm_decrypt_vaes_avx512},
         AESMUX_GCM_KEY_BYTES_VAES_AVX512},
    Tier{"vaes_avx2",
         kSse41 | kAesni | kPclmulqdq | kAvx | kAvx2 | kVaes | kVpclmulqdq,
         TierOps{aesmux_aes_expand_key_aesni, aesmux_aes_decrypt_key_aesni,
                 aesmux_ecb_encrypt_vaes_avx2, aesmux_ecb_decrypt_vaes_avx2,
                 aesmux_cbc_encrypt_vaes_avx2, aesmux_cbc_decrypt_vaes_avx2,
                 aesmux_ctr_crypt_vaes_avx2, aesmux_xts_encrypt_vaes_avx2,
                 aesmux_xts_decrypt_vaes_avx2, aesmux_gcm_init_vaes_avx2,
                 aesmux_ghash_vaes_avx2, aesmux_gcm_encrypt_vaes_avx2,
                 aesmux_gcm_decrypt_vaes_avx2},
         AESMUX_GCM_KEY_BYTES_VAES_AVX2},
    Tier{"aesni", kSse41 | kAesni | kPclmulqdq,
         TierOps{aesmux_aes_expand_key_aesni, aesmux_aes_decrypt_key_aesni,
                 aesmux_ecb_encrypt_aesni, aesmux_ecb_decrypt_aesni,
                 aesmux_cbc_encrypt_aesni, aesmux_cbc_decrypt_aesni,
                 aesmux_ctr_crypt_aesni, aesmux_xts_encrypt_aesni,
                 aesmux_xts_decrypt_aesni, aesmux_gcm_init_aesni,
                 aesmux_ghash_aesni, aesmux_gcm_encrypt_aesni,
                 aesmux_gcm_decrypt_aesni},
         AESMUX_GCM_KEY_BYTES_AESNI},
};
#else
inline constexpr std::array<Tier, 0> kTiers{};
#endif

// The best tier whose requirements `available` meets, or nullptr.
const Tier *BestTier(CpuFeatures available);

// The tier called `name`, or nullptr if there is none by that name. Does not
// check the CPU: see Supported().
const Tier *TierByName(std::string_view name);

inline bool Supported(const Tier &tier, CpuFeatures available) {
  return (tier.required & ~available) == 0;
}

}  // namespace aesmux::kernels

#endif  // AESMUX_KERNELS_TIERS_H_
