// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
#include "kernels/tiers.h"

#if defined(__x86_64__)
#include <cpuid.h>
#elif defined(__aarch64__)
#include <sys/auxv.h>
#endif

#include <string>

namespace aesmux::kernels {
namespace {

constexpr std::pair<CpuFeature, std::string_view> kFeatureNames[] = {
    {kSse41, "sse4.1"},   {kAesni, "aesni"},         {kPclmulqdq, "pclmulqdq"},
    {kAvx, "avx"},        {kAvx2, "avx2"},           {kBmi2, "bmi2"},
    {kVaes, "vaes"},      {kVpclmulqdq, "vpclmulqdq"}, {kAvx512f, "avx512f"},
    {kAvx512bw, "avx512bw"}, {kAvx512vl, "avx512vl"}, {kArmAes, "aes"},
    {kArmPmull, "pmull"},
};

}  // namespace

#if defined(__x86_64__)
namespace {

// XCR0 bits: the OS saves these register states on context switch.
constexpr uint64_t kXcr0SseAvx = 0x6;        // XMM | YMM
constexpr uint64_t kXcr0Avx512 = 0xe0;       // opmask | ZMM_Hi256 | Hi16_ZMM

uint64_t ReadXcr0() {
  uint32_t eax = 0, edx = 0;
  __asm__("xgetbv" : "=a"(eax), "=d"(edx) : "c"(0));
  return (uint64_t{edx} << 32) | eax;
}

}  // namespace

CpuFeatures DetectCpuFeatures() {
  unsigned int eax, ebx, ecx, edx;
  if (!__get_cpuid(1, &eax, &ebx, &ecx, &edx)) return 0;
  CpuFeatures features = 0;
  if (ecx & bit_SSE4_1) features |= kSse41;
  if (ecx & bit_AES) features |= kAesni;
  if (ecx & bit_PCLMUL) features |= kPclmulqdq;
  const bool os_saves_avx =
      (ecx & bit_OSXSAVE) && (ReadXcr0() & kXcr0SseAvx) == kXcr0SseAvx;
  const bool os_saves_avx512 =
      os_saves_avx && (ReadXcr0() & kXcr0Avx512) == kXcr0Avx512;
  if ((ecx & bit_AVX) && os_saves_avx) features |= kAvx;

  if (!__get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx)) return features;
  if (os_saves_avx) {
    if (ebx & bit_AVX2) features |= kAvx2;
    if (ecx & bit_VAES) features |= kVaes;
    if (ecx & bit_VPCLMULQDQ) features |= kVpclmulqdq;
  }
  if (ebx & bit_BMI2) features |= kBmi2;
  if (os_saves_avx512) {
    if (ebx & bit_AVX512F) features |= kAvx512f;
    if (ebx & bit_AVX512BW) features |= kAvx512bw;
    if (ebx & bit_AVX512VL) features |= kAvx512vl;
  }
  return features;
}
#elif defined(__aarch64__)
CpuFeatures DetectCpuFeatures() {
  const unsigned long hwcap = getauxval(AT_HWCAP);
  CpuFeatures features = 0;
  if (hwcap & HWCAP_AES) features |= kArmAes;
  if (hwcap & HWCAP_PMULL) features |= kArmPmull;
  return features;
}
#else
CpuFeatures DetectCpuFeatures() { return 0; }
#endif

std::string_view TargetProcessor() { return AESMUX_TARGET_PROCESSOR; }

std::string WhyNoTiers() {
  if (!kTiers.empty()) return {};
  return "aesmux's kernels are x86-64 code and this build is for " +
         std::string(TargetProcessor());
}

std::string DescribeCpuFeatures(CpuFeatures features) {
  std::string out;
  for (const auto &[feature, name] : kFeatureNames) {
    if ((features & feature) == 0) continue;
    if (!out.empty()) out += ' ';
    out += name;
  }
  return out;
}

const Tier *BestTier(CpuFeatures available) {
  for (const Tier &tier : kTiers) {
    if (Supported(tier, available)) return &tier;
  }
  return nullptr;
}

const Tier *TierByName(std::string_view name) {
  for (const Tier &tier : kTiers) {
    if (tier.name == name) return &tier;
  }
  return nullptr;
}

}  // namespace aesmux::kernels
