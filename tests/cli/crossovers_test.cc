// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
// The thresholds `aesmux calibrate` writes for a family are what every key
// size agrees on; where the key sizes' batching ranges share no size, the
// file turns batching off rather than writing a cbc.mb_min_len above
// cbc.mb_max_len (a range aesmux would report as empty).
#include <gtest/gtest.h>

#include "provider/cli/crossovers.h"

namespace aesmux::cli {
namespace {

const std::vector<size_t> kSizes = {16, 64, 256, 1024, 8192, 65536};

// A CBC encryption measured with the simd curve at 100 B/s everywhere and
// the mb curve winning (200 B/s) at the sizes of `mb_wins` alone.
Measured CbcEncrypt(core::Alg alg, const std::vector<bool> &mb_wins) {
  Measured m;
  m.alg = core::Info(alg);
  m.direction = Direction::kEncrypt;
  PlotCurve simd{"simd aesni", std::vector<double>(kSizes.size(), 100)};
  PlotCurve fallback{"fallback", std::vector<double>(kSizes.size(), 50)};
  PlotCurve mb{"mb aesni", {}};
  for (const bool win : mb_wins) mb.bytes_per_second.push_back(win ? 200 : 50);
  m.curves = {simd, fallback, mb};
  FindCrossovers(kSizes, 0.05, "simd aesni", &m);
  return m;
}

const FamilyThresholds &Cbc(
    const std::array<FamilyThresholds, core::kNumFamilies> &families) {
  return families[static_cast<size_t>(core::Family::kCbc)];
}

TEST(Crossovers, BatchingRangeIsWhatEveryKeySizeAgreesOn) {
  const auto families =
      Aggregate({CbcEncrypt(core::Alg::kAes128Cbc,
                            {false, true, true, true, true, false}),
                 CbcEncrypt(core::Alg::kAes256Cbc,
                            {false, false, true, true, true, true})});
  EXPECT_TRUE(Cbc(families).mb_measured);
  EXPECT_EQ(Cbc(families).mb_min, 256u);
  EXPECT_EQ(Cbc(families).mb_max, 8192u);
}

TEST(Crossovers, RangesThatShareNoSizeTurnBatchingOff) {
  const auto families =
      Aggregate({CbcEncrypt(core::Alg::kAes128Cbc,
                            {true, true, false, false, false, false}),
                 CbcEncrypt(core::Alg::kAes256Cbc,
                            {false, false, false, false, true, true})});
  EXPECT_TRUE(Cbc(families).mb_measured);
  EXPECT_EQ(Cbc(families).mb_max, 0u);
  EXPECT_EQ(Cbc(families).mb_min, 0u);
}

TEST(Crossovers, BatchingThatNeverWinsForOneKeySizeIsOff) {
  const auto families =
      Aggregate({CbcEncrypt(core::Alg::kAes128Cbc,
                            {false, false, true, true, true, true}),
                 CbcEncrypt(core::Alg::kAes256Cbc,
                            std::vector<bool>(kSizes.size(), false))});
  EXPECT_EQ(Cbc(families).mb_max, 0u);
  EXPECT_EQ(Cbc(families).mb_min, 0u);
}

}  // namespace
}  // namespace aesmux::cli
