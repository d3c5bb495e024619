// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
// Shared pieces of the multi-buffer tests: fixtures parameterised over the
// multi-buffer tiers and over every kernel of every tier, and loading a key
// into a lane of the transposed key table.
#ifndef AESMUX_TESTS_KERNELS_MB_TEST_SUPPORT_H_
#define AESMUX_TESTS_KERNELS_MB_TEST_SUPPORT_H_

#include <gtest/gtest.h>

#include <cstring>
#include <ostream>
#include <string>
#include <vector>

#include "kernels/kernels.h"
#include "kernels/mb/lane_manager.h"
#include "kernels/tiers.h"
#include "tests/kernels/test_support.h"

namespace aesmux::kernels::testing {

// What the multi-buffer fixtures share.
class MbTestBase {
 protected:
  // Skips, with the missing features in the message, when this CPU cannot
  // run `tier`.
  static void SkipUnlessSupported(const Tier &tier) {
    const CpuFeatures available = DetectCpuFeatures();
    if (!Supported(tier, available)) {
      GTEST_SKIP() << "CPU lacks "
                   << DescribeCpuFeatures(tier.required & ~available)
                   << " needed by tier " << tier.name;
    }
  }

  // The encryption schedule of `key` (16, 24 or 32 bytes).
  static aesmux_aes_key ExpandKey(const Bytes &key) {
    aesmux_aes_key enc{};
    aesmux_aes_expand_key_aesni(&enc, key.data(), key.size());
    return enc;
  }

  Rng rng_;
};

// Fixture for tests that run once per tier in kTiers, on its multi-buffer
// kernels (Tier::mb).
class MbTierTest : public ::testing::TestWithParam<Tier>,
                   protected MbTestBase {
 protected:
  void SetUp() override { SkipUnlessSupported(tier()); }
  const Tier &tier() const { return GetParam(); }
  uint32_t all_lanes() const { return (uint32_t{1} << tier().mb.lanes) - 1; }
};

#define AESMUX_INSTANTIATE_FOR_ALL_MB_TIERS(suite)                        \
  INSTANTIATE_TEST_SUITE_P(AllMbTiers, suite,                             \
                           ::testing::ValuesIn(::aesmux::kernels::kTiers), \
                           ::aesmux::kernels::testing::TierName)

// One kernel of one tier.
struct MbKernelParam {
  const Tier *tier;
  MbKernel kernel;
};

inline void PrintTo(const MbKernelParam &param, std::ostream *os) {
  *os << param.tier->name << "_x" << param.kernel.lanes;
}

// Every multi-buffer kernel of every tier in kTiers.
inline std::vector<MbKernelParam> AllMbKernels() {
  std::vector<MbKernelParam> all;
  for (const Tier &tier : kTiers) {
    for (const MbKernel &kernel : tier.mb.kernels) {
      all.push_back({&tier, kernel});
    }
  }
  return all;
}

// Fixture for tests that run once per kernel of every tier.
class MbKernelParamTest : public ::testing::TestWithParam<MbKernelParam>,
                          protected MbTestBase {
 protected:
  void SetUp() override { SkipUnlessSupported(*GetParam().tier); }
  const MbKernel &kernel() const { return GetParam().kernel; }
  size_t width() const { return kernel().lanes; }
  uint32_t all_lanes() const { return (uint32_t{1} << width()) - 1; }
};

inline std::string MbKernelName(
    const ::testing::TestParamInfo<MbKernelParam> &info) {
  return std::string(info.param.tier->name) + "_x" +
         std::to_string(info.param.kernel.lanes);
}

#define AESMUX_INSTANTIATE_FOR_ALL_MB_KERNELS(suite)                  \
  INSTANTIATE_TEST_SUITE_P(                                           \
      AllMbKernels, suite,                                            \
      ::testing::ValuesIn(::aesmux::kernels::testing::AllMbKernels()), \
      ::aesmux::kernels::testing::MbKernelName)

// Copies `key`'s round keys into lane `lane` of the transposed table.
inline void LoadLaneKey(aesmux_mb_cbc_lanes &lanes, unsigned lane,
                        const aesmux_aes_key &key) {
  for (uint32_t r = 0; r <= key.rounds; ++r) {
    std::memcpy(lanes.round_keys[r][lane], key.round_keys[r], 16);
  }
}

// CBC encryption by OpenSSL's default provider (no padding).
inline Bytes ReferenceCbcEncrypt(const Bytes &key, const Bytes &iv,
                                 std::span<const uint8_t> plaintext) {
  return Reference::Get().Crypt(CipherName(key.size(), "CBC"), true, key, iv,
                                plaintext);
}

}  // namespace aesmux::kernels::testing

#endif  // AESMUX_TESTS_KERNELS_MB_TEST_SUPPORT_H_
