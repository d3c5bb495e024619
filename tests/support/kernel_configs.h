// Test support: the kernel configurations every EVP-level suite runs under:
// each tier built into aesmux (skipped with a reason when this CPU lacks
// it) and "none", where every request takes the fallback path.
#ifndef AESMUX_TESTS_SUPPORT_KERNEL_CONFIGS_H_
#define AESMUX_TESTS_SUPPORT_KERNEL_CONFIGS_H_

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "kernels/tiers.h"

namespace aesmux::test {

inline std::vector<std::string> KernelConfigs() {
  std::vector<std::string> configs;
  for (const kernels::Tier &tier : kernels::kTiers) {
    configs.emplace_back(tier.name);
  }
  configs.emplace_back("none");
  return configs;
}

// Empty when `config` can run here, else why not.
inline std::string KernelConfigUnavailable(const std::string &config) {
  const kernels::Tier *tier = kernels::TierByName(config);
  if (tier == nullptr) return {};
  const kernels::CpuFeatures cpu = kernels::DetectCpuFeatures();
  if (kernels::Supported(*tier, cpu)) return {};
  return "this CPU lacks " +
         kernels::DescribeCpuFeatures(tier->required & ~cpu) +
         " needed by tier " + config;
}

#define AESMUX_SKIP_IF_KERNEL_CONFIG_UNAVAILABLE(config)                 \
  do {                                                                   \
    const std::string aesmux_why = KernelConfigUnavailable(config);      \
    if (!aesmux_why.empty()) GTEST_SKIP() << aesmux_why;                 \
  } while (0)

}  // namespace aesmux::test

#endif  // AESMUX_TESTS_SUPPORT_KERNEL_CONFIGS_H_
