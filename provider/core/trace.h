// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
// AESMUX_TRACE: each routing decision on stderr, for people finding out
// why a request ran where it did.
//
// With AESMUX_TRACE set to anything but "" or "0" in the environment of the
// process when its first request is counted (read once, with
// secure_getenv: setuid programs ignore it), every served request prints
// one line as it is counted (core/stats.h), and every request the afalg
// path handed on prints one with the reason:
//
//   aesmux: AES-128-CBC 16 B -> simd
//   aesmux: AES-256-GCM 65536 B afalg -> handed on (ring_full)
//
// A line is written with one call, allocating nothing, through
// core/diagnostics.h: only into the file stderr was when aesmux was loaded,
// and never when the write would block. At most kTraceLinesPerSecond lines
// a second per process are printed; the first line printed after lines
// were dropped (over that rate, or not writable) says how many. Which rule sent a
// request to its path is the route `aesmux info` prints per algorithm.
#ifndef AESMUX_PROVIDER_CORE_TRACE_H_
#define AESMUX_PROVIDER_CORE_TRACE_H_

#include <cstdint>

#include "provider/core/algorithm.h"

namespace aesmux::core {

inline constexpr uint64_t kTraceLinesPerSecond = 1000;

// Whether AESMUX_TRACE is on in this process.
bool TraceOn();

void TraceRequest(Alg alg, Path path, uint64_t bytes);
void TraceHandoff(Alg alg, Handoff handoff, uint64_t bytes);

}  // namespace aesmux::core

#endif  // AESMUX_PROVIDER_CORE_TRACE_H_
