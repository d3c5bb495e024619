// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
// Routing and statistics: thresholds send each request to the path they
// name, every served request is counted once per algorithm and path, counts
// survive thread exit and restart in forked children (the statistics
// file: stats_file_test.cc).
#include <gtest/gtest.h>
#include <openssl/async.h>
#include <openssl/evp.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <functional>
#include <map>
#include <random>
#include <thread>
#include <vector>

#include "tests/support/bytes.h"
#include "provider/core/algorithm.h"
#include "tests/provider/kernel_configs.h"
#include "tests/support/provider_env.h"

namespace aesmux::test {
namespace {

// Encrypts `len` bytes of AES-128-CBC in one update (no padding).
void EncryptCbc(const ProviderEnv &env, size_t len) {
  CipherPtr cipher = env.Aesmux("AES-128-CBC");
  ASSERT_NE(cipher, nullptr);
  auto ctx = NewCipherCtx();
  const Bytes key(16, 1), iv(16, 2), in(len, 3);
  Bytes out(len + 16);
  int out_len = 0;
  ASSERT_TRUE(EVP_EncryptInit_ex2(ctx.get(), cipher.get(), key.data(),
                                  iv.data(), nullptr));
  EVP_CIPHER_CTX_set_padding(ctx.get(), 0);
  ASSERT_TRUE(EVP_EncryptUpdate(ctx.get(), out.data(), &out_len, in.data(),
                                static_cast<int>(len)));
}

// One GCM message: `aad_len` bytes of AAD then `len` bytes of payload.
void SealGcm(const ProviderEnv &env, size_t aad_len, size_t len) {
  CipherPtr cipher = env.Aesmux("AES-256-GCM");
  ASSERT_NE(cipher, nullptr);
  auto ctx = NewCipherCtx();
  const Bytes key(32, 1), iv(12, 2), aad(aad_len, 4), in(len, 3);
  Bytes out(len + 16);
  int out_len = 0;
  ASSERT_TRUE(EVP_EncryptInit_ex2(ctx.get(), cipher.get(), key.data(),
                                  iv.data(), nullptr));
  if (aad_len != 0) {
    ASSERT_TRUE(EVP_EncryptUpdate(ctx.get(), nullptr, &out_len, aad.data(),
                                  static_cast<int>(aad_len)));
  }
  if (len != 0) {
    ASSERT_TRUE(EVP_EncryptUpdate(ctx.get(), out.data(), &out_len, in.data(),
                                  static_cast<int>(len)));
  }
  ASSERT_TRUE(EVP_EncryptFinal_ex(ctx.get(), out.data(), &out_len));
}

std::vector<KernelConfig> UnroutedKernelConfigs() {
  std::vector<KernelConfig> configs;
  for (const KernelConfig &config : AllKernelConfigs()) {
    if (!config.routes()) configs.push_back(config);
  }
  return configs;
}

class RoutingTest : public ::testing::TestWithParam<KernelConfig> {
 protected:
  void SetUp() override {
    const std::string unsupported = UnsupportedReason(GetParam());
    if (!unsupported.empty()) GTEST_SKIP() << unsupported;
    // This suite sets its own thresholds.
    KernelConfig config = GetParam();
    config.fallback_max_len = 0;
    std::vector<std::string> settings = config.Settings();
    settings.push_back("cbc.fallback_max_len = 64");
    settings.push_back("gcm.fallback_max_len = 100");
    env_ = std::make_unique<ProviderEnv>(settings);
    ASSERT_TRUE(env_->loaded()) << env_->error();
  }
  bool kernels_on() const { return GetParam().kernels != "none"; }
  uint64_t Stat(const char *alg, const char *path, const char *field) {
    return env_->Stat(alg, path, field);
  }

