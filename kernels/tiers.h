// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
// Kernel tiers: which sets of SIMD kernels exist (single-stream and
// multi-buffer), what each needs from the CPU, and how to pick one.
// Selection happens once per key, never in a hot loop: callers keep the
// `const Tier*` next to the expanded key.
#ifndef AESMUX_KERNELS_TIERS_H_
#define AESMUX_KERNELS_TIERS_H_

// Layers (DEVELOPERS.md): only what links aesmux_kernels includes this.
#if defined(AESMUX_LAYER) && !defined(AESMUX_SEES_kernels)
#error "kernels/tiers.h belongs to a layer above the one that includes it"
#endif

// The kernels are x86-64 assembly, which kernels/CMakeLists.txt builds for
// x86-64 targets only. For any other target this library has no tiers:
// kTiers is empty, so no key gets a tier, and the router
// serves every request on the afalg or fallback path; the provider's code
// is the same for every target.
#if defined(__x86_64__)
#define AESMUX_HAVE_KERNELS 1
#else
#define AESMUX_HAVE_KERNELS 0
#endif

#include <algorithm>
#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <span>
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

// One tier's single-stream entry points (kernels.h: one contract per
// shape). Every tier implements every operation.
struct TierOps {
  aesmux_expand_key_fn *expand_key;
  aesmux_decrypt_key_fn *decrypt_key;
  aesmux_ecb_fn *ecb_encrypt;
  aesmux_ecb_fn *ecb_decrypt;
  aesmux_cbc_fn *cbc_encrypt;
  aesmux_cbc_fn *cbc_decrypt;
  aesmux_ctr_fn *ctr_crypt;
  aesmux_xts_fn *xts_encrypt;
  aesmux_xts_fn *xts_decrypt;
  aesmux_gcm_init_fn *gcm_init;
  aesmux_ghash_fn *ghash;
  aesmux_gcm_fn *gcm_encrypt;
  aesmux_gcm_fn *gcm_decrypt;
};

// A multi-buffer CBC-encryption kernel and its width: it runs lanes
// 0 .. lanes-1 (kernels.h).
struct MbKernel {
  size_t lanes;  // 4, 8 or 16
  aesmux_mb_cbc_encrypt_fn *cbc_encrypt;
};

// One tier's multi-buffer CBC encryption, run by the lane manager
// (kernels/mb/lane_manager.h).
struct MbOps {
  size_t lanes;      // the widest kernel's: 8 or 16
  size_t min_lanes;  // fewer busy lanes run one by one on cbc_encrypt_one
  std::span<const MbKernel> kernels;  // narrowest first, widest last
  // The single-stream kernel for those: aesni's, whose chain keeps the IV
  // XOR off the critical path, which no lane of a multi-buffer kernel can.
  aesmux_cbc_fn *cbc_encrypt_one;

  const MbKernel &widest() const { return kernels.back(); }
  // The narrowest kernel that runs every lane of `lane_mask` (bits at or
  // above `lanes` are ignored).
  const MbKernel &KernelFor(uint32_t lane_mask) const {
    const size_t needed = std::bit_width(lane_mask);
    for (const MbKernel &kernel : kernels) {
      if (kernel.lanes >= needed) return kernel;
    }
    return widest();
  }
};

// A tier: what it needs of the CPU and every implementation it offers, so
// that one choice per key (a `const Tier*`) selects the single-stream and
// the multi-buffer kernels together.
struct Tier {
  std::string_view name;
  CpuFeatures required;
  TierOps ops;
  // The bytes of an aesmux_gcm_key this tier's kernels use (kernels.h).
  size_t gcm_key_bytes;
  MbOps mb;
};

#if AESMUX_HAVE_KERNELS
// Each tier's multi-buffer kernels, narrowest first: a narrower kernel
// costs less per call (fewer vectors per step) when only low lanes are
// busy.
inline constexpr MbKernel kVaesAvx512MbKernels[] = {
    {4, aesmux_cbc_encrypt_x4_vaes_avx512},
    {8, aesmux_cbc_encrypt_x8_vaes_avx512},
    {16, aesmux_cbc_encrypt_x16_vaes_avx512},
};
inline constexpr MbKernel kVaesAvx2MbKernels[] = {
    {4, aesmux_cbc_encrypt_x4_vaes_avx2},
    {8, aesmux_cbc_encrypt_x8_vaes_avx2},
    {16, aesmux_cbc_encrypt_x16_vaes_avx2},
};
inline constexpr MbKernel kAesniMbKernels[] = {
    {4, aesmux_cbc_encrypt_x4_aesni},
    {8, aesmux_cbc_encrypt_x8_aesni},
};

// Every tier built into this library, best first.
//
// min_lanes: a multi-buffer call costs about the same whatever the number of
// its busy lanes, so a lone busy lane runs faster alone on the single-stream
// kernel, and from two busy lanes the narrowest multi-buffer kernel wins on
// every tier (BENCHMARKS.md, "How much do multi-buffer lanes and threads
// gain?").
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
         AESMUX_GCM_KEY_BYTES_VAES_AVX512,
         MbOps{16, 2, kVaesAvx512MbKernels, aesmux_cbc_encrypt_aesni}},
    Tier{"vaes_avx2",
         kSse41 | kAesni | kPclmulqdq | kAvx | kAvx2 | kVaes | kVpclmulqdq,
         TierOps{aesmux_aes_expand_key_aesni, aesmux_aes_decrypt_key_aesni,
                 aesmux_ecb_encrypt_vaes_avx2, aesmux_ecb_decrypt_vaes_avx2,
                 aesmux_cbc_encrypt_vaes_avx2, aesmux_cbc_decrypt_vaes_avx2,
                 aesmux_ctr_crypt_vaes_avx2, aesmux_xts_encrypt_vaes_avx2,
                 aesmux_xts_decrypt_vaes_avx2, aesmux_gcm_init_vaes_avx2,
                 aesmux_ghash_vaes_avx2, aesmux_gcm_encrypt_vaes_avx2,
                 aesmux_gcm_decrypt_vaes_avx2},
         AESMUX_GCM_KEY_BYTES_VAES_AVX2,
         MbOps{16, 2, kVaesAvx2MbKernels, aesmux_cbc_encrypt_aesni}},
    Tier{"aesni", kSse41 | kAesni | kPclmulqdq,
         TierOps{aesmux_aes_expand_key_aesni, aesmux_aes_decrypt_key_aesni,
                 aesmux_ecb_encrypt_aesni, aesmux_ecb_decrypt_aesni,
                 aesmux_cbc_encrypt_aesni, aesmux_cbc_decrypt_aesni,
                 aesmux_ctr_crypt_aesni, aesmux_xts_encrypt_aesni,
                 aesmux_xts_decrypt_aesni, aesmux_gcm_init_aesni,
                 aesmux_ghash_aesni, aesmux_gcm_encrypt_aesni,
                 aesmux_gcm_decrypt_aesni},
         AESMUX_GCM_KEY_BYTES_AESNI,
         MbOps{8, 2, kAesniMbKernels, aesmux_cbc_encrypt_aesni}},
};

// Multi-buffer widths ascend and the last is the tier's.
constexpr bool MbKernelsAscend(const Tier &tier) {
  size_t previous = 0;
  for (const MbKernel &kernel : tier.mb.kernels) {
    if (kernel.lanes <= previous) return false;
    previous = kernel.lanes;
  }
  return previous == tier.mb.lanes;
}
static_assert(std::ranges::all_of(kTiers, MbKernelsAscend));
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
