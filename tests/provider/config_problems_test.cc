// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
// No silent configuration: every mistake is found and named (an unknown
// key of aesmux's openssl.cnf section or AESMUX_* variable with the nearest
// known one, every bad value, a calibration file that cannot be used),
// printed once per process, listed in the provider's `problems` parameter;
// with config_diagnostics = 1 the program stops; `disable = 1` turns aesmux
// off. And how aesmux finds its own section in openssl.cnf.
#include <gtest/gtest.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/provider.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "provider/openssl/openssl_cnf.h"
#include "provider/route/settings.h"
#include "tests/support/child.h"
#include "tests/support/provider_env.h"

namespace aesmux {
namespace {

using route::Problems;

constexpr kernels::CpuFeatures kAllFeatures = ~kernels::CpuFeatures{0};

using Values = std::map<std::string, std::string, std::less<>>;

route::ConfigLookup From(const Values &values) {
  return [&values](std::string_view key) -> std::optional<std::string> {
    auto it = values.find(key);
    if (it == values.end()) return std::nullopt;
    return it->second;
  };
}

// --- Unknown names, each with the nearest known one.

TEST(CheckConfigKeys, NamesEachUnknownKeyWithTheNearestKnownOne) {
  const std::vector<std::string> keys = {
      "module", "activate", "identity", "soft_load", "x.activate",
      "kernels", "cbc.fallback_max_len", "kernals", "cbc.fallbak_max_len",
      "activte", "gcm.mb_max_len"};
  Problems problems;
  route::CheckConfigKeys(keys, "/etc/ssl/openssl.cnf [aesmux_sect]",
                         &problems);
  EXPECT_TRUE(problems.errors.empty());
  EXPECT_EQ(problems.warnings,
            (std::vector<std::string>{
                "/etc/ssl/openssl.cnf [aesmux_sect]: unknown key 'kernals' "
                "(did you mean 'kernels'?): ignored",
                "/etc/ssl/openssl.cnf [aesmux_sect]: unknown key "
                "'cbc.fallbak_max_len' (did you mean 'cbc.fallback_max_len'?): "
                "ignored",
                "/etc/ssl/openssl.cnf [aesmux_sect]: unknown key 'activte' "
                "(did you mean 'activate'?): ignored",
                // CBC alone batches in multi-buffer lanes.
                "/etc/ssl/openssl.cnf [aesmux_sect]: unknown key "
                "'gcm.mb_max_len' (did you mean 'cbc.mb_max_len'?): ignored"}));
}

TEST(CheckConfigKeys, NamesAtMostSixteenAndQuotesLongKeysShort) {
  std::vector<std::string> keys;
  for (int i = 0; i < 20; ++i) keys.push_back("unknown" + std::to_string(i));
  keys.push_back(std::string(100000, 'k'));
  Problems problems;
  route::CheckConfigKeys(keys, "f [s]", &problems);
  ASSERT_EQ(problems.warnings.size(), 17u);
  EXPECT_EQ(problems.warnings.back(),
            "and 5 more unknown keys of aesmux's openssl.cnf section");
  for (const std::string &warning : problems.warnings) {
    EXPECT_LT(warning.size(), 200u) << warning;
  }
}

TEST(CheckEnvironment, NamesEachVariableAesmuxDoesNotRead) {
  // clang-format off
  const char *const envp[] = {"PATH=/usr/bin",
                              "AESMUX_KERNAL=aesni",
                              "AESMUX_KERNELS=aesni",
                              "AESMUX_CBC_FALLBACK_MAX_LNE=64",
                              "AESMUX_TRACE=1",
                              "AESMUX_DISABLE=0",
                              // The test suites' own.
                              "AESMUX_TEST_MODULE=/x",
                              "AESMUX_FUZZ_TRACE=1",
                              "AESMUX_TEST_HUNG_CHILD_STACKS=1",
                              "AESMUX_TEST_STRESS_SECONDS=1",
                              "AESMUX_TEST_OPENSSL_CACHE=/x",
                              // A shell variable of the scripts, never
                              // exported: not aesmux's.
                              "AESMUX_ROOT=/x",
                              // Empty is unset, as for a setting.
                              "AESMUX_NOTHING=",
                              "AESMUX_TRAC=\x1b[2J",
                              nullptr};
  // clang-format on
  Problems problems;
  route::CheckEnvironment(envp, &problems);
  EXPECT_EQ(problems.warnings,
            (std::vector<std::string>{
                "environment: 'AESMUX_KERNAL' is not a variable aesmux reads "
                "(did you mean 'AESMUX_KERNELS'?): ignored",
                "environment: 'AESMUX_CBC_FALLBACK_MAX_LNE' is not a variable "
                "aesmux reads (did you mean 'AESMUX_CBC_FALLBACK_MAX_LEN'?): "
                "ignored",
                "environment: 'AESMUX_ROOT' is not a variable aesmux reads "
                "(did you mean 'AESMUX_TRACE'?): ignored",
                "environment: 'AESMUX_TRAC' is not a variable aesmux reads "
                "(did you mean 'AESMUX_TRACE'?): ignored"}));
  Problems none;
  route::CheckEnvironment(nullptr, &none);
  EXPECT_TRUE(none.empty());
}

// --- Every mistake, not only the first.

TEST(LoadSettings, ReportsEveryBadValueNotOnlyTheFirst) {
  const Values config = {{"cbc.mb_min_len", "lots"}, {"kernels", "fast"},
                         {"gcm.fallback_max_len", "64"}};
  const Values env = {{"AESMUX_GCM_AFALG", "maybe"},
                      {"AESMUX_CTR_FALLBACK_MAX_LEN", std::string(5000, '9')}};
  Problems problems;
  EXPECT_FALSE(
      route::LoadSettings(From(config), From(env), kAllFeatures, &problems));
  ASSERT_EQ(problems.errors.size(), 4u) << problems.Text();
  // (a build without kernels, for arm64, says so before what it expects)
  EXPECT_TRUE(problems.errors[0].starts_with("kernels = 'fast': "))
      << problems.errors[0];
  EXPECT_NE(problems.errors[0].find("expected "), std::string::npos)
      << problems.errors[0];
  EXPECT_TRUE(problems.errors[1].starts_with(
      "AESMUX_CTR_FALLBACK_MAX_LEN = '99999"))
      << problems.errors[1];
  EXPECT_LT(problems.errors[1].size(), 200u) << problems.errors[1];
  EXPECT_TRUE(problems.errors[2].starts_with(
      "AESMUX_GCM_AFALG = 'maybe': expected auto|off|force"))
      << problems.errors[2];
  EXPECT_TRUE(problems.errors[3].starts_with(
      "cbc.mb_min_len = 'lots': expected a byte count"))
      << problems.errors[3];
}

// Values valid alone that contradict each other: a warning naming both,
// where each came from; the values stay in force.
TEST(LoadSettings, ABatchingRangeThatHoldsNoLengthIsReported) {
  const Values env = {{"AESMUX_CBC_MB_MIN_LEN", "128K"}};
  Problems problems;
  auto settings =
      route::LoadSettings(From(Values{}), From(env), kAllFeatures, &problems);
  ASSERT_TRUE(settings) << problems.Text();
  EXPECT_EQ(problems.warnings,
            (std::vector<std::string>{
                "AESMUX_CBC_MB_MIN_LEN = '128K' is above cbc.mb_max_len = "
                "'64K' (the default): no CBC encryption is batched "
                "(cbc.mb_max_len = 0 turns batching off)"}));
  EXPECT_EQ(settings->family(core::Family::kCbc).mb_min_len, 128u << 10);
  // Batching off, or a range holding a length: nothing to say.
  for (const Values &config :
       {Values{{"cbc.mb_min_len", "128K"}, {"cbc.mb_max_len", "0"}},
        Values{{"cbc.mb_min_len", "64K"}}}) {
    Problems none;
    ASSERT_TRUE(route::LoadSettings(From(config), From(Values{}), kAllFeatures,
                                    &none));
    EXPECT_TRUE(none.empty()) << none.Text();
  }
}

// Byte counts: decimal, K/M/G, at most 2^64 - 1 bytes; nothing else.
TEST(LoadSettings, ByteCountsAreRangeChecked) {
  for (const char *bad : {"-1", "+1", "1KK", "16Ki", "18446744073709551616",
                          "16777216T", "17179869184G", "1e3", "0x40", ""}) {
    const Values config = {{"cbc.mb_max_len", bad}};
    Problems problems;
    EXPECT_FALSE(route::LoadSettings(From(config), From(Values{}),
                                     kAllFeatures, &problems))
        << bad;
  }
  const Values most = {{"cbc.mb_max_len", "17179869183G"}};
  Problems problems;
  auto settings =
      route::LoadSettings(From(most), From(Values{}), kAllFeatures, &problems);
  ASSERT_TRUE(settings) << problems.Text();
  EXPECT_EQ(settings->family(core::Family::kCbc).mb_max_len,
            17179869183ull << 30);
}

// --- The off switch.

TEST(LoadSettings, DisableTurnsAesmuxOffAndEveryErrorIntoAWarning) {
  Problems problems;
  auto on = route::LoadSettings(From(Values{}), From(Values{}), kAllFeatures,
                                &problems);
  ASSERT_TRUE(on);
  EXPECT_EQ(on->off, "");

  const Values config = {{"disable", "1"}, {"cbc.mb_min_len", "lots"}};
  auto off =
      route::LoadSettings(From(config), From(Values{}), kAllFeatures, &problems);
  ASSERT_TRUE(off) << problems.Text();
  EXPECT_EQ(off->off, "disable = 1 (openssl.cnf)");
  EXPECT_TRUE(problems.errors.empty()) << problems.Text();
  ASSERT_EQ(problems.warnings.size(), 1u);
  EXPECT_EQ(problems.warnings[0],
            "cbc.mb_min_len = 'lots': expected a byte count such as 0, 512, "
            "16K or 1M: ignored, aesmux is off");

  const Values env = {{"AESMUX_DISABLE", "1"}};
  off = route::LoadSettings(From(Values{}), From(env), kAllFeatures, &problems);
  ASSERT_TRUE(off);
  EXPECT_EQ(off->off, "disable = 1 (environment: AESMUX_DISABLE)");
  const Values env_on = {{"AESMUX_DISABLE", "0"}};
  auto back_on =
      route::LoadSettings(From(config), From(env_on), kAllFeatures, &problems);
  EXPECT_FALSE(back_on);

  const Values bad = {{"AESMUX_DISABLE", "yes"}};
  Problems refused;
  EXPECT_FALSE(
      route::LoadSettings(From(Values{}), From(bad), kAllFeatures, &refused));
  EXPECT_EQ(refused.Text(), "AESMUX_DISABLE = 'yes': expected 0|1");
}

// --- The calibration file only tunes: whatever is wrong with it is a
// warning, and every threshold keeps its default.

TEST(LoadSettings, ACalibrationFileThatIsNoRegularFileIsIgnored) {
  char dir[] = "/tmp/aesmux-problems-XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  const std::string fifo = std::string(dir) + "/cal.fifo";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  for (const std::string &path :
       {fifo, std::string("/dev/zero"), std::string(dir)}) {
    const Values config = {{"calibration_file", path},
                           {"cbc.fallback_max_len", "16"}};
    Problems problems;
    auto settings = route::LoadSettings(From(config), From(Values{}),
                                        kAllFeatures, &problems);
    ASSERT_TRUE(settings) << problems.Text();
    ASSERT_EQ(problems.warnings.size(), 1u) << problems.Text();
    EXPECT_NE(problems.warnings[0].find("calibration_file = '" + path +
                                        "': not a regular file but "),
              std::string::npos)
        << problems.warnings[0];
    EXPECT_EQ(settings->family(core::Family::kCbc).fallback_max_len, 16u);
    EXPECT_EQ(settings->family(core::Family::kCbc).mb_min_len, 512u);
  }
  unlink(fifo.c_str());
  rmdir(dir);
}

// --- openssl.cnf: how aesmux finds the section it was loaded from.

bool NoFile(const std::string &, std::string *) { return false; }
bool NoDirectory(const std::string &, std::vector<std::string> *) {
  return false;
}
constexpr openssl::CnfReader kNoReader = {NoFile, NoDirectory};

std::vector<std::string> KeysOf(const openssl::CnfFile &file,
                                std::string_view section) {
  std::vector<std::string> keys;
  for (const openssl::CnfEntry &entry : file.entries) {
    if (entry.section == section) {
      keys.push_back(std::string(entry.key) + "=" + std::string(entry.value) +
                     (entry.plain ? "" : " (not plain)"));
    }
  }
  return keys;
}

TEST(ParseCnf, ReadsSectionsKeysAndValuesAsOpensslDoes) {
  const openssl::CnfFile file = openssl::ParseCnf(
      "/x.cnf",
      "# comment\n"
      "config_diagnostics = 1\r\n"
      "openssl_conf=init # trailing comment\n"
      "[ init ]\n"
      "providers = prov\n"
      "  [prov]\n"
      "aesmux = aesmux_sect\n"
      "[aesmux_sect]\n"
      "module = /lib/aesmux.so\n"
      "quoted = \"a b\"\n"
      "long = one \\\n"
      "   kernals = two\n"
      "other::moved = 1\n"
      "no equals sign\n"
      "kernels=aesni\n",
      kNoReader);
  EXPECT_EQ(KeysOf(file, "default"),
            (std::vector<std::string>{"config_diagnostics=1",
                                      "openssl_conf=init"}));
  EXPECT_EQ(KeysOf(file, "init"), (std::vector<std::string>{"providers=prov"}));
  EXPECT_EQ(KeysOf(file, "aesmux_sect"),
            (std::vector<std::string>{"module=/lib/aesmux.so",
                                      "quoted=\"a b\" (not plain)",
                                      "long=one \\ (not plain)",
                                      "kernels=aesni"}));
  EXPECT_EQ(KeysOf(file, "other"), (std::vector<std::string>{"moved=1"}));
  EXPECT_TRUE(file.Diagnostics());
}

TEST(ParseCnf, ConfigDiagnosticsIsTheDefaultSectionsLeadingNumber) {
  for (const auto &[text, on] : std::vector<std::pair<std::string, bool>>{
           {"config_diagnostics = 1\n", true},
           {"config_diagnostics = 10\n", true},
           {"config_diagnostics = 0\n", false},
           {"config_diagnostics = 00\n", false},
           {"config_diagnostics = yes\n", false},
           {"config_diagnostics = 1\nconfig_diagnostics = 0\n", false},
           {"[default]\nconfig_diagnostics = 2\n", true},
           {"[other]\nconfig_diagnostics = 1\n", false},
           {"", false}}) {
    EXPECT_EQ(openssl::ParseCnf("f", text, kNoReader).Diagnostics(), on)
        << text;
  }
}

// Included files, as the reader gives them.
std::map<std::string, std::string> g_files;
bool FakeRead(const std::string &path, std::string *text) {
  auto it = g_files.find(path);
  if (it == g_files.end()) return false;
  *text = it->second;
  return true;
}
bool FakeList(const std::string &path, std::vector<std::string> *files) {
  if (path != "/etc/ssl/conf.d") return false;
  *files = {"/etc/ssl/conf.d/a.cnf", "/etc/ssl/conf.d/b.conf"};
  return true;
}

TEST(ParseCnf, FollowsIncludesOfFilesAndDirectories) {
  g_files = {{"/etc/ssl/aesmux.cnf", "[aesmux_sect]\nkernals = aesni\n"},
             {"/etc/ssl/conf.d/a.cnf", "a = 1\n"},
             {"/etc/ssl/conf.d/b.conf", "b = 2\n"},
             {"/inc/rel.cnf", "rel = 3\n"},
             {"/loop.cnf", ".include /loop.cnf\nloop = 1\n"}};
  const openssl::CnfFile file = openssl::ParseCnf(
      "/etc/ssl/openssl.cnf",
      "[s]\n.include /etc/ssl/aesmux.cnf\nafter = x\n"
      "[t]\n.include = /etc/ssl/conf.d\n"
      ".pragma includedir:/inc\n.include rel.cnf\n"
      ".include /loop.cnf\n.include /missing.cnf\n",
      {FakeRead, FakeList});
  EXPECT_EQ(KeysOf(file, "aesmux_sect"),
            (std::vector<std::string>{"kernals=aesni", "after=x"}));
  EXPECT_EQ(KeysOf(file, "t"),
            (std::vector<std::string>{"a=1", "b=2", "rel=3", "loop=1",
                                      "loop=1", "loop=1", "loop=1", "loop=1",
                                      "loop=1", "loop=1"}));
}

// The values the "core" holds, for FindAesmuxSection.
openssl::CoreValues Holding(const Values &held) {
  return [held](const std::vector<std::string_view> &keys) {
    std::vector<std::optional<std::string>> values;
    for (std::string_view key : keys) {
      auto it = held.find(key);
      values.push_back(it == held.end() ? std::nullopt
                                        : std::optional(it->second));
    }
    return values;
  };
}

constexpr std::string_view kCnf =
    "config_diagnostics = 1\n"
    "openssl_conf = init\n"
    "[init]\nproviders = prov\n"
    "[prov]\ndefault = default_sect\nfast = aesmux_sect\n"
    "[default_sect]\nactivate = 1\n"
    "[aesmux_sect]\nidentity = aesmux\nmodule = aesmux.so\nactivate = 1\n"
    "kernals = aesni\nparams = sub\n"
    "[sub]\nx = 1\n";

TEST(FindAesmuxSection, FindsTheSectionTheCoreHoldsTheKeysOf) {
  const openssl::CnfFile file =
      openssl::ParseCnf("/etc/ssl/openssl.cnf", std::string(kCnf), kNoReader);
  const Values held = {{"identity", "aesmux"},
                       {"module", "aesmux.so"},
                       {"kernals", "aesni"},
                       {"params.x", "1"}};
  const openssl::AesmuxSection section =
      openssl::FindAesmuxSection(file, "aesmux", Holding(held));
  EXPECT_EQ(section.file, "/etc/ssl/openssl.cnf");
  EXPECT_EQ(section.where, "/etc/ssl/openssl.cnf [aesmux_sect]");
  EXPECT_EQ(section.keys, (std::vector<std::string>{
                              "identity", "module", "activate", "kernals"}));
  EXPECT_TRUE(section.diagnostics);
}

// Another section than the one aesmux was loaded from (a private library
// context's, a test's) is never taken for it.
TEST(FindAesmuxSection, ASectionWithOtherValuesIsNotAesmuxs) {
  const openssl::CnfFile file =
      openssl::ParseCnf("/etc/ssl/openssl.cnf", std::string(kCnf), kNoReader);
  for (const Values &held :
       {Values{{"identity", "aesmux"}, {"module", "/build/aesmux.so"},
               {"kernals", "aesni"}},
        Values{{"identity", "aesmux"}, {"module", "aesmux.so"}}, Values{}}) {
    const openssl::AesmuxSection section =
        openssl::FindAesmuxSection(file, "aesmux", Holding(held));
    EXPECT_EQ(section.where, "");
    EXPECT_TRUE(section.keys.empty());
    EXPECT_FALSE(section.diagnostics);
  }
  const openssl::AesmuxSection other = openssl::FindAesmuxSection(
      file, "other", Holding({{"module", "aesmux.so"}}));
  EXPECT_EQ(other.where, "");
}

// --- Through the module, with openssl.cnf as OpenSSL reads it by default.

// An openssl.cnf that loads this build's aesmux with `lines` in its section
// (and `top` before the sections), removed when the test ends.
class Cnf {
 public:
  explicit Cnf(const std::vector<std::string> &lines,
               const std::string &top = "") {
    char path[] = "/tmp/aesmux-problems-XXXXXX.cnf";
    const int fd = mkstemps(path, 4);
    EXPECT_GE(fd, 0);
    close(fd);
    path_ = path;
    std::ofstream cnf(path_);
    cnf << top << "openssl_conf = init\n[init]\nproviders = prov\n"
        << "[prov]\ndefault = default_sect\naesmux = aesmux_sect\n"
        << "[default_sect]\nactivate = 1\n[aesmux_sect]\nmodule = "
        << test::ModulePath() << "\nactivate = 1\n";
    for (const std::string &line : lines) cnf << line << "\n";
  }
  ~Cnf() { std::remove(path_.c_str()); }
  const std::string &path() const { return path_; }

