// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
// Running out of memory: a sequence of EVP calls is run again and again,
// the first time with its first allocation failing, then its second, and
// so on until it runs without reaching the failure (from the failing
// allocation on, every later one fails too: memory is gone). Nothing may
// abort (an exception through a dispatch function would), and every call
// that fails must say why on OpenSSL's error queue.
//
// The sequences cover what allocates on the way: GCM messages whose AAD is
// buffered (length-dependent routing), dupctx mid-message, re-keying, the
// statistics of a new thread and the statistics file written while
// serving, multi-buffer batching in ASYNC jobs. Each run is in a thread of
// its own, so that the thread's first request (per-thread state) is part
// of it.
#include <gtest/gtest.h>
#include <openssl/async.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <unistd.h>

#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "provider/core/algorithm.h"
#include "tests/support/alloc_hooks.h"
#include "tests/support/provider_env.h"

namespace aesmux::test {
namespace {

using core::Family;

// The buffers the sequences use, made before any failure is injected.
struct Buffers {
  Buffers() {
    for (size_t i = 0; i < key.size(); ++i) {
      key[i] = static_cast<uint8_t>(i);
      other_key[i] = static_cast<uint8_t>(255 - i);
    }
  }
  std::vector<uint8_t> key = std::vector<uint8_t>(64);
  std::vector<uint8_t> other_key = std::vector<uint8_t>(64);
  std::vector<uint8_t> iv = std::vector<uint8_t>(16, 0x33);
  std::vector<uint8_t> in = std::vector<uint8_t>(3 << 20, 0x44);
  std::vector<uint8_t> out = std::vector<uint8_t>((3 << 20) + 64);
};

// Counts calls that failed without an error on the queue.
class Checker {
 public:
  // Whether the call succeeded.
  bool operator()(int ok) {
    if (ok == 1) return true;
    if (ERR_peek_error() == 0) ++silent_failures_;
    ERR_clear_error();
    return false;
  }
  int silent_failures() const { return silent_failures_; }

