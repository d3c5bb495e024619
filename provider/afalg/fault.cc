// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
#include "provider/afalg/fault.h"

#include <array>
#include <atomic>

namespace aesmux::afalg {
namespace {

struct Armed {
  std::atomic<int> remaining{0};
  std::atomic<int> error{0};
  std::atomic<uint64_t> only_len{0};
};
std::array<Armed, kNumFaults> g_faults;
std::atomic<bool> g_any{false};

}  // namespace

void InjectFault(Fault fault, int count, int error, uint64_t only_len) {
  Armed &armed = g_faults[static_cast<size_t>(fault)];
  armed.error.store(error);
  armed.only_len.store(only_len);
  armed.remaining.store(count);
  g_any.store(true);
}

void ClearFaults() {
  for (Armed &armed : g_faults) armed.remaining.store(0);
  g_any.store(false);
}

int TakeFault(Fault fault, uint64_t len) {
  if (!g_any.load(std::memory_order_relaxed)) return 0;
  Armed &armed = g_faults[static_cast<size_t>(fault)];
  const uint64_t only_len = armed.only_len.load();
  if (only_len != 0 && only_len != len) return 0;
  int remaining = armed.remaining.load();
  while (remaining != 0) {
    const int next = remaining < 0 ? remaining : remaining - 1;
    if (armed.remaining.compare_exchange_weak(remaining, next)) {
      return armed.error.load();
    }
  }
  return 0;
}

}  // namespace aesmux::afalg