 private:
  std::string path_;
};

// $OPENSSL_CONF, the file OpenSSL reads by default, while it lives. (Set in
// a forked child where the file sets config_diagnostics: this process must
// not stop.)
class DefaultCnfIs {
 public:
  explicit DefaultCnfIs(const std::string &path) {
    EXPECT_EQ(setenv("OPENSSL_CONF", path.c_str(), 1), 0);
  }
  ~DefaultCnfIs() { unsetenv("OPENSSL_CONF"); }
};

// A library context configured from `path`, also $OPENSSL_CONF, and what
// aesmux printed on stderr meanwhile.
struct Loaded {
  OSSL_LIB_CTX *libctx = nullptr;
  OSSL_PROVIDER *aesmux = nullptr;
  std::string stderr_text;

  explicit Loaded(const std::string &path) {
    const DefaultCnfIs default_cnf(path);
    libctx = OSSL_LIB_CTX_new();
    std::fflush(stderr);
    FILE *captured = std::tmpfile();
    const int saved = dup(STDERR_FILENO);
    dup2(fileno(captured), STDERR_FILENO);
    if (OSSL_LIB_CTX_load_config(libctx, path.c_str()) &&
        OSSL_PROVIDER_available(libctx, "aesmux")) {
      aesmux = OSSL_PROVIDER_load(libctx, "aesmux");
    }
    std::fflush(stderr);
    dup2(saved, STDERR_FILENO);
    close(saved);
    std::rewind(captured);
    char line[1024];
    while (std::fgets(line, sizeof(line), captured) != nullptr) {
      stderr_text += line;
    }
    std::fclose(captured);
    ERR_clear_error();
  }
  ~Loaded() {
    if (aesmux != nullptr) OSSL_PROVIDER_unload(aesmux);
    OSSL_LIB_CTX_free(libctx);
  }
  Loaded(const Loaded &) = delete;
  Loaded &operator=(const Loaded &) = delete;

