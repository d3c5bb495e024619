// Multi-buffer batching of CBC encryption through EVP: many OpenSSL ASYNC
// jobs, and many threads, encrypt at once through aesmux; every output must
// equal the default provider's, batches must actually form (statistics),
// and a lone caller must not be batched.
#include <gtest/gtest.h>
#include <openssl/async.h>
#include <openssl/evp.h>
#include <sched.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <random>
#include <thread>
#include <vector>

#include "kernels/mb/lane_manager.h"
#include "tests/provider/kernel_configs.h"
#include "tests/support/bytes.h"
#include "tests/support/provider_env.h"

namespace aesmux::test {
namespace {

const char *const kCbcAlgorithms[] = {"AES-128-CBC", "AES-192-CBC",
                                      "AES-256-CBC"};

// One stream: a key, an IV and a few messages, with the default provider's
// ciphertext of the whole stream (CBC continues across updates).
struct Stream {
  const char *algorithm;
  Bytes key, iv;
  std::vector<Bytes> messages;
  Bytes expected;
};

Stream MakeStream(const ProviderEnv &env, std::mt19937_64 &rng,
                  size_t max_blocks) {
  Stream stream;
  stream.algorithm = kCbcAlgorithms[rng() % 3];
  CipherPtr reference = env.Default(stream.algorithm);
  stream.key = RandomBytes(rng, EVP_CIPHER_get_key_length(reference.get()));
  stream.iv = RandomBytes(rng, 16);
  const int count = 1 + rng() % 4;
  for (int i = 0; i < count; ++i) {
    stream.messages.push_back(RandomBytes(rng, 16 * (rng() % (max_blocks + 1))));
  }
  auto ctx = NewCipherCtx();
  EXPECT_TRUE(EVP_EncryptInit_ex2(ctx.get(), reference.get(), stream.key.data(),
                                  stream.iv.data(), nullptr));
  EVP_CIPHER_CTX_set_padding(ctx.get(), 0);
  for (const Bytes &message : stream.messages) {
    Bytes out(message.size());
    int len = 0;
    EXPECT_TRUE(EVP_EncryptUpdate(ctx.get(), out.data(), &len, message.data(),
                                  message.size()));
    stream.expected.insert(stream.expected.end(), out.begin(), out.end());
  }
  return stream;
}

// Encrypts `stream` through aesmux; returns the ciphertext.
Bytes EncryptThroughAesmux(const ProviderEnv &env, const Stream &stream) {
  CipherPtr cipher = env.Aesmux(stream.algorithm);
  auto ctx = NewCipherCtx();
  Bytes result;
  if (!EVP_EncryptInit_ex2(ctx.get(), cipher.get(), stream.key.data(),
                           stream.iv.data(), nullptr)) {
    return result;
  }
  EVP_CIPHER_CTX_set_padding(ctx.get(), 0);
  for (const Bytes &message : stream.messages) {
    Bytes out(message.size());
    int len = 0;
    if (!EVP_EncryptUpdate(ctx.get(), out.data(), &len, message.data(),
                           message.size())) {
      return {};
    }
    result.insert(result.end(), out.begin(), out.end());
  }
  return result;
}

struct BatchCounts {
  uint64_t mb_requests = 0, simd_requests = 0, batches = 0, lanes = 0;
};

BatchCounts Counts(const ProviderEnv &env) {
  BatchCounts counts;
  for (const char *alg : kCbcAlgorithms) {
    counts.mb_requests += env.Stat(alg, "mb", "requests");
    counts.simd_requests += env.Stat(alg, "simd", "requests");
    counts.batches += env.Stat(alg, "mb.batches");
    counts.lanes += env.Stat(alg, "mb.lanes");
  }
  return counts;
}

class BatchTest : public ::testing::TestWithParam<KernelConfig> {
 protected:
  void SetUp() override {
    const std::string unsupported = UnsupportedReason(GetParam());
    if (!unsupported.empty()) GTEST_SKIP() << unsupported;
    if (kernels::mb::MbTierByName(GetParam().kernels) == nullptr) {
      GTEST_SKIP() << "tier " << GetParam().kernels
                   << " has no multi-buffer kernels";
    }
    std::string error;
    env_ = LoadAesmux(GetParam(), &error);
    ASSERT_NE(env_, nullptr) << error;
  }

