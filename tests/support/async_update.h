// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
// Test support for paused and abandoned ASYNC jobs: one EVP_EncryptUpdate
// run in an OpenSSL ASYNC job, which aesmux may pause (a multi-buffer
// batch, the afalg ring).
#ifndef AESMUX_TESTS_SUPPORT_ASYNC_UPDATE_H_
#define AESMUX_TESTS_SUPPORT_ASYNC_UPDATE_H_

#include <openssl/async.h>
#include <openssl/evp.h>

#include <cstddef>
#include <random>

#include "tests/support/bytes.h"
#include "tests/support/provider_env.h"

namespace aesmux::test {

// Keeps a job left paused for good, and its wait context, reachable (OpenSSL
// never frees either; LeakSanitizer would report them).
void KeepAbandoned(ASYNC_JOB *job, ASYNC_WAIT_CTX *wait);

// A context of `cipher` (no padding) with a random key and IV, and one
// update of `len` random bytes to run in an ASYNC job on this thread.
struct AsyncUpdate {
  AsyncUpdate(const EVP_CIPHER *cipher, std::mt19937_64 &rng, size_t len);
  ~AsyncUpdate();
  AsyncUpdate(const AsyncUpdate &) = delete;
  AsyncUpdate &operator=(const AsyncUpdate &) = delete;

  // Starts or resumes the job: ASYNC_PAUSE, ASYNC_FINISH (the update
  // succeeded) or ASYNC_ERR.
  int Step();
  // Steps until the job ends; false unless the update succeeded.
  bool RunToEnd();
  // Whether the job is paused.
  bool paused() const { return job_ != nullptr; }
  // Leaves the paused job for good.
  void Abandon();

  CipherCtxPtr ctx = NewCipherCtx();
  Bytes key, iv, in, out;

 private:
  static int Run(void *arg);
  AsyncUpdate *self_ = this;
  ASYNC_JOB *job_ = nullptr;
  ASYNC_WAIT_CTX *wait_ = nullptr;
};

// `in` encrypted under `key` and `iv` by `cipher` (the default provider's,
// for reference), without padding.
Bytes EncryptWith(const EVP_CIPHER *cipher, const Bytes &key, const Bytes &iv,
                  const Bytes &in);

}  // namespace aesmux::test

#endif  // AESMUX_TESTS_SUPPORT_ASYNC_UPDATE_H_
