// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
// Which process this is, without a syscall: the fork generation.
//
// State that belongs to one process (the thread combiner's shards, the
// threads' lane managers and ASYNC wait fd, io_uring rings, AF_ALG
// sockets) records the generation it was made in. A forked child has only
// the thread that called fork(); whatever the others left there (a
// combiner held, requests published or queued, a ring mid-submission)
// belongs to threads that do not exist in it. The child recognises it by
// the generation and makes its own, never using, running or closing the
// parent's.
//
// A fork handler (pthread_atfork, registered on first use) bumps the
// generation in the child: one integer store, no syscall (a child may be
// about to enter a seccomp sandbox) and nothing unsafe after fork. glibc
// drops the handler when aesmux.so is unloaded (dlclose unregisters the
// module's fork handlers; tests/provider/fork_test.cc forks after an
// unload), so it never calls into an unmapped module.
#ifndef AESMUX_PROVIDER_CORE_PROCESS_H_
#define AESMUX_PROVIDER_CORE_PROCESS_H_

#include <atomic>
#include <cstdint>
#include <new>

namespace aesmux::core {

// Starts at 1 and grows by one in each forked child. Reading it registers
// the fork handler, so anything that records a generation is recognised
// in a child forked after that.
uint64_t ProcessGeneration();

// How many CPUs this process may run on (its affinity mask; the hardware's
// count if the mask cannot be read), asked of the kernel once and then
// kept: the thread combiner sizes its shards by it, calibrate its thread
// counts.
uint32_t UsableCpus();

// The rank of CPU `cpu` among those UsableCpus() counted (0 for the
// lowest-numbered); a CPU outside them (or past CPU_SETSIZE), its number.
// No system call after the first UsableCpus().
uint32_t UsableCpuRank(uint32_t cpu);

// Held while a process-wide object is made or replaced on first use (the
// fallback library, a wait fd, the afalg probe) or freed (the afalg
// service, the thread combiner), and while the provider instances are
// counted: one lock for all of them, held briefly. The thread that holds
// it may take it again (the afalg probe makes the thread's io_uring ring,
// whose per-thread slot makes the process's pthread key under it on first
// use). fork() waits until no thread holds it, so that a child never
// inherits it held, or an object half made, by a thread it does not have.
class InitLock {
 public:
  InitLock();
  ~InitLock();
  InitLock(const InitLock &) = delete;
  InitLock &operator=(const InitLock &) = delete;
};

// For the fork handlers of aesmux's other process-wide locks, which code
// holding InitLock may take (the afalg key list, the statistics): a
// prepare handler calls HoldInitLockForFork() before taking its own lock,
// the parent and child handlers ReleaseInitLockAfterFork() after giving it
// back. fork() then takes InitLock first, in the order that code does,
// whatever order glibc runs the handlers in (the newest first: a handler
// registered after InitLock's would otherwise take its lock before
// InitLock, and wait forever for a thread that holds InitLock and waits
// for that lock).
void HoldInitLockForFork();
void ReleaseInitLockAfterFork();

// A value made on first use and kept for the process, as a function-local
// `static const T x = Make();` would keep it, but without that static's
// guard: a child forked while another thread ran a guarded initializer
// inherits the guard as "in progress" and waits forever at its first use
// (fork_test's children hung so on a guard under qemu's slow emulation).
// This one is made under InitLock, which fork() waits for (`make` may take
// it again). (std::call_once over glibc's pthread_once, which a
// child restarts, was tried first: it crashed inside the module's own
// tests, cause not established, so the lock that is already there serves.)
// Declare one at namespace scope, where it is constant-initialized and
// needs no guard of its own (tests/provider/static_guards_test.sh checks
// that the modules have no such guard). If `make` throws, the next Get
// tries again.
template <class T>
class ProcessValue {
 public:
  constexpr ProcessValue() = default;
  ~ProcessValue() {
    if (made_.load(std::memory_order_acquire)) Value().~T();
  }
  ProcessValue(const ProcessValue &) = delete;
  ProcessValue &operator=(const ProcessValue &) = delete;

  template <class Make>
  const T &Get(Make make) {
    if (!made_.load(std::memory_order_acquire)) {
      InitLock lock;
      if (!made_.load(std::memory_order_relaxed)) {
        new (storage_) T(make());
        made_.store(true, std::memory_order_release);
      }
    }
    return Value();
  }

 private:
  T &Value() { return *std::launder(reinterpret_cast<T *>(storage_)); }

  std::atomic<bool> made_{false};
  alignas(T) unsigned char storage_[sizeof(T)];
};

}  // namespace aesmux::core

#endif  // AESMUX_PROVIDER_CORE_PROCESS_H_
