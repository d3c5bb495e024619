// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
// `aesmux stats`: the statistics files processes write (stats_file =
// PREFIX: one PREFIX.<pid> each, format in provider/core/stats.h) read
// back and shown as a table or as JSON, summed over the processes or one
// process at a time.
#ifndef AESMUX_PROVIDER_CLI_STATS_REPORT_H_
#define AESMUX_PROVIDER_CLI_STATS_REPORT_H_

#include <cstdint>
#include <cstdio>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "provider/cli/args.h"

namespace aesmux::cli {

// One counter line: "<algorithm> <path> <requests> <bytes>", where a
// hand-off counter's path is "afalg-fallback:<reason>".
struct StatsCounter {
  std::string algorithm;
  std::string path;
  uint64_t requests = 0;
  uint64_t bytes = 0;
};

// One statistics file, or the sum of several.
struct StatsRecord {
  std::string file;  // "" for a sum
  long pid = 0;      // from the file name; 0 if it has none, or for a sum
  int processes = 1;
  std::vector<StatsCounter> counters;  // in the files' order
  // "# afalg <family>: <state>" lines without the "# ", with how many of
  // the processes wrote each.
  std::vector<std::pair<std::string, int>> notes;
};

// Reads one file; nullopt and the reason in `error` if it cannot be read
// or a line is malformed.
std::optional<StatsRecord> ReadStatsFile(const std::string &path,
                                         std::string *error);

// The files PREFIX.<pid> (not the .tmp files of writes under way), by pid.
std::vector<std::string> StatsFilesOf(const std::string &prefix);

// The sum of `records`: counters and notes added up.
StatsRecord SumStats(const std::vector<StatsRecord> &records);

// A table: per algorithm and path the requests, bytes and share of the
// algorithm's bytes, then the afalg hand-offs by reason, then the notes.
void PrintStatsTable(std::FILE *out, const StatsRecord &record);
// The same as one JSON object, `indent` spaces in.
void PrintStatsJson(std::FILE *out, const StatsRecord &record, int indent);

// The command: aesmux stats [--per-process] [--json] [PREFIX | FILE...];
// `default_prefix` is used when no argument names files (the stats_file in
// force, or "").
int RunStats(const std::vector<std::string> &args,
             const std::string &default_prefix);
std::span<const OptionSpec> StatsOptionSpecs();

}  // namespace aesmux::cli

#endif  // AESMUX_PROVIDER_CLI_STATS_REPORT_H_
