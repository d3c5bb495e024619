// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
// The afalg path on an offload driver, as the default configuration uses
// it (afalg = auto): in the VM suites, QEMU's virtio-crypto device, whose
// asynchronous driver (virtio_crypto_aes_cbc, cbc(aes) only) ranks below
// the kernel's CPU code, so that auto must bind it by its driver name. Every
// result against the default provider: every key size and length class,
// both directions, in place, many streams on threads, ASYNC jobs and a
// forked child; the device's own count of the requests it completed
// (scripts/vm-control.py) against aesmux's; and a device that refuses keys
// (out of sessions). Skips where /proc/crypto lists no offload driver.
#include <gtest/gtest.h>
#include <openssl/async.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "provider/afalg/afalg.h"
#include "provider/afalg/kernel_crypto.h"
#include "provider/core/algorithm.h"
#include "tests/afalg/afalg_support.h"

namespace aesmux::test {
namespace {

using core::Family;

std::string ProcCrypto() {
  std::string text;
  afalg::ReadWholeFile("/proc/crypto", &text);
  return text;
}

// The offload driver /proc/crypto lists for `family`, if any.
std::optional<afalg::CryptoAlg> OffloadDriver(Family family) {
  const afalg::KernelAlgorithm kernel = afalg::KernelAlgorithmFor(family);
  return afalg::BestOffloadImplementation(ProcCrypto(), kernel.name,
                                          kernel.type);
}

// The refcnt /proc/crypto shows for `driver`: the kernel keys bound to it.
int RefCount(const std::string &driver) {
  const std::string text = ProcCrypto();
  size_t at = text.find("driver       : " + driver + "\n");
  if (at == std::string::npos) return -1;
  at = text.find("refcnt", at);
  return at == std::string::npos
             ? -1
             : std::atoi(text.c_str() + text.find(':', at) + 1);
}

#define SKIP_WITHOUT_OFFLOAD_CBC()                                        \
  do {                                                                    \
    SKIP_WITHOUT_AFALG();                                                 \
    if (!OffloadDriver(Family::kCbc)) {                                   \
      GTEST_SKIP() << "/proc/crypto lists no offload driver for cbc(aes)"; \
    }                                                                     \
  } while (0)

// The default policy, with every CBC request long enough for the device.
std::unique_ptr<ProviderEnv> LoadAutoEnv() {
  return LoadAfalgEnv({"afalg = auto", "cbc.afalg_min_len = 0"});
}

// Encrypts then decrypts `plain` through aesmux in updates of `splits`,
// in place or not, and checks both against the default provider.
void ExpectAgrees(const ProviderEnv &env, std::string_view name,
                  std::mt19937_64 &rng, size_t len, bool in_place) {
  CipherPtr ours = env.Aesmux(name), theirs = env.Default(name);
  ASSERT_NE(ours, nullptr);
  const size_t key_len = static_cast<size_t>(EVP_CIPHER_get_key_length(ours.get()));
  const Bytes key = RandomBytes(rng, key_len), iv = RandomBytes(rng, 16);
  const Bytes plain = RandomBytes(rng, len);
  const std::vector<size_t> splits = RandomSplits(rng, len, 16);
  SCOPED_TRACE(testing::Message() << name << " len " << len << " splits "
                                  << splits.size()
                                  << (in_place ? " in place" : ""));
  const Bytes expected = EvpCrypt(theirs.get(), key, iv, plain, true, {}, false);
  ASSERT_EQ(expected.size(), len);
  EXPECT_EQ(ToHex(EvpCrypt(ours.get(), key, iv, plain, true, splits, in_place)),
            ToHex(expected));
  EXPECT_EQ(ToHex(EvpCrypt(ours.get(), key, iv, expected, false, splits,
                           in_place)),
            ToHex(plain));
}

uint64_t HandedOn(const ProviderEnv &env, std::string_view alg) {
  uint64_t total = 0;
  for (std::string_view reason : core::kHandoffNames) {
    total += env.Stat(alg, "afalg-fallback:" + std::string(reason), "requests");
  }
  return total;
}

TEST(AfalgOffload, AutoTakesOnlyOffloadDriversByTheirNames) {
  SKIP_WITHOUT_OFFLOAD_CBC();
  auto env = LoadAfalgEnv({"afalg = auto"});
  ASSERT_TRUE(env->loaded()) << env->error();
  const std::string proc_crypto = ProcCrypto();
  for (size_t f = 0; f < core::kNumFamilies; ++f) {
    const afalg::KernelAlgorithm kernel =
        afalg::KernelAlgorithmFor(static_cast<Family>(f));
    const std::string state =
        AfalgReport(*env, std::string(core::kFamilyNames[f]));
    SCOPED_TRACE(state);
    const std::optional<afalg::CryptoAlg> offload =
        afalg::BestOffloadImplementation(proc_crypto, kernel.name, kernel.type);
    if (!offload) {
      EXPECT_TRUE(state.starts_with("off (auto): no offload driver"));
      continue;
    }
    EXPECT_TRUE(state.starts_with("on (auto) from 16384 bytes: " +
                                  offload->driver + " (priority "));
    EXPECT_NE(state.find("offload driver"), std::string::npos);
    const std::optional<afalg::CryptoAlg> best =
        afalg::BestImplementation(proc_crypto, kernel.name, kernel.type);
    if (best->driver != offload->driver) {
      // A bind by the algorithm's name would get the CPU's code.
      EXPECT_NE(state.find("bound by its driver name over " + best->driver),
                std::string::npos);
    }
  }
}

// The kernel counts the keys bound to a driver: one more while aesmux
// holds a key on it, for each of the three key sizes the probe checked.
TEST(AfalgOffload, KeysAreBoundToTheOffloadDriver) {
  SKIP_WITHOUT_OFFLOAD_CBC();
  auto env = LoadAutoEnv();
  ASSERT_TRUE(env->loaded()) << env->error();
  const std::string driver = OffloadDriver(Family::kCbc)->driver;
  EXPECT_NE(AfalgReport(*env, "cbc").find("keys of 16, 24 and 32 bytes"),
            std::string::npos)
      << AfalgReport(*env, "cbc");
  std::mt19937_64 rng(1);
  for (const char *name : {"AES-128-CBC", "AES-192-CBC", "AES-256-CBC"}) {
    const int before = RefCount(driver);
    CipherPtr cipher = env->Aesmux(name);
    auto ctx = NewCipherCtx();
    const Bytes key = RandomBytes(rng, EVP_CIPHER_get_key_length(cipher.get()));
    const Bytes iv = RandomBytes(rng, 16), plain = RandomBytes(rng, 4096);
    Bytes out(plain.size());
    int len = 0;
    ASSERT_TRUE(EVP_EncryptInit_ex2(ctx.get(), cipher.get(), key.data(),
                                    iv.data(), nullptr));
    ASSERT_TRUE(EVP_EncryptUpdate(ctx.get(), out.data(), &len, plain.data(),
                                  static_cast<int>(plain.size())));
    EXPECT_EQ(RefCount(driver), before + 1) << name;
    ctx.reset();
    EXPECT_EQ(RefCount(driver), before) << name;
  }
}

class AfalgOffloadTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (!AfalgUnavailableReason().empty() || !OffloadDriver(Family::kCbc)) {
      return;
    }
    env_ = LoadAutoEnv().release();
  }
  static void TearDownTestSuite() {
    delete env_;
    env_ = nullptr;
  }
  void SetUp() override {
    SKIP_WITHOUT_OFFLOAD_CBC();
    ASSERT_NE(env_, nullptr);
    ASSERT_TRUE(env_->loaded()) << env_->error();
    ASSERT_TRUE(AfalgReport(*env_, "cbc").starts_with("on (auto) from 0 bytes"))
        << AfalgReport(*env_, "cbc");
  }
  static ProviderEnv *env_;
};
ProviderEnv *AfalgOffloadTest::env_ = nullptr;

