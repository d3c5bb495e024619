// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
// Multi-buffer batching of CBC encryption through EVP: many OpenSSL ASYNC
// jobs, and many threads, encrypt at once through aesmux; every output must
// equal the default provider's, batches must actually form (statistics),
// a lone caller must not be batched, and threads batch only records of at
// least cbc.mb_threads_min_len.
#include <gtest/gtest.h>
#include <openssl/async.h>
#include <openssl/evp.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "kernels/mb/lane_manager.h"
#include "tests/provider/cbc_streams.h"
#include "tests/provider/kernel_configs.h"
#include "tests/support/bytes.h"
#include "tests/support/child.h"
#include "tests/support/provider_env.h"

namespace aesmux::test {
namespace {

class BatchTest : public MultiBufferTest {
 protected:
  std::mt19937_64 rng_{0xba7c4};
};

// Like `openssl speed -async_jobs N`: every job runs its streams through
// EVP; a round-robin scheduler resumes every paused job in turn.
struct JobArgs {
  const ProviderEnv *env;
  const std::vector<Stream> *streams;
  std::vector<Bytes> *results;
};

// ASYNC_start_job hands the job a copy of its argument: here a JobArgs*.
int RunStreams(void *arg) {
  const JobArgs &args = **static_cast<JobArgs **>(arg);
  for (size_t i = 0; i < args.streams->size(); ++i) {
    (*args.results)[i] = EncryptThroughAesmux(*args.env, (*args.streams)[i]);
  }
  return 1;
}

// Runs `kJobs` ASYNC jobs of `kStreamsPerJob` streams each through `env`,
// like `openssl speed -async_jobs N`: a round-robin scheduler resumes every
// paused job in turn. Checks every output against the default provider.
void RunAsyncJobs(const ProviderEnv &env, std::mt19937_64 &rng) {
  constexpr int kJobs = 24, kStreamsPerJob = 6;
  ASSERT_TRUE(ASYNC_is_capable());
  ASSERT_TRUE(ASYNC_init_thread(kJobs, kJobs));
  std::vector<std::vector<Stream>> streams(kJobs);
  std::vector<std::vector<Bytes>> results(kJobs);
  for (int j = 0; j < kJobs; ++j) {
    for (int s = 0; s < kStreamsPerJob; ++s) {
      streams[j].push_back(MakeStream(env, rng, 1024));  // up to 16 KiB
    }
    results[j].resize(kStreamsPerJob);
  }
  std::vector<ASYNC_JOB *> jobs(kJobs, nullptr);
  std::vector<ASYNC_WAIT_CTX *> wait_ctxs(kJobs);
  std::vector<JobArgs> args(kJobs);
  std::vector<bool> finished(kJobs, false);
  for (int j = 0; j < kJobs; ++j) {
    wait_ctxs[j] = ASYNC_WAIT_CTX_new();
    args[j] = {&env, &streams[j], &results[j]};
  }
  int running = kJobs;
  for (int round = 0; running > 0 && round < 100000; ++round) {
    for (int j = 0; j < kJobs; ++j) {
      if (finished[j]) continue;
      int ret = 0;
      JobArgs *arg = &args[j];
      const int status = ASYNC_start_job(&jobs[j], wait_ctxs[j], &ret,
                                         RunStreams, &arg, sizeof(arg));
      ASSERT_NE(status, ASYNC_ERR);
      if (status == ASYNC_FINISH) {
        finished[j] = true;
        --running;
      } else if (status == ASYNC_PAUSE) {
        // aesmux pauses with one readable wait fd registered.
        size_t fds = 0;
        ASSERT_TRUE(ASYNC_WAIT_CTX_get_all_fds(wait_ctxs[j], nullptr, &fds));
        EXPECT_EQ(fds, 1u);
      }
    }
  }
  EXPECT_EQ(running, 0);
  for (int j = 0; j < kJobs; ++j) {
    ASYNC_WAIT_CTX_free(wait_ctxs[j]);
    for (int s = 0; s < kStreamsPerJob; ++s) {
      EXPECT_EQ(ToHex(results[j][s]), ToHex(streams[j][s].expected))
          << "job " << j << " stream " << s;
    }
  }
  ASYNC_cleanup_thread();
}

TEST_P(BatchTest, AsyncJobsAreBatchedAndAgreeWithTheDefaultProvider) {
  const BatchCounts before = Counts(*env_);
  RunAsyncJobs(*env_, rng_);
  const BatchCounts after = Counts(*env_);
  const uint64_t batches = after.batches - before.batches;
  const uint64_t lanes = after.lanes - before.lanes;
  EXPECT_GT(after.mb_requests, before.mb_requests);
  ASSERT_GT(batches, 0u);
  // With 24 jobs queueing together, batches are far from single lanes.
  EXPECT_GT(static_cast<double>(lanes) / batches, 4.0)
      << batches << " batches, " << lanes << " lanes";
}

// RunStreams deeper on a job stack first cleared, as a job running other
// code would leave it.
int ScrubThenRunStreams(void *arg) {
  uint8_t scratch[16 * 1024];
  std::memset(scratch, 0, sizeof(scratch));
  // Keeps the array, and this frame under RunStreams's.
  asm volatile("" : : "r"(scratch) : "memory");
  const int ret = RunStreams(arg);
  asm volatile("" : : "r"(scratch) : "memory");
  return ret;
}

// Jobs resumed in another order than they queued in (servers resume the
// jobs whose connections are ready): a job whose request was completed
// behind an older, longer one returns at once, and must take its request
// out of the lanes as it goes, since its stack is the next job's. Job 0
// queues 64 KiB, one job per other lane queues one block, and those are
// resumed first, then as many more jobs (reusing their stacks) run, then
// job 0, then one more job.
// The requests left behind used to be read back from the reused stacks:
// the last job's flush ran forever.
TEST_P(BatchTest, JobsResumedInAnyOrderAllComplete) {
  const std::string result = RunInChild(
      [&] {
        // One job per lane: the last one's submission runs the lanes.
        const int kFirst = static_cast<int>(
            kernels::TierByName(GetParam().kernels)->mb.lanes);
        const int kSecond = kFirst - 1, kJobs = kFirst + kSecond + 1;
        if (!ASYNC_init_thread(kJobs, 0)) return 2;
        std::vector<std::vector<Stream>> streams(kJobs);
        std::vector<std::vector<Bytes>> results(kJobs, std::vector<Bytes>(1));
        std::vector<JobArgs> args(kJobs);
        std::vector<JobArgs *> arg_pointers(kJobs);
        std::vector<ASYNC_JOB *> jobs(kJobs, nullptr);
        std::vector<ASYNC_WAIT_CTX *> waits(kJobs);
        for (int j = 0; j < kJobs; ++j) {
          // One key size (one lane manager), one update each.
          streams[j].push_back(OneMessageStream(*env_, rng_, kCbcAlgorithms[0],
                                                j == 0 ? 4096 : 1));
          args[j] = {env_.get(), &streams[j], &results[j]};
          arg_pointers[j] = &args[j];
          waits[j] = ASYNC_WAIT_CTX_new();
        }
        // Starts or resumes job j; true once it has finished.
        auto step = [&](int j) {
          int ret = 0;
          return ASYNC_start_job(
                     &jobs[j], waits[j], &ret,
                     j < kFirst ? RunStreams : ScrubThenRunStreams,
                     &arg_pointers[j], sizeof(JobArgs *)) == ASYNC_FINISH;
        };
        auto finish = [&](int j) {
          while (!step(j)) {
          }
        };
        for (int j = 0; j < kFirst; ++j) step(j);
        for (int j = kFirst - 1; j >= 1; --j) finish(j);
        for (int j = kFirst; j < kFirst + kSecond; ++j) step(j);
        for (int j = kFirst; j < kFirst + kSecond; ++j) finish(j);
        finish(0);
        finish(kJobs - 1);
        int wrong = 0;
        for (int j = 0; j < kJobs; ++j) {
          wrong += results[j][0] != streams[j][0].expected;
          ASYNC_WAIT_CTX_free(waits[j]);
        }
        ASYNC_cleanup_thread();
        return wrong == 0 ? 0 : 1;
      },
      std::chrono::seconds(20));
  EXPECT_EQ(result, "");
}

TEST_P(BatchTest, BatchingCanBeTurnedOff) {
  std::vector<std::string> settings = GetParam().Settings();
  settings.push_back("cbc.mb_max_len = 0");
  ProviderEnv env(settings);
  ASSERT_TRUE(env.loaded()) << env.error();
  const BatchCounts before = Counts(env);
  RunAsyncJobs(env, rng_);
  const BatchCounts after = Counts(env);
  EXPECT_EQ(after.mb_requests, before.mb_requests);
  EXPECT_EQ(after.batches, before.batches);
  EXPECT_GT(after.simd_requests, before.simd_requests);
}

TEST_P(BatchTest, OnlyRequestsFromTheMinimumLengthAreBatched) {
  std::vector<std::string> settings = GetParam().Settings();
  settings.push_back("cbc.mb_min_len = 8K");
  ProviderEnv env(settings);
  ASSERT_TRUE(env.loaded()) << env.error();
  RunAsyncJobs(env, rng_);  // requests of 0 to 16 KiB
  uint64_t mb_requests = 0, mb_bytes = 0, simd_requests = 0;
  for (const char *alg : kCbcAlgorithms) {
    mb_requests += env.Stat(alg, "mb", "requests");
    mb_bytes += env.Stat(alg, "mb", "bytes");
    simd_requests += env.Stat(alg, "simd", "requests");
  }
  EXPECT_GT(mb_requests, 0u);
  EXPECT_GT(simd_requests, 0u);
  EXPECT_GE(mb_bytes, 8192 * mb_requests) << "a request under 8 KiB batched";
}

// `threads` threads encrypt their streams (up to 32 records of up to
// 16 KiB each, like a TLS sender's) through aesmux over and over, checking
// every output against the default provider's, until `done` says so.
// Returns the number of streams encrypted and sets `mismatches`.
template <typename Done>
uint64_t EncryptUntil(const ProviderEnv &env, std::mt19937_64 &rng,
                      int threads, Done done, uint64_t *mismatches) {
  constexpr int kStreamsPerThread = 3;
  std::vector<std::vector<Stream>> streams(threads);
  for (auto &list : streams) {
    for (int s = 0; s < kStreamsPerThread; ++s) {
      list.push_back(MakeStream(env, rng, 1024, 32));
    }
  }
  std::vector<CipherPtr> ciphers;
  for (const char *algorithm : kCbcAlgorithms) {
    ciphers.push_back(env.Aesmux(algorithm));
  }
  auto cipher_for = [&](const Stream &stream) {
    for (size_t i = 0; i < std::size(kCbcAlgorithms); ++i) {
      if (stream.algorithm == kCbcAlgorithms[i]) return ciphers[i].get();
    }
    return static_cast<EVP_CIPHER *>(nullptr);
  };
  std::atomic<bool> go{false}, stop{false};
  std::atomic<uint64_t> encrypted{0}, wrong{0};
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      while (!go.load()) std::this_thread::yield();
      for (int s = 0; !stop.load(); s = (s + 1) % kStreamsPerThread) {
        const Stream &stream = streams[t][s];
        if (EncryptThrough(cipher_for(stream), stream) != stream.expected) {
          ++wrong;
        }
        ++encrypted;
      }
    });
  }
  go = true;
  while (!done()) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  stop = true;
  for (std::thread &thread : pool) thread.join();
  *mismatches = wrong;
  return encrypted;
}

