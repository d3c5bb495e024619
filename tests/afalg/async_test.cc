// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
// OpenSSL ASYNC jobs on the afalg path: each job queues its request and
// pauses on the ring's eventfd; one io_uring_enter submits what all jobs
// queued. Many jobs in flight, results as the default provider's.
#include <gtest/gtest.h>
#include <openssl/async.h>

#include <optional>
#include <random>
#include <string>
#include <vector>

#include "kernels/tiers.h"
#include "provider/afalg/kernel_crypto.h"
#include "provider/afalg/ring.h"
#include "provider/fallback/fallback.h"
#include "provider/route/block_engine.h"
#include "provider/route/router.h"
#include "provider/core/stats.h"
#include "tests/afalg/afalg_support.h"

namespace aesmux::test {
namespace {

struct JobArgs {
  const ProviderEnv *env;
  Bytes key, iv, plain, out;
};

int EncryptJob(void *arg) {
  auto *args = *static_cast<JobArgs **>(arg);
  CipherPtr cipher = args->env->Aesmux("AES-128-CBC");
  for (int i = 0; i < 4; ++i) {
    args->out = EvpCrypt(cipher.get(), args->key, args->iv, args->plain, true,
                         {}, true);
    if (args->out.empty()) return 0;
  }
  return 1;
}

TEST(AfalgAsync, ManyJobsInFlight) {
  SKIP_WITHOUT_AFALG();
  ASSERT_TRUE(ASYNC_is_capable());
  auto env = LoadAfalgEnv();
  ASSERT_TRUE(env->loaded()) << env->error();
  constexpr int kJobs = 8;
  std::mt19937_64 rng(5);
  std::vector<JobArgs> args(kJobs);
  std::vector<void *> arg_pointers(kJobs);
  ASSERT_TRUE(ASYNC_init_thread(kJobs, kJobs));
  for (int j = 0; j < kJobs; ++j) {
    args[j] = {env.get(), RandomBytes(rng, 16), RandomBytes(rng, 16),
               RandomBytes(rng, 16384), {}};
    arg_pointers[j] = &args[j];
  }
  const uint64_t before = env->Stat("AES-128-CBC", "afalg", "requests");
  const std::vector<int> results = RunJobs(kJobs, EncryptJob, arg_pointers);
  CipherPtr reference = env->Default("AES-128-CBC");
  for (int j = 0; j < kJobs; ++j) {
    EXPECT_EQ(results[j], 1) << "job " << j;
    EXPECT_EQ(ToHex(args[j].out),
              ToHex(EvpCrypt(reference.get(), args[j].key, args[j].iv,
                             args[j].plain, true, {}, false)))
        << "job " << j;
  }
  EXPECT_EQ(env->Stat("AES-128-CBC", "afalg", "requests"),
            before + kJobs * 4);
  ASYNC_cleanup_thread();
}

struct EngineJob {
  route::BlockEngine *engine;
  Bytes data;
};

int EngineJobFn(void *arg) {
  auto *job = *static_cast<EngineJob **>(arg);
  uint8_t iv[16] = {};
  for (int i = 0; i < 4; ++i) {
    const core::Segment segment{job->data.data(), job->data.data(),
                                 job->data.size()};
    if (!job->engine->Run(core::Direction::kEncrypt, iv,
                          std::span(&segment, 1))) {
      return 0;
    }
  }
  return 1;
}

// Runs 8 ASYNC jobs of 4 requests each on engines of `alg` (the afalg
// path forced) and returns the io_uring_enter calls they took (at the
// engines, linked in, so that they can be counted).
uint64_t EntersOfEightJobs(core::Alg alg) {
  const core::Family family = core::Info(alg).family;
  std::string error;
  auto library = fallback::FallbackLibrary::Create(&error);
  EXPECT_NE(library, nullptr) << error;
  if (library == nullptr) return ~uint64_t{0};
  route::Settings settings;
  settings.tier = kernels::BestTier(kernels::DetectCpuFeatures());
  settings.families[static_cast<size_t>(family)].afalg =
      route::AfalgPolicy::kForce;
  route::Router router(settings, library.get());
  EXPECT_TRUE(router.afalg_on(family));
  constexpr int kJobs = 8;
  std::vector<std::unique_ptr<route::BlockEngine>> engines;
  std::vector<EngineJob> jobs(kJobs);
  std::vector<void *> args;
  std::mt19937_64 rng(6);
  for (int j = 0; j < kJobs; ++j) {
    engines.push_back(std::make_unique<route::BlockEngine>(router, alg));
    engines.back()->SetKey(RandomBytes(rng, 16));
    jobs[j] = {engines.back().get(), RandomBytes(rng, 16384)};
    args.push_back(&jobs[j]);
  }
  EXPECT_TRUE(ASYNC_init_thread(kJobs, kJobs));
  const uint64_t served = core::ReadStats().at(alg, core::Path::kAfalg).requests;
  const uint64_t enters = afalg::RingEnters();
  for (int result : RunJobs(kJobs, EngineJobFn, args)) EXPECT_EQ(result, 1);
  EXPECT_EQ(core::ReadStats().at(alg, core::Path::kAfalg).requests,
            served + kJobs * 4);
  const uint64_t used = afalg::RingEnters() - enters;
  std::printf("%s: %llu io_uring_enter calls for %d requests\n",
              std::string(core::Info(alg).name).c_str(),
              static_cast<unsigned long long>(used), kJobs * 4);
  ASYNC_cleanup_thread();
  return used;
}

// On a CPU driver (ECB: no offload driver has it in the VM suites), which
// runs a batch inline in the io_uring_enter that submits it: one enter per
// round of the eight jobs' requests, give or take the first and last
// rounds.
TEST(AfalgAsync, JobsShareIoUringEnters) {
  SKIP_WITHOUT_AFALG();
  EXPECT_LE(EntersOfEightJobs(core::Alg::kAes128Ecb), 32u / 8 + 2);
}

// On an offload driver, whose completions come back one by one from the
// device while jobs queue their next requests: still far fewer enters than
// requests.
TEST(AfalgAsync, JobsShareIoUringEntersOnAnOffloadDriver) {
  SKIP_WITHOUT_AFALG();
  const std::optional<afalg::CryptoAlg> offload = [] {
    std::string text;
    afalg::ReadWholeFile("/proc/crypto", &text);
    return afalg::BestOffloadImplementation(text, "cbc(aes)", "skcipher");
  }();
  if (!offload) GTEST_SKIP() << "/proc/crypto lists no offload driver for cbc(aes)";
  EXPECT_LE(EntersOfEightJobs(core::Alg::kAes128Cbc), 32u / 2);
}

}  // namespace
}  // namespace aesmux::test