// Every key size, both directions, lengths of every class (a block, a few,
// around a page and one AF_ALG request, several requests), in place and
// out of place: all on the device, all as the default provider's.
TEST_F(AfalgOffloadTest, EveryLengthClassOnTheDevice) {
  std::mt19937_64 rng(2);
  for (const char *name : {"AES-128-CBC", "AES-192-CBC", "AES-256-CBC"}) {
    const uint64_t served = env_->Stat(name, "afalg", "requests");
    const uint64_t handed = HandedOn(*env_, name);
    int requests = 0;
    for (size_t len : {16u, 32u, 48u, 1024u, 4080u, 4096u, 4112u, 16384u,
                       65520u, 65536u, 65552u, 200000u}) {
      for (bool in_place : {false, true}) {
        ExpectAgrees(*env_, name, rng, len, in_place);
        requests += 2;
      }
    }
    EXPECT_GE(env_->Stat(name, "afalg", "requests"), served + requests) << name;
    EXPECT_EQ(HandedOn(*env_, name), handed) << name;
  }
}

// The device completes one request per AF_ALG request aesmux sends it, as
// QEMU counts them (scripts/vm-control.py): the CBC requests reach the
// virtio driver, not the kernel's CPU code.
TEST_F(AfalgOffloadTest, TheDeviceCompletesEveryRequest) {
  const std::optional<uint64_t> before = DeviceRequests();
  if (!before) GTEST_SKIP() << "not in the guest of the VM suites";
  std::mt19937_64 rng(3);
  CipherPtr cipher = env_->Aesmux("AES-128-CBC");
  const Bytes key = RandomBytes(rng, 16), iv = RandomBytes(rng, 16);
  const Bytes plain = RandomBytes(rng, 16384);
  // The key's kernel key, before counting: its first request also keys it.
  EvpCrypt(cipher.get(), key, iv, plain, true, {}, false);
  const uint64_t served = env_->Stat("AES-128-CBC", "afalg", "requests");
  const std::optional<uint64_t> start = DeviceRequests();
  auto ctx = NewCipherCtx();
  ASSERT_TRUE(EVP_EncryptInit_ex2(ctx.get(), cipher.get(), key.data(),
                                  iv.data(), nullptr));
  constexpr int kRequests = 40;
  Bytes out(plain.size());
  for (int i = 0; i < kRequests; ++i) {
    int len = 0;
    ASSERT_TRUE(EVP_EncryptUpdate(ctx.get(), out.data(), &len, plain.data(),
                                  static_cast<int>(plain.size())));
  }
  const std::optional<uint64_t> end = DeviceRequests();
  ASSERT_TRUE(start && end);
  EXPECT_EQ(env_->Stat("AES-128-CBC", "afalg", "requests"),
            served + kRequests);
  EXPECT_EQ(*end - *start, static_cast<uint64_t>(kRequests));
}

