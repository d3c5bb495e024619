// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
#include "provider/afalg/process.h"

#include <atomic>

namespace aesmux::afalg {
namespace {

// The generation that probed successfully, or 0. Its descendants have
// larger generations.
std::atomic<uint64_t> g_armed_generation{0};
std::atomic<bool> g_fork_rebuild{false};

}  // namespace

bool Armed() {
  const uint64_t armed = g_armed_generation.load(std::memory_order_relaxed);
  if (armed == 0) return false;
  return armed == ProcessGeneration() ||
         g_fork_rebuild.load(std::memory_order_relaxed);
}

void Arm() {
  g_armed_generation.store(ProcessGeneration(), std::memory_order_relaxed);
}

void SetForkRebuild(bool rebuild) {
  if (rebuild) g_fork_rebuild.store(true, std::memory_order_relaxed);
}

}  // namespace aesmux::afalg
