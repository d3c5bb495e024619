// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
// Routing statistics: requests and bytes per algorithm and path, and per
// algorithm the requests the afalg path handed on, by reason.
//
// Counting is per thread (no shared cache line is written on the hot path);
// reading sums every live thread plus the totals of threads that have
// exited. The counters are process-wide and start from zero in a forked
// child, so each process reports only its own work.
#ifndef AESMUX_PROVIDER_CORE_STATS_H_
#define AESMUX_PROVIDER_CORE_STATS_H_

#include <array>
#include <atomic>
#include <cstdint>
#include <string>
#include <string_view>

#include "provider/core/algorithm.h"

namespace aesmux::core {

struct Counter {
  uint64_t requests = 0;
  uint64_t bytes = 0;
};

struct StatsSnapshot {
  std::array<std::array<Counter, kNumPaths>, kNumAlgs> counters{};
  // Key schedules actually built (a key set again unchanged is not
  // expanded again, and TLS 1.3's per-record IV re-init sets no key).
  std::array<uint64_t, kNumAlgs> key_setups{};
  std::array<std::array<Counter, kNumHandoffs>, kNumAlgs> handoffs{};
  // Multi-buffer kernel calls and the lanes they filled (lanes / batches is
  // the average batch size).
  std::array<uint64_t, kNumAlgs> mb_batches{};
  std::array<uint64_t, kNumAlgs> mb_lanes{};

