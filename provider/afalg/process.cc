// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
#include "provider/afalg/process.h"

#include <atomic>

namespace aesmux::afalg {
namespace {

// The generation that probed successfully, or 0. Its descendants have
// larger generations.
std::atomic<uint64_t> g_armed_generation{0};

}  // namespace

bool Armed(bool fork_rebuild) {
  const uint64_t armed = g_armed_generation.load(std::memory_order_relaxed);
  if (armed == 0) return false;
  return armed == ProcessGeneration() || fork_rebuild;
}

void Arm() {
  g_armed_generation.store(ProcessGeneration(), std::memory_order_relaxed);
}

}  // namespace aesmux::afalg