  std::unique_ptr<ProviderEnv> env_;
};

TEST_P(RoutingTest, RequestsAtOrBelowTheThresholdTakeTheFallback) {
  const uint64_t simd = Stat("AES-128-CBC", "simd", "requests");
  const uint64_t fallback = Stat("AES-128-CBC", "fallback", "requests");
  const uint64_t fallback_bytes = Stat("AES-128-CBC", "fallback", "bytes");
  EncryptCbc(*env_, 64);
  EXPECT_EQ(Stat("AES-128-CBC", "fallback", "requests"), fallback + 1);
  EXPECT_EQ(Stat("AES-128-CBC", "fallback", "bytes"), fallback_bytes + 64);
  EXPECT_EQ(Stat("AES-128-CBC", "simd", "requests"), simd);

  EncryptCbc(*env_, 80);
  const char *big_path = kernels_on() ? "simd" : "fallback";
  EXPECT_EQ(Stat("AES-128-CBC", big_path, "requests"),
            (kernels_on() ? simd : fallback + 1) + 1);
}

TEST_P(RoutingTest, AGcmMessageIsRoutedByItsAadAndFirstPayload) {
  const char *big = kernels_on() ? "simd" : "fallback";
  const uint64_t fallback = Stat("AES-256-GCM", "fallback", "requests");
  const uint64_t fallback_bytes = Stat("AES-256-GCM", "fallback", "bytes");
  SealGcm(*env_, 13, 80);  // 93 bytes: at most 100
  SealGcm(*env_, 0, 0);    // an empty message
  EXPECT_EQ(Stat("AES-256-GCM", "fallback", "requests"), fallback + 2);
  EXPECT_EQ(Stat("AES-256-GCM", "fallback", "bytes"), fallback_bytes + 93);

  const uint64_t big_requests = Stat("AES-256-GCM", big, "requests");
  const uint64_t big_bytes = Stat("AES-256-GCM", big, "bytes");
  SealGcm(*env_, 40, 80);  // 120 bytes
  EXPECT_EQ(Stat("AES-256-GCM", big, "requests"), big_requests + 1);
  EXPECT_EQ(Stat("AES-256-GCM", big, "bytes"), big_bytes + 120);
}

TEST_P(RoutingTest, CountsFromExitedThreadsAreKept) {
  // Concurrent CBC encryptions may be batched into multi-buffer lanes,
  // which count on the "mb" path.
  const auto served = [this] {
    return Stat("AES-128-CBC", "fallback", "requests") +
           Stat("AES-128-CBC", "simd", "requests") +
           Stat("AES-128-CBC", "mb", "requests");
  };
  const uint64_t before = served();
  constexpr int kThreads = 8, kRequestsEach = 25;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kRequestsEach; ++i) EncryptCbc(*env_, 16 * (t + 1));
    });
  }
  for (std::thread &thread : threads) thread.join();
  EXPECT_EQ(served(), before + kThreads * kRequestsEach);
}

