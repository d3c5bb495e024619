// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
// The request sizes `aesmux calibrate` measures include every length where
// a threshold's default sits, so that a default the measurements bear out
// is written back as it is (a quick run that measured 256 and 1K but not
// 512 could only move cbc.mb_min_len's 512 to 1K).
#include <gtest/gtest.h>

#include <algorithm>

#include "provider/cli/calibrate.h"
#include "provider/route/settings.h"

namespace aesmux::cli {
namespace {

TEST(CalibrationSizes, IncludeEveryDefaultThreshold) {
  std::vector<uint64_t> defaults = {route::kDefaultAutoAfalgMinLen,
                                    route::kDefaultAutoAfalgMinLenWithoutAes};
  for (const route::SettingKey &key : route::SettingKeys()) {
    if (!key.calibrated) continue;
    if (const auto bytes = route::ParseByteCount(key.default_value);
        bytes && *bytes > 0) {
      defaults.push_back(*bytes);
    }
  }
  // cbc.mb_min_len, cbc.mb_max_len, cbc.mb_threads_min_len at least.
  ASSERT_GE(defaults.size(), 5u);
  for (const bool quick : {true, false}) {
    const std::vector<size_t> sizes = CalibrationSizes(quick);
    for (const uint64_t length : defaults) {
      EXPECT_TRUE(std::find(sizes.begin(), sizes.end(), length) != sizes.end())
          << length << (quick ? " (--quick)" : " (full run)");
    }
  }
}

TEST(CalibrationSizes, SpanSixteenBytesTo64KiBInMultiplesOf16) {
  for (const bool quick : {true, false}) {
    const std::vector<size_t> sizes = CalibrationSizes(quick);
    ASSERT_FALSE(sizes.empty());
    EXPECT_EQ(sizes.front(), 16u);
    EXPECT_EQ(sizes.back(), 64u * 1024);
    EXPECT_TRUE(std::is_sorted(sizes.begin(), sizes.end()));
    EXPECT_TRUE(std::adjacent_find(sizes.begin(), sizes.end()) == sizes.end());
    for (const size_t size : sizes) EXPECT_EQ(size % 16, 0u) << size;
    // Fourfold steps at most, so that no crossover hides between two.
    for (size_t i = 1; i < sizes.size(); ++i) {
      EXPECT_LE(sizes[i], 4 * sizes[i - 1]);
    }
  }
  EXPECT_LT(CalibrationSizes(true).size(), CalibrationSizes(false).size());
}

}  // namespace
}  // namespace aesmux::cli