// More threads than CPUs combine their requests into batches; no more
// threads than CPUs each run their own, never batched. Combining needs
// threads preempted inside aesmux, which the scheduler decides: the
// threads run until the statistics show batches (within 30 s) or, where
// none should form, for half a second.
TEST_P(BatchTest, ThreadsAreCombinedAndAgreeWithTheDefaultProvider) {
  const int cpus = UsableCpus();
  for (int threads : {2, 8, 32}) {
    SCOPED_TRACE(::testing::Message() << threads << " threads, " << cpus
                                      << " CPUs");
    const BatchCounts before = Counts(*env_);
    const bool combine = threads > cpus;
    const auto start = std::chrono::steady_clock::now();
    const auto deadline =
        start + (combine ? std::chrono::seconds(30)
                         : std::chrono::milliseconds(500));
    uint64_t mismatches = 0;
    const uint64_t encrypted = EncryptUntil(
        *env_, rng_, threads,
        [&] {
          return std::chrono::steady_clock::now() > deadline ||
                 (combine && Counts(*env_).batches > before.batches + 10);
        },
        &mismatches);
    EXPECT_EQ(mismatches, 0u) << "of " << encrypted << " streams";
    const BatchCounts after = Counts(*env_);
    const auto elapsed = std::chrono::duration_cast<std::chrono::milliseconds>(
        std::chrono::steady_clock::now() - start);
    if (combine) {
      EXPECT_GT(after.batches, before.batches)
          << encrypted << " streams in " << elapsed.count() << " ms";
      EXPECT_GT(after.mb_requests, before.mb_requests);
      EXPECT_GT(after.lanes - before.lanes, after.batches - before.batches)
          << "batches of more than one lane";
    } else {
      EXPECT_EQ(after.batches, before.batches);
      EXPECT_EQ(after.mb_requests, before.mb_requests);
    }
  }
}