// Many streams at once on threads, each with its own keys: the device's
// queue interleaves them; every result as the default provider's.
TEST_F(AfalgOffloadTest, ManyStreamsOnThreads) {
  const uint64_t served = env_->Stat("AES-128-CBC", "afalg", "requests") +
                          env_->Stat("AES-256-CBC", "afalg", "requests");
  constexpr int kThreads = 8;
  constexpr int kRounds = 4;
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([t, &failures] {
      std::mt19937_64 rng(100 + t);
      for (int round = 0; round < kRounds; ++round) {
        const size_t len = 16 * (1 + rng() % 1024);
        ExpectAgrees(*env_, t % 2 ? "AES-256-CBC" : "AES-128-CBC", rng, len,
                     round % 2 == 1);
        if (::testing::Test::HasFailure()) ++failures;
      }
    });
  }
  for (std::thread &thread : threads) thread.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_GE(env_->Stat("AES-128-CBC", "afalg", "requests") +
                env_->Stat("AES-256-CBC", "afalg", "requests"),
            served + kThreads * kRounds * 2);
}

struct JobData {
  const ProviderEnv *env;
  Bytes key, iv, plain, out;
};

int EncryptInJob(void *arg) {
  auto *job = *static_cast<JobData **>(arg);
  CipherPtr cipher = job->env->Aesmux("AES-192-CBC");
  for (int i = 0; i < 2; ++i) {
    job->out = EvpCrypt(cipher.get(), job->key, job->iv, job->plain, true, {},
                        i % 2 == 1);
    if (job->out.empty()) return 0;
  }
  return 1;
}

// Sixteen ASYNC jobs: their reads go to io-wq workers, so the device has
// several requests at once; each result as the default provider's.
TEST_F(AfalgOffloadTest, AsyncJobsKeepTheDeviceBusy) {
  ASSERT_TRUE(ASYNC_is_capable());
  constexpr int kJobs = 16;
  ASSERT_TRUE(ASYNC_init_thread(kJobs, kJobs));
  std::mt19937_64 rng(4);
  std::vector<JobData> jobs(kJobs);
  std::vector<void *> args;
  for (JobData &job : jobs) {
    job = {env_, RandomBytes(rng, 24), RandomBytes(rng, 16),
           RandomBytes(rng, 16 * (1 + rng() % 1024)), {}};
    args.push_back(&job);
  }
  const uint64_t served = env_->Stat("AES-192-CBC", "afalg", "requests");
  const std::vector<int> results = RunJobs(kJobs, EncryptInJob, args);
  CipherPtr reference = env_->Default("AES-192-CBC");
  for (int j = 0; j < kJobs; ++j) {
    EXPECT_EQ(results[j], 1) << "job " << j;
    EXPECT_EQ(ToHex(jobs[j].out),
              ToHex(EvpCrypt(reference.get(), jobs[j].key, jobs[j].iv,
                             jobs[j].plain, true, {}, false)))
        << "job " << j;
  }
  EXPECT_EQ(env_->Stat("AES-192-CBC", "afalg", "requests"),
            served + kJobs * 2);
  ASYNC_cleanup_thread();
}

