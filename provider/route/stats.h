// Routing statistics: requests and bytes per algorithm and path, and per
// algorithm the requests the afalg path handed on, by reason.
//
// Counting is per thread (no shared cache line is written on the hot path);
// reading sums every live thread plus the totals of threads that have
// exited. The counters are process-wide and start from zero in a forked
// child, so each process reports only its own work.
#ifndef AESMUX_PROVIDER_ROUTE_STATS_H_
#define AESMUX_PROVIDER_ROUTE_STATS_H_

#include <array>
#include <cstdint>
#include <string>

#include "provider/route/algorithm.h"

namespace aesmux::route {

struct Counter {
  uint64_t requests = 0;
  uint64_t bytes = 0;
};

struct StatsSnapshot {
  std::array<std::array<Counter, kNumPaths>, kNumAlgs> counters{};
  std::array<std::array<Counter, kNumHandoffs>, kNumAlgs> handoffs{};

  const Counter &at(Alg alg, Path path) const {
    return counters[static_cast<size_t>(alg)][static_cast<size_t>(path)];
  }
  const Counter &at(Alg alg, Handoff handoff) const {
    return handoffs[static_cast<size_t>(alg)][static_cast<size_t>(handoff)];
  }
};

// Records one request of `bytes` bytes served by `path`.
void CountRequest(Alg alg, Path path, uint64_t bytes);

// Records that the afalg path handed a request of `bytes` bytes on.
void CountHandoff(Alg alg, Handoff handoff, uint64_t bytes);

StatsSnapshot ReadStats();

// The name of a hand-off counter in the statistics, in the place of a path:
// "afalg-fallback:<reason>".
std::string HandoffStatName(Handoff handoff);

// One line per algorithm and path: "<algorithm> <path> <requests> <bytes>",
// then one line "<algorithm> afalg-fallback:<reason> <requests> <bytes>" per
// hand-off counter that is not zero.
std::string FormatStats(const StatsSnapshot &snapshot);

// Writes FormatStats(ReadStats()), then `notes` (lines starting with '#',
// such as why the afalg path is off), to "<prefix>.<pid>" (via a temporary
// file and rename, so readers never see half a file). Returns 0 or -errno.
int WriteStatsFile(const std::string &prefix, const std::string &notes = {});

}  // namespace aesmux::route

#endif  // AESMUX_PROVIDER_ROUTE_STATS_H_