// `threads` threads keep encrypting records of `record_len` bytes through
// `env`, each in its own CBC stream, like TLS senders, until `done` says
// so; then every thread's stream is checked against the default
// provider's. Callers outnumber the CPUs once the scheduler preempts some
// of them inside aesmux.
template <typename Done>
void EncryptRecordsFromThreads(const ProviderEnv &env, std::mt19937_64 &rng,
                               int threads, size_t record_len, Done done) {
  struct Worker {
    Bytes key, iv;
    uint64_t records = 0, digest = 0;
  };
  std::vector<Worker> workers(threads);
  for (Worker &worker : workers) {
    worker.key = RandomBytes(rng, 16);
    worker.iv = RandomBytes(rng, 16);
  }
  const Bytes record = RandomBytes(rng, record_len);
  CipherPtr ours = env.Aesmux("AES-128-CBC");
  std::atomic<bool> go{false}, stop{false};
  std::vector<std::thread> pool;
  for (Worker &worker : workers) {
    pool.emplace_back([&] {
      while (!go.load()) std::this_thread::yield();
      worker.digest = EncryptRecords(ours.get(), worker.key, worker.iv,
                                     record, worker.records, &stop);
    });
  }
  go = true;
  while (!done()) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  stop = true;
  for (std::thread &thread : pool) thread.join();
  CipherPtr reference = env.Default("AES-128-CBC");
  for (int t = 0; t < threads; ++t) {
    uint64_t count = workers[t].records;
    EXPECT_EQ(EncryptRecords(reference.get(), workers[t].key, workers[t].iv,
                             record, count, nullptr),
              workers[t].digest)
        << "thread " << t << ", " << workers[t].records << " records";
  }
}

