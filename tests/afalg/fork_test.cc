// Fork after use: sockets and rings belong to the process that made them.
// By default (afalg_fork = off) a child never touches the afalg path — not
// even a syscall: it survives a seccomp filter that kills on any of them,
// as OpenSSH's pre-authentication child would — and its requests are
// served by the CPU, counted as "forked". With afalg_fork = rebuild the
// child makes its own sockets and ring; the parent goes on with its own.
#include <gtest/gtest.h>

#include <random>

#include "tests/afalg/afalg_support.h"

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

}  // namespace
}  // namespace aesmux::test
