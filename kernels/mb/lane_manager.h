// Multi-buffer CBC encryption: the tiers of multi-buffer kernels.
#ifndef AESMUX_KERNELS_MB_LANE_MANAGER_H_
#define AESMUX_KERNELS_MB_LANE_MANAGER_H_

#include <array>
#include <cstdint>
#include <string_view>

#include "kernels/kernels.h"
#include "kernels/tiers.h"

namespace aesmux::kernels::mb {

// A multi-buffer CBC-encryption kernel (contract in kernels.h).
using MbCbcEncryptFn = void (*)(aesmux_mb_cbc_lanes *lanes, uint32_t lane_mask,
                                size_t len, uint32_t rounds);

// One tier of multi-buffer kernels. Names match the single-stream tiers of
// tiers.h with the same CPU requirements, so one tier name selects both.
struct MbTier {
  std::string_view name;
  CpuFeatures required;
  size_t lanes;  // 8 or 16
  MbCbcEncryptFn cbc_encrypt;
};

// Every multi-buffer tier built into this library, best first.
inline constexpr std::array kMbTiers = {
    MbTier{"vaes_avx512",
           kSse41 | kAesni | kPclmulqdq | kAvx | kAvx2 | kBmi2 | kVaes |
               kVpclmulqdq | kAvx512f | kAvx512bw | kAvx512vl,
           16, aesmux_cbc_encrypt_x16_vaes_avx512},
    MbTier{"vaes_avx2",
           kSse41 | kAesni | kPclmulqdq | kAvx | kAvx2 | kVaes | kVpclmulqdq,
           16, aesmux_cbc_encrypt_x16_vaes_avx2},
    MbTier{"aesni", kSse41 | kAesni | kPclmulqdq, 8,
           aesmux_cbc_encrypt_x8_aesni},
};

// The best multi-buffer tier whose requirements `available` meets, or
// nullptr.
const MbTier *BestMbTier(CpuFeatures available);

// The multi-buffer tier called `name`, or nullptr. Does not check the CPU:
// see Supported().
const MbTier *MbTierByName(std::string_view name);

inline bool Supported(const MbTier &tier, CpuFeatures available) {
  return (tier.required & ~available) == 0;
}

}  // namespace aesmux::kernels::mb

#endif  // AESMUX_KERNELS_MB_LANE_MANAGER_H_
