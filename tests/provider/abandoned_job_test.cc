// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
// ASYNC jobs that the application never resumes (servers abandon the
// paused jobs of connections they drop): a paused job's CBC encryption is
// queued in its thread's lanes, and the next job's flush would run it,
// reading the key of a context the application has freed and writing into
// buffers it has reused. Freeing, re-keying or re-initialising the context
// cancels it. Also a stress of many jobs resumed in random order, some
// abandoned, from several threads at once.
#include <gtest/gtest.h>
#include <openssl/async.h>
#include <openssl/evp.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <mutex>
#include <random>
#include <thread>
#include <vector>

#include "tests/provider/cbc_streams.h"
#include "tests/support/async_update.h"
#include "tests/support/random_message.h"

namespace aesmux::test {
namespace {

// Runs `body` on a thread of its own, whose lanes start empty (batching
// state is per thread) and which ends its ASYNC state at the end.
template <typename Body>
void OnFreshThread(Body body) {
  std::thread([&] {
    ASSERT_TRUE(ASYNC_init_thread(8, 0));
    body();
    ASYNC_cleanup_thread();
  }).join();
}

class AbandonedJobTest : public MultiBufferTest {
 protected:
  std::mt19937_64 rng_{0xab4d};
};

// What the application does after abandoning the job on `abandoned`.
enum class Then { kFree, kRekey, kNewIv };

// Job A pauses with its request queued; the application abandons it, then
// frees or re-initialises A's context and reuses A's output buffer; job B
// runs (its flush used to run A's request). A's buffer must be left alone,
// and a re-initialised A must encrypt as the default provider does.
void AbandonThenRunAnother(const ProviderEnv &env, std::mt19937_64 &rng,
                           Then then) {
  CipherPtr cipher = env.Aesmux("AES-128-CBC");
  CipherPtr reference = env.Default("AES-128-CBC");
  const BatchCounts before = Counts(env);
  OnFreshThread([&] {
    auto a = std::make_unique<AsyncUpdate>(cipher.get(), rng, 1024);
    ASSERT_EQ(a->Step(), ASYNC_PAUSE) << "the request was not queued";
    a->Abandon();
    Bytes new_key = a->key, new_iv = RandomBytes(rng, 16);
    switch (then) {
      case Then::kFree:
        a->ctx.reset();
        break;
      case Then::kRekey:
        new_key = RandomBytes(rng, 16);
        ASSERT_TRUE(EVP_EncryptInit_ex2(a->ctx.get(), nullptr, new_key.data(),
                                        new_iv.data(), nullptr));
        break;
      case Then::kNewIv:
        ASSERT_TRUE(EVP_EncryptInit_ex2(a->ctx.get(), nullptr, nullptr,
                                        new_iv.data(), nullptr));
        break;
    }
    std::fill(a->out.begin(), a->out.end(), 0x5a);  // reused

    AsyncUpdate b(cipher.get(), rng, 1024);
    EXPECT_TRUE(b.RunToEnd());
    EXPECT_EQ(ToHex(b.out), ToHex(EncryptWith(reference.get(), b.key, b.iv,
                                              b.in)));
    EXPECT_TRUE(std::all_of(a->out.begin(), a->out.end(),
                            [](uint8_t byte) { return byte == 0x5a; }))
        << "the abandoned request wrote into its reused output buffer";

    if (then != Then::kFree) {
      // A goes on from its new key or IV, untouched by its old request.
      const Bytes in = RandomBytes(rng, 512);
      Bytes out(in.size());
      int len = 0;
      ASSERT_TRUE(EVP_EncryptUpdate(a->ctx.get(), out.data(), &len, in.data(),
                                    static_cast<int>(in.size())));
      EXPECT_EQ(ToHex(out),
                ToHex(EncryptWith(reference.get(), new_key, new_iv, in)));
    }
  });
  // B's request was queued with A's in lanes, not run alone.
  EXPECT_GT(Counts(env).mb_requests, before.mb_requests);
}

TEST_P(AbandonedJobTest, FreeingTheContextCancelsItsQueuedRequest) {
  AbandonThenRunAnother(*env_, rng_, Then::kFree);
}

TEST_P(AbandonedJobTest, RekeyingTheContextCancelsItsQueuedRequest) {
  AbandonThenRunAnother(*env_, rng_, Then::kRekey);
}

TEST_P(AbandonedJobTest, ANewIvCancelsTheQueuedRequest) {
  AbandonThenRunAnother(*env_, rng_, Then::kNewIv);
}

// ---------------------------------------------------------------------------
// Stress: several threads, each resuming many jobs in random order and
// abandoning some, whose contexts are freed by that thread or another.

// An abandoned job's context, to be freed, and its output buffer, which the
// application then reuses (filled with kReused) and which must stay so.
struct Leftover {
  EVP_CIPHER_CTX *ctx;
  uint8_t *out;
  size_t len;
};
constexpr uint8_t kReused = 0xa5;

class Leftovers {
 public:
  void Add(Leftover leftover) {
    std::lock_guard lock(mutex_);
    to_free_.push_back(leftover);
  }
  // Frees one context left by any thread, if there is one, and reuses its
  // buffer.
  void FreeOne() {
    Leftover leftover;
    {
      std::lock_guard lock(mutex_);
      if (to_free_.empty()) return;
      leftover = to_free_.back();
      to_free_.pop_back();
    }
    EVP_CIPHER_CTX_free(leftover.ctx);
    std::memset(leftover.out, kReused, leftover.len);
    std::lock_guard lock(mutex_);
    reused_.push_back(leftover);
  }
  void FreeAll() {
    while (!to_free_.empty()) FreeOne();
  }
  // How many reused buffers were written into after their context was
  // freed.
  size_t Overwritten() const {
    size_t count = 0;
    for (const Leftover &leftover : reused_) {
      count += !std::all_of(leftover.out, leftover.out + leftover.len,
                            [](uint8_t byte) { return byte == kReused; });
    }
    return count;
  }
  size_t reused() const { return reused_.size(); }

