// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
// Test support for the multi-buffer suites: CBC encryption streams through
// aesmux checked against the default provider, and the batching counters.
#ifndef AESMUX_TESTS_PROVIDER_CBC_STREAMS_H_
#define AESMUX_TESTS_PROVIDER_CBC_STREAMS_H_

#include <openssl/evp.h>

#include <gtest/gtest.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <random>
#include <vector>

#include "tests/provider/kernel_configs.h"
#include "tests/support/bytes.h"
#include "tests/support/provider_env.h"

namespace aesmux::test {

inline constexpr const char *kCbcAlgorithms[] = {"AES-128-CBC", "AES-192-CBC",
                                                 "AES-256-CBC"};

// One stream: a key, an IV and a few messages, with the default provider's
// ciphertext of the whole stream (CBC continues across updates).
struct Stream {
  const char *algorithm;
  Bytes key, iv;
  std::vector<Bytes> messages;
  Bytes expected;
};

// A stream of 1 to `max_messages` messages of 0 to `max_blocks` blocks
// each.
Stream MakeStream(const ProviderEnv &env, std::mt19937_64 &rng,
                  size_t max_blocks, int max_messages = 4);

// A stream of one message of `blocks` blocks in `algorithm`.
Stream OneMessageStream(const ProviderEnv &env, std::mt19937_64 &rng,
                        const char *algorithm, size_t blocks);

// Encrypts `stream` through aesmux; returns the ciphertext (empty if a call
// failed).
Bytes EncryptThroughAesmux(const ProviderEnv &env, const Stream &stream);
// The same with `cipher`, aesmux's implementation of stream.algorithm.
Bytes EncryptThrough(const EVP_CIPHER *cipher, const Stream &stream);

// Encrypts `record` `count` times in one CBC stream through `cipher`
// (count == 0: until `stop`, at least once); returns the FNV-1a of the
// ciphertext (0 if a call failed) and sets `count` to the records
// encrypted. `between`, if set, runs before each record.
uint64_t EncryptRecords(EVP_CIPHER *cipher, const Bytes &key, const Bytes &iv,
                        const Bytes &record, uint64_t &count,
                        const std::atomic<bool> *stop,
                        const std::function<void()> &between = {});

// aesmux's multi-buffer counters summed over the CBC algorithms.
struct BatchCounts {
  uint64_t mb_requests = 0, simd_requests = 0, batches = 0, lanes = 0;
};
BatchCounts Counts(const ProviderEnv &env);

// How many CPUs this process may run on.
int UsableCpus();

// The kernel configurations of the multi-buffer suites: every tier, with
// nothing routed to the fallback path.
std::vector<KernelConfig> MultiBufferConfigs();

// A suite over MultiBufferConfigs(): aesmux loaded in env_, or the test
// skipped when the CPU lacks the tier. ASYNC jobs and threads beyond the
// CPUs batch records of every length there (cbc.mb_min_len = 0,
// cbc.mb_threads_min_len = 0), so that the lanes meet short records too; a
// test of the defaults loads its own.
class MultiBufferTest : public ::testing::TestWithParam<KernelConfig> {
 protected:
  void SetUp() override;

  std::unique_ptr<ProviderEnv> env_;
};

}  // namespace aesmux::test

#endif  // AESMUX_TESTS_PROVIDER_CBC_STREAMS_H_
