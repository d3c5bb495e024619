// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
// Configuration: parsing of every key, precedence of the environment over
// openssl.cnf, and refusal to load on a bad value with a message that names
// the key.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>

#include <cctype>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "kernels/mb/lane_manager.h"
#include "kernels/tiers.h"
#include "provider/route/settings.h"
#include "tests/support/provider_env.h"

namespace aesmux::route {
namespace {

using Values = std::map<std::string, std::string, std::less<>>;

ConfigLookup From(const Values &values) {
  return [&values](std::string_view key) -> std::optional<std::string> {
    auto it = values.find(key);
    if (it == values.end()) return std::nullopt;
    return it->second;
  };
}

constexpr kernels::CpuFeatures kAllFeatures = ~kernels::CpuFeatures{0};

// The best tier of this build, or nullptr in a build without kernels.
const kernels::Tier *BestBuiltTier() {
  return kernels::kTiers.empty() ? nullptr : &kernels::kTiers.front();
}

TEST(ParseByteCount, AcceptsDecimalWithBinarySuffixes) {
  EXPECT_EQ(ParseByteCount("0"), 0u);
  EXPECT_EQ(ParseByteCount("4096"), 4096u);
  EXPECT_EQ(ParseByteCount("16K"), 16384u);
  EXPECT_EQ(ParseByteCount("16k"), 16384u);
  EXPECT_EQ(ParseByteCount("2M"), 2u << 20);
  EXPECT_EQ(ParseByteCount("1G"), 1u << 30);
  EXPECT_EQ(ParseByteCount("18446744073709551615"), ~uint64_t{0});
}

TEST(ParseByteCount, RejectsAnythingElse) {
  for (const char *bad : {"", "-1", "12x", "K", "1.5K", " 1", "1 ", "0x10",
                          "18446744073709551616", "17179869184G", "1KiB"}) {
    EXPECT_FALSE(ParseByteCount(bad).has_value()) << bad;
  }
}

TEST(LoadSettings, DefaultsUseTheBestTierAndNeverFallBack) {
  const Values none;
  Problems error;
  auto settings = LoadSettings(From(none), From(none), kAllFeatures, &error);
  ASSERT_TRUE(settings) << error.Text();
  EXPECT_EQ(settings->tier, BestBuiltTier());
  for (const FamilySettings &family : settings->families) {
    EXPECT_EQ(family.fallback_max_len, 0u);
  }
  EXPECT_TRUE(settings->stats_file.empty());
}

TEST(SettingNames, ListsEveryKeyWithItsEnvironmentVariable) {
  const std::vector<SettingName> names = SettingNames();
  auto find = [&](std::string_view key) -> std::string {
    for (const SettingName &name : names) {
      if (name.key == key) return name.env_name;
    }
    return "";
  };
  EXPECT_EQ(find("kernels"), "AESMUX_KERNELS");
  EXPECT_EQ(find("stats_file"), "AESMUX_STATS_FILE");
  EXPECT_EQ(find("afalg"), "AESMUX_AFALG");
  EXPECT_EQ(find("afalg_fork"), "AESMUX_AFALG_FORK");
  EXPECT_EQ(find("cbc.mb_max_len"), "AESMUX_CBC_MB_MAX_LEN");
  for (const char *family : {"ecb", "cbc", "ctr", "xts", "gcm"}) {
    std::string upper(family);
    for (char &c : upper) c = static_cast<char>(std::toupper(c));
    const std::string prefix = std::string(family) + ".";
    EXPECT_EQ(find(prefix + "fallback_max_len"),
              "AESMUX_" + upper + "_FALLBACK_MAX_LEN");
    EXPECT_EQ(find(prefix + "afalg"), "AESMUX_" + upper + "_AFALG");
    EXPECT_EQ(find(prefix + "afalg_min_len"),
              "AESMUX_" + upper + "_AFALG_MIN_LEN");
  }
  // Every variable is the key in capitals, '.' as '_', after AESMUX_.
  for (const SettingName &name : names) {
    std::string expected = "AESMUX_";
    for (char c : name.key) {
      expected += c == '.' ? '_' : static_cast<char>(std::toupper(c));
    }
    EXPECT_EQ(name.env_name, expected);
  }
}

TEST(LoadSettings, NoTierOnACpuWithoutAesni) {
  const Values none;
  Problems error;
  auto settings = LoadSettings(From(none), From(none), 0, &error);
  ASSERT_TRUE(settings) << error.Text();
  EXPECT_EQ(settings->tier, nullptr);
  EXPECT_NE(settings->tier_reason.find("auto"), std::string::npos);
}

TEST(LoadSettings, ReadsEveryFamilyThreshold) {
  const Values config = {{"ecb.fallback_max_len", "16"},
                         {"cbc.fallback_max_len", "32"},
                         {"ctr.fallback_max_len", "1K"},
                         {"xts.fallback_max_len", "64"},
                         {"gcm.fallback_max_len", "128"},
                         {"stats_file", "/tmp/x"},
                         {"kernels", "none"}};
  const Values env;
  Problems error;
  auto settings = LoadSettings(From(config), From(env), kAllFeatures, &error);
  ASSERT_TRUE(settings) << error.Text();
  EXPECT_EQ(settings->family(Family::kEcb).fallback_max_len, 16u);
  EXPECT_EQ(settings->family(Family::kCbc).fallback_max_len, 32u);
  EXPECT_EQ(settings->family(Family::kCtr).fallback_max_len, 1024u);
  EXPECT_EQ(settings->family(Family::kXts).fallback_max_len, 64u);
  EXPECT_EQ(settings->family(Family::kGcm).fallback_max_len, 128u);
  EXPECT_EQ(settings->stats_file, "/tmp/x");
  EXPECT_EQ(settings->tier, nullptr);
}

// Threads batch CBC encryptions only from 8 KiB unless told otherwise.
TEST(LoadSettings, CbcThreadsBatchFrom8KibByDefaultAndConfigurable) {
  const Values none;
  Problems error;
  auto settings = LoadSettings(From(none), From(none), kAllFeatures, &error);
  ASSERT_TRUE(settings) << error.Text();
  EXPECT_EQ(settings->family(Family::kCbc).mb_threads_min_len, 8u * 1024);
  EXPECT_EQ(settings->family(Family::kCbc).mb_min_len, 512u)
      << "ASYNC jobs batch from where pausing a job costs less than lanes "
         "save (BENCHMARKS.md)";

  const Values config = {{"cbc.mb_threads_min_len", "0"}};
  const Values env = {{"AESMUX_CBC_MB_THREADS_MIN_LEN", "16K"}};
  settings = LoadSettings(From(config), From(none), kAllFeatures, &error);
  ASSERT_TRUE(settings) << error.Text();
  EXPECT_EQ(settings->family(Family::kCbc).mb_threads_min_len, 0u);
  settings = LoadSettings(From(config), From(env), kAllFeatures, &error);
  ASSERT_TRUE(settings) << error.Text();
  EXPECT_EQ(settings->family(Family::kCbc).mb_threads_min_len, 16u * 1024);
}

TEST(LoadSettings, CbcBatchingIsOnUpTo64KibByDefaultAndConfigurable) {
  const Values none;
  Problems error;
  auto settings = LoadSettings(From(none), From(none), kAllFeatures, &error);
  ASSERT_TRUE(settings) << error.Text();
  EXPECT_EQ(settings->family(Family::kCbc).mb_max_len, 64u * 1024);
  EXPECT_EQ(settings->family(Family::kCtr).mb_max_len, 0u);
  if (settings->tier != nullptr) {
    EXPECT_NE(settings->tier->mb.lanes, 0u) << "every tier has lanes";
  }

  const Values off = {{"cbc.mb_max_len", "0"}};
  const Values env = {{"AESMUX_CBC_MB_MAX_LEN", "1K"}};
  settings = LoadSettings(From(off), From(none), kAllFeatures, &error);
  ASSERT_TRUE(settings) << error.Text();
  EXPECT_EQ(settings->family(Family::kCbc).mb_max_len, 0u);
  settings = LoadSettings(From(off), From(env), kAllFeatures, &error);
  ASSERT_TRUE(settings) << error.Text();
  EXPECT_EQ(settings->family(Family::kCbc).mb_max_len, 1024u);

  const Values bad = {{"cbc.mb_max_len", "some"}};
  EXPECT_FALSE(LoadSettings(From(bad), From(none), kAllFeatures, &error));
  EXPECT_NE(error.Text().find("cbc.mb_max_len"), std::string::npos) << error.Text();
}

TEST(LoadSettings, EnvironmentOverridesTheConfigFile) {
  const Values config = {{"cbc.fallback_max_len", "32"},
                         {"kernels", "none"},
                         {"stats_file", "/tmp/from-config"}};
  const Values env = {{"AESMUX_CBC_FALLBACK_MAX_LEN", "48"},
                      {"AESMUX_KERNELS", "auto"},
                      {"AESMUX_STATS_FILE", "/tmp/from-env"}};
  Problems error;
  auto settings = LoadSettings(From(config), From(env), kAllFeatures, &error);
  ASSERT_TRUE(settings) << error.Text();
  EXPECT_EQ(settings->family(Family::kCbc).fallback_max_len, 48u);
  EXPECT_EQ(settings->tier, BestBuiltTier());
  EXPECT_TRUE(settings->tier_reason.starts_with("auto"))
      << settings->tier_reason;
  EXPECT_EQ(settings->stats_file, "/tmp/from-env");
}

TEST(LoadSettings, BadThresholdNamesItsSource) {
  const Values config = {{"gcm.fallback_max_len", "lots"}};
  const Values env;
  Problems error;
  EXPECT_FALSE(LoadSettings(From(config), From(env), kAllFeatures, &error));
  EXPECT_NE(error.Text().find("gcm.fallback_max_len"), std::string::npos) << error.Text();
  EXPECT_NE(error.Text().find("lots"), std::string::npos) << error.Text();

  const Values bad_env = {{"AESMUX_XTS_FALLBACK_MAX_LEN", "-5"}};
  EXPECT_FALSE(LoadSettings(From(env), From(bad_env), kAllFeatures, &error));
  EXPECT_NE(error.Text().find("AESMUX_XTS_FALLBACK_MAX_LEN"), std::string::npos)
      << error.Text();
}

TEST(LoadSettings, UnknownOrUnsupportedTierIsRefused) {
  const Values env;
  const Values unknown = {{"kernels", "turbo"}};
  Problems error;
  EXPECT_FALSE(LoadSettings(From(unknown), From(env), kAllFeatures, &error));
  EXPECT_NE(error.Text().find("turbo"), std::string::npos) << error.Text();
  if (kernels::kTiers.empty()) {
    GTEST_SKIP() << "no tier to name or force: " << kernels::WhyNoTiers();
  }
  EXPECT_NE(error.Text().find("aesni"), std::string::npos) << error.Text();

  // Forcing a tier the CPU cannot run must not load (it would SIGILL).
  const Values forced = {{"kernels", "aesni"}};
  EXPECT_FALSE(LoadSettings(From(forced), From(env), kernels::kSse41, &error));
  EXPECT_NE(error.Text().find("lacks"), std::string::npos) << error.Text();
  EXPECT_NE(error.Text().find("aesni"), std::string::npos) << error.Text();
}

TEST(LoadSettings, EveryTierCanBeForcedByName) {
  if (kernels::kTiers.empty()) {
    GTEST_SKIP() << "no tier to force: " << kernels::WhyNoTiers();
  }
  const Values env;
  for (const kernels::Tier &tier : kernels::kTiers) {
    const Values config = {{"kernels", std::string(tier.name)}};
    Problems error;
    auto settings = LoadSettings(From(config), From(env), kAllFeatures, &error);
    ASSERT_TRUE(settings) << error.Text();
    EXPECT_EQ(settings->tier, &tier);
  }
}

// A build for a target without kernels (not x86-64) runs every request on
// the afalg and fallback paths: auto means none, and naming a tier refuses
// to load, saying why.
TEST(LoadSettings, WithoutKernelsAutoMeansNoneAndATierNameIsRefused) {
  if (!kernels::kTiers.empty()) {
    GTEST_SKIP() << "this build has kernels: the tier tests cover it";
  }
  const Values none;
  Problems error;
  auto settings = LoadSettings(From(none), From(none), kAllFeatures, &error);
  ASSERT_TRUE(settings) << error.Text();
  EXPECT_EQ(settings->tier, nullptr);
  EXPECT_NE(settings->tier_reason.find(kernels::WhyNoTiers()),
            std::string::npos)
      << settings->tier_reason;
  EXPECT_NE(kernels::WhyNoTiers().find(kernels::TargetProcessor()),
            std::string::npos);

  const Values forced = {{"kernels", "aesni"}};
  EXPECT_FALSE(LoadSettings(From(forced), From(none), kAllFeatures, &error));
  EXPECT_NE(error.Text().find("kernels = 'aesni'"), std::string::npos) << error.Text();
  EXPECT_NE(error.Text().find("x86-64"), std::string::npos) << error.Text();
  EXPECT_NE(error.Text().find("auto|none"), std::string::npos) << error.Text();

  test::ProviderEnv env({"kernels = vaes_avx2"});
  EXPECT_FALSE(env.loaded());
  EXPECT_NE(env.error().find("kernels = 'vaes_avx2'"), std::string::npos)
      << env.error();
}

TEST(LoadSettings, AfalgDefaultsToAutoWithThePolicysThreshold) {
  const Values none;
  Problems error;
  auto settings = LoadSettings(From(none), From(none), kAllFeatures, &error);
  ASSERT_TRUE(settings) << error.Text();
  for (const FamilySettings &family : settings->families) {
    EXPECT_EQ(family.afalg, AfalgPolicy::kAuto);
    EXPECT_FALSE(family.afalg_min_len.has_value());
  }
  EXPECT_FALSE(settings->afalg_fork_rebuild);
  EXPECT_EQ(settings->afalg_max_fds, 0u);
}

// Under auto, the threshold for an offload driver depends on how fast AES
// is on the CPU: with AES instructions (AES-NI, or the ARMv8 Crypto
// Extensions that OpenSSL's own code uses where aesmux has no kernels) the
// CPU's path keeps requests up to 16K, without them 2K.
TEST(LoadSettings, AutoAfalgThresholdFollowsTheCpusAesInstructions) {
  const Values none;
  Problems error;
  for (const auto &[cpu, expected] :
       std::vector<std::pair<kernels::CpuFeatures, uint64_t>>{
           {kAllFeatures, 16384},
           {kernels::kSse41 | kernels::kAesni | kernels::kPclmulqdq, 16384},
           {kernels::kArmAes | kernels::kArmPmull, 16384},
           {kernels::kSse41 | kernels::kAvx | kernels::kAvx2, 2048},
           {kernels::kArmPmull, 2048},
           {0, 2048}}) {
    auto settings = LoadSettings(From(none), From(none), cpu, &error);
    ASSERT_TRUE(settings) << error.Text();
    EXPECT_EQ(settings->auto_afalg_min_len, expected)
        << kernels::DescribeCpuFeatures(cpu);
  }
}

TEST(LoadSettings, AfalgPolicyPerFamilyOverridesTheGlobalOne) {
  const Values config = {{"afalg", "force"},
                         {"gcm.afalg", "off"},
                         {"xts.afalg_min_len", "16K"},
                         {"afalg_fork", "rebuild"},
                         {"afalg_max_fds", "100"}};
  const Values env = {{"AESMUX_CTR_AFALG", "auto"},
                      {"AESMUX_CBC_AFALG_MIN_LEN", "0"},
                      {"AESMUX_AFALG_MAX_FDS", "32"}};
  Problems error;
  auto settings = LoadSettings(From(config), From(env), kAllFeatures, &error);
  ASSERT_TRUE(settings) << error.Text();
  EXPECT_EQ(settings->family(Family::kEcb).afalg, AfalgPolicy::kForce);
  EXPECT_EQ(settings->family(Family::kCbc).afalg, AfalgPolicy::kForce);
  EXPECT_EQ(settings->family(Family::kCtr).afalg, AfalgPolicy::kAuto);
  EXPECT_EQ(settings->family(Family::kXts).afalg, AfalgPolicy::kForce);
  EXPECT_EQ(settings->family(Family::kGcm).afalg, AfalgPolicy::kOff);
  EXPECT_EQ(settings->family(Family::kXts).afalg_min_len, 16384u);
  EXPECT_EQ(settings->family(Family::kCbc).afalg_min_len, 0u);
  EXPECT_FALSE(settings->family(Family::kEcb).afalg_min_len.has_value());
  EXPECT_TRUE(settings->afalg_fork_rebuild);
  EXPECT_EQ(settings->afalg_max_fds, 32u);
}

TEST(LoadSettings, BadAfalgValuesNameTheirSource) {
  const Values none;
  Problems error;
  for (const auto &[key, value] :
       std::vector<std::pair<std::string, std::string>>{
           {"afalg", "on"},
           {"cbc.afalg", "yes"},
           {"gcm.afalg_min_len", "big"},
           {"afalg_fork", "always"},
           {"afalg_max_fds", "0"},
           {"afalg_max_fds", "many"}}) {
    const Values config = {{key, value}};
    EXPECT_FALSE(LoadSettings(From(config), From(none), kAllFeatures, &error))
        << key;
    EXPECT_NE(error.Text().find(key + " = '" + value + "'"), std::string::npos)
        << error.Text();
  }
  const Values bad_env = {{"AESMUX_AFALG", "Force"}};
  EXPECT_FALSE(LoadSettings(From(none), From(bad_env), kAllFeatures, &error));
  EXPECT_NE(error.Text().find("AESMUX_AFALG"), std::string::npos) << error.Text();
  EXPECT_NE(error.Text().find("auto|off|force"), std::string::npos) << error.Text();
}

// A calibration file with `text`, removed when the test ends.
class CalibrationFile {
 public:
  explicit CalibrationFile(const std::string &text) {
    char path[] = "/tmp/aesmux-calibration-XXXXXX";
    const int fd = mkstemp(path);
    EXPECT_GE(fd, 0);
    if (fd >= 0) close(fd);
    path_ = path;
    std::ofstream(path_) << text;
  }
  ~CalibrationFile() { std::remove(path_.c_str()); }
  const std::string &path() const { return path_; }

