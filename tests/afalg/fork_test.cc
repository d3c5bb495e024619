// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
// Fork after use: sockets and rings belong to the process that made them.
// By default (afalg_fork = off) a child never touches the afalg path — not
// even a syscall: it survives a seccomp filter that kills on any of them,
// as OpenSSH's pre-authentication child would — and its requests are
// served by the CPU, counted as "forked". With afalg_fork = rebuild the
// child makes its own sockets and ring; the parent goes on with its own.
// An ASYNC job paused with its request in the ring at the fork completes
// in both, and the fork does not wait for it; threads using the path while
// the process forks, and their children, agree with the default provider,
// also when the parent writes beside their outputs right after the fork.
#include <gtest/gtest.h>
#include <openssl/async.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "tests/afalg/afalg_support.h"
#include "tests/support/async_update.h"
#include "tests/support/random_message.h"

namespace aesmux::test {
namespace {

constexpr const char *kAlg = "AES-128-CBC";

// Encrypts 8 KiB with aesmux and the default provider; true if they agree.
bool EncryptAgrees(const ProviderEnv &env, uint64_t seed) {
  std::mt19937_64 rng(seed);
  const Bytes key = RandomBytes(rng, 16), iv = RandomBytes(rng, 16),
              plain = RandomBytes(rng, 8192);
  CipherPtr ours = env.Aesmux(kAlg), theirs = env.Default(kAlg);
  const Bytes a = EvpCrypt(ours.get(), key, iv, plain, true, {}, true);
  const Bytes b = EvpCrypt(theirs.get(), key, iv, plain, true, {}, false);
  return !a.empty() && a == b;
}

TEST(AfalgFork, AChildLeavesThePathAloneByDefault) {
  SKIP_WITHOUT_AFALG();
  const std::string result = RunInChild([] {
    auto env = LoadAfalgEnv({"afalg = force"});
    if (!env->loaded() || !EncryptAgrees(*env, 1)) return 2;
    if (env->Stat(kAlg, "afalg", "requests") == 0) return 3;
    const std::string grandchild = RunInChild([&] {
      if (!InstallSeccompFilter(Deny::kKill, true, AfalgSyscalls())) return 4;
      if (!EncryptAgrees(*env, 2) || !EncryptAgrees(*env, 3)) return 5;
      if (env->Stat(kAlg, "afalg", "requests") != 0) return 6;
      return env->Stat(kAlg, "afalg-fallback:forked", "requests") == 2 ? 0 : 7;
    });
    if (!grandchild.empty()) {
      std::fprintf(stderr, "child of the child: %s\n", grandchild.c_str());
      return 8;
    }
    // The parent's sockets and ring still work.
    const uint64_t served = env->Stat(kAlg, "afalg", "requests");
    if (!EncryptAgrees(*env, 4)) return 9;
    return env->Stat(kAlg, "afalg", "requests") == served + 1 ? 0 : 10;
  });
  EXPECT_EQ(result, "");
}

TEST(AfalgFork, AChildRebuildsItsOwnWhenAllowed) {
  SKIP_WITHOUT_AFALG();
  const std::string result = RunInChild([] {
    auto env = LoadAfalgEnv({"afalg = force", "afalg_fork = rebuild"});
    if (!env->loaded() || !EncryptAgrees(*env, 1)) return 2;
    const std::string grandchild = RunInChild([&] {
      if (!EncryptAgrees(*env, 2) || !EncryptAgrees(*env, 3)) return 5;
      return env->Stat(kAlg, "afalg", "requests") == 2 ? 0 : 6;
    });
    if (!grandchild.empty()) {
      std::fprintf(stderr, "child of the child: %s\n", grandchild.c_str());
      return 8;
    }
    const uint64_t served = env->Stat(kAlg, "afalg", "requests");
    if (!EncryptAgrees(*env, 4)) return 9;
    return env->Stat(kAlg, "afalg", "requests") == served + 1 ? 0 : 10;
  });
  EXPECT_EQ(result, "");
}

// Each provider keeps its own afalg_fork: another one loaded in the same
// process with afalg_fork = rebuild (before or beside it) does not make
// this one's children open sockets.
TEST(AfalgFork, EachProviderKeepsItsOwnForkPolicy) {
  SKIP_WITHOUT_AFALG();
  const std::string result = RunInChild([] {
    auto rebuilds =
        LoadAfalgEnv({"afalg = force", "afalg_fork = rebuild"});
    auto stays = LoadAfalgEnv({"afalg = force"});
    if (!rebuilds->loaded() || !stays->loaded()) return 2;
    if (!EncryptAgrees(*rebuilds, 1) || !EncryptAgrees(*stays, 2)) return 3;
    const std::string grandchild = RunInChild([&] {
      if (!InstallSeccompFilter(Deny::kKill, true, AfalgSyscalls())) return 4;
      if (!EncryptAgrees(*stays, 3)) return 5;
      if (stays->Stat(kAlg, "afalg", "requests") != 0) return 6;
      return stays->Stat(kAlg, "afalg-fallback:forked", "requests") == 1 ? 0
                                                                         : 7;
    });
    if (!grandchild.empty()) {
      std::fprintf(stderr, "child of the child: %s\n", grandchild.c_str());
      return 8;
    }
    return 0;
  });
  EXPECT_EQ(result, "");
}

constexpr std::chrono::seconds kChildTimeout(60);  // TCG is slow

// A job paused with its request in the parent's ring when the process
// forks: resumed in the child, it leaves the parent's ring alone and runs
// on the CPU (counted as forked), with or without afalg_fork = rebuild;
// resumed in the parent, it completes on the kernel. Both agree with the
// default provider.
TEST(AfalgFork, AJobPausedAtTheForkCompletesInChildAndParent) {
  SKIP_WITHOUT_AFALG();
  for (const char *fork_policy : {"off", "rebuild"}) {
    SCOPED_TRACE(fork_policy);
    const std::string result = RunInChild(
        [&] {
          auto env = LoadAfalgEnv(
              {"afalg = force", std::string("afalg_fork = ") + fork_policy});
          if (!env->loaded() || !ASYNC_init_thread(0, 0)) return 2;
          CipherPtr ours = env->Aesmux(kAlg), theirs = env->Default(kAlg);
          std::mt19937_64 rng(11);
          AsyncUpdate update(ours.get(), rng, 16384);
          if (update.Step() != ASYNC_PAUSE) return 3;
          const Bytes expected =
              EncryptWith(theirs.get(), update.key, update.iv, update.in);
          const std::string child = RunInChild(
              [&] {
                if (!update.RunToEnd() || update.out != expected) return 4;
                return env->Stat(kAlg, "afalg-fallback:forked", "requests") ==
                               1
                           ? 0
                           : 5;
              },
              kChildTimeout);
          if (!child.empty()) {
            std::fprintf(stderr, "child of the child: %s\n", child.c_str());
            return 6;
          }
          const uint64_t served = env->Stat(kAlg, "afalg", "requests");
          if (!update.RunToEnd() || update.out != expected) return 7;
          if (env->Stat(kAlg, "afalg", "requests") != served + 1) return 8;
          ASYNC_cleanup_thread();
          return 0;
        },
        kChildTimeout);
    EXPECT_EQ(result, "");
  }
}

// Forks the process `times` times, each child exiting at once; the
// shortest time fork() took in the parent.
std::chrono::steady_clock::duration ShortestFork(int times) {
  auto shortest = std::chrono::steady_clock::duration::max();
  for (int i = 0; i < times; ++i) {
    const auto start = std::chrono::steady_clock::now();
    const pid_t pid = fork();
    if (pid == 0) _exit(0);
    shortest = std::min(shortest, std::chrono::steady_clock::now() - start);
    if (pid > 0) waitpid(pid, nullptr, 0);
  }
  return shortest;
}

// fork() does not wait for the kernel: not even for a request whose ASYNC
// job is paused, which the process sees done only when the job comes back
// (the kernel's output goes to memory the child does not get, ring.h).
// Resumed after the forks, the job's output is right.
TEST(AfalgFork, ForkDoesNotWaitForRequestsInTheKernel) {
  SKIP_WITHOUT_AFALG();
  const std::string result = RunInChild(
      [] {
        auto env = LoadAfalgEnv({"afalg = force"});
        if (!env->loaded() || !ASYNC_init_thread(0, 0)) return 2;
        CipherPtr ours = env->Aesmux(kAlg), theirs = env->Default(kAlg);
        std::mt19937_64 rng(12);
        // A job paused with its request in the kernel (on virtio-crypto in
        // the VM suites, an asynchronous driver): queued at its first step,
        // submitted at its second, which the kernel may also complete at
        // once (then another message).
        std::unique_ptr<AsyncUpdate> update;
        for (int attempt = 0; attempt < 20 && update == nullptr; ++attempt) {
          auto candidate =
              std::make_unique<AsyncUpdate>(ours.get(), rng, 32768);
          if (candidate->Step() != ASYNC_PAUSE) return 3;
          const int step = candidate->Step();
          if (step == ASYNC_PAUSE) {
            update = std::move(candidate);
          } else if (step != ASYNC_FINISH) {
            return 3;
          }
        }
        if (update == nullptr) return 7;
        const auto shortest = ShortestFork(3);
        const Bytes expected =
            EncryptWith(theirs.get(), update->key, update->iv, update->in);
        if (!update->RunToEnd() || update->out != expected) return 4;
        if (env->Stat(kAlg, "afalg", "requests") == 0) return 5;
        update.reset();
        ASYNC_cleanup_thread();
        const auto ms =
            std::chrono::duration_cast<std::chrono::milliseconds>(shortest);
        std::printf("the shortest of 3 forks took %lld ms\n",
                    static_cast<long long>(ms.count()));
        return ms < std::chrono::milliseconds(100) ? 0 : 6;
      },
      kChildTimeout);
  EXPECT_EQ(result, "");
}

// One EVP_EncryptUpdate in an ASYNC job (JobsQueuedDeep).
struct JobUpdate {
  EVP_CIPHER_CTX *ctx = nullptr;
  uint8_t *out = nullptr;
  const uint8_t *in = nullptr;
  int len = 0;
  bool ok = false;
};

int RunJobUpdate(void *arg) {
  JobUpdate *update = *static_cast<JobUpdate **>(arg);
  int out_len = 0;
  update->ok = EVP_EncryptUpdate(update->ctx, update->out, &out_len, update->in,
                                 update->len) == 1 &&
               out_len == update->len;
  return 1;
}

// Rounds of sixteen ASYNC jobs whose requests are submitted together and
// queued deep on the driver (virtio-crypto's in the VM suites runs them one
// at a time); a little later the process forks, and the parent writes beside
// every output, in its first and last pages, then resumes the jobs: every
// output is the default provider's. AESMUX_TEST_STRESS_SECONDS makes it run
// longer.
TEST(AfalgFork, ParentWritesBesideQueuedJobsOutputsAtAFork) {
  SKIP_WITHOUT_AFALG();
  const std::string result = RunInChild(
      [] {
        auto env = LoadAfalgEnv({"afalg = force"});
        if (!env->loaded() || !ASYNC_init_thread(0, 0)) return 2;
        CipherPtr ours = env->Aesmux(kAlg), theirs = env->Default(kAlg);
        constexpr int kJobs = 16;
        constexpr size_t kLen = 60 * 1024;
        constexpr size_t kBeside = 64;
        constexpr size_t kStride = kLen + 2 * 4096;  // page-aligned
        void *memory = mmap(nullptr, kJobs * kStride, PROT_READ | PROT_WRITE,
                            MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (memory == MAP_FAILED) return 3;
        auto *region = static_cast<uint8_t *>(memory);
        std::mt19937_64 rng(13);
        std::array<JobUpdate, kJobs> updates;
        std::array<JobUpdate *, kJobs> args;
        std::array<CipherCtxPtr, kJobs> ctxs;
        std::array<Bytes, kJobs> ins, ivs, expected;
        std::array<ASYNC_JOB *, kJobs> jobs{};
        std::array<ASYNC_WAIT_CTX *, kJobs> waits{};
        for (int j = 0; j < kJobs; ++j) {
          const Bytes key = RandomBytes(rng, 16);
          ivs[j] = RandomBytes(rng, 16);
          ins[j] = RandomBytes(rng, kLen);
          expected[j] = EncryptWith(theirs.get(), key, ivs[j], ins[j]);
          ctxs[j] = NewCipherCtx();
          if (!EVP_EncryptInit_ex2(ctxs[j].get(), ours.get(), key.data(),
                                   ivs[j].data(), nullptr) ||
              !EVP_CIPHER_CTX_set_padding(ctxs[j].get(), 0)) {
            return 4;
          }
          updates[j] = {ctxs[j].get(), region + j * kStride + kBeside,
                        ins[j].data(), static_cast<int>(kLen), false};
          args[j] = &updates[j];
          waits[j] = ASYNC_WAIT_CTX_new();
        }
        std::array<bool, kJobs> finished{};
        const auto step = [&](int j) {
          int ret = 0;
          const int status =
              ASYNC_start_job(&jobs[j], waits[j], &ret, RunJobUpdate, &args[j],
                              sizeof(args[j]));
          if (status == ASYNC_FINISH) finished[j] = true;
          return status == ASYNC_FINISH || status == ASYNC_PAUSE;
        };
        int rounds = 0, wrong = 0;
        const auto end = std::chrono::steady_clock::now() +
                         StressDuration(std::chrono::seconds(2));
        while (std::chrono::steady_clock::now() < end) {
          for (int j = 0; j < kJobs; ++j) {
            std::memset(updates[j].out, 0, kLen);
            if (!EVP_EncryptInit_ex2(ctxs[j].get(), nullptr, nullptr,
                                     ivs[j].data(), nullptr)) {
              return 4;
            }
            finished[j] = false;
          }
          // Each job queues its request and pauses; the first one resumed
          // submits them all.
          for (int j = 0; j < kJobs; ++j) {
            if (!step(j)) return 5;
          }
          if (!step(0)) return 5;
          std::this_thread::sleep_for(std::chrono::microseconds(rng() % 3000));
          const pid_t pid = fork();
          if (pid == 0) _exit(0);
          for (int j = 0; j < kJobs; ++j) {
            region[j * kStride + kBeside - 1] ^= 1;
            region[j * kStride + kBeside + kLen] ^= 1;
          }
          if (pid < 0) return 6;
          const auto deadline =
              std::chrono::steady_clock::now() + kChildTimeout;
          for (int done = 0; done < kJobs;) {
            if (std::chrono::steady_clock::now() > deadline) return 7;
            done = 0;
            for (int j = 0; j < kJobs; ++j) {
              if (!finished[j] && !step(j)) return 8;
              done += finished[j];
            }
          }
          waitpid(pid, nullptr, 0);
          for (int j = 0; j < kJobs; ++j) {
            wrong += !updates[j].ok ||
                     std::memcmp(updates[j].out, expected[j].data(), kLen) != 0;
          }
          ++rounds;
        }
        for (ASYNC_WAIT_CTX *wait : waits) ASYNC_WAIT_CTX_free(wait);
        std::printf("%d rounds of %d jobs, %d outputs wrong\n", rounds, kJobs,
                    wrong);
        if (env->Stat(kAlg, "afalg", "requests") == 0) return 9;
        ASYNC_cleanup_thread();
        return wrong == 0 ? 0 : 10;
      },
      kChildTimeout);
  EXPECT_EQ(result, "");
}

// The parent writes beside its threads' outputs, in the same pages, right
// after each fork, while their requests are in the kernel: every output is
// still the default provider's (had the kernel written into those pages,
// the parent's write would have given it copies, and the output would have
// landed in the child's). AESMUX_TEST_STRESS_SECONDS makes it run longer.
TEST(AfalgFork, ParentWritesBesideOutputsInTheKernelAtAFork) {
  SKIP_WITHOUT_AFALG();
  auto env = LoadAfalgEnv({"afalg = force"});
  ASSERT_TRUE(env->loaded()) << env->error();
  CipherPtr ours = env->Aesmux(kAlg), theirs = env->Default(kAlg);
  constexpr int kThreads = 3;
  constexpr size_t kPage = 4096;
  constexpr size_t kBeside = 64;  // bytes before and after each output
  constexpr size_t kMaxLen = 60 * 1024;
  // One page-aligned region per thread: kBeside bytes, the output, and at
  // least kBeside bytes after it.
  struct Region {
    uint8_t *base = nullptr;
    std::atomic<size_t> len{0};  // of the output
  };
  std::array<Region, kThreads> regions;
  constexpr size_t kRegionLen =
      (2 * kBeside + kMaxLen + kPage - 1) & ~(kPage - 1);
  std::vector<void *> mappings;
  for (Region &region : regions) {
    void *memory = mmap(nullptr, kRegionLen, PROT_READ | PROT_WRITE,
                        MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    ASSERT_NE(memory, MAP_FAILED);
    region.base = static_cast<uint8_t *>(memory);
    mappings.push_back(memory);
  }
  std::atomic<bool> stop{false};
  std::atomic<uint64_t> messages{0}, wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      // A few messages, each with its context and the reference's output
      // made once: the loop spends its time on the afalg path.
      std::mt19937_64 rng(100 + t);
      struct Message {
        Bytes iv, in, expected;
        CipherCtxPtr ctx = NewCipherCtx();
      };
      std::array<Message, 4> sent;
      for (Message &message : sent) {
        const size_t len = (4096 + rng() % (kMaxLen - 4096)) & ~size_t{15};
        const Bytes key = RandomBytes(rng, 16);
        message.iv = RandomBytes(rng, 16);
        message.in = RandomBytes(rng, len);
        message.expected =
            EncryptWith(theirs.get(), key, message.iv, message.in);
        if (!EVP_EncryptInit_ex2(message.ctx.get(), ours.get(), key.data(),
                                 message.iv.data(), nullptr) ||
            !EVP_CIPHER_CTX_set_padding(message.ctx.get(), 0)) {
          wrong.fetch_add(1);
        }
      }
      uint8_t *const out = regions[t].base + kBeside;
      for (size_t i = 0; !stop.load(); ++i) {
        Message &message = sent[i % sent.size()];
        const size_t len = message.in.size();
        std::memset(out, 0, len);
        regions[t].len.store(len);
        int out_len = 0;
        if (!EVP_EncryptInit_ex2(message.ctx.get(), nullptr, nullptr,
                                 message.iv.data(), nullptr) ||
            !EVP_EncryptUpdate(message.ctx.get(), out, &out_len,
                               message.in.data(), static_cast<int>(len)) ||
            static_cast<size_t>(out_len) != len ||
            std::memcmp(out, message.expected.data(), len) != 0) {
          wrong.fetch_add(1);
        }
        messages.fetch_add(1);
      }
    });
  }
  // As many forks as the machine makes: the children, which exit at once,
  // are reaped a few at a time.
  int forks = 0, children = 0;
  const auto deadline = std::chrono::steady_clock::now() +
                        StressDuration(std::chrono::seconds(3));
  while (std::chrono::steady_clock::now() < deadline) {
    const pid_t pid = fork();
    if (pid == 0) _exit(0);
    // Beside every output, before and after (in its first and last pages).
    for (Region &region : regions) {
      region.base[kBeside - 1] ^= 1;
      region.base[kBeside + region.len.load()] ^= 1;
    }
    EXPECT_GT(pid, 0);
    if (pid < 0) break;
    ++forks;
    for (++children; children > 8 && waitpid(-1, nullptr, 0) > 0;) {
      --children;
    }
    while (children > 0 && waitpid(-1, nullptr, WNOHANG) > 0) --children;
  }
  for (; children > 0 && waitpid(-1, nullptr, 0) > 0;) --children;
  stop.store(true);
  for (std::thread &thread : threads) thread.join();
  for (void *mapping : mappings) munmap(mapping, kRegionLen);
  EXPECT_EQ(wrong.load(), 0u) << "of " << messages.load();
  EXPECT_GT(env->Stat(kAlg, "afalg", "requests"), 0u);
  std::printf("%d forks while %llu messages were checked\n", forks,
              static_cast<unsigned long long>(messages.load()));
}

// Threads of every algorithm, random lengths and updates on the afalg path,
// and forks while they run (with afalg_fork = rebuild the children use the
// path too, each on its own sockets and rings); parent, children and
// grandchildren all agree with the default provider. AESMUX_TEST_STRESS_SECONDS
// makes it run longer.
TEST(AfalgFork, ThreadsAndForksStress) {
  SKIP_WITHOUT_AFALG();
  for (const char *fork_policy : {"off", "rebuild"}) {
    SCOPED_TRACE(fork_policy);
    auto env = LoadAfalgEnv(
        {"afalg = force", std::string("afalg_fork = ") + fork_policy});
    ASSERT_TRUE(env->loaded()) << env->error();
    const CipherSet ciphers(*env);
    ASSERT_TRUE(ciphers.complete());
    std::mt19937_64 rng(0xf0a1);
    Checkers checkers(ciphers, 4, rng());
    int children = 0;
    const auto deadline = std::chrono::steady_clock::now() +
                          StressDuration(std::chrono::seconds(2));
    while (std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10 + rng() % 40));
      const uint64_t seed = rng();
      const int depth = static_cast<int>(rng() % 2);
      EXPECT_EQ(checkers.Fork(
                    [&] {
                      return StressInChild(ciphers, 3, seed, depth,
                                           kChildTimeout);
                    },
                    kChildTimeout),
                "")
          << "child " << children << " (seed " << seed << ")";
      ++children;
    }
    EXPECT_EQ(checkers.Stop(), "");
    EXPECT_GT(env->Stat("AES-128-CBC", "afalg", "requests"), 0u);
    std::printf("afalg_fork = %s: %d children forked while %llu messages "
                "were checked\n",
                fork_policy, children,
                static_cast<unsigned long long>(checkers.messages()));
  }
}

}  // namespace
}  // namespace aesmux::test
