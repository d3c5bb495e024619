// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
// fork() while other threads encrypt: the child has only the forking
// thread, and inherits whatever state the others left in aesmux (the thread
// combiner's shards, lane managers, published requests). A child must work
// as one using the default provider would: finish, agree with it, and
// never run a request a parent thread published.
#include <gtest/gtest.h>
#include <link.h>
#include <openssl/async.h>
#include <openssl/evp.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "tests/provider/cbc_streams.h"
#include "tests/support/child.h"
#include "tests/support/random_message.h"

namespace aesmux::test {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

// A child that hangs is killed after this long (its work takes
// milliseconds).
constexpr milliseconds kChildTimeout = seconds(20);

// Why a test that forks while another thread of it allocates is skipped
// where that can hang (kForkWhileAllocatingHangs).
constexpr const char kForkWhileAllocatingSkip[] =
    "the sanitizers' allocator does not guard its locks across fork(): a "
    "child forked while the thread allocates can hang in it "
    "(tests/support/child.h)";

// Threads that keep encrypting 1 KiB records through aesmux, each in its
// own CBC stream, until stopped; then each stream is checked against the
// default provider.
class Encryptors {
 public:
  Encryptors(const ProviderEnv &env, int threads, uint64_t seed)
      : env_(env), workers_(threads), parking_(threads) {
    std::mt19937_64 rng(seed);
    for (Worker &worker : workers_) {
      worker.key = RandomBytes(rng, 16);
      worker.iv = RandomBytes(rng, 16);
    }
    record_ = RandomBytes(rng, 1024);
    cipher_ = env.Aesmux("AES-128-CBC");
    for (Worker &worker : workers_) {
      pool_.emplace_back([this, &worker] {
        worker.digest =
            EncryptRecords(cipher_.get(), worker.key, worker.iv, record_,
                           worker.records, &stop_,
                           [this] { parking_.Pause(); });
        parking_.Leave();  // early if a call failed
      });
    }
  }

  // RunInChild while the threads encrypt, parked between records where the
  // sanitizers need it (ForkParking).
  std::string Fork(const std::function<int()> &body,
                   std::chrono::milliseconds timeout) {
    return parking_.Fork(body, timeout);
  }

  // Stops the threads and checks every stream.
  void StopAndCheck() {
    stop_ = true;
    for (std::thread &thread : pool_) thread.join();
    CipherPtr reference = env_.Default("AES-128-CBC");
    for (size_t t = 0; t < workers_.size(); ++t) {
      uint64_t count = workers_[t].records;
      EXPECT_EQ(EncryptRecords(reference.get(), workers_[t].key,
                               workers_[t].iv, record_, count, nullptr),
                workers_[t].digest)
          << "thread " << t << ", " << workers_[t].records << " records";
    }
  }

 private:
  struct Worker {
    Bytes key, iv;
    uint64_t records = 0, digest = 0;
  };
  const ProviderEnv &env_;
  std::vector<Worker> workers_;
  Bytes record_;
  CipherPtr cipher_;
  std::atomic<bool> stop_{false};
  ForkParking parking_;
  std::vector<std::thread> pool_;
};

// The child's work: CBC streams through aesmux on its one thread, then
// from more threads than CPUs at once (so that they combine; ThreadsInAChild
// permitting); 0 if every stream agrees with the default provider.
int EncryptInChild(const ProviderEnv &env, uint64_t seed) {
  std::mt19937_64 rng(seed);
  for (int i = 0; i < 8; ++i) {
    const Stream stream = MakeStream(env, rng, 64);
    if (EncryptThroughAesmux(env, stream) != stream.expected) return 1;
  }
  const int threads = ThreadsInAChild(2 * UsableCpus() + 1);
  std::vector<Stream> streams;
  for (int t = 0; t < threads; ++t) {
    streams.push_back(MakeStream(env, rng, 64, 32));
  }
  std::atomic<int> mismatches{0};
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      if (EncryptThroughAesmux(env, streams[t]) != streams[t].expected) {
        ++mismatches;
      }
    });
  }
  for (std::thread &thread : pool) thread.join();
  return mismatches == 0 ? 0 : 2;
}

class ForkTest : public MultiBufferTest {};

// The audit's case: 4 threads encrypting 1 KiB records on 2 CPUs; every
// child used to wait forever for a combiner that was a parent thread.
TEST_P(ForkTest, AChildOfEncryptingThreadsFinishesAndAgrees) {
  const int threads = std::max(4, 2 * UsableCpus());
  Encryptors encryptors(*env_, threads, 0xf02c);
  std::this_thread::sleep_for(milliseconds(50));
  for (int i = 0; i < 10; ++i) {
    EXPECT_EQ(encryptors.Fork([&] { return EncryptInChild(*env_, i); },
                              kChildTimeout),
              "")
        << "child " << i;
    std::this_thread::sleep_for(milliseconds(5));
  }
  encryptors.StopAndCheck();
}

