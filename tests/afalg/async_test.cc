// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
// OpenSSL ASYNC jobs on the afalg path: each job queues its request and
// pauses on the ring's eventfd; one io_uring_enter submits what all jobs
// queued. Many jobs in flight, results as the default provider's.
#include <gtest/gtest.h>
#include <openssl/async.h>
#include <poll.h>

#include <random>
#include <vector>

#include "kernels/tiers.h"
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

// Runs `jobs` ASYNC jobs of `fn` to completion the way openssl speed does:
// start them all, then resume those whose wait fd is readable. Returns the
// jobs' results.
std::vector<int> RunJobs(int jobs, int (*fn)(void *), std::vector<void *> args) {
  std::vector<ASYNC_JOB *> handles(jobs, nullptr);
  std::vector<ASYNC_WAIT_CTX *> waits(jobs);
  std::vector<int> results(jobs, -1);
  std::vector<bool> started(jobs, false);
  for (int j = 0; j < jobs; ++j) waits[j] = ASYNC_WAIT_CTX_new();
  int running = jobs;
  for (int rounds = 0; running > 0 && rounds < 100000; ++rounds) {
    for (int j = 0; j < jobs; ++j) {
      if (results[j] != -1) continue;
      if (started[j]) {
        size_t fds = 0;
        ASYNC_WAIT_CTX_get_all_fds(waits[j], nullptr, &fds);
        if (fds == 1) {
          OSSL_ASYNC_FD fd;
          ASYNC_WAIT_CTX_get_all_fds(waits[j], &fd, &fds);
          pollfd p{fd, POLLIN, 0};
          if (poll(&p, 1, 1000) <= 0) continue;
        }
      }
      started[j] = true;
      int ret = 0;
      switch (ASYNC_start_job(&handles[j], waits[j], &ret, fn, &args[j],
                              sizeof(void *))) {
        case ASYNC_FINISH:
          results[j] = ret;
          --running;
          break;
        case ASYNC_PAUSE:
          break;
        default:
          results[j] = 0;
          --running;
      }
    }
  }
  for (ASYNC_WAIT_CTX *wait : waits) ASYNC_WAIT_CTX_free(wait);
  return results;
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

// At the engines (linked in, so io_uring_enter calls can be counted): the
// jobs' requests are submitted together, far fewer enters than requests.
TEST(AfalgAsync, JobsShareIoUringEnters) {
  SKIP_WITHOUT_AFALG();
  std::string error;
  auto library = fallback::FallbackLibrary::Create(&error);
  ASSERT_NE(library, nullptr) << error;
  route::Settings settings;
  settings.tier = kernels::BestTier(kernels::DetectCpuFeatures());
  settings.families[static_cast<size_t>(core::Family::kCbc)].afalg =
      route::AfalgPolicy::kForce;
  route::Router router(settings, library.get());
  ASSERT_TRUE(router.afalg_on(core::Family::kCbc));
  constexpr int kJobs = 8;
  std::vector<std::unique_ptr<route::BlockEngine>> engines;
  std::vector<EngineJob> jobs(kJobs);
  std::vector<void *> args;
  std::mt19937_64 rng(6);
  for (int j = 0; j < kJobs; ++j) {
    engines.push_back(std::make_unique<route::BlockEngine>(
        router, core::Alg::kAes128Cbc));
    engines.back()->SetKey(RandomBytes(rng, 16));
    jobs[j] = {engines.back().get(), RandomBytes(rng, 16384)};
    args.push_back(&jobs[j]);
  }
  ASSERT_TRUE(ASYNC_init_thread(kJobs, kJobs));
  const uint64_t served =
      core::ReadStats().at(core::Alg::kAes128Cbc, core::Path::kAfalg)
          .requests;
  const uint64_t enters = afalg::RingEnters();
  for (int result : RunJobs(kJobs, EngineJobFn, args)) EXPECT_EQ(result, 1);
  const uint64_t requests = kJobs * 4;
  EXPECT_EQ(core::ReadStats()
                .at(core::Alg::kAes128Cbc, core::Path::kAfalg)
                .requests,
            served + requests);
  // One enter per round of the eight jobs' requests, give or take the
  // first and last rounds.
  const uint64_t used = afalg::RingEnters() - enters;
  std::printf("%llu io_uring_enter calls for %llu requests\n",
              static_cast<unsigned long long>(used),
              static_cast<unsigned long long>(requests));
  EXPECT_LE(used, requests / kJobs + 2);
  ASYNC_cleanup_thread();
}

}  // namespace
}  // namespace aesmux::test