 private:
  int silent_failures_ = 0;
};

// One sequence on `cipher`: encryption in several updates (for GCM with
// AAD first, the second piece beyond the buffering bound), a copy made
// after the first update (for GCM while its AAD is buffered) that finishes
// on its own, final, a re-key and a last message of `last_len` bytes. It
// stops at the first call that fails, as an application would: OpenSSL 3.0
// calls a provider with no context after its newctx failed. (An
// EVP_CIPHER_CTX that OpenSSL cannot allocate is not checked: OpenSSL 3.0
// puts no error on the queue for it.)
void Sequence(const EVP_CIPHER *cipher, Family family, const Buffers &b,
              size_t last_len, Checker &check) {
  EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
  if (ctx == nullptr) return;
  int len = 0;
  uint8_t *out = const_cast<uint8_t *>(b.out.data());
  const bool gcm = family == Family::kGcm;
  // GCM's first update is AAD (no output).
  auto first_update = [&](EVP_CIPHER_CTX *c, size_t n) {
    return EVP_EncryptUpdate(c, gcm ? nullptr : out, &len, b.in.data(),
                             static_cast<int>(n));
  };
  auto steps = [&] {
    if (!check(EVP_EncryptInit_ex2(ctx, cipher, b.key.data(), b.iv.data(),
                                   nullptr)) ||
        !check(first_update(ctx, gcm ? 100 : 4096))) {
      return;
    }
    if (EVP_CIPHER_CTX *dup = EVP_CIPHER_CTX_new()) {
      if (check(EVP_CIPHER_CTX_copy(dup, ctx)) &&
          check(EVP_EncryptUpdate(dup, out, &len, b.in.data(), 64))) {
        check(EVP_EncryptFinal_ex(dup, out, &len));
      }
      EVP_CIPHER_CTX_free(dup);
    }
    if (gcm && (!check(first_update(ctx, 70000)) ||
                !check(EVP_EncryptUpdate(ctx, out, &len, b.in.data(), 4096)))) {
      return;
    }
    if (!check(EVP_EncryptUpdate(ctx, out, &len, b.in.data(), 48)) ||
        !check(EVP_EncryptFinal_ex(ctx, out, &len)) ||
        !check(EVP_EncryptInit_ex2(ctx, nullptr, b.other_key.data(),
                                   b.iv.data(), nullptr))) {
      return;
    }
    if (gcm && !check(first_update(ctx, 20))) return;
    if (check(EVP_EncryptUpdate(ctx, out, &len, b.in.data(),
                                static_cast<int>(last_len)))) {
      check(EVP_EncryptFinal_ex(ctx, out, &len));
    }
  };
  steps();
  EVP_CIPHER_CTX_free(ctx);
}

// ASYNC_start_job hands the job a copy of its argument.
struct JobArgs {
  const EVP_CIPHER *cipher;
  const Buffers *buffers;
  Checker *check;
};

int SequenceInJob(void *arg) {
  const JobArgs *args = *static_cast<JobArgs **>(arg);
  Sequence(args->cipher, Family::kCbc, *args->buffers, 1024, *args->check);
  return 1;
}

// Two ASYNC jobs running the CBC sequence, so that they batch. (OpenSSL's
// own ASYNC machinery failing is not checked: it leaves no error.)
void SequenceInJobs(const EVP_CIPHER *cipher, const Buffers &b,
                    Checker &check) {
  JobArgs args{cipher, &b, &check};
  JobArgs *arg = &args;
  ASYNC_JOB *jobs[2] = {};
  ASYNC_WAIT_CTX *waits[2] = {ASYNC_WAIT_CTX_new(), ASYNC_WAIT_CTX_new()};
  bool done[2] = {waits[0] == nullptr, waits[1] == nullptr};
  while (!done[0] || !done[1]) {
    for (int j = 0; j < 2; ++j) {
      if (done[j]) continue;
      int ret = 0;
      const int status = ASYNC_start_job(&jobs[j], waits[j], &ret,
                                         SequenceInJob, &arg, sizeof(arg));
      done[j] = status != ASYNC_PAUSE;
    }
  }
  for (ASYNC_WAIT_CTX *wait : waits) ASYNC_WAIT_CTX_free(wait);
}

struct Run {
  bool reached_failure = false;
  int silent_failures = 0;
};

// Runs `body` on a new thread with allocations failing from the `n`th.
template <typename Body>
Run RunFailingFrom(uint64_t n, const Body &body) {
  Run run;
  std::thread thread([&] {
    // The thread's error queue, made now: raising an error must not need
    // memory once it has run out.
    ERR_raise(ERR_LIB_PROV, ERR_R_INTERNAL_ERROR);
    ERR_clear_error();
    Checker check;
    alloc::FailFrom(n);
    body(check);
    alloc::StopFailing();
    run.reached_failure = alloc::InjectedFailure();
    run.silent_failures = check.silent_failures();
    ERR_clear_error();
    ASYNC_cleanup_thread();
  });
  thread.join();
  return run;
}

// Fails every allocation of `body` in turn, from the first until it runs
// to the end without reaching the failure.
template <typename Body>
void FailEachAllocation(const Body &body) {
  uint64_t n = 1;
  for (; n < 5000; ++n) {
    const Run run = RunFailingFrom(n, body);
    EXPECT_EQ(run.silent_failures, 0)
        << "allocation " << n << " failed: calls failed without an error";
    if (!run.reached_failure) break;
  }
  EXPECT_LT(n, 5000u) << "the sequence never ran to its end";
  EXPECT_GT(n, 1u) << "the sequence allocated nothing: it tests nothing";
}

std::vector<std::string> Configuration(const std::string &extra) {
  // The afalg path is off: this runs anywhere, and its sockets are tested
  // in tests/afalg.
  std::vector<std::string> lines = {"afalg = off"};
  if (!extra.empty()) lines.push_back(extra);
  return lines;
}

class AllocFailureTest : public ::testing::TestWithParam<const char *> {};

TEST_P(AllocFailureTest, EveryAlgorithmFailsCleanly) {
  ProviderEnv env(Configuration(GetParam()));
  ASSERT_TRUE(env.loaded()) << env.error();
  const Buffers buffers;
  for (const core::AlgInfo &alg : core::kAlgs) {
    SCOPED_TRACE(std::string(alg.name));
    CipherPtr cipher = env.Aesmux(std::string(alg.name));
    ASSERT_NE(cipher, nullptr);
    FailEachAllocation([&](Checker &check) {
      Sequence(cipher.get(), alg.family, buffers, 4096, check);
    });
  }
}

std::string SettingName(const testing::TestParamInfo<const char *> &info) {
  static const char *const kNames[] = {"defaults", "kernels_none",
                                       "gcm_routed", "cbc_routed"};
  return kNames[info.index];
}

// Length-dependent routing makes GCM buffer AAD.
INSTANTIATE_TEST_SUITE_P(Settings, AllocFailureTest,
                         ::testing::Values("", "kernels = none",
                                           "gcm.fallback_max_len = 64",
                                           "cbc.fallback_max_len = 64"),
                         SettingName);

// One GCM message with a 40-byte IV (kept on the heap: IVs of more than
// 16 bytes are) on `ctx`, keyed with a 40-byte IV length: its ciphertext
// and tag, or empty if a call failed.
std::vector<uint8_t> LongIvMessage(EVP_CIPHER_CTX *ctx, const Buffers &b,
                                   const std::vector<uint8_t> &iv) {
  std::vector<uint8_t> out(64 + 16);
  int len = 0;
  if (EVP_EncryptInit_ex2(ctx, nullptr, nullptr, iv.data(), nullptr) != 1 ||
      EVP_EncryptUpdate(ctx, nullptr, &len, b.in.data(), 13) != 1 ||
      EVP_EncryptUpdate(ctx, out.data(), &len, b.in.data(), 64) != 1 ||
      EVP_EncryptFinal_ex(ctx, out.data() + 64, &len) != 1 ||
      EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_GET_TAG, 16, out.data() + 64) !=
          1) {
    return {};
  }
  return out;
}

// The IV's heap block not allocated, when the IV length grows beyond 16
// bytes or when a context holding such an IV is copied: the call fails
// with an error on the queue and changes nothing (the context goes on as
// if the call had not been made); with memory back, the same calls
// succeed, and every message agrees with the default provider's.
TEST(AllocFailure, GcmLongIvChangesNothingWhenItFails) {
  ProviderEnv env(Configuration(""));
  ASSERT_TRUE(env.loaded()) << env.error();
  const Buffers b;
  const std::vector<uint8_t> iv(40, 0x5c);
  CipherPtr cipher = env.Aesmux("AES-128-GCM");
  CipherPtr reference_cipher = env.Default("AES-128-GCM");
  ASSERT_NE(cipher, nullptr);
  ASSERT_NE(reference_cipher, nullptr);
  auto new_ctx = [&](const EVP_CIPHER *with, size_t iv_len) {
    EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
    if (ctx != nullptr &&
        (EVP_EncryptInit_ex2(ctx, with, b.key.data(), nullptr, nullptr) != 1 ||
         (iv_len != 0 && EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_SET_IVLEN,
                                             static_cast<int>(iv_len),
                                             nullptr) != 1))) {
      EVP_CIPHER_CTX_free(ctx);
      ctx = nullptr;
    }
    return ctx;
  };
  std::vector<uint8_t> expected;
  {
    EVP_CIPHER_CTX *ctx = new_ctx(reference_cipher.get(), iv.size());
    ASSERT_NE(ctx, nullptr);
    expected = LongIvMessage(ctx, b, iv);
    EVP_CIPHER_CTX_free(ctx);
    ASSERT_FALSE(expected.empty());
  }
  // The error queue made before memory runs out.
  ERR_raise(ERR_LIB_PROV, ERR_R_INTERNAL_ERROR);
  ERR_clear_error();