TEST_P(RoutingTest, AForkedChildCountsOnlyItsOwnRequests) {
  EncryptCbc(*env_, 32);
  ASSERT_GT(Stat("AES-128-CBC", "fallback", "requests"), 0u);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    const bool starts_at_zero =
        env_->Stat("AES-128-CBC", "fallback", "requests") == 0;
    EncryptCbc(*env_, 32);
    const bool counts_one =
        env_->Stat("AES-128-CBC", "fallback", "requests") == 1;
    _exit(starts_at_zero && counts_one ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

INSTANTIATE_TEST_SUITE_P(Kernels, RoutingTest,
                         ::testing::ValuesIn(UnroutedKernelConfigs()),
                         KernelConfigName);

// Every length threshold at its boundary: a request of T - 1, T and T + 1
// bytes (for ECB and CBC, whose requests are whole blocks, thresholds on
// both sides of a block boundary) goes where the thresholds' "at most" /
// "at least" (docs/settings.md) puts it, as the statistics count it, for
// every family and both directions. A comparison off by one sends a
// request of exactly T bytes (or T + 1) to the other path; the outputs
// agree either way, so only the statistics can see it.

// One request of `len` bytes of `alg` in one update (GCM: a message of 13
// bytes of AAD and `len` - 13 of payload, whose length the router sees).
void OneRequest(const ProviderEnv &env, const core::AlgInfo &alg,
                bool encrypt, size_t len) {
  CipherPtr cipher = env.Aesmux(std::string(alg.name));
  ASSERT_NE(cipher, nullptr);
  auto ctx = NewCipherCtx();
  Bytes key(alg.key_len), iv(16, 2), in(len, 3), out(len + 16);
  for (size_t i = 0; i < key.size(); ++i) key[i] = static_cast<uint8_t>(i + 1);
  int out_len = 0;
  ASSERT_TRUE(EVP_CipherInit_ex2(ctx.get(), cipher.get(), key.data(),
                                 iv.data(), encrypt ? 1 : 0, nullptr));
  EVP_CIPHER_CTX_set_padding(ctx.get(), 0);
  if (alg.family != core::Family::kGcm) {
    ASSERT_TRUE(EVP_CipherUpdate(ctx.get(), out.data(), &out_len, in.data(),
                                 static_cast<int>(len)));
    return;
  }
  ASSERT_TRUE(EVP_CipherUpdate(ctx.get(), nullptr, &out_len, in.data(), 13));
  ASSERT_TRUE(EVP_CipherUpdate(ctx.get(), out.data(), &out_len, in.data(),
                               static_cast<int>(len - 13)));
  if (!encrypt) {
    ASSERT_TRUE(EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_AEAD_SET_TAG, 16,
                                    in.data()));
  }
  // A wrong tag fails the final; the message is counted either way.
  EVP_CipherFinal_ex(ctx.get(), out.data(), &out_len);
}

// The path a request of `len` bytes took, from the statistics.
std::string PathTaken(const ProviderEnv &env, std::string_view alg,
                      const std::function<void()> &request) {
  std::vector<uint64_t> before;
  for (std::string_view path : core::kPathNames) {
    before.push_back(env.Stat(alg, path, "requests"));
  }
  request();
  std::string taken;
  for (size_t p = 0; p < core::kNumPaths; ++p) {
    const uint64_t n = env.Stat(alg, core::kPathNames[p], "requests");
    if (n != before[p]) {
      taken += std::string(core::kPathNames[p]) + "+" +
               std::to_string(n - before[p]);
    }
  }
  return taken;
}

class RoutingBoundaryTest : public ::testing::TestWithParam<KernelConfig> {
 protected:
  void SetUp() override {
    const std::string unsupported = UnsupportedReason(GetParam());
    if (!unsupported.empty()) GTEST_SKIP() << unsupported;
  }
  std::unique_ptr<ProviderEnv> Load(const std::vector<std::string> &extra) {
    KernelConfig config = GetParam();
    config.fallback_max_len = 0;
    std::vector<std::string> settings = config.Settings();
    settings.push_back("afalg = off");
    settings.insert(settings.end(), extra.begin(), extra.end());
    auto env = std::make_unique<ProviderEnv>(settings);
    EXPECT_TRUE(env->loaded()) << env->error();
    return env;
  }
  bool kernels_on() const { return GetParam().kernels != "none"; }
};

TEST_P(RoutingBoundaryTest, FallbackMaxLenIsAtOrBelow) {
  for (const core::AlgInfo &alg : core::kAlgs) {
    const bool blocks = alg.family == core::Family::kEcb ||
                        alg.family == core::Family::kCbc;
    const std::string family(core::kFamilyNames[static_cast<size_t>(alg.family)]);
    // Whole blocks for ECB and CBC: T on a block boundary catches "<" for
    // "<=", T one below it catches T + 1 taken for T.
    for (const uint64_t threshold :
         blocks ? std::vector<uint64_t>{63, 64} : std::vector<uint64_t>{100}) {
      auto env = Load({family + ".fallback_max_len = " +
                       std::to_string(threshold)});
      if (HasFailure()) return;
      const std::vector<uint64_t> lengths =
          blocks ? std::vector<uint64_t>{48, 64, 80}
                 : std::vector<uint64_t>{threshold - 1, threshold,
                                         threshold + 1};
      for (const uint64_t len : lengths) {
        for (const bool encrypt : {true, false}) {
          SCOPED_TRACE(std::string(alg.name) + (encrypt ? " encrypting " : " decrypting ") +
                       std::to_string(len) + " B, fallback_max_len " +
                       std::to_string(threshold));
          const std::string expected =
              len <= threshold || !kernels_on() ? "fallback+1" : "simd+1";
          EXPECT_EQ(PathTaken(*env, alg.name,
                              [&] { OneRequest(*env, alg, encrypt, len); }),
                    expected);
        }
      }
    }
  }
}

// ASYNC_start_job hands the job a copy of its argument.
struct JobArgs {
  const ProviderEnv *env;
  const core::AlgInfo *alg;
  size_t len;
};

int RequestInJob(void *arg) {
  const JobArgs *args = *static_cast<JobArgs **>(arg);
  OneRequest(*args->env, *args->alg, true, args->len);
  return 1;
}

// One CBC encryption in an ASYNC job, on a thread of its own (whose lane
// queue is new, so that an mb request runs in lanes: docs/design.md).
void EncryptInAsyncJob(const ProviderEnv &env, const core::AlgInfo &alg,
                       size_t len) {
  std::thread thread([&] {
    JobArgs args{&env, &alg, len};
    JobArgs *arg = &args;
    ASYNC_JOB *job = nullptr;
    ASYNC_WAIT_CTX *wait = ASYNC_WAIT_CTX_new();
    int ret = 0;
    while (ASYNC_start_job(&job, wait, &ret, RequestInJob, &arg,
                           sizeof(arg)) == ASYNC_PAUSE) {
    }
    ASYNC_WAIT_CTX_free(wait);
    ASYNC_cleanup_thread();
  });
  thread.join();
}

// CBC encryptions from mb_min_len to mb_max_len bytes, both included, go
// to the multi-buffer lanes in an ASYNC job; shorter and longer ones to
// the kernels.
TEST_P(RoutingBoundaryTest, MbRangeIncludesBothEnds) {
  if (!kernels_on()) GTEST_SKIP() << "no kernels: no multi-buffer lanes";
  auto env = Load({"cbc.mb_min_len = 64", "cbc.mb_max_len = 128"});
  if (HasFailure()) return;
  if (env->ProviderParam("mb-tier") == "none") {
    GTEST_SKIP() << "no multi-buffer tier on this tier";
  }
  for (const core::AlgInfo &alg : core::kAlgs) {
    if (alg.family != core::Family::kCbc) continue;
    for (const uint64_t len : {48, 64, 80, 112, 128, 144}) {
      SCOPED_TRACE(std::string(alg.name) + " " + std::to_string(len) + " B");
      const std::string expected =
          len >= 64 && len <= 128 ? "mb+1" : "simd+1";
      EXPECT_EQ(PathTaken(*env, alg.name,
                          [&] { EncryptInAsyncJob(*env, alg, len); }),
                expected);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Kernels, RoutingBoundaryTest,
                         ::testing::ValuesIn(UnroutedKernelConfigs()),
                         KernelConfigName);

}  // namespace
}  // namespace aesmux::test