  std::unique_ptr<ProviderEnv> env_;
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

TEST_P(BatchTest, ThreadsAreCombinedAndAgreeWithTheDefaultProvider) {
  for (int threads : {2, 8, 32}) {
    SCOPED_TRACE(threads);
    constexpr int kStreamsPerThread = 12;
    std::vector<std::vector<Stream>> streams(threads);
    for (auto &list : streams) {
      for (int s = 0; s < kStreamsPerThread; ++s) {
        list.push_back(MakeStream(*env_, rng_, 256));
      }
    }
    std::vector<std::vector<Bytes>> results(threads,
                                            std::vector<Bytes>(kStreamsPerThread));
    std::atomic<bool> go{false};
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t) {
      pool.emplace_back([&, t] {
        while (!go.load()) std::this_thread::yield();
        for (int s = 0; s < kStreamsPerThread; ++s) {
          results[t][s] = EncryptThroughAesmux(*env_, streams[t][s]);
        }
      });
    }
    go = true;
    for (std::thread &thread : pool) thread.join();
    for (int t = 0; t < threads; ++t) {
      for (int s = 0; s < kStreamsPerThread; ++s) {
        EXPECT_EQ(ToHex(results[t][s]), ToHex(streams[t][s].expected))
            << "thread " << t << " stream " << s;
      }
    }
  }
}

// FNV-1a over `bytes`, continuing from `digest`.
uint64_t Fold(uint64_t digest, const uint8_t *bytes, size_t len) {
  for (size_t i = 0; i < len; ++i) {
    digest = (digest ^ bytes[i]) * 0x100000001b3ull;
  }
  return digest;
}

// Encrypts `record` `count` times in one CBC stream through `cipher`
// (count == 0: until `stop`); returns the FNV-1a of the ciphertext and sets
// `count` to the records encrypted.
uint64_t EncryptRecords(EVP_CIPHER *cipher, const Bytes &key, const Bytes &iv,
                        const Bytes &record, uint64_t &count,
                        const std::atomic<bool> *stop) {
  auto ctx = NewCipherCtx();
  uint64_t digest = 0xcbf29ce484222325ull;
  if (!EVP_EncryptInit_ex2(ctx.get(), cipher, key.data(), iv.data(),
                           nullptr)) {
    return 0;
  }
  EVP_CIPHER_CTX_set_padding(ctx.get(), 0);
  Bytes out(record.size());
  uint64_t done = 0;
  while (stop != nullptr ? !stop->load() || done == 0 : done < count) {
    int len = 0;
    if (!EVP_EncryptUpdate(ctx.get(), out.data(), &len, record.data(),
                           static_cast<int>(record.size()))) {
      return 0;
    }
    digest = Fold(digest, out.data(), out.size());
    ++done;
  }
  count = done;
  return digest;
}

TEST_P(BatchTest, ManyThreadsOnFewCpusFormBatches) {
  constexpr int kThreads = 32;
  cpu_set_t cpus;
  if (sched_getaffinity(0, sizeof(cpus), &cpus) != 0 ||
      CPU_COUNT(&cpus) >= kThreads) {
    GTEST_SKIP() << "needs fewer CPUs than " << kThreads << " threads";
  }
  // Threads that keep encrypting 16 KiB records, like TLS senders, until
  // batches have formed: callers outnumber the CPUs once the scheduler
  // preempts some of them inside aesmux.
  struct Worker {
    Bytes key, iv;
    uint64_t records = 0, digest = 0;
  };
  std::vector<Worker> workers(kThreads);
  for (Worker &worker : workers) {
    worker.key = RandomBytes(rng_, 16);
    worker.iv = RandomBytes(rng_, 16);
  }
  const Bytes record = RandomBytes(rng_, 16384);
  CipherPtr ours = env_->Aesmux("AES-128-CBC");
  const BatchCounts before = Counts(*env_);
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
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (Counts(*env_).batches < before.batches + 20 &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  stop = true;
  for (std::thread &thread : pool) thread.join();
  const BatchCounts after = Counts(*env_);
  EXPECT_GE(after.batches, before.batches + 20);
  EXPECT_GT(after.lanes - before.lanes, 2 * (after.batches - before.batches))
      << "more than two lanes per batch on average";
  CipherPtr reference = env_->Default("AES-128-CBC");
  for (int t = 0; t < kThreads; ++t) {
    uint64_t count = workers[t].records;
    EXPECT_EQ(EncryptRecords(reference.get(), workers[t].key, workers[t].iv,
                             record, count, nullptr),
              workers[t].digest)
        << "thread " << t << ", " << workers[t].records << " records";
  }
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

std::vector<KernelConfig> Unrouted() {
  std::vector<KernelConfig> configs;
  for (const KernelConfig &config : AllKernelConfigs()) {
    if (!config.routes() && config.kernels != "none") configs.push_back(config);
  }
  return configs;
}

INSTANTIATE_TEST_SUITE_P(Kernels, BatchTest, ::testing::ValuesIn(Unrouted()),
                         KernelConfigName);
// A build without kernels (kernels/tiers.h: not x86-64) has no tier and no
// lanes to batch in.
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(BatchTest);

}  // namespace
}  // namespace aesmux::test