  bool set_failed = false;
  for (uint64_t n = 1;; ++n) {  // the IV length set
    EVP_CIPHER_CTX *ctx = new_ctx(cipher.get(), 0);
    ASSERT_NE(ctx, nullptr);
    alloc::FailFrom(n);
    const int ok = EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_SET_IVLEN,
                                       static_cast<int>(iv.size()), nullptr);
    alloc::StopFailing();
    const bool injected = alloc::InjectedFailure();
    if (ok != 1) {
      set_failed = true;
      EXPECT_TRUE(injected);
      EXPECT_NE(ERR_peek_error(), 0u) << "failed without an error";
      ERR_clear_error();
      EXPECT_EQ(EVP_CIPHER_CTX_get_iv_length(ctx), 12);
      EXPECT_EQ(EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_SET_IVLEN,
                                    static_cast<int>(iv.size()), nullptr),
                1);
    }
    EXPECT_EQ(LongIvMessage(ctx, b, iv), expected) << "failing from " << n;
    EVP_CIPHER_CTX_free(ctx);
    if (!injected || n > 50) break;
  }
  EXPECT_TRUE(set_failed) << "setting the IV length allocated nothing";

  bool copy_failed = false;
  for (uint64_t n = 1;; ++n) {  // a copy mid-message
    EVP_CIPHER_CTX *ctx = new_ctx(cipher.get(), iv.size());
    EVP_CIPHER_CTX *copy = EVP_CIPHER_CTX_new();
    ASSERT_NE(ctx, nullptr);
    ASSERT_NE(copy, nullptr);
    int len = 0;
    ASSERT_EQ(EVP_EncryptInit_ex2(ctx, nullptr, nullptr, iv.data(), nullptr),
              1);
    alloc::FailFrom(n);
    const int ok = EVP_CIPHER_CTX_copy(copy, ctx);
    alloc::StopFailing();
    const bool injected = alloc::InjectedFailure();
    if (ok != 1) {
      copy_failed = true;
      EXPECT_NE(ERR_peek_error(), 0u) << "failed without an error";
      ERR_clear_error();
      ASSERT_EQ(EVP_CIPHER_CTX_copy(copy, ctx), 1) << TakeErrors();
    }
    // Both go on from the IV: the same message as the default provider's.
    for (EVP_CIPHER_CTX *each : {ctx, copy}) {
      std::vector<uint8_t> out(80);
      ASSERT_EQ(EVP_EncryptUpdate(each, nullptr, &len, b.in.data(), 13), 1);
      ASSERT_EQ(EVP_EncryptUpdate(each, out.data(), &len, b.in.data(), 64),
                1);
      ASSERT_EQ(EVP_EncryptFinal_ex(each, out.data() + 64, &len), 1);
      ASSERT_EQ(EVP_CIPHER_CTX_ctrl(each, EVP_CTRL_AEAD_GET_TAG, 16,
                                    out.data() + 64),
                1);
      EXPECT_EQ(out, expected) << "failing from " << n;
      // And the IV length and IV survive for the next message.
      EXPECT_EQ(LongIvMessage(each, b, iv), expected) << "failing from " << n;
    }
    EVP_CIPHER_CTX_free(copy);
    EVP_CIPHER_CTX_free(ctx);
    if (!injected || n > 50) break;
  }
  EXPECT_TRUE(copy_failed) << "the copy allocated nothing";
}

