// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
// Fork after use: sockets and rings belong to the process that made them.
// By default (afalg_fork = off) a child never touches the afalg path — not
// even a syscall: it survives a seccomp filter that kills on any of them,
// as OpenSSH's pre-authentication child would — and its requests are
// served by the CPU, counted as "forked". With afalg_fork = rebuild the
// child makes its own sockets and ring; the parent goes on with its own.
// An ASYNC job paused with its request in the ring at the fork completes
// in both; threads using the path while the process forks, and their
// children, agree with the default provider.
#include <gtest/gtest.h>
#include <openssl/async.h>

#include <chrono>
#include <cstdio>
#include <random>
#include <string>
#include <thread>

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

// Threads of every algorithm, random lengths and updates on the afalg path,
// and forks while they run (with afalg_fork = rebuild the children use the
// path too, each on its own sockets and rings); parent, children and
// grandchildren all agree with the default provider. AESMUX_STRESS_SECONDS
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