// Threads of every algorithm, random lengths and updates (CBC encryptions
// batched among them), and forks while they run; parent, children and
// grandchildren all keep working and agree with the default provider.
// AESMUX_TEST_STRESS_SECONDS makes it run longer.
TEST_P(ForkTest, ThreadsAndForksStress) {
  const CipherSet ciphers(*env_);
  ASSERT_TRUE(ciphers.complete());
  const auto duration = StressDuration(seconds(2));
  std::mt19937_64 rng(0x5f0c);
  Checkers checkers(ciphers, 2 * UsableCpus() + 2, rng());
  int children = 0;
  const auto deadline = std::chrono::steady_clock::now() + duration;
  while (std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(milliseconds(10 + rng() % 40));
    const uint64_t seed = rng();
    const int depth = static_cast<int>(rng() % 2);
    EXPECT_EQ(checkers.Fork(
                  [&] {
                    return StressInChild(ciphers, UsableCpus() + 2, seed,
                                         depth, kChildTimeout);
                  },
                  kChildTimeout),
              "")
        << "child " << children << " (seed " << seed << ")";
    ++children;
  }
  EXPECT_EQ(checkers.Stop(), "");
  std::printf("%d children forked while %llu messages were checked\n",
              children, static_cast<unsigned long long>(checkers.messages()));
}

// Whether a module loaded from `path` is mapped in this process.
bool Mapped(const std::string &path) {
  struct Search {
    const std::string *path;
    bool found = false;
  } search{&path};
  dl_iterate_phdr(
      [](dl_phdr_info *info, size_t, void *data) {
        auto *search = static_cast<Search *>(data);
        if (info->dlpi_name != nullptr && *search->path == info->dlpi_name) {
          search->found = true;
        }
        return 0;
      },
      &search);
  return search.found;
}

int EncryptInAsyncJob(void *arg) {
  const ProviderEnv &env = **static_cast<const ProviderEnv **>(arg);
  std::mt19937_64 rng(7);
  const Stream stream = MakeStream(env, rng, 64);
  return EncryptThroughAesmux(env, stream) == stream.expected ? 1 : 0;
}

// aesmux registers fork handlers; OpenSSL unloads aesmux.so when the last
// provider instance goes. A handler left registered in an unmapped module
// would crash every later fork(). glibc drops a module's handlers when it
// is unloaded; a module that has served a request stays loaded for the
// process (core/thread_exit.h: a thread's per-thread objects are released
// by aesmux's code when the thread exits), with its handlers. Forking
// works after either.
TEST(ForkAfterUnload, ForkingAfterAesmuxIsUnloadedCallsNothingInIt) {
  // A copy of the module: this process may keep the original mapped for
  // good (a thread that used it has thread-local state in it).
  const std::string copy = (std::filesystem::temp_directory_path() /
                            ("aesmux-unload-" + std::to_string(getpid()) +
                             ".so"))
                               .string();
  std::filesystem::copy_file(ModulePath(), copy,
                             std::filesystem::copy_options::overwrite_existing);
  const std::string unused = copy + ".unused.so";
  std::filesystem::copy_file(ModulePath(), unused,
                             std::filesystem::copy_options::overwrite_existing);
  const std::string result = RunInChild(
      [&] {
        setenv("AESMUX_TEST_MODULE", copy.c_str(), 1);
        std::unique_ptr<ProviderEnv> env;
        // Used from a thread that ends before the unload, so that no
        // thread-local state keeps the module mapped; an ASYNC job and
        // batching threads make every part register what it registers.
        std::thread([&] {
          env = std::make_unique<ProviderEnv>();
          if (!env->loaded() || !ASYNC_init_thread(1, 1)) return;
          ASYNC_JOB *job = nullptr;
          ASYNC_WAIT_CTX *wait = ASYNC_WAIT_CTX_new();
          int ret = 0;
          const ProviderEnv *arg = env.get();
          while (ASYNC_start_job(&job, wait, &ret, EncryptInAsyncJob, &arg,
                                 sizeof(arg)) == ASYNC_PAUSE) {
          }
          ASYNC_WAIT_CTX_free(wait);
          ASYNC_cleanup_thread();
        }).join();
        if (!env->loaded()) return 2;
        if (!Mapped(copy)) return 3;
        env.reset();
        if (!Mapped(copy)) return 4;  // it has served: it stays
        if (!RunInChild([] { return 0; }).empty()) return 5;
        // Loaded and unloaded without serving: unmapped, its handlers
        // dropped with it.
        setenv("AESMUX_TEST_MODULE", unused.c_str(), 1);
        std::thread([] { ProviderEnv unused_env; }).join();
        if (Mapped(unused)) return 6;  // the fork below would prove nothing
        return RunInChild([] { return 0; }).empty() ? 0 : 7;
      },
      kChildTimeout);
  std::filesystem::remove(copy);
  std::filesystem::remove(unused);
  EXPECT_EQ(result, "");
}