  std::string Param(const char *key) const {
    char buffer[4096] = {};
    OSSL_PARAM params[] = {OSSL_PARAM_utf8_string(key, buffer, sizeof(buffer)),
                           OSSL_PARAM_END};
    if (aesmux == nullptr || !OSSL_PROVIDER_get_params(aesmux, params)) {
      return "(none)";
    }
    return buffer;
  }
};

TEST(ProviderLoad, AnUnknownKeyIsPrintedOncePerProcessAndListed) {
  const Cnf cnf({"kernals = aesni"});
  const std::string warning = "aesmux: warning: " + cnf.path() +
                              " [aesmux_sect]: unknown key 'kernals' (did "
                              "you mean 'kernels'?): ignored\n";
  const std::string result = test::RunInChild([&] {
    const Loaded first(cnf.path());
    if (first.aesmux == nullptr) return 1;
    if (first.stderr_text != warning) {
      std::fprintf(stderr, "printed: %s", first.stderr_text.c_str());
      return 2;
    }
    if (first.Param("problems") != warning.substr(17)) return 3;
    const Loaded second(cnf.path());
    if (second.aesmux == nullptr) return 4;
    if (!second.stderr_text.empty()) return 5;  // once per process
    return second.Param("problems") == warning.substr(17) ? 0 : 6;
  });
  EXPECT_EQ(result, "");
}

// The same lines in a library context configured from another file: not
// the section OpenSSL's default file names, so nothing is said of it.
TEST(ProviderLoad, ASectionOfAnotherFileIsNotChecked) {
  const Cnf cnf({"kernals = aesni", "kernels = auto"});
  const DefaultCnfIs default_cnf(cnf.path());
  test::ProviderEnv env({"kernals = aesni"});
  ASSERT_TRUE(env.loaded()) << env.error();
  EXPECT_EQ(env.ProviderParam("problems"), "");
}

TEST(ProviderLoad, AnUnknownVariableIsListed) {
  ASSERT_EQ(setenv("AESMUX_KERNAL", "aesni", 1), 0);
  test::ProviderEnv env;
  unsetenv("AESMUX_KERNAL");
  ASSERT_TRUE(env.loaded()) << env.error();
  EXPECT_NE(env.ProviderParam("problems")
                .find("environment: 'AESMUX_KERNAL' is not a variable aesmux "
                      "reads (did you mean 'AESMUX_KERNELS'?): ignored\n"),
            std::string::npos)
      << env.ProviderParam("problems");
}

// A load refused puts every problem on the error queue, for a program that
// loads aesmux by name (a load from openssl.cnf drops them).
TEST(ProviderLoad, ARefusedLoadRaisesEveryProblem) {
  char path[] = "/tmp/aesmux-problems-XXXXXX.cnf";
  const int fd = mkstemps(path, 4);
  ASSERT_GE(fd, 0);
  close(fd);
  std::ofstream(path) << "openssl_conf = init\n[init]\nproviders = prov\n"
                      << "[prov]\naesmux = aesmux_sect\n[aesmux_sect]\n"
                      << "module = " << test::ModulePath() << "\n"
                      << "cbc.mb_min_len = lots\ngcm.afalg = maybe\n";
  OSSL_LIB_CTX *libctx = OSSL_LIB_CTX_new();
  ASSERT_TRUE(OSSL_LIB_CTX_load_config(libctx, path));
  std::remove(path);
  ASSERT_EQ(setenv("AESMUX_KERNAL", "aesni", 1), 0);
  ERR_clear_error();
  EXPECT_EQ(OSSL_PROVIDER_load(libctx, "aesmux"), nullptr);
  unsetenv("AESMUX_KERNAL");
  const std::string errors = test::TakeErrors();
  OSSL_LIB_CTX_free(libctx);
  for (const char *problem :
       {"(aesmux: gcm.afalg = 'maybe': expected auto|off|force)",
        "(aesmux: cbc.mb_min_len = 'lots': expected a byte count",
        "(aesmux: environment: 'AESMUX_KERNAL' is not a variable"}) {
    EXPECT_NE(errors.find(problem), std::string::npos)
        << problem << " in " << errors;
  }
}

// With config_diagnostics = 1 in the file aesmux was loaded from, any
// problem stops the program with status 1 (a warning too, as OpenSSL's
// own unknown configuration is an error there); without it, or with aesmux
// off, the program goes on.
TEST(ProviderLoad, ConfigDiagnosticsStopsTheProgramOnAnyProblem) {
  for (const std::string line :
       {"kernals = aesni", "cbc.mb_min_len = lots",
        "calibration_file = /nonexistent/aesmux.cal"}) {
    const Cnf diagnostics({line}, "config_diagnostics = 1\n");
    EXPECT_EQ(test::RunInChild([&] {
                const Loaded loaded(diagnostics.path());
                return 0;
              }),
              "child exited with 1")
        << line;
    EXPECT_EQ(test::RunInChild([&] {
                if (setenv("AESMUX_DISABLE", "1", 1) != 0) return 3;
                const Loaded loaded(diagnostics.path());
                return loaded.aesmux != nullptr &&
                               loaded.Param("off") ==
                                   "disable = 1 (environment: AESMUX_DISABLE)"
                           ? 0
                           : 2;
              }),
              "")
        << line;
    const Cnf plain({line});
    EXPECT_EQ(test::RunInChild([&] {
                const Loaded loaded(plain.path());
                return 0;
              }),
              "")
        << line;
  }
  const Cnf clean({"kernels = auto"}, "config_diagnostics = 1\n");
  EXPECT_EQ(test::RunInChild([&] {
              const Loaded loaded(clean.path());
              return loaded.aesmux != nullptr ? 0 : 1;
            }),
            "");
}

// Off, aesmux registers no algorithm: a fetch of "provider=aesmux" finds
// nothing, and the default provider serves everything.
TEST(ProviderLoad, DisableRegistersNoAlgorithm) {
  test::ProviderEnv env({"disable = 1"});
  ASSERT_TRUE(env.loaded()) << env.error();
  EXPECT_EQ(env.ProviderParam("off"), "disable = 1 (openssl.cnf)");
  EXPECT_EQ(env.Aesmux("AES-128-GCM"), nullptr);
  ERR_clear_error();
  EXPECT_NE(env.Default("AES-128-GCM"), nullptr);
  test::ProviderEnv on;
  ASSERT_TRUE(on.loaded()) << on.error();
  EXPECT_EQ(on.ProviderParam("off"), "");
  EXPECT_NE(on.Aesmux("AES-128-GCM"), nullptr);
}

}  // namespace
}  // namespace aesmux
