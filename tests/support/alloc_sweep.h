// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
// Test support: allocation-failure sweeps (with tests/support/
// alloc_hooks.h). A sequence of EVP calls is run again and again, the
// first time with its first allocation failing, then its second, and so on
// until it runs without reaching the failure (from the failing allocation
// on, every later one fails too: memory is gone). Nothing may abort (an
// exception through a dispatch function would, as would glibc's
// registration of a thread_local destructor), and every call that fails
// must say why on OpenSSL's error queue. Each run is in a thread of its
// own, so that the thread's first request (per-thread state) is part of
// it. Shared by the provider's sweep and the ENGINE's.
#ifndef AESMUX_TESTS_SUPPORT_ALLOC_SWEEP_H_
#define AESMUX_TESTS_SUPPORT_ALLOC_SWEEP_H_

#include <fcntl.h>
#include <gtest/gtest.h>
#include <openssl/async.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <thread>
#include <vector>

#include "provider/core/algorithm.h"
#include "tests/support/alloc_hooks.h"

namespace aesmux::test {

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
    ++calls_;
    if (ok == 1) return true;
    ++failures_;
    if (ERR_peek_error() == 0) ++silent_failures_;
    ERR_clear_error();
    return false;
  }
  int silent_failures() const { return silent_failures_; }
  int calls() const { return calls_; }
  int failures() const { return failures_; }

 private:
  int silent_failures_ = 0;
  int calls_ = 0;
  int failures_ = 0;
};

// One sequence on `cipher`: encryption in several updates (for GCM with
// AAD first, the second piece beyond the buffering bound), a copy made
// after the first update (for GCM while its AAD is buffered) that finishes
// on its own, final, a re-key and a last message of `last_len` bytes. It
// stops at the first call that fails, as an application would: OpenSSL 3.0
// calls a provider with no context after its newctx failed. (An
// EVP_CIPHER_CTX that OpenSSL cannot allocate is not checked: OpenSSL 3.0
// puts no error on the queue for it.)
inline void Sequence(const EVP_CIPHER *cipher, Family family, const Buffers &b,
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

inline int SequenceInJob(void *arg) {
  const JobArgs *args = *static_cast<JobArgs **>(arg);
  Sequence(args->cipher, Family::kCbc, *args->buffers, 1024, *args->check);
  return 1;
}

// Two ASYNC jobs running the CBC sequence, so that they batch. (OpenSSL's
// own ASYNC machinery failing is not checked: it leaves no error.)
inline void SequenceInJobs(const EVP_CIPHER *cipher, const Buffers &b,
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

// Stderr to /dev/null for the object's life: a refused load or ENGINE
// initialisation is reported there, once per allocation of a sweep.
class SilencedStderr {
 public:
  SilencedStderr() {
    std::fflush(stderr);
    saved_ = dup(STDERR_FILENO);
    const int null = open("/dev/null", O_WRONLY | O_CLOEXEC);
    if (null >= 0) {
      dup2(null, STDERR_FILENO);
      close(null);
    }
  }
  ~SilencedStderr() {
    std::fflush(stderr);
    if (saved_ >= 0) {
      dup2(saved_, STDERR_FILENO);
      close(saved_);
    }
  }
  SilencedStderr(const SilencedStderr &) = delete;
  SilencedStderr &operator=(const SilencedStderr &) = delete;

 private:
  int saved_ = -1;
};

struct Run {
  bool reached_failure = false;
  int silent_failures = 0;
  int calls = 0;
  int failures = 0;
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
    run.calls = check.calls();
    run.failures = check.failures();
    ERR_clear_error();
    ASYNC_cleanup_thread();
  });
  thread.join();
  return run;
}

// Fails every allocation of `body` in turn, from the first until it runs
// to the end without reaching the failure.
template <typename Body>
void FailEachAllocation(const Body &body, uint64_t most = 10000) {
  uint64_t n = 1;
  for (; n < most; ++n) {
    const Run run = RunFailingFrom(n, body);
    EXPECT_EQ(run.silent_failures, 0)
        << "allocation " << n << " failed: calls failed without an error";
    if (!run.reached_failure) break;
  }
  EXPECT_LT(n, most) << "the sequence never ran to its end";
  EXPECT_GT(n, 1u) << "the sequence allocated nothing: it tests nothing";
  // With memory back every checked call succeeds: nothing was lost to a
  // failure (and a sequence that fails anyway would have tested nothing).
  const Run clean = RunFailingFrom(~uint64_t{0}, body);
  EXPECT_GT(clean.calls, 0) << "the sequence makes no call";
  EXPECT_EQ(clean.failures, 0) << "with memory back, calls still fail";
}

}  // namespace aesmux::test

#endif  // AESMUX_TESTS_SUPPORT_ALLOC_SWEEP_H_
