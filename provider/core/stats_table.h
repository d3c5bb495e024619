// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
// The statistics as people read them: the table `aesmux stats` prints and
// the ENGINE's DUMP_STATS prints, one formatter for both.
#ifndef AESMUX_PROVIDER_CORE_STATS_TABLE_H_
#define AESMUX_PROVIDER_CORE_STATS_TABLE_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "provider/core/stats.h"

namespace aesmux::core {

// A note (why the afalg path was off, ...) and how many processes made it.
struct StatsTableNote {
  std::string text;
  uint64_t processes = 1;
};

// Per algorithm and path that served requests: the requests, bytes and
// share of the algorithm's bytes; then the afalg path's hand-offs by
// reason; then the notes, each followed by "(N processes)" if
// `note_counts`. Anything taken from a file is shown through Printable.
std::string FormatStatsTable(const StatsSnapshot &counts,
                             const std::vector<StatsTableNote> &notes,
                             bool note_counts);

// `path`'s share of `alg`'s bytes over every path, 0 to 1 (0 if none);
// hand-offs are counted again on the path that served them, so they are
// left out. Computed in floating point: the sum of the paths may pass
// 2^64 - 1 where each does not.
double StatsShare(const StatsSnapshot &counts, Alg alg, Path path);

// `text` with every byte that is not printable ASCII shown as \xNN (and
// '\' as \\), so that nothing read from a file reaches a terminal as a
// control sequence.
std::string Printable(std::string_view text);

// "N process" / "N processes".
std::string Processes(uint64_t count);

}  // namespace aesmux::core

#endif  // AESMUX_PROVIDER_CORE_STATS_TABLE_H_