// A forked child with afalg_fork = rebuild makes its own kernel keys on
// the device; the parent goes on with its own.
TEST(AfalgOffload, ForkedChildRebuildsOnTheDevice) {
  SKIP_WITHOUT_OFFLOAD_CBC();
  auto env = LoadAfalgEnv(
      {"afalg = auto", "cbc.afalg_min_len = 0", "afalg_fork = rebuild"});
  ASSERT_TRUE(env->loaded()) << env->error();
  std::mt19937_64 rng(5);
  ExpectAgrees(*env, "AES-128-CBC", rng, 8192, false);
  const std::string result = RunInChild([&] {
    std::mt19937_64 child_rng(6);
    const uint64_t served = env->Stat("AES-128-CBC", "afalg", "requests");
    ExpectAgrees(*env, "AES-128-CBC", child_rng, 20000, true);
    if (::testing::Test::HasFailure()) return 1;
    return env->Stat("AES-128-CBC", "afalg", "requests") >= served + 2 ? 0 : 2;
  });
  EXPECT_EQ(result, "");
  ExpectAgrees(*env, "AES-128-CBC", rng, 8192, true);
}

// More live keys than the device has sessions (QEMU's builtin backend:
// 256, two per key): the driver refuses the keys beyond; they are served
// on the CPU (key_refused), the path stays on for the others, and
// afalg.cbc says so. Once keys go, new ones get sessions again.
TEST(AfalgOffload, KeysBeyondTheDeviceSessionsRunOnTheCpu) {
  SKIP_WITHOUT_OFFLOAD_CBC();
  if (OffloadDriver(Family::kCbc)->driver != "virtio_crypto_aes_cbc") {
    GTEST_SKIP() << "the session limit is virtio-crypto's";
  }
  const std::string result = RunInChild([] {
    // Room for the descriptors of 200 kernel keys (afalg_max_fds is a
    // quarter of the soft limit).
    rlimit limit;
    getrlimit(RLIMIT_NOFILE, &limit);
    limit.rlim_cur = limit.rlim_max;
    if (setrlimit(RLIMIT_NOFILE, &limit) != 0 || limit.rlim_cur < 2048) {
      return 2;
    }
    auto env = LoadAutoEnv();
    if (!env->loaded()) return 3;
    CipherPtr ours = env->Aesmux("AES-128-CBC");
    CipherPtr theirs = env->Default("AES-128-CBC");
    std::mt19937_64 rng(7);
    constexpr int kKeys = 200;
    std::vector<std::unique_ptr<EVP_CIPHER_CTX, decltype(&EVP_CIPHER_CTX_free)>>
        contexts;
    for (int k = 0; k < kKeys; ++k) {
      const Bytes key = RandomBytes(rng, 16), iv = RandomBytes(rng, 16);
      const Bytes plain = RandomBytes(rng, 4096);
      contexts.emplace_back(EVP_CIPHER_CTX_new(), EVP_CIPHER_CTX_free);
      Bytes out(plain.size());
      int len = 0;
      if (!EVP_EncryptInit_ex2(contexts.back().get(), ours.get(), key.data(),
                               iv.data(), nullptr) ||
          !EVP_EncryptUpdate(contexts.back().get(), out.data(), &len,
                             plain.data(), static_cast<int>(plain.size())) ||
          ToHex(out) != ToHex(EvpCrypt(theirs.get(), key, iv, plain, true, {},
                                       false))) {
        std::fprintf(stderr, "key %d: wrong or no output\n", k);
        return 4;
      }
    }
    const uint64_t refused =
        env->Stat("AES-128-CBC", "afalg-fallback:key_refused", "requests");
    const uint64_t served = env->Stat("AES-128-CBC", "afalg", "requests");
    const std::string report = AfalgReport(*env, "cbc");
    std::fprintf(stderr, "%llu keys refused, %llu served by the device: %s\n",
                 static_cast<unsigned long long>(refused),
                 static_cast<unsigned long long>(served), report.c_str());
    if (refused == 0 || served < 100) return 5;
    if (report.find("keys refused by the driver") == std::string::npos) {
      return 6;
    }
    // Refused keys stay on the CPU without asking the driver again; the
    // path did not rest for the others.
    if (env->Stat("AES-128-CBC", "afalg-fallback:unhealthy", "requests") != 0) {
      return 7;
    }
    contexts.clear();  // their sessions go back to the device
    const uint64_t before = env->Stat("AES-128-CBC", "afalg", "requests");
    std::mt19937_64 again(8);
    ExpectAgrees(*env, "AES-128-CBC", again, 4096, false);
    if (::testing::Test::HasFailure()) return 8;
    return env->Stat("AES-128-CBC", "afalg", "requests") == before + 2 ? 0 : 9;
  });
  EXPECT_EQ(result, "");
}

}  // namespace
}  // namespace aesmux::test
