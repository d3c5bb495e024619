// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
// Which kernel tier aesmux runs on this CPU, and forcing each tier.
//
// The expectation comes from /proc/cpuinfo, a reading of the CPU's features
// independent of aesmux's CPUID (or AT_HWCAP) code, and from the tier
// requirements written out again here (so a change to the tier table or its
// order must change this test too). Forcing a tier with AESMUX_KERNELS
// either runs AES through it, identical to the default provider, or, on a
// CPU without what the tier needs, refuses to load and names the missing
// features.
#include <gtest/gtest.h>
#include <openssl/evp.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "kernels/tiers.h"
#include "tests/support/bytes.h"
#include "tests/support/provider_env.h"

namespace aesmux::test {
namespace {

// The line of /proc/cpuinfo that lists this architecture's CPU features
// ("flags" on x86-64, "Features" on AArch64), and the names it gives those
// aesmux detects.
struct CpuinfoNames {
  const char *line;
  std::vector<std::pair<kernels::CpuFeature, const char *>> names;
};
CpuinfoNames NamesForThisArchitecture() {
  if (kernels::TargetProcessor() == "aarch64") {
    return {"Features",
            {{kernels::kArmAes, "aes"}, {kernels::kArmPmull, "pmull"}}};
  }
  return {"flags",
          {{kernels::kSse41, "sse4_1"},       {kernels::kAesni, "aes"},
           {kernels::kPclmulqdq, "pclmulqdq"}, {kernels::kAvx, "avx"},
           {kernels::kAvx2, "avx2"},           {kernels::kBmi2, "bmi2"},
           {kernels::kVaes, "vaes"},
           {kernels::kVpclmulqdq, "vpclmulqdq"},
           {kernels::kAvx512f, "avx512f"},     {kernels::kAvx512bw, "avx512bw"},
           {kernels::kAvx512vl, "avx512vl"}}};
}

// The features line of /proc/cpuinfo; empty if there is none (qemu's user
// emulation shows the host's, whose features line has another name).
std::set<std::string> CpuinfoFlags() {
  const std::string name = NamesForThisArchitecture().line;
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line;
  while (std::getline(cpuinfo, line)) {
    if (line.rfind(name, 0) != 0) continue;
    std::istringstream words(line.substr(line.find(':') + 1));
    std::set<std::string> flags;
    for (std::string word; words >> word;) flags.insert(word);
    return flags;
  }
  return {};
}

// What each tier needs, in /proc/cpuinfo's names, best tier first.
struct TierNeeds {
  const char *tier;
  std::vector<std::string> flags;
};
const std::vector<TierNeeds> &AllTierNeeds() {
  static const std::vector<TierNeeds> needs = {
      {"vaes_avx512",
       {"sse4_1", "aes", "pclmulqdq", "avx", "avx2", "bmi2", "vaes",
        "vpclmulqdq", "avx512f", "avx512bw", "avx512vl"}},
      {"vaes_avx2",
       {"sse4_1", "aes", "pclmulqdq", "avx", "avx2", "vaes", "vpclmulqdq"}},
      {"aesni", {"sse4_1", "aes", "pclmulqdq"}},
  };
  return needs;
}

bool HasAll(const std::set<std::string> &flags,
            const std::vector<std::string> &wanted) {
  return std::all_of(wanted.begin(), wanted.end(),
                     [&](const std::string &f) { return flags.count(f) != 0; });
}

// Loads aesmux with AESMUX_KERNELS=`kernels` (the environment overrides
// openssl.cnf).
std::unique_ptr<ProviderEnv> LoadWithKernels(const std::string &kernels) {
  setenv("AESMUX_KERNELS", kernels.c_str(), 1);
  auto env = std::make_unique<ProviderEnv>();
  unsetenv("AESMUX_KERNELS");
  return env;
}

// Encrypts one message with `cipher_name` through aesmux and through the
// default provider; the outputs (and the GCM tag) must match.
void ExpectSameAsDefault(const ProviderEnv &env, const std::string &name,
                         size_t len) {
  std::mt19937_64 rng(len * 7919 + name.size());
  CipherPtr ours = env.Aesmux(name), theirs = env.Default(name);
  ASSERT_NE(ours, nullptr) << name;
  ASSERT_NE(theirs, nullptr) << name;
  const Bytes key = RandomBytes(rng, EVP_CIPHER_get_key_length(ours.get()));
  const Bytes iv = RandomBytes(rng, 16);
  const Bytes in = RandomBytes(rng, len);
  Bytes outputs[2];
  for (int side = 0; side < 2; ++side) {
    auto ctx = NewCipherCtx();
    ASSERT_TRUE(EVP_EncryptInit_ex2(
        ctx.get(), side == 0 ? ours.get() : theirs.get(), key.data(),
        iv.data(), nullptr));
    EVP_CIPHER_CTX_set_padding(ctx.get(), 0);
    Bytes out(len + 32);
    int n = 0, m = 0;
    ASSERT_TRUE(EVP_EncryptUpdate(ctx.get(), out.data(), &n, in.data(),
                                  static_cast<int>(len)));
    ASSERT_TRUE(EVP_EncryptFinal_ex(ctx.get(), out.data() + n, &m));
    out.resize(n + m);
    if (EVP_CIPHER_get_mode(ours.get()) == EVP_CIPH_GCM_MODE) {
      uint8_t tag[16];
      ASSERT_TRUE(EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_AEAD_GET_TAG, 16,
                                      tag));
      out.insert(out.end(), tag, tag + 16);
    }
    outputs[side] = out;
  }
  EXPECT_EQ(outputs[0], outputs[1]) << name << " len " << len;
}

TEST(TierSelection, CpuFeaturesAgreeWithProcCpuinfo) {
  const std::set<std::string> flags = CpuinfoFlags();
  if (flags.empty()) {
    GTEST_SKIP() << "no " << NamesForThisArchitecture().line
                 << " line in /proc/cpuinfo (qemu's user emulation shows the "
                    "host's)";
  }
  const kernels::CpuFeatures detected = kernels::DetectCpuFeatures();
  for (const auto &[feature, name] : NamesForThisArchitecture().names) {
    EXPECT_EQ((detected & feature) != 0, flags.count(name) != 0)
        << "feature " << name;
  }
}

TEST(TierSelection, AutoRunsTheBestTierThisCpuHas) {
  const std::set<std::string> flags = CpuinfoFlags();
  if (flags.empty() && !kernels::kTiers.empty()) {
    GTEST_SKIP() << "no flags line in /proc/cpuinfo";
  }
  std::string expected = "none";  // also what a build without kernels runs
  for (const TierNeeds &needs : AllTierNeeds()) {
    if (!kernels::kTiers.empty() && HasAll(flags, needs.flags)) {
      expected = needs.tier;
      break;
    }
  }
  auto env = LoadWithKernels("auto");
  ASSERT_TRUE(env->loaded()) << env->error();
  std::cout << "[   TIER   ] this CPU runs " << env->ProviderParam("tier")
            << " (" << env->ProviderParam("tier-reason") << ")\n";
  EXPECT_EQ(env->ProviderParam("tier"), expected);
}

TEST(TierSelection, TheTierTableMatchesTheseRequirements) {
  if (kernels::kTiers.empty()) {
    GTEST_SKIP() << "no tiers: " << kernels::WhyNoTiers();
  }
  ASSERT_EQ(kernels::kTiers.size(), AllTierNeeds().size());
  for (size_t i = 0; i < kernels::kTiers.size(); ++i) {
    EXPECT_EQ(kernels::kTiers[i].name, AllTierNeeds()[i].tier);
    std::string described =
        " " + kernels::DescribeCpuFeatures(kernels::kTiers[i].required) + " ";
    for (std::string flag : AllTierNeeds()[i].flags) {
      if (flag == "sse4_1") flag = "sse4.1";
      if (flag == "aes") flag = "aesni";
      EXPECT_NE(described.find(" " + flag + " "), std::string::npos)
          << kernels::kTiers[i].name << " does not require " << flag;
    }
  }
}

class ForcedTierTest : public ::testing::TestWithParam<std::string> {};

TEST_P(ForcedTierTest, RunsItOrRefusesToLoad) {
  const std::string &tier = GetParam();
  bool supported = true;
  for (const TierNeeds &needs : AllTierNeeds()) {
    if (tier == needs.tier) supported = HasAll(CpuinfoFlags(), needs.flags);
  }
  auto env = LoadWithKernels(tier);
  if (!supported) {
    EXPECT_FALSE(env->loaded()) << tier << " loaded on a CPU without it";
    EXPECT_NE(env->error().find("lacks"), std::string::npos) << env->error();
    return;
  }
  ASSERT_TRUE(env->loaded()) << env->error();
  EXPECT_EQ(env->ProviderParam("tier"), tier);
  for (const char *name :
       {"AES-128-ECB", "AES-128-CBC", "AES-256-CTR", "AES-128-XTS",
        "AES-256-XTS", "AES-128-GCM", "AES-256-GCM"}) {
    // The counters are per process: compare before and after.
    const uint64_t simd0 = env->Stat(name, "simd", "requests");
    const uint64_t fallback0 = env->Stat(name, "fallback", "requests");
    for (size_t len : {32, 1024, 4096 + 48}) {
      ExpectSameAsDefault(*env, name, len);
      if (HasFatalFailure()) return;
    }
    const uint64_t simd = env->Stat(name, "simd", "requests") - simd0;
    const uint64_t fallback =
        env->Stat(name, "fallback", "requests") - fallback0;
    if (tier == "none") {
      EXPECT_EQ(simd, 0u) << name;
      EXPECT_GT(fallback, 0u) << name;
    } else {
      EXPECT_GT(simd, 0u) << name;
      EXPECT_EQ(fallback, 0u) << name;
    }
  }
}

std::vector<std::string> ForcedTiers() {
  std::vector<std::string> names;
  for (const kernels::Tier &tier : kernels::kTiers) {
    names.emplace_back(tier.name);
  }
  names.emplace_back("none");
  return names;
}

INSTANTIATE_TEST_SUITE_P(
    EveryTier, ForcedTierTest, ::testing::ValuesIn(ForcedTiers()),
    [](const ::testing::TestParamInfo<std::string> &info) {
      return info.param;
    });

}  // namespace
}  // namespace aesmux::test
