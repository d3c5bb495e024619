// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
// Processes where AF_ALG or io_uring is denied (before load, after it, or
// for threads that start after it) keep working on the other paths, with
// no error reaching the caller, and say why the path is off.
// The first test runs on any kernel: with the default configuration, after
// the provider has loaded, no request may issue a socket or io_uring
// syscall, nor the CPU count or a yield (a seccomp filter kills the process
// if one does).
#include <gtest/gtest.h>
#include <openssl/err.h>
#include <sys/syscall.h>

#include <random>
#include <thread>
#include <vector>

#include "provider/core/algorithm.h"
#include "tests/afalg/afalg_support.h"

namespace aesmux::test {
namespace {

// Every algorithm through aesmux against the default provider; 0 if all
// agree and nothing reached the error queue.
int EveryAlgorithmAgrees(const ProviderEnv &env) {
  std::mt19937_64 rng(99);
  for (const core::AlgInfo &alg : core::kAlgs) {
    const std::string name(alg.name);
    CipherPtr ours = env.Aesmux(name), theirs = env.Default(name);
    if (ours == nullptr || theirs == nullptr) return 20;
    for (size_t len : {16u, 4096u, 65536u}) {
      Bytes key = RandomBytes(rng, alg.key_len);
      if (alg.family == core::Family::kXts) key[0] = key[alg.key_len / 2] ^ 1;
      const Bytes iv = RandomBytes(rng, alg.family == core::Family::kGcm ? 12 : 16);
      const Bytes plain = RandomBytes(rng, len);
      const Bytes a = EvpCrypt(ours.get(), key, iv, plain, true, {}, true);
      const Bytes b = EvpCrypt(theirs.get(), key, iv, plain, true, {}, false);
      if (a.empty() || a != b) return 21;
    }
  }
  return ERR_peek_error() == 0 ? 0 : 22;
}

// On a kernel with an offload driver auto uses it, with the syscalls that
// takes after init (offload_test.cc); the families it leaves on the CPU
// must make none.
TEST(AfalgSandbox, DefaultConfigurationMakesNoAfalgSyscallAfterInit) {
  SKIP_WITHOUT_SECCOMP();
  std::vector<std::string> settings;
  {
    auto env = LoadAfalgEnv({});
    ASSERT_TRUE(env->loaded()) << env->error();
    for (std::string_view family : core::kFamilyNames) {
      const std::string name(family);
      if (env->ProviderParam(("afalg." + name).c_str()).starts_with("on")) {
        settings.push_back(name + ".afalg = off");
      }
    }
  }
  const std::string result = RunInChild([&] {
    auto env = LoadAfalgEnv(settings);
    if (!env->loaded()) return 2;
    // Nor one that batching threads would need (multi-buffer CBC).
    std::vector<long> denied = AfalgSyscalls();
    denied.push_back(__NR_sched_getaffinity);
    denied.push_back(__NR_sched_yield);
    if (!InstallSeccompFilter(Deny::kKill, true, denied)) return 3;
    return EveryAlgorithmAgrees(*env);
  });
  EXPECT_EQ(result, "");
}

TEST(AfalgSandbox, AfAlgDeniedBeforeLoad) {
  SKIP_WITHOUT_SECCOMP();
  const std::string result = RunInChild([] {
    if (!InstallSeccompFilter(Deny::kEperm, true, {})) return 3;
    auto env = LoadAfalgEnv({"afalg = force"});
    if (!env->loaded()) return 2;
    const std::string state = env->ProviderParam("afalg.cbc");
    if (state.find("denied") == std::string::npos) {
      std::fprintf(stderr, "afalg.cbc: %s\n", state.c_str());
      return 4;
    }
    return EveryAlgorithmAgrees(*env);
  });
  EXPECT_EQ(result, "");
}

TEST(AfalgSandbox, IoUringDeniedBeforeLoad) {
  SKIP_WITHOUT_AFALG();
  SKIP_WITHOUT_SECCOMP();
  const std::string result = RunInChild([] {
    if (!InstallSeccompFilter(Deny::kEperm, false, {__NR_io_uring_setup})) {
      return 3;
    }
    auto env = LoadAfalgEnv({"afalg = force"});
    if (!env->loaded()) return 2;
    const std::string state = env->ProviderParam("afalg.ctr");
    if (state.find("io_uring unavailable") == std::string::npos) {
      std::fprintf(stderr, "afalg.ctr: %s\n", state.c_str());
      return 4;
    }
    return EveryAlgorithmAgrees(*env);
  });
  EXPECT_EQ(result, "");
}

TEST(AfalgSandbox, AfAlgDeniedAfterLoad) {
  SKIP_WITHOUT_AFALG();
  SKIP_WITHOUT_SECCOMP();
  const std::string result = RunInChild([] {
    auto env = LoadAfalgEnv({"afalg = force"});
    if (!env->loaded()) return 2;
    // New keys need new sockets, which now fail with EPERM: every request
    // is handed on ("setup"), none fails.
    if (!InstallSeccompFilter(Deny::kEperm, true, {})) return 3;
    if (const int ret = EveryAlgorithmAgrees(*env); ret != 0) return ret;
    return env->Stat("AES-128-CBC", "afalg-fallback:setup", "requests") > 0 ||
                   env->Stat("AES-128-CBC", "afalg-fallback:unhealthy",
                             "requests") > 0
               ? 0
               : 5;
  });
  EXPECT_EQ(result, "");
}

// A thread that starts after io_uring is denied cannot make its ring: its
// requests are handed on (setup) and served, the other threads' not
// affected.
TEST(AfalgSandbox, IoUringDeniedAfterLoadForANewThread) {
  SKIP_WITHOUT_AFALG();
  const std::string result = RunInChild([] {
    auto env = LoadAfalgEnv({"afalg = force"});
    if (!env->loaded()) return 2;
    if (!InstallSeccompFilter(Deny::kEperm, false, {__NR_io_uring_setup})) {
      return 3;
    }
    int ret = -1;
    std::thread thread([&] { ret = EveryAlgorithmAgrees(*env); });
    thread.join();
    if (ret != 0) return ret;
    if (env->Stat("AES-128-CBC", "afalg-fallback:setup", "requests") == 0 &&
        env->Stat("AES-128-CBC", "afalg-fallback:unhealthy", "requests") ==
            0) {
      return 5;
    }
    // The thread that loaded goes on too.
    return EveryAlgorithmAgrees(*env);
  });
  EXPECT_EQ(result, "");
}

}  // namespace
}  // namespace aesmux::test
