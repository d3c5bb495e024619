// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
// Fault injection for the tests of the afalg path: each fault, when armed,
// makes the next `count` passes through its point fail with `error`.
// Unarmed, a check is one relaxed atomic load. Nothing outside tests arms
// them (the module does not export these functions).
#ifndef AESMUX_PROVIDER_AFALG_FAULT_H_
#define AESMUX_PROVIDER_AFALG_FAULT_H_

// Layers (DEVELOPERS.md): only what links aesmux_afalg includes this.
#if defined(AESMUX_LAYER) && !defined(AESMUX_SEES_afalg)
#error "provider/afalg/fault.h belongs to a layer above the one that includes it"
#endif

#include <cstddef>
#include <cstdint>

namespace aesmux::afalg {

enum class Fault : uint8_t {
  kRingSetup,        // io_uring set-up fails
  kSocketSetup,      // the per-key socket (socket/bind/setkey/accept) fails
  kRingFull,         // the ring has no room
  kCloseOpSocket,    // the op socket is closed after the request is queued
  kCompletionError,  // the request completes (the kernel has written its
                     // output) but reports `error`: EBUSY, EINVAL, …
  kProbeAnswer,      // the probe's known answer for a key size (`only_len`:
                     // its key length) comes out wrong
  kBounceMap,        // mapping a bounce buffer (bounce.h) fails
};
inline constexpr size_t kNumFaults = 7;

// Arms `fault` for `count` passes (-1: until cleared), failing with `error`
// (-errno); with `only_len` != 0, only requests of that many bytes fail.
void InjectFault(Fault fault, int count, int error, uint64_t only_len = 0);
void ClearFaults();

// The error to fail with at this pass of `fault` (for a request of `len`
// bytes), or 0.
int TakeFault(Fault fault, uint64_t len = 0);

}  // namespace aesmux::afalg

#endif  // AESMUX_PROVIDER_AFALG_FAULT_H_