  const Counter &at(Alg alg, Path path) const {
    return counters[static_cast<size_t>(alg)][static_cast<size_t>(path)];
  }
  const Counter &at(Alg alg, Handoff handoff) const {
    return handoffs[static_cast<size_t>(alg)][static_cast<size_t>(handoff)];
  }
};

// Records one request of `bytes` bytes served by `path` (inline below: it
// runs for every request). A thread's first count allocates its counters
// (released when it exits: core/thread_exit.h); if memory has run out,
// the thread counts in counters all such threads share (nothing fails,
// nothing is lost).
void CountRequest(Alg alg, Path path, uint64_t bytes);
// Records one key schedule built for `alg`.
void CountKeySetup(Alg alg);
// Records that the afalg path handed a request of `bytes` bytes on.
void CountHandoff(Alg alg, Handoff handoff, uint64_t bytes);
// Records `batches` multi-buffer kernel calls for `alg` that filled `lanes`
// lanes in all.
void CountBatches(Alg alg, uint64_t batches, uint64_t lanes);

StatsSnapshot ReadStats();

// The name of a hand-off counter in the statistics, in the place of a path:
// "afalg-fallback:<reason>".
inline constexpr std::string_view kHandoffStatPrefix = "afalg-fallback:";
std::string HandoffStatName(Handoff handoff);

// One line per algorithm and path: "<algorithm> <path> <requests> <bytes>",
// then one line "<algorithm> afalg-fallback:<reason> <requests> <bytes>" per
// hand-off counter that is not zero.
std::string FormatStats(const StatsSnapshot &snapshot);

// The statistics file (its names, format and folding: core/stats_file.h):
// with a prefix set, this process's counts in "<prefix>.<pid>.<id>",
// written through a temporary file and a rename, so readers never see half
// a file; a process that has counted nothing writes nothing. Writing it
// allocates nothing (it happens on request paths, and while an application
// is running out of memory). At the process's first write and its last,
// the files of this user's processes that have exited are first folded
// into "<prefix>.summary.<uid>", so that the directory stays bounded; while
// another user's file that this user cannot remove holds that name, no
// file could be folded, and a process that has not written one writes none.
// Once a prefix is set, the file is also rewritten while requests are
// served, so that a process leaving through _exit() (sshd's session
// processes do) still leaves a record: at most once per kProgressIntervalNs
// per process, checked when a thread has served another kProgressBytes
// (one clock read per MiB). The write itself, formatting every counter and
// a create, write and rename, costs far more than serving a MiB: after
// every MiB, it was most of the time a TLS server spent. The record misses
// at most what the process served in its last interval. If a write fails (no permission, a sandbox), progress
// writes stop: no further syscalls. A problem (the directory missing or not
// writable at load, a write failing, a summary that cannot be folded into)
// is printed once per process on stderr (core/diagnostics.h) and kept for
// StatsFileState.
inline constexpr uint64_t kProgressBytes = uint64_t{1} << 20;
inline constexpr int64_t kProgressIntervalNs = 1'000'000'000;

// Sets the prefix ("" for none) and checks, once, that its directory can
// be written.
void SetStatsFilePrefix(const std::string &prefix);
// Lines (such as why the afalg path is off) kept in the file as notes;
// replaces earlier notes.
void SetStatsFileNotes(const std::string &notes);
// Writes the file now, if a prefix is set. Returns 0 or -errno.
int WriteStatsFile();
// What happens to the statistics file, for `aesmux info`: "off (...)",
// where the files go, or the first problem ("no statistics are written:
// ...", or why exited processes are not folded).
std::string StatsFileState();
// The first problem with the statistics file, or "" if none: one of the
// problems `aesmux info` reports (and exits 1 for).
std::string StatsFileProblem();

// The counting fast path, inlined into every request path (it is a few
// instructions, and a short GCM record's provider code is few more:
// BENCHMARKS.md, "Instructions per record"); everything else lives in
// stats.cc.
namespace stats_internal {

// One thread's counters. Only the owning thread writes them (relaxed
// load+store, no locked instruction); readers load them relaxed.
struct ThreadCounters {
  std::array<std::array<std::atomic<uint64_t>, kNumPaths>, kNumAlgs> requests{};
  std::array<std::array<std::atomic<uint64_t>, kNumPaths>, kNumAlgs> bytes{};
  std::array<std::atomic<uint64_t>, kNumAlgs> key_setups{};
  std::array<std::array<std::atomic<uint64_t>, kNumHandoffs>, kNumAlgs>
      handoff_requests{};
  std::array<std::array<std::atomic<uint64_t>, kNumHandoffs>, kNumAlgs>
      handoff_bytes{};
  std::array<std::atomic<uint64_t>, kNumAlgs> mb_batches{};
  std::array<std::atomic<uint64_t>, kNumAlgs> mb_lanes{};
  uint64_t unwritten_bytes = 0;  // owner only: served since the last write
  ThreadCounters *next = nullptr;
};

// This thread's counters, or null before its first request, and always
// null while AESMUX_TRACE is on (core/trace.h): every request then takes
// CountRequest()'s slow path, which traces it, and the fast path has no
// test of its own. A plain pointer, so that reaching it from a dlopen()ed
// module is one TLS descriptor access.
// constinit: no dynamic initialisation, so no reference to a TLS wrapper
// function that the loader would look up, and fail to find, at load.
extern thread_local constinit ThreadCounters *t_counters;

// This thread's counters, made on first use; null if memory has run out.
ThreadCounters *RegisterThread();
// CountRequest() without t_counters: traces the request when AESMUX_TRACE
// is on, then counts it in RegisterThread()'s counters. Out of line and
// called last, so that the fast path keeps no copy of its arguments for it.
void CountRequestSlow(Alg alg, Path path, uint64_t bytes);
void WriteProgress();

inline void Bump(std::atomic<uint64_t> &counter, uint64_t amount) {
  counter.store(counter.load(std::memory_order_relaxed) + amount,
                std::memory_order_relaxed);
}

inline void AddRequest(ThreadCounters &counters, Alg alg, Path path,
                       uint64_t bytes) {
  const auto a = static_cast<size_t>(alg);
  const auto p = static_cast<size_t>(path);
  Bump(counters.requests[a][p], 1);
  Bump(counters.bytes[a][p], bytes);
  counters.unwritten_bytes += bytes;
  if (counters.unwritten_bytes >= kProgressBytes) WriteProgress();
}

}  // namespace stats_internal

[[gnu::always_inline]] inline void CountRequest(Alg alg, Path path,
                                                uint64_t bytes) {
  using namespace stats_internal;
  ThreadCounters *counters = t_counters;
  if (counters == nullptr) {
    CountRequestSlow(alg, path, bytes);
    return;
  }
  AddRequest(*counters, alg, path, bytes);
}

}  // namespace aesmux::core

#endif  // AESMUX_PROVIDER_CORE_STATS_H_