// The fallback path's library context is made by the first request that
// needs it. A fork while another thread makes it must not leave the child
// waiting for that thread: each round loads aesmux afresh (kernels = none:
// every request takes the fallback path), starts a thread whose request
// makes the library, and forks at a random moment of it; the child's own
// request must finish and agree with the default provider. (Everything
// the test itself fetches is fetched before the thread starts: OpenSSL
// does not guard its own locks across fork().)
TEST(ForkWhileMakingTheFallback, AChildForkedMeanwhileServesItsRequests) {
  if (kForkWhileAllocatingHangs) GTEST_SKIP() << kForkWhileAllocatingSkip;
  std::mt19937_64 rng(0xfa11);
  for (int round = 0; round < 40; ++round) {
    ProviderEnv env({"kernels = none"});
    ASSERT_TRUE(env.loaded()) << env.error();
    const Stream parents = MakeStream(env, rng, 4, 1);
    const Stream childs = MakeStream(env, rng, 4, 1);
    const CipherPtr parent_cipher = env.Aesmux(parents.algorithm);
    const CipherPtr child_cipher = env.Aesmux(childs.algorithm);
    bool parent_agrees = false;
    std::thread maker([&] {
      parent_agrees =
          EncryptThrough(parent_cipher.get(), parents) == parents.expected;
    });
    std::this_thread::sleep_for(std::chrono::microseconds(rng() % 2000));
    // A hang is what this looks for; the bound leaves room for the child
    // making its own library context in the arm64 VM's emulated CPU.
    EXPECT_EQ(RunInChild(
                  [&] {
                    return EncryptThrough(child_cipher.get(), childs) ==
                                   childs.expected
                               ? 0
                               : 1;
                  },
                  seconds(30)),
              "")
        << "round " << round;
    maker.join();
    EXPECT_TRUE(parent_agrees) << "round " << round;
  }
}

// Each family's offload path is settled (the probe run, its findings
// written) by the first request that asks for it, under a lock. A fork
// while another thread settles must not leave the child waiting for that
// lock or reading findings half written: each round loads aesmux afresh
// (every family unsettled), starts a thread whose requests settle the
// families one after another, and forks at a random moment of it; the
// child's own requests, in every algorithm, must finish and agree with the
// default provider.
TEST(ForkWhileSettlingTheOffloadPath, AChildForkedMeanwhileServesItsRequests) {
  if (kForkWhileAllocatingHangs) GTEST_SKIP() << kForkWhileAllocatingSkip;
  std::mt19937_64 rng(0x5e77);
  for (int round = 0; round < 60; ++round) {
    ProviderEnv env;
    ASSERT_TRUE(env.loaded()) << env.error();
    const CipherSet ciphers(env);
    ASSERT_TRUE(ciphers.complete());
    const uint64_t parent_seed = rng(), child_seed = rng();
    std::string parent_failure;
    std::thread settler([&] {
      std::mt19937_64 messages(parent_seed);
      for (int i = 0; i < 40 && parent_failure.empty(); ++i) {
        parent_failure = CheckRandomMessage(ciphers, messages, 64);
      }
    });
    std::this_thread::sleep_for(std::chrono::microseconds(rng() % 400));
    EXPECT_EQ(RunInChild(
                  [&] {
                    std::mt19937_64 messages(child_seed);
                    for (int i = 0; i < 40; ++i) {
                      if (!CheckRandomMessage(ciphers, messages, 64).empty()) {
                        return 1;
                      }
                    }
                    return 0;
                  },
                  seconds(30)),
              "")
        << "round " << round;
    settler.join();
    EXPECT_EQ(parent_failure, "") << "round " << round;
  }
}

INSTANTIATE_TEST_SUITE_P(Kernels, ForkTest,
                         ::testing::ValuesIn(MultiBufferConfigs()),
                         KernelConfigName);
// A build without kernels (aarch64) has no multi-buffer configuration:
// nothing is batched there, and the afalg suite's fork cases cover the rest.
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(ForkTest);

}  // namespace
}  // namespace aesmux::test
