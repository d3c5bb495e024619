// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
#include "provider/core/stats_table.h"

#include <algorithm>
#include <cstdio>

namespace aesmux::core {
namespace {

// printf into a std::string.
template <typename... Args>
void Append(std::string &out, const char *format, Args... args) {
  char line[256];
  const int len = std::snprintf(line, sizeof(line), format, args...);
  if (len > 0) out.append(line, std::min<size_t>(len, sizeof(line) - 1));
}

}  // namespace

double StatsShare(const StatsSnapshot &counts, Alg alg, Path path) {
  long double whole = 0;
  for (size_t p = 0; p < kNumPaths; ++p) {
    whole += counts.at(alg, static_cast<Path>(p)).bytes;
  }
  return whole == 0 ? 0.0
                    : static_cast<double>(counts.at(alg, path).bytes / whole);
}

std::string Printable(std::string_view text) {
  std::string out;
  for (const char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (c == '\\') {
      out += "\\\\";
    } else if (byte >= 0x20 && byte < 0x7f) {
      out += c;
    } else {
      char escaped[8];
      std::snprintf(escaped, sizeof(escaped), "\\x%02x", byte);
      out += escaped;
    }
  }
  return out;
}

std::string Processes(uint64_t count) {
  return std::to_string(count) + (count == 1 ? " process" : " processes");
}

std::string FormatStatsTable(const StatsSnapshot &counts,
                             const std::vector<StatsTableNote> &notes,
                             bool note_counts) {
  std::string out;
  Append(out, "%-12s %-9s %12s %16s %7s\n", "algorithm", "path", "requests",
         "bytes", "share");
  bool any = false;
  for (const AlgInfo &info : kAlgs) {
    for (size_t p = 0; p < kNumPaths; ++p) {
      const auto path = static_cast<Path>(p);
      const Counter &counter = counts.at(info.alg, path);
      if (counter.requests == 0) continue;
      any = true;
      Append(out, "%-12.*s %-9.*s %12llu %16llu %6.1f%%\n",
             static_cast<int>(info.name.size()), info.name.data(),
             static_cast<int>(kPathNames[p].size()), kPathNames[p].data(),
             static_cast<unsigned long long>(counter.requests),
             static_cast<unsigned long long>(counter.bytes),
             100 * StatsShare(counts, info.alg, path));
    }
  }
  if (!any) out += "(no requests)\n";
  bool header = false;
  for (const AlgInfo &info : kAlgs) {
    for (size_t h = 0; h < kNumHandoffs; ++h) {
      const Counter &counter = counts.at(info.alg, static_cast<Handoff>(h));
      if (counter.requests == 0) continue;
      if (!header) {
        out += "afalg hand-offs (then served, and counted, on the CPU)\n";
        Append(out, "%-12s %-12s %9s %16s\n", "algorithm", "reason",
               "requests", "bytes");
        header = true;
      }
      Append(out, "%-12.*s %-12.*s %9llu %16llu\n",
             static_cast<int>(info.name.size()), info.name.data(),
             static_cast<int>(kHandoffNames[h].size()), kHandoffNames[h].data(),
             static_cast<unsigned long long>(counter.requests),
             static_cast<unsigned long long>(counter.bytes));
    }
  }
  for (const StatsTableNote &note : notes) {
    out += Printable(note.text);
    if (note_counts) out += " (" + Processes(note.processes) + ")";
    out += "\n";
  }
  return out;
}

}  // namespace aesmux::core
