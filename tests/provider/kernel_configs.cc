// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
#include "tests/provider/kernel_configs.h"

#include <openssl/err.h>
#include <openssl/provider.h>

#include <cctype>
#include <cstdlib>

#include "kernels/tiers.h"

namespace aesmux::test {
namespace {

constexpr uint64_t kRoutingThreshold = 64;
constexpr std::string_view kFamilies[] = {"ecb", "cbc", "ctr", "xts", "gcm"};

uint64_t Counter(const ProviderEnv &env, const std::string &key) {
  uint64_t value = 0;
  OSSL_PARAM params[] = {OSSL_PARAM_uint64(key.c_str(), &value),
                         OSSL_PARAM_END};
  if (!OSSL_PROVIDER_get_params(env.aesmux(), params) ||
      !OSSL_PARAM_modified(params)) {
    ADD_FAILURE() << "aesmux does not report " << key;
  }
  return value;
}

}  // namespace

std::vector<std::string> KernelConfig::Settings() const {
  std::vector<std::string> lines = {"kernels = " + kernels};
  if (routes()) {
    for (std::string_view family : kFamilies) {
      lines.push_back(std::string(family) + ".fallback_max_len = " +
                      std::to_string(fallback_max_len));
    }
  }
  return lines;
}

std::vector<KernelConfig> AllKernelConfigs() {
  std::vector<KernelConfig> configs;
  for (const kernels::Tier &tier : kernels::kTiers) {
    configs.push_back({std::string(tier.name), std::string(tier.name), 0});
  }
  configs.push_back({"none", "none", 0});
  for (const kernels::Tier &tier : kernels::kTiers) {
    configs.push_back(
        {std::string(tier.name) + "_route" + std::to_string(kRoutingThreshold),
         std::string(tier.name), kRoutingThreshold});
  }
  return configs;
}

void PrintTo(const KernelConfig &config, std::ostream *os) {
  *os << config.name;
}

std::string KernelConfigName(const testing::TestParamInfo<KernelConfig> &info) {
  return info.param.name;
}

std::string UnsupportedReason(const KernelConfig &config) {
  if (config.kernels == "none") return {};
  const kernels::Tier *tier = kernels::TierByName(config.kernels);
  if (tier == nullptr) return "no tier called " + config.kernels;
  const kernels::CpuFeatures cpu = kernels::DetectCpuFeatures();
  if (kernels::Supported(*tier, cpu)) return {};
  return "this CPU lacks " +
         kernels::DescribeCpuFeatures(tier->required & ~cpu) + " for the " +
         config.kernels + " tier";
}

std::unique_ptr<ProviderEnv> LoadAesmux(
    const KernelConfig &config, std::string *error,
    const std::vector<std::string> &extra) {
  // Environment variables override openssl.cnf (provider/route/settings.h).
  unsetenv("AESMUX_KERNELS");
  for (std::string_view family : kFamilies) {
    std::string name = "AESMUX_";
    for (char c : family) name += static_cast<char>(std::toupper(c));
    unsetenv((name + "_FALLBACK_MAX_LEN").c_str());
    unsetenv((name + "_AFALG").c_str());
    unsetenv((name + "_AFALG_MIN_LEN").c_str());
  }
  unsetenv("AESMUX_AFALG");
  unsetenv("AESMUX_AFALG_FORK");
  unsetenv("AESMUX_CBC_MB_MIN_LEN");
  unsetenv("AESMUX_CBC_MB_MAX_LEN");
  unsetenv("AESMUX_CBC_MB_THREADS_MIN_LEN");
  std::vector<std::string> settings = config.Settings();
  settings.insert(settings.end(), extra.begin(), extra.end());
  auto env = std::make_unique<ProviderEnv>(settings);
  if (!env->loaded()) {
    *error = "aesmux did not load: " + env->error();
    return nullptr;
  }
  const std::string tier = env->ProviderParam("tier");
  if (tier != config.kernels) {
    *error = "aesmux runs tier '" + tier + "', expected '" + config.kernels +
             "' (" + env->ProviderParam("tier-reason") + ")";
    return nullptr;
  }
  return env;
}

void KernelConfigTest::SetUp() {
  const std::string unsupported = UnsupportedReason(GetParam());
  if (!unsupported.empty()) GTEST_SKIP() << unsupported;
  std::string error;
  env_ = LoadAesmux(GetParam(), &error);
  ASSERT_NE(env_, nullptr) << error;
  ERR_clear_error();
}

PathCounts RequestsServed(const ProviderEnv &env, std::string_view algorithm) {
  const std::string prefix = "stats." + std::string(algorithm) + ".";
  return {Counter(env, prefix + "simd.requests"),
          Counter(env, prefix + "fallback.requests")};
}

testing::AssertionResult ServedAsConfigured(const KernelConfig &config,
                                            PathCounts before, PathCounts after,
                                            bool expect_both_paths) {
  const uint64_t simd = after.simd - before.simd;
  const uint64_t fallback = after.fallback - before.fallback;
  const bool ok = config.kernels == "none" ? simd == 0 && fallback > 0
                  : !config.routes()       ? simd > 0 && fallback == 0
                  : expect_both_paths      ? simd > 0 && fallback > 0
                                           : simd + fallback > 0;
  auto result = ok ? testing::AssertionSuccess() : testing::AssertionFailure();
  return result << "configuration " << config.name << ": " << simd
                << " requests served by the kernels, " << fallback
                << " by the fallback path";
}

}  // namespace aesmux::test
