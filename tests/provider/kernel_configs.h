// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
// The kernel configurations every provider suite runs under, and loading
// aesmux in one of them.
//
// The configurations: every tier in kernels::kTiers ("aesni", …), "none"
// (every request on the fallback path) and, per tier, "<tier>_route64" in
// which every family's fallback_max_len is 64 bytes, so that one stream
// mixes requests served by the kernels and by the fallback path. A
// configuration this CPU cannot run is skipped with the reason, never
// dropped from the list, so every tier keeps its test instances.
#ifndef AESMUX_TESTS_PROVIDER_KERNEL_CONFIGS_H_
#define AESMUX_TESTS_PROVIDER_KERNEL_CONFIGS_H_

#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "tests/support/provider_env.h"

namespace aesmux::test {

struct KernelConfig {
  std::string name;     // test-name suffix
  std::string kernels;  // aesmux's "kernels" key: a tier name or "none"
  uint64_t fallback_max_len = 0;  // every family's threshold; 0: unset

  bool routes() const { return fallback_max_len != 0; }
  // The lines of aesmux's openssl.cnf section for this configuration.
  std::vector<std::string> Settings() const;
};

std::vector<KernelConfig> AllKernelConfigs();

// For GoogleTest's messages: the configuration's name.
void PrintTo(const KernelConfig &config, std::ostream *os);

// For INSTANTIATE_TEST_SUITE_P.
std::string KernelConfigName(const testing::TestParamInfo<KernelConfig> &info);

// Why this CPU cannot run `config`; empty if it can.
std::string UnsupportedReason(const KernelConfig &config);

// Loads aesmux (and the default provider) under `config`, ignoring the
// AESMUX_* environment overrides so the configuration tested is the one
// named, with `extra` lines after the configuration's. Returns nullptr and
// sets `error` if aesmux did not load or does not report the expected
// tier.
std::unique_ptr<ProviderEnv> LoadAesmux(
    const KernelConfig &config, std::string *error,
    const std::vector<std::string> &extra = {});

// A test run under each kernel configuration: SetUp loads aesmux under the
// parameter into env_ (and skips, with the reason, a configuration this CPU
// cannot run), leaving OpenSSL's error queue empty.
class KernelConfigTest : public testing::TestWithParam<KernelConfig> {
 protected:
  void SetUp() override;
  std::unique_ptr<ProviderEnv> env_;
};

// Requests aesmux has served for one algorithm, per path, from its
// statistics (process-wide counters).
struct PathCounts {
  uint64_t simd = 0;
  uint64_t fallback = 0;
};
PathCounts RequestsServed(const ProviderEnv &env, std::string_view algorithm);

// Whether the requests served between `before` and `after` went where
// `config` sends them: all to the fallback path for "none", all to the
// kernels for a tier, and to both for a routing configuration when
// `expect_both_paths` (the caller knows it sent requests on both sides of
// the threshold).
testing::AssertionResult ServedAsConfigured(const KernelConfig &config,
                                            PathCounts before, PathCounts after,
                                            bool expect_both_paths);

}  // namespace aesmux::test

#endif  // AESMUX_TESTS_PROVIDER_KERNEL_CONFIGS_H_
