// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
// Test support for the stress suites: one message in a random algorithm,
// length and split into updates, through aesmux and the default provider.
#ifndef AESMUX_TESTS_SUPPORT_RANDOM_MESSAGE_H_
#define AESMUX_TESTS_SUPPORT_RANDOM_MESSAGE_H_

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "tests/support/child.h"
#include "tests/support/provider_env.h"

namespace aesmux::test {

// All 14 algorithms, fetched once from aesmux and from the default provider
// (a forked child then fetches nothing: fetching takes locks that a parent
// thread may have held at the fork).
class CipherSet {
 public:
  explicit CipherSet(const ProviderEnv &env);

  struct Pair {
    const char *name;
    CipherPtr aesmux, reference;
  };
  const std::vector<Pair> &pairs() const { return pairs_; }
  // Whether every algorithm was fetched from both providers.
  bool complete() const;

 private:
  std::vector<Pair> pairs_;
};

// Encrypts one random message (a random algorithm of `ciphers`, key, IV,
// length up to `max_len`, AAD for GCM, padding for ECB/CBC, updates of
// random sizes, in place or not) through aesmux and the default provider,
// then decrypts aesmux's ciphertext through aesmux. Returns an empty string
// if outputs, lengths and tags agree and the plaintext comes back, else
// what differed.
std::string CheckRandomMessage(const CipherSet &ciphers, std::mt19937_64 &rng,
                               size_t max_len);

// How long a stress test runs: AESMUX_TEST_STRESS_SECONDS if set (for long runs
// by hand), else `ci`.
std::chrono::milliseconds StressDuration(std::chrono::milliseconds ci);

// Threads that check random messages (up to 20000 bytes) until stopped;
// the first disagreement is kept.
class Checkers {
 public:
  Checkers(const CipherSet &ciphers, int threads, uint64_t seed);
  ~Checkers() { Stop(); }
  Checkers(const Checkers &) = delete;
  Checkers &operator=(const Checkers &) = delete;

  // RunInChild while the threads run, parked between messages where the
  // sanitizers need it (ForkParking, tests/support/child.h).
  std::string Fork(const std::function<int()> &body,
                   std::chrono::milliseconds timeout) {
    return parking_.Fork(body, timeout);
  }
  // Stops the threads; returns the first disagreement (empty if none).
  std::string Stop();
  uint64_t messages() const { return messages_; }

 private:
  std::atomic<bool> stop_{false};
  ForkParking parking_;
  std::atomic<uint64_t> messages_{0};
  std::mutex mutex_;
  std::string failure_;
  std::vector<std::thread> pool_;
};

// A forked child's share of a fork stress: random messages checked for a
// while on this thread and `threads` more (ThreadsInAChild permitting),
// with (`depth` permitting) a child of its own forked meanwhile, which must
// end within `timeout`. Returns the child's exit code: 0 if everything
// agreed.
int StressInChild(const CipherSet &ciphers, int threads, uint64_t seed,
                  int depth, std::chrono::milliseconds timeout);

}  // namespace aesmux::test

#endif  // AESMUX_TESTS_SUPPORT_RANDOM_MESSAGE_H_
