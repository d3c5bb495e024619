// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
#include "provider/core/process.h"

#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdint>
#include <mutex>
#include <thread>

namespace aesmux::core {
namespace {

constinit std::atomic<uint64_t> g_generation{1};
constinit std::atomic<bool> g_watching{false};
constinit std::once_flag g_fork_handler;

void AfterForkInChild() {
  g_generation.fetch_add(1, std::memory_order_relaxed);
}

[[gnu::noinline]] void WatchForks() {
  std::call_once(g_fork_handler,
                 [] { pthread_atfork(nullptr, nullptr, AfterForkInChild); });
  g_watching.store(true, std::memory_order_release);
}

pthread_mutex_t g_init = PTHREAD_MUTEX_INITIALIZER;
constinit std::once_flag g_init_fork_handlers;
// How many InitLocks this thread holds: the mutex is taken by the first
// and given back by the last (no destructor: nothing registered at exit).
thread_local constinit unsigned t_init_depth = 0;

// Each CPU's rank among the usable ones (kNotUsable: not one of them),
// written before UsableCpus() publishes its count.
constexpr uint16_t kNotUsable = UINT16_MAX;
constinit std::array<std::atomic<uint16_t>, CPU_SETSIZE> g_cpu_rank{};

}  // namespace

uint32_t UsableCpus() {
  // 0 until first asked; constant-initialized, so it needs no guard that a
  // fork could leave held (ProcessValue).
  static constinit std::atomic<uint32_t> cpus{0};
  uint32_t count = cpus.load(std::memory_order_acquire);
  if (count == 0) {
    cpu_set_t set;
    const bool known =
        sched_getaffinity(0, sizeof(set), &set) == 0 && CPU_COUNT(&set) > 0;
    uint16_t rank = 0;
    for (size_t cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
      g_cpu_rank[cpu].store(known && CPU_ISSET(cpu, &set) ? rank++ : kNotUsable,
                            std::memory_order_relaxed);
    }
    count = known ? static_cast<uint32_t>(CPU_COUNT(&set))
                  : std::max(1u, std::thread::hardware_concurrency());
    cpus.store(count, std::memory_order_release);
  }
  return count;
}

uint32_t UsableCpuRank(uint32_t cpu) {
  (void)UsableCpus();
  if (cpu >= CPU_SETSIZE) return cpu;
  const uint16_t rank = g_cpu_rank[cpu].load(std::memory_order_relaxed);
  return rank != kNotUsable ? rank : cpu;
}

void HoldInitLockForFork() {
  if (t_init_depth++ == 0) pthread_mutex_lock(&g_init);
}

void ReleaseInitLockAfterFork() {
  if (--t_init_depth == 0) pthread_mutex_unlock(&g_init);
}

InitLock::InitLock() {
  std::call_once(g_init_fork_handlers, [] {
    pthread_atfork(HoldInitLockForFork, ReleaseInitLockAfterFork,
                   ReleaseInitLockAfterFork);
  });
  HoldInitLockForFork();
}

InitLock::~InitLock() { ReleaseInitLockAfterFork(); }

uint64_t ProcessGeneration() {
  if (!g_watching.load(std::memory_order_acquire)) WatchForks();
  return g_generation.load(std::memory_order_relaxed);
}

}  // namespace aesmux::core
