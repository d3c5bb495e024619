// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
#include "provider/afalg/fd_budget.h"

#include <sys/resource.h>

#include <algorithm>
#include <atomic>

namespace aesmux::afalg {
namespace {

// A limit beyond any real descriptor table (RLIM_INFINITY is not allowed
// for RLIMIT_NOFILE, but a soft limit may be huge).
constexpr uint64_t kLargestLimit = uint64_t{1} << 20;

std::atomic<uint64_t> g_max_fds{0};  // afalg_max_fds; 0: none
std::atomic<uint64_t> g_limit{1024};  // soft RLIMIT_NOFILE, last read
std::atomic<uint64_t> g_held{0};

uint64_t Budget(uint64_t limit) {
  const uint64_t max_fds = g_max_fds.load(std::memory_order_relaxed);
  const uint64_t quarter = limit / 4;
  return max_fds != 0 ? std::min(quarter, max_fds) : quarter;
}

void ReadLimit() {
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) == 0) {
    g_limit.store(std::min<uint64_t>(limit.rlim_cur, kLargestLimit),
                  std::memory_order_relaxed);
  }
}

bool Fits(unsigned count) {
  return g_held.load(std::memory_order_relaxed) + count <=
         Budget(g_limit.load(std::memory_order_relaxed));
}

}  // namespace

void ConfigureFdBudget(uint64_t max_fds) {
  g_max_fds.store(max_fds, std::memory_order_relaxed);
  ReadLimit();
}

bool ReserveFds(unsigned count) {
  // Spent as last known: make room, or refuse without a syscall.
  if (!Fits(count)) {
    if (IdleOpSockets() != 0) CloseIdleOpSockets();
    if (!Fits(count)) return false;
  }
  // About to open descriptors: the limit as it is now.
  ReadLimit();
  const uint64_t held =
      g_held.fetch_add(count, std::memory_order_relaxed) + count;
  if (held > Budget(g_limit.load(std::memory_order_relaxed))) {
    g_held.fetch_sub(count, std::memory_order_relaxed);
    return false;
  }
  return true;
}

void ReturnFds(unsigned count) {
  g_held.fetch_sub(count, std::memory_order_relaxed);
}

bool FdLeavesHeadroom(int fd) {
  const uint64_t limit = g_limit.load(std::memory_order_relaxed);
  return fd >= 0 && static_cast<uint64_t>(fd) < limit - limit / 4;
}

uint64_t FdsHeld() { return g_held.load(std::memory_order_relaxed); }

uint64_t FdBudget() { return Budget(g_limit.load(std::memory_order_relaxed)); }

}  // namespace aesmux::afalg