// Threads enough to outnumber the CPUs of the machines the suite runs on.
constexpr int kManyThreads = 32;

// Runs kManyThreads threads of `record_len`-byte records through `env`
// until 20 more batches have formed or `patience` has passed; the counts
// from before and after.
std::pair<BatchCounts, BatchCounts> RunUntilBatches(
    const ProviderEnv &env, std::mt19937_64 &rng, size_t record_len,
    std::chrono::milliseconds patience) {
  const BatchCounts before = Counts(env);
  const auto deadline = std::chrono::steady_clock::now() + patience;
  EncryptRecordsFromThreads(env, rng, kManyThreads, record_len, [&] {
    return Counts(env).batches >= before.batches + 20 ||
           std::chrono::steady_clock::now() >= deadline;
  });
  return {before, Counts(env)};
}

TEST_P(BatchTest, ManyThreadsOnFewCpusFormBatches) {
  if (UsableCpus() >= kManyThreads) {
    GTEST_SKIP() << "needs fewer CPUs than " << kManyThreads << " threads";
  }
  const auto [before, after] =
      RunUntilBatches(*env_, rng_, 16384, std::chrono::seconds(20));
  EXPECT_GE(after.batches, before.batches + 20);
  EXPECT_GT(after.lanes - before.lanes, 2 * (after.batches - before.batches))
      << "more than two lanes per batch on average";
}

// With the default cbc.mb_threads_min_len (8K), threads beyond the CPUs never
// batch a shorter record: each runs at once on the single-stream kernel (the
// simd path), which beats waiting for a combiner there (BENCHMARKS.md, "How
// much do multi-buffer lanes and threads gain?"); records of at least the
// floor batch as before.
TEST_P(BatchTest, ThreadsBatchOnlyRecordsFromTheThreadsFloor) {
  if (UsableCpus() >= kManyThreads) {
    GTEST_SKIP() << "needs fewer CPUs than " << kManyThreads << " threads";
  }
  std::string error;
  const auto env = LoadAesmux(GetParam(), &error);
  ASSERT_NE(env, nullptr) << error;
  for (const size_t record_len : {size_t{16}, size_t{1024}, size_t{8176}}) {
    SCOPED_TRACE(::testing::Message() << record_len << "-byte records");
    const auto [before, after] = RunUntilBatches(
        *env, rng_, record_len, std::chrono::milliseconds(500));
    EXPECT_EQ(after.mb_requests, before.mb_requests);
    EXPECT_EQ(after.batches, before.batches);
    EXPECT_GT(after.simd_requests, before.simd_requests);
  }
  const auto [before, after] =
      RunUntilBatches(*env, rng_, 8192, std::chrono::seconds(20));
  EXPECT_GE(after.batches, before.batches + 20) << "8192-byte records";
  EXPECT_GT(after.mb_requests, before.mb_requests) << "8192-byte records";
}

TEST_P(BatchTest, ALoneCallerRunsAtOnceOnTheSingleStreamKernel) {
  const BatchCounts before = Counts(*env_);
  for (int i = 0; i < 20; ++i) {
    const Stream stream = MakeStream(*env_, rng_, 64);
    EXPECT_EQ(ToHex(EncryptThroughAesmux(*env_, stream)),
              ToHex(stream.expected));
  }
  const BatchCounts after = Counts(*env_);
  EXPECT_EQ(after.mb_requests, before.mb_requests);
  EXPECT_EQ(after.batches, before.batches);
  EXPECT_GT(after.simd_requests, before.simd_requests);
}

INSTANTIATE_TEST_SUITE_P(Kernels, BatchTest, ::testing::ValuesIn(MultiBufferConfigs()),
                         KernelConfigName);
// A build without kernels (kernels/tiers.h: not x86-64) has no tier and no
// lanes to batch in.
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(BatchTest);

}  // namespace
}  // namespace aesmux::test
