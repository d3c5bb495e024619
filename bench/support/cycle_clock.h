// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
// Benchmark support on x86-64: core clock cycles from the time-stamp
// counter. Header-only; for the benchmark programs, not for tests.
//
// The TSC ticks at a constant rate that is not the core clock (2.6 GHz on
// the Zen 4 test machine, whose cores run at about 3.7 GHz), and under KVM
// it can advance in steps (26 ticks on that machine), so a single short
// call cannot be timed with it: time batches of calls long enough for the
// step not to matter (BatchTicks) and convert ticks to core cycles with
// CoreCyclesPerTick.
#ifndef AESMUX_TESTS_SUPPORT_CYCLE_CLOCK_H_
#define AESMUX_TESTS_SUPPORT_CYCLE_CLOCK_H_

#include <x86intrin.h>

#include <algorithm>
#include <cstdint>

namespace aesmux::test {

// Core clock cycles per TSC tick: a chain of dependent 64-bit IMULs, whose
// latency is 3 cycles on every x86-64 core in question (Intel since Sandy
// Bridge, AMD since Zen), fastest of many short runs.
inline double CoreCyclesPerTick() {
  uint64_t best = ~uint64_t{0};
  constexpr long kIterations = 100'000;
  for (int t = 0; t < 200; ++t) {
    long n = kIterations;
    uint64_t x = 3;
    _mm_lfence();
    const uint64_t start = __rdtsc();
    __asm__ volatile(
        "1:\n\t"
        "imul %0, %0\n\t"
        "imul %0, %0\n\t"
        "imul %0, %0\n\t"
        "imul %0, %0\n\t"
        "dec %1\n\t"
        "jnz 1b"
        : "+r"(x), "+r"(n));
    _mm_lfence();
    best = std::min<uint64_t>(best, __rdtsc() - start);
  }
  return kIterations * 4 * 3.0 / best;
}

// TSC ticks for `calls` calls of `op` (serialised by LFENCE at both ends).
template <typename Op>
uint64_t BatchTicks(const Op &op, long calls) {
  _mm_lfence();
  const uint64_t start = __rdtsc();
  _mm_lfence();
  for (long i = 0; i < calls; ++i) op();
  _mm_lfence();
  return __rdtsc() - start;
}

}  // namespace aesmux::test

#endif  // AESMUX_TESTS_SUPPORT_CYCLE_CLOCK_H_
