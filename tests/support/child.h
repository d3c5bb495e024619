// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
// Test support: running part of a test in a forked child, for tests that
// change process state (seccomp filters) or test what a child inherits.
#ifndef AESMUX_TESTS_SUPPORT_CHILD_H_
#define AESMUX_TESTS_SUPPORT_CHILD_H_

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <string>

namespace aesmux::test {

// Runs `body` in a forked child, which ends with _exit(body()). Returns
// empty if it exited with 0, else how it ended (exit code, or the signal:
// SIGSYS for a seccomp kill). With a `timeout`, a child still running then
// is killed and reported as hung.
std::string RunInChild(const std::function<int()> &body,
                       std::chrono::milliseconds timeout =
                           std::chrono::milliseconds::zero());

// How many threads a forked child may start of the `wanted`: none under
// ThreadSanitizer, which cannot run threads started in the child of a
// multi-threaded process (the child's own thread still works there).
int ThreadsInAChild(int wanted);

// Whether a child forked while another thread allocates can hang in the
// allocator: AddressSanitizer's and ThreadSanitizer's (GCC 12's) do not
// guard their locks across fork(), so the child can wait forever for a
// lock of a thread it does not have (seen: the child's first allocation
// waited in SizeClassAllocator64::GetFromAllocator).
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
inline constexpr bool kForkWhileAllocatingHangs = true;
#else
inline constexpr bool kForkWhileAllocatingHangs = false;
#endif

// Whether the sanitizers' shadow memory, terabytes of address space, is in
// this build: a process's address space cannot be limited then.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
inline constexpr bool kShadowMemory = true;
#else
inline constexpr bool kShadowMemory = false;
#endif

// This process's address space now, in bytes (VmSize in /proc/self/status;
// 0 if it cannot be read): what RLIMIT_AS is set against.
uint64_t AddressSpaceBytes();

// Worker threads that a test forks beside. Where a fork while a thread
// allocates can hang (kForkWhileAllocatingHangs), Fork() parks them
// between units of work first; elsewhere the threads run on.
class ForkParking {
 public:
  explicit ForkParking(int workers) : workers_(workers) {}

  // Each worker calls this between units of work, and Leave() when it
  // ends (a worker that has left is not waited for).
  void Pause();
  void Leave() { ++left_; }

  // RunInChild(body, timeout), with the workers parked where the
  // sanitizers need it.
  std::string Fork(const std::function<int()> &body,
                   std::chrono::milliseconds timeout);

 private:
  const int workers_;
  std::atomic<bool> park_{false};
  std::atomic<int> parked_{0};
  std::atomic<int> left_{0};
};

}  // namespace aesmux::test

#endif  // AESMUX_TESTS_SUPPORT_CHILD_H_
