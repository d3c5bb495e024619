// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
// tier_list: one line per kernel tier built into aesmux, best first:
// "<tier> yes" when this CPU (and its OS) can run it, else
// "<tier> no <missing CPU features>". scripts/test.sh matches these names
// against the test results to say which tiers were tested.
#include <cstdio>
#include <string>

#include "kernels/tiers.h"

int main() {
  using namespace aesmux::kernels;
  const CpuFeatures cpu = DetectCpuFeatures();
  for (const Tier &tier : kTiers) {
    const std::string name(tier.name);
    if (Supported(tier, cpu)) {
      std::printf("%s yes\n", name.c_str());
    } else {
      std::printf("%s no %s\n", name.c_str(),
                  DescribeCpuFeatures(tier.required & ~cpu).c_str());
    }
  }
  return 0;
}