// Every MiB served rewrites the statistics file (provider/core/stats.h).
TEST(AllocFailure, StatisticsFileWrittenWhileServing) {
  const std::string prefix =
      "/tmp/aesmux-alloc-failure-" + std::to_string(getpid());
  ProviderEnv env(Configuration("stats_file = " + prefix));
  ASSERT_TRUE(env.loaded()) << env.error();
  const Buffers buffers;
  CipherPtr cipher = env.Aesmux("AES-128-CTR");
  FailEachAllocation([&](Checker &check) {
    Sequence(cipher.get(), Family::kCtr, buffers, 3 << 20, check);
  });
  std::remove((prefix + "." + std::to_string(getpid())).c_str());
}

// The fallback path's library context is made on the first request that
// needs it (provider/fallback/fallback.h), not at load: running out of
// memory while it is made fails that request with an error on the queue,
// and a later request, with memory back, makes it and is served. Making
// the library allocates a few thousand times and each try loads a provider
// anew: every fifth allocation fails in turn, which keeps this to seconds.
TEST(AllocFailure, FallbackLibraryMadeOnFirstRequest) {
  const Buffers buffers;
  uint64_t n = 1;
  for (; n < 20000; n += 5) {
    ProviderEnv env(Configuration("kernels = none"));
    ASSERT_TRUE(env.loaded()) << env.error();
    CipherPtr cipher = env.Aesmux("AES-128-GCM");
    ASSERT_NE(cipher, nullptr);
    const aesmux::test::Run run = RunFailingFrom(n, [&](Checker &check) {
      Sequence(cipher.get(), Family::kGcm, buffers, 64, check);
    });
    EXPECT_EQ(run.silent_failures, 0)
        << "allocation " << n << " failed: calls failed without an error";
    CipherCtxPtr ctx = NewCipherCtx();
    uint8_t *out = const_cast<uint8_t *>(buffers.out.data());
    int len = 0;
    EXPECT_TRUE(ctx != nullptr &&
                EVP_EncryptInit_ex2(ctx.get(), cipher.get(),
                                    buffers.key.data(), buffers.iv.data(),
                                    nullptr) == 1 &&
                EVP_EncryptUpdate(ctx.get(), out, &len, buffers.in.data(),
                                  64) == 1 &&
                EVP_EncryptFinal_ex(ctx.get(), out, &len) == 1)
        << "allocation " << n << " failed: the provider serves no more";
    ERR_clear_error();
    if (!run.reached_failure || HasFailure()) break;
  }
  EXPECT_LT(n, 20000u) << "the sequence never ran to its end";
}

TEST(AllocFailure, BatchingInAsyncJobs) {
  ProviderEnv env(Configuration(""));
  ASSERT_TRUE(env.loaded()) << env.error();
  if (env.ProviderParam("tier") == "none") {
    GTEST_SKIP() << "no kernel tier on this CPU: no batching";
  }
  const Buffers buffers;
  CipherPtr cipher = env.Aesmux("AES-128-CBC");
  const uint64_t batches = env.Stat("AES-128-CBC", "mb.batches");
  FailEachAllocation([&](Checker &check) {
    SequenceInJobs(cipher.get(), buffers, check);
  });
  EXPECT_GT(env.Stat("AES-128-CBC", "mb.batches"), batches)
      << "the jobs never batched";
}

}  // namespace
}  // namespace aesmux::test