 private:
  std::string path_;
};

// Every declared key, each family of a per-family key.
struct KeyInstance {
  const SettingKey *key;
  Family family;
  std::string name;  // as in openssl.cnf
  std::string env;   // its environment variable
};

std::vector<KeyInstance> EveryKey() {
  std::vector<KeyInstance> keys;
  for (const SettingKey &key : SettingKeys()) {
    for (size_t f = 0; f < kNumFamilies; ++f) {
      const auto family = static_cast<Family>(f);
      if (key.families != 0 && (key.families & (1u << f)) == 0) continue;
      keys.push_back({&key, family, ConfigKeyName(key, family),
                      EnvironmentName(key, family)});
      if (key.families == 0) break;
    }
  }
  return keys;
}

const SettingValue *InForce(const Settings &settings, std::string_view key) {
  for (const SettingValue &value : settings.in_force) {
    if (value.key == key) return &value;
  }
  return nullptr;
}

TEST(SettingKeys, NamesAndEnvironmentVariablesFollowOneRule) {
  const std::vector<KeyInstance> keys = EveryKey();
  // Seven process-wide keys; fallback_max_len, afalg and afalg_min_len of
  // every family; cbc.mb_min_len, cbc.mb_max_len, cbc.mb_threads_min_len.
  EXPECT_EQ(keys.size(), 7 + 3 * kNumFamilies + 3);
  std::map<std::string, int> seen;
  for (const KeyInstance &key : keys) {
    EXPECT_EQ(++seen[key.name], 1) << key.name << " declared twice";
  }
  EXPECT_EQ(seen.count("cbc.fallback_max_len"), 1u);
  EXPECT_EQ(seen.count("cbc.mb_max_len"), 1u);
  EXPECT_EQ(seen.count("cbc.mb_threads_min_len"), 1u);
  EXPECT_EQ(seen.count("ctr.mb_threads_min_len"), 0u);
  EXPECT_EQ(seen.count("afalg_max_fds"), 1u);
  EXPECT_EQ(seen.count("gcm.mb_max_len"), 0u);
  for (const KeyInstance &key : keys) {
    if (key.name == "gcm.afalg_min_len") {
      EXPECT_EQ(key.env, "AESMUX_GCM_AFALG_MIN_LEN");
    }
    if (key.name == "stats_file") {
      EXPECT_EQ(key.env, "AESMUX_STATS_FILE");
    }
  }
}

TEST(LoadSettings, EveryKeyInForceSaysWhereItCameFrom) {
  const Values none;
  Problems error;
  auto defaults = LoadSettings(From(none), From(none), kAllFeatures, &error);
  ASSERT_TRUE(defaults) << error.Text();
  EXPECT_EQ(defaults->in_force.size(), EveryKey().size());
  for (const KeyInstance &key : EveryKey()) {
    const SettingValue *value = InForce(*defaults, key.name);
    ASSERT_NE(value, nullptr) << key.name;
    EXPECT_EQ(value->origin, Origin::kDefault) << key.name;
    if (!key.key->default_value.empty()) {
      EXPECT_EQ(value->value, key.key->default_value) << key.name;
    } else {
      EXPECT_NE(value->value.find(key.key->unset_means), std::string::npos)
          << key.name << ": " << value->value;
    }

    // The example in openssl.cnf, then the environment over it (the
    // calibration file's example would have to exist).
    const CalibrationFile empty("");
    // A build without kernels (aarch64) takes no tier name.
    const bool no_tiers = key.name == "kernels" && kernels::kTiers.empty();
    const std::string example = key.name == "calibration_file" ? empty.path()
                                : no_tiers ? std::string("none")
                                           : std::string(key.key->example);
    const Values config = {{key.name, example}};
    auto configured =
        LoadSettings(From(config), From(none), kAllFeatures, &error);
    ASSERT_TRUE(configured) << key.name << ": " << error.Text();
    value = InForce(*configured, key.name);
    EXPECT_EQ(value->origin, Origin::kConfig) << key.name;
    EXPECT_EQ(value->value, example) << key.name;
    EXPECT_EQ(OriginName(value->origin), "openssl.cnf");

    const Values config_bad = {{key.name, "!bad!"}};
    const Values env = {{key.env, example}};
    auto from_env =
        LoadSettings(From(config_bad), From(env), kAllFeatures, &error);
    ASSERT_TRUE(from_env) << key.name << ": " << error.Text();
    value = InForce(*from_env, key.name);
    EXPECT_EQ(value->origin, Origin::kEnvironment) << key.name;
    EXPECT_EQ(value->source, key.env);
    EXPECT_EQ(value->value, example) << key.name;
  }
}

TEST(LoadSettings, EveryKeyRefusesABadValueNamingKeyAndValue) {
  const Values none;
  for (const KeyInstance &key : EveryKey()) {
    if (key.name == "stats_file") continue;  // "!bad!" is a good path
    // A calibration file that cannot be read is a warning: it only tunes
    // (config_problems_test.cc).
    if (key.name == "calibration_file") continue;
    Problems error;
    const Values config = {{key.name, "!bad!"}};
    EXPECT_FALSE(LoadSettings(From(config), From(none), kAllFeatures, &error))
        << key.name;
    EXPECT_NE(error.Text().find(key.name + " = '!bad!': "), std::string::npos)
        << error.Text();
    const Values env = {{key.env, "!bad!"}};
    EXPECT_FALSE(LoadSettings(From(none), From(env), kAllFeatures, &error))
        << key.env;
    EXPECT_NE(error.Text().find(key.env + " = '!bad!': "), std::string::npos)
        << error.Text();
  }
}

// A stats_file whose files could never be written (a prefix of 4096 bytes
// or more, one that names a directory) is refused at load, named, rather
// than accepted and never written.
TEST(LoadSettings, AStatsFileThatCouldNeverBeWrittenIsRefused) {
  const Values none;
  const std::string long_prefix = "/tmp/" + std::string(4096, 'd') + "/s";
  for (const auto &[value, reason] :
       {std::pair<std::string, std::string>{long_prefix, "longer than 4000"},
        {"/var/tmp/aesmux/", "names a directory"},
        {"/tmp/" + std::string(201, 's'), "longer than 200"}}) {
    Problems error;
    const Values config = {{"stats_file", value}};
    EXPECT_FALSE(LoadSettings(From(config), From(none), kAllFeatures, &error))
        << value.size();
    EXPECT_NE(error.Text().find("stats_file = '"), std::string::npos)
        << error.Text();
    EXPECT_NE(error.Text().find(reason), std::string::npos) << error.Text();
    const Values env = {{"AESMUX_STATS_FILE", value}};
    EXPECT_FALSE(LoadSettings(From(none), From(env), kAllFeatures, &error));
    EXPECT_NE(error.Text().find("AESMUX_STATS_FILE = '"), std::string::npos)
        << error.Text();
  }
  Problems error;
  const Values config = {{"stats_file", "/tmp/" + std::string(200, 's')}};
  EXPECT_TRUE(LoadSettings(From(config), From(none), kAllFeatures, &error))
      << error.Text();
}

TEST(Calibration, EveryThresholdFollowsDefaultCalibrationConfigEnvironment) {
  int calibrated = 0;
  for (const KeyInstance &key : EveryKey()) {
    if (!key.key->calibrated) continue;
    ++calibrated;
    // Four distinct good values, one per source.
    const CalibrationFile file("# measured\n\n  " + key.name + " = 48\n");
    Problems error;
    Values config = {{"calibration_file", file.path()}};
    const Values none;
    auto settings = LoadSettings(From(config), From(none), kAllFeatures, &error);
    ASSERT_TRUE(settings) << error.Text();
    const SettingValue *value = InForce(*settings, key.name);
    EXPECT_EQ(value->value, "48") << key.name;
    EXPECT_EQ(value->origin, Origin::kCalibration) << key.name;
    EXPECT_EQ(value->source, file.path() + ":3") << key.name;
    EXPECT_EQ(OriginName(value->origin), "calibration");
    EXPECT_EQ(InForce(*settings, "calibration_file")->origin, Origin::kConfig);
    EXPECT_EQ(settings->calibration_file, file.path());

    config[key.name] = "96";
    settings = LoadSettings(From(config), From(none), kAllFeatures, &error);
    ASSERT_TRUE(settings) << error.Text();
    EXPECT_EQ(InForce(*settings, key.name)->value, "96") << key.name;
    EXPECT_EQ(InForce(*settings, key.name)->origin, Origin::kConfig);

    const Values env = {{key.env, "128"}};
    settings = LoadSettings(From(config), From(env), kAllFeatures, &error);
    ASSERT_TRUE(settings) << error.Text();
    EXPECT_EQ(InForce(*settings, key.name)->value, "128") << key.name;
    EXPECT_EQ(InForce(*settings, key.name)->origin, Origin::kEnvironment);
  }
  // fallback_max_len and afalg_min_len of every family, cbc.mb_min_len,
  // cbc.mb_max_len and cbc.mb_threads_min_len.
  EXPECT_EQ(calibrated, 2 * int(kNumFamilies) + 3);
}

TEST(Calibration, ThresholdsFromTheFileReachTheFamilies) {
  const CalibrationFile file(
      "ecb.fallback_max_len = 32\ngcm.afalg_min_len=2K\ncbc.mb_max_len = 1K\n");
  const Values none;
  const Values env = {{"AESMUX_CALIBRATION_FILE", file.path()}};
  Problems error;
  auto settings = LoadSettings(From(none), From(env), kAllFeatures, &error);
  ASSERT_TRUE(settings) << error.Text();
  EXPECT_EQ(settings->family(Family::kEcb).fallback_max_len, 32u);
  EXPECT_EQ(settings->family(Family::kGcm).afalg_min_len, 2048u);
  EXPECT_EQ(settings->family(Family::kCbc).mb_max_len, 1024u);
  EXPECT_EQ(InForce(*settings, "calibration_file")->origin,
            Origin::kEnvironment);
}

// The file only tunes: one that sets anything but thresholds, cannot be
// read or is malformed is ignored whole with a warning naming the file and
// line, and aesmux loads with every threshold at its default.
TEST(Calibration, OnlyThresholdsMayComeFromTheFile) {
  const Values none;
  for (const KeyInstance &key : EveryKey()) {
    if (key.key->calibrated) continue;
    const CalibrationFile file("cbc.fallback_max_len = 16\n" + key.name +
                               " = " + std::string(key.key->example) + "\n");
    const Values config = {{"calibration_file", file.path()}};
    Problems error;
    auto settings = LoadSettings(From(config), From(none), kAllFeatures, &error);
    ASSERT_TRUE(settings) << key.name << ": " << error.Text();
    EXPECT_TRUE(error.errors.empty()) << error.Text();
    ASSERT_EQ(error.warnings.size(), 1u) << error.Text();
    EXPECT_NE(error.warnings[0].find(file.path() + ":2: '" + key.name + "'"),
              std::string::npos)
        << error.Text();
    EXPECT_EQ(settings->family(Family::kCbc).fallback_max_len, 0u);
    EXPECT_EQ(InForce(*settings, "cbc.fallback_max_len")->origin,
              Origin::kDefault);
  }
}

TEST(Calibration, AFileThatIsMissingOrMalformedIsIgnoredWithAWarning) {
  const Values none;
  Problems error;
  const Values missing = {{"calibration_file", "/nonexistent/aesmux.cal"}};
  ASSERT_TRUE(LoadSettings(From(missing), From(none), kAllFeatures, &error));
  EXPECT_TRUE(error.errors.empty()) << error.Text();
  EXPECT_NE(error.Text().find("calibration_file = '/nonexistent/aesmux.cal': "
                              "cannot open: No such file"),
            std::string::npos)
      << error.Text();
  EXPECT_NE(error.Text().find("the file is ignored"), std::string::npos)
      << error.Text();

  for (const auto &[text, expected] :
       std::vector<std::pair<std::string, std::string>>{
           {"ctr.fallback_max_len = 1\nctr.fallback_max_len = 2\n",
            ":2: 'ctr.fallback_max_len' again (first at "},
           {"ctr.fallback_max_len = 1\nturbo = 1\n",
            ":2: 'turbo' is not a threshold"},
           {"ctr.fallback_max_len = 1\nxts.fallback_max_len 64\n",
            ":2: expected 'key = value'"},
           {"ctr.fallback_max_len = 1\ngcm.fallback_max_len = lots\n",
            ":2: gcm.fallback_max_len = 'lots': expected a byte count"}}) {
    const CalibrationFile file(text);
    const Values config = {{"calibration_file", file.path()}};
    Problems problems;
    auto settings =
        LoadSettings(From(config), From(none), kAllFeatures, &problems);
    ASSERT_TRUE(settings) << text << problems.Text();
    ASSERT_EQ(problems.warnings.size(), 1u) << problems.Text();
    EXPECT_NE(problems.warnings[0].find(file.path() + expected),
              std::string::npos)
        << problems.Text();
    // Not even the good line before: the whole file is ignored.
    EXPECT_EQ(settings->family(Family::kCtr).fallback_max_len, 0u) << text;
  }
}

TEST(SettingNameTexts, SpellEveryKeyAsConfigKeyNameAndEnvironmentName) {
  const std::vector<KeyInstance> keys = EveryKey();
  const std::span<const SettingNameText> texts = SettingNameTexts();
  ASSERT_EQ(texts.size(), keys.size());
  const std::vector<SettingName> names = SettingNames();
  ASSERT_EQ(names.size(), keys.size());
  for (size_t i = 0; i < keys.size(); ++i) {
    EXPECT_EQ(std::string(texts[i].key.data()), keys[i].name);
    EXPECT_EQ(std::string(texts[i].env_name.data()), keys[i].env);
    EXPECT_EQ(names[i].key, keys[i].name);
    EXPECT_EQ(names[i].env_name, keys[i].env);
  }
  for (const SettingKey &key : SettingKeys()) {
    if (key.name == "fallback_max_len") {
      EXPECT_EQ(EnvironmentName(key, Family::kCbc),
                "AESMUX_CBC_FALLBACK_MAX_LEN");
    }
  }
}

// The index of `name` (openssl.cnf) in SettingNameTexts().
size_t NameIndex(std::string_view name) {
  const std::span<const SettingNameText> texts = SettingNameTexts();
  for (size_t i = 0; i < texts.size(); ++i) {
    if (name == texts[i].key.data()) return i;
  }
  ADD_FAILURE() << "no key " << name;
  return 0;
}

TEST(EnvironmentValuesIn, ReadsTheFirstEntryOfEachVariableAsGetenvDoes) {
  const char *const envp[] = {
      "PATH=/usr/bin",
      "AESMUX_KERNELS=none",
      "AESMUX_CBC_FALLBACK_MAX_LEN=64",
      "AESMUX_KERNELS=aesni",            // getenv() finds the first
      "AESMUX_CTR_FALLBACK_MAX_LEN=",    // empty: unset
      "AESMUX_CTR_FALLBACK_MAX_LEN=32",  // after the empty one: not seen
      "AESMUX_XTS_FALLBACK_MAX_LEN",     // no '=': not a variable
      "AESMUX_GCM_FALLBACK_MAX_LENGTH=1",  // another name
      "AESMUX_=1",
      "AESMUX_STATS_FILE=/tmp/x=y",      // a value may hold '='
      nullptr};
  const SourceValues values = EnvironmentValuesIn(envp);
  ASSERT_EQ(values.size(), SettingNameTexts().size());
  EXPECT_EQ(values[NameIndex("kernels")], "none");
  EXPECT_EQ(values[NameIndex("cbc.fallback_max_len")], "64");
  EXPECT_EQ(values[NameIndex("stats_file")], "/tmp/x=y");
  size_t set = 0;
  for (const std::optional<std::string> &value : values) set += value ? 1 : 0;
  EXPECT_EQ(set, 3u);
  EXPECT_EQ(EnvironmentValuesIn(nullptr), SourceValues(values.size()));
}

TEST(LoadSettings, SourcesOfValuesAgreeWithLookupsByName) {
  const Values config = {{"kernels", "none"}, {"gcm.afalg", "off"}};
  const Values env = {{"AESMUX_KERNELS", "auto"},
                      {"AESMUX_ECB_FALLBACK_MAX_LEN", "1K"}};
  Problems error;
  auto by_name = LoadSettings(From(config), From(env), kAllFeatures, &error);
  ASSERT_TRUE(by_name) << error.Text();
  auto by_values =
      LoadSettings(ConfigValuesOf(From(config)), EnvironmentValuesOf(From(env)),
                   kAllFeatures, &error);
  ASSERT_TRUE(by_values) << error.Text();
  ASSERT_EQ(by_values->in_force.size(), by_name->in_force.size());
  for (size_t i = 0; i < by_name->in_force.size(); ++i) {
    EXPECT_EQ(by_values->in_force[i].key, by_name->in_force[i].key);
    EXPECT_EQ(by_values->in_force[i].value, by_name->in_force[i].value);
    EXPECT_EQ(by_values->in_force[i].origin, by_name->in_force[i].origin);
    EXPECT_EQ(by_values->in_force[i].source, by_name->in_force[i].source);
  }
  EXPECT_EQ(by_values->in_force[NameIndex("kernels")].origin,
            Origin::kEnvironment);
  EXPECT_EQ(by_values->family(Family::kGcm).afalg, AfalgPolicy::kOff);
  EXPECT_EQ(by_values->family(Family::kEcb).fallback_max_len, 1024u);

  EXPECT_FALSE(LoadSettings(SourceValues(1), SourceValues(1), kAllFeatures,
                            &error));
  EXPECT_NE(error.Text().find("internal error"), std::string::npos) << error.Text();
}

// The same rules through a real load of the module.
TEST(ProviderLoad, ReadsEveryKeyOfOpensslCnfInOneLookup) {
  std::vector<std::string> lines;
  uint64_t len = 16;
  for (const std::string_view family : core::kFamilyNames) {
    lines.push_back(std::string(family) + ".fallback_max_len = " +
                    std::to_string(len));
    lines.push_back(std::string(family) + ".afalg_min_len = " +
                    std::to_string(len * 1024));
    len *= 2;
  }
  lines.push_back("afalg_max_fds = 77");
  test::ProviderEnv env(lines);
  ASSERT_TRUE(env.loaded()) << env.error();
  len = 16;
  for (const std::string_view family : core::kFamilyNames) {
    const std::string key = "setting." + std::string(family);
    EXPECT_EQ(env.ProviderParam((key + ".fallback_max_len").c_str()),
              std::to_string(len));
    EXPECT_EQ(env.ProviderParam((key + ".fallback_max_len.origin").c_str()),
              "openssl.cnf");
    EXPECT_EQ(env.ProviderParam((key + ".afalg_min_len").c_str()),
              std::to_string(len * 1024));
    len *= 2;
  }
  EXPECT_EQ(env.ProviderParam("setting.afalg_max_fds"), "77");
  EXPECT_EQ(env.ProviderParam("setting.kernels.origin"), "default");
}

TEST(ProviderLoad, BadValueInOpensslCnfRefusesToLoadWithTheKeyInTheMessage) {
  test::ProviderEnv env({"cbc.fallback_max_len = many"});
  EXPECT_FALSE(env.loaded());
  EXPECT_NE(env.error().find("cbc.fallback_max_len = 'many'"),
            std::string::npos)
      << env.error();
}

TEST(ProviderLoad, ReportsTheTierInUse) {
  {
    test::ProviderEnv env({"kernels = none"});
    ASSERT_TRUE(env.loaded()) << env.error();
    EXPECT_EQ(env.ProviderParam("tier"), "none");
  }
  test::ProviderEnv env;
  ASSERT_TRUE(env.loaded()) << env.error();
  const kernels::Tier *best = kernels::BestTier(kernels::DetectCpuFeatures());
  EXPECT_EQ(env.ProviderParam("tier"),
            best != nullptr ? std::string(best->name) : "none");
}

TEST(ProviderLoad, EnvironmentOverridesOpensslCnf) {
  ASSERT_EQ(setenv("AESMUX_KERNELS", "none", 1), 0);
  test::ProviderEnv env({"kernels = auto"});
  unsetenv("AESMUX_KERNELS");
  ASSERT_TRUE(env.loaded()) << env.error();
  EXPECT_EQ(env.ProviderParam("tier"), "none");
  EXPECT_NE(env.ProviderParam("tier-reason").find("AESMUX_KERNELS"),
            std::string::npos);
}

TEST(ProviderLoad, ReadsTheCalibrationFileOpensslCnfNames) {
  const CalibrationFile file("cbc.fallback_max_len = 80\n");
  test::ProviderEnv env({"calibration_file = " + file.path()});
  ASSERT_TRUE(env.loaded()) << env.error();
  const std::string settings = env.ProviderParam("settings");
  EXPECT_NE(settings.find("cbc.fallback_max_len\t80\tcalibration\t" +
                          file.path() + ":1\n"),
            std::string::npos)
      << settings;
}

TEST(ProviderLoad, ReportsEverySettingInForceWithItsOrigin) {
  const CalibrationFile file(
      "ctr.fallback_max_len = 16\nxts.fallback_max_len = 32\n");
  ASSERT_EQ(setenv("AESMUX_XTS_FALLBACK_MAX_LEN", "1K", 1), 0);
  test::ProviderEnv env(
      {"calibration_file = " + file.path(), "gcm.fallback_max_len = 2K"});
  unsetenv("AESMUX_XTS_FALLBACK_MAX_LEN");
  ASSERT_TRUE(env.loaded()) << env.error();
  const std::string settings = env.ProviderParam("settings");
  EXPECT_EQ(std::count(settings.begin(), settings.end(), '\n'),
            static_cast<long>(EveryKey().size()))
      << settings;
  for (const KeyInstance &key : EveryKey()) {
    EXPECT_NE(("\n" + settings).find("\n" + key.name + "\t"),
              std::string::npos)
        << key.name;
  }
  EXPECT_NE(settings.find("kernels\tauto\tdefault\t\n"), std::string::npos)
      << settings;
  EXPECT_NE(settings.find("xts.fallback_max_len\t1K\tenvironment\t"
                          "AESMUX_XTS_FALLBACK_MAX_LEN\n"),
            std::string::npos)
      << settings;
  EXPECT_EQ(env.ProviderParam("setting.gcm.fallback_max_len"), "2K");
  EXPECT_EQ(env.ProviderParam("setting.gcm.fallback_max_len.origin"),
            "openssl.cnf");
  EXPECT_EQ(env.ProviderParam("setting.ctr.fallback_max_len"), "16");
  EXPECT_EQ(env.ProviderParam("setting.ctr.fallback_max_len.origin"),
            "calibration");
  EXPECT_EQ(env.ProviderParam("setting.ctr.fallback_max_len.source"),
            file.path() + ":1");
  EXPECT_EQ(env.ProviderParam("setting.afalg_fork.origin"), "default");
}

TEST(ProviderLoad, DescribesEachAlgorithmsRoute) {
  {
    test::ProviderEnv env({"kernels = none"});
    ASSERT_TRUE(env.loaded()) << env.error();
    EXPECT_EQ(env.ProviderParam("route.AES-128-GCM"),
              "fallback at every length (kernels=none)");
    EXPECT_EQ(env.ProviderParam("mb-tier"), "none");
  }
  const kernels::Tier *best = kernels::BestTier(kernels::DetectCpuFeatures());
  if (best == nullptr) GTEST_SKIP() << "this CPU has no kernel tier";
  test::ProviderEnv env({"cbc.fallback_max_len = 64", "afalg = off"});
  ASSERT_TRUE(env.loaded()) << env.error();
  const std::string simd = "simd (" + std::string(best->name) + ")";
  EXPECT_EQ(env.ProviderParam("route.AES-256-CTR"), simd + " at every length");
  const std::string cbc = env.ProviderParam("route.AES-192-CBC");
  EXPECT_TRUE(cbc.starts_with("fallback up to 64 B, " + simd +
                              " above; encryption from 512 B up to 65536 B in "
                              "multi-buffer lanes (mb, "))
      << cbc;
  EXPECT_NE(env.ProviderParam("mb-tier").find(" lanes)"), std::string::npos);
  EXPECT_EQ(env.ProviderParam("cpu-features"),
            kernels::DescribeCpuFeatures(kernels::DetectCpuFeatures()));
  const std::string tiers = env.ProviderParam("tiers");
  EXPECT_NE(tiers.find(std::string(best->name) + "\tusable\n"),
            std::string::npos)
      << tiers;
}

TEST(ProviderLoad, AMissingCalibrationFileLeavesTheDefaultsInForce) {
  test::ProviderEnv env({"calibration_file = /nonexistent/aesmux.cal"});
  ASSERT_TRUE(env.loaded()) << env.error();
  EXPECT_NE(env.ProviderParam("problems")
                .find("calibration_file = '/nonexistent/aesmux.cal': "
                      "cannot open: "),
            std::string::npos)
      << env.ProviderParam("problems");
  EXPECT_EQ(env.ProviderParam("setting.cbc.mb_min_len.origin"), "default");
}

TEST(ProviderLoad, BadEnvironmentValueRefusesToLoad) {
  ASSERT_EQ(setenv("AESMUX_ECB_FALLBACK_MAX_LEN", "1O24", 1), 0);
  test::ProviderEnv env;
  unsetenv("AESMUX_ECB_FALLBACK_MAX_LEN");
  EXPECT_FALSE(env.loaded());
  EXPECT_NE(env.error().find("AESMUX_ECB_FALLBACK_MAX_LEN"), std::string::npos)
      << env.error();
}

}  // namespace
}  // namespace aesmux::route

namespace aesmux::route {
namespace {

TEST(ProviderLoad, ReportsWhyTheAfalgPathIsOffForEachFamily) {
  test::ProviderEnv env({"afalg = auto", "gcm.afalg = off"});
  ASSERT_TRUE(env.loaded()) << env.error();
  EXPECT_EQ(env.ProviderParam("afalg.gcm"), "off (afalg = off)");
  for (const char *family : {"afalg.ecb", "afalg.cbc", "afalg.ctr",
                             "afalg.xts"}) {
    const std::string state = env.ProviderParam(family);
    EXPECT_TRUE(state.starts_with("on (auto)") ||
                state.starts_with("off (auto): "))
        << family << ": " << state;
  }
}

}  // namespace
}  // namespace aesmux::route