 private:
  std::mutex mutex_;
  std::vector<Leftover> to_free_, reused_;
};

// One job slot: the job encrypts CBC streams (its updates pause with the
// request queued) and random messages of every algorithm, checking each
// against the default provider.
struct Slot {
  const ProviderEnv *env;
  const CipherSet *ciphers;
  uint64_t seed;
  // The context and output of the update the job is paused in, if it is
  // one of its CBC streams (the scheduler frees them when it abandons it).
  EVP_CIPHER_CTX *ctx = nullptr;
  uint8_t *out = nullptr;
  size_t len = 0;
  std::string failure;
  ASYNC_JOB *job = nullptr;
  ASYNC_WAIT_CTX *wait = nullptr;
};

int StressJob(void *arg) {
  Slot &slot = **static_cast<Slot **>(arg);
  std::mt19937_64 rng(slot.seed);
  for (int step = 0; step < 6; ++step) {
    if (rng() % 4 == 0) {
      slot.failure = CheckRandomMessage(*slot.ciphers, rng, 4096);
      if (!slot.failure.empty()) return 0;
      continue;
    }
    const Stream stream = MakeStream(*slot.env, rng, 256);
    CipherPtr cipher = slot.env->Aesmux(stream.algorithm);
    CipherCtxPtr ctx = NewCipherCtx();
    if (!EVP_EncryptInit_ex2(ctx.get(), cipher.get(), stream.key.data(),
                             stream.iv.data(), nullptr)) {
      slot.failure = "init failed";
      return 0;
    }
    EVP_CIPHER_CTX_set_padding(ctx.get(), 0);
    Bytes result;
    for (const Bytes &message : stream.messages) {
      Bytes out(message.size());
      int len = 0;
      slot.ctx = ctx.get();
      slot.out = out.data();
      slot.len = out.size();
      const bool ok = EVP_EncryptUpdate(ctx.get(), out.data(), &len,
                                        message.data(),
                                        static_cast<int>(message.size()));
      slot.ctx = nullptr;
      if (!ok) {
        slot.failure = "update failed";
        return 0;
      }
      result.insert(result.end(), out.begin(), out.end());
    }
    if (result != stream.expected) {
      slot.failure = std::string(stream.algorithm) + " stream differs";
      return 0;
    }
  }
  return 1;
}

// One thread's share: `jobs` jobs through `kSlots` slots, resumed in random
// order; about one pause in 30 is abandoned for good, its context freed
// here or by another thread. Returns the first failure.
std::string RunStressThread(const ProviderEnv &env, const CipherSet &ciphers,
                            Leftovers &leftovers, uint64_t seed, int jobs) {
  constexpr int kSlots = 24;
  // No limit on jobs: abandoned ones are never returned to the pool.
  if (!ASYNC_init_thread(0, 0)) return "ASYNC_init_thread failed";
  std::mt19937_64 rng(seed);
  std::vector<Slot> slots(kSlots);
  std::vector<Slot *> args(kSlots);
  int started = 0, live = 0;
  std::string failure;
  auto start = [&](Slot &slot) {
    slot = Slot{};
    slot.env = &env;
    slot.ciphers = &ciphers;
    slot.seed = rng();
    slot.wait = ASYNC_WAIT_CTX_new();
    ++started;
    ++live;
  };
  for (Slot &slot : slots) start(slot);
  while (live > 0 && failure.empty()) {
    const int index = static_cast<int>(rng() % kSlots);
    Slot &slot = slots[index];
    if (slot.wait == nullptr) continue;  // retired
    if (slot.job != nullptr && rng() % 30 == 0) {
      KeepAbandoned(slot.job, slot.wait);
      if (slot.ctx != nullptr) leftovers.Add({slot.ctx, slot.out, slot.len});
      slot.job = nullptr;
      slot.wait = nullptr;
    } else {
      args[index] = &slot;
      int ret = 0;
      const int status = ASYNC_start_job(&slot.job, slot.wait, &ret, StressJob,
                                         &args[index], sizeof(Slot *));
      if (status == ASYNC_PAUSE) continue;
      if (status != ASYNC_FINISH || ret != 1) {
        failure = slot.failure.empty() ? "job failed" : slot.failure;
      }
      ASYNC_WAIT_CTX_free(slot.wait);
      slot.job = nullptr;
      slot.wait = nullptr;
    }
    --live;
    if (rng() % 2 == 0) leftovers.FreeOne();
    if (started < jobs) start(slot);
  }
  for (Slot &slot : slots) {
    if (slot.job != nullptr) KeepAbandoned(slot.job, slot.wait);
  }
  ASYNC_cleanup_thread();
  return failure;
}

// Jobs paused and resumed in random order on three threads at once, some
// abandoned with their contexts freed (by their thread or another one):
// every finished job agrees with the default provider and no reused buffer
// of an abandoned one is written. AESMUX_TEST_STRESS_SECONDS makes it run
// longer.
TEST_P(AbandonedJobTest, ManyJobsInRandomOrderSomeAbandoned) {
  const CipherSet ciphers(*env_);
  ASSERT_TRUE(ciphers.complete());
  Leftovers leftovers;
  const BatchCounts before = Counts(*env_);
  const auto deadline = std::chrono::steady_clock::now() +
                        StressDuration(std::chrono::seconds(1));
  int rounds = 0;
  do {
    std::vector<std::string> failures(3);
    std::vector<std::thread> threads;
    for (int t = 0; t < 3; ++t) {
      threads.emplace_back([&, t, seed = rng_()] {
        failures[t] = RunStressThread(*env_, ciphers, leftovers, seed, 150);
      });
    }
    for (std::thread &thread : threads) thread.join();
    for (const std::string &failure : failures) EXPECT_EQ(failure, "");
    ++rounds;
  } while (std::chrono::steady_clock::now() < deadline);
  leftovers.FreeAll();
  EXPECT_GT(leftovers.reused(), 0u) << "nothing was abandoned";
  EXPECT_EQ(leftovers.Overwritten(), 0u)
      << "of " << leftovers.reused() << " reused buffers";
  EXPECT_GT(Counts(*env_).mb_requests, before.mb_requests);
  std::printf("%d rounds, %zu abandoned jobs' buffers reused\n", rounds,
              leftovers.reused());
}

INSTANTIATE_TEST_SUITE_P(Kernels, AbandonedJobTest,
                         ::testing::ValuesIn(MultiBufferConfigs()),
                         KernelConfigName);
// A build without kernels (aarch64) has no multi-buffer configuration:
// nothing is batched there, and the afalg suite's fork cases cover the rest.
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(AbandonedJobTest);

}  // namespace
}  // namespace aesmux::test
