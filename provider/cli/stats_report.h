// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
// `aesmux stats`: the statistics files processes write (stats_file =
// PREFIX; names, format and folding in provider/core/stats_file.h) read
// back and shown as a table or as JSON, summed over the processes or one
// file at a time.
//
// The directory may be writable by every user (README suggests /var/tmp),
// so nothing in it is trusted: files are read as core/stats_file.h reads
// them (no symlink followed, nothing but a regular file of one link and
// bounded size), parsed strictly, never quoted in an error, and anything
// printed from them is made printable. Before reading, the files of this
// user's exited processes are folded into their summary (so `aesmux stats`
// itself bounds the directory, and adds no file but its user's lock, which
// that fold makes). The reading holds a shared flock on this user's
// STEM.lock.<uid> (root: on every user's), so that no fold of theirs runs
// meanwhile; it waits for them 2 seconds in all, and then reads without
// the locks it could not take, naming each. The files of a user whose lock
// it does not hold (any other user's, for a reader that is not root) are
// read again, up to 3 times, while folds of that user's replace its
// summary under the reading; if they still do, the summary is named: a
// process of that user may then be counted twice. A lock name that keeps a
// user's folds from running (another user's file, a symbolic link, a FIFO)
// is named, and the exit status is 1.
#ifndef AESMUX_PROVIDER_CLI_STATS_REPORT_H_
#define AESMUX_PROVIDER_CLI_STATS_REPORT_H_

#include <cstdint>
#include <cstdio>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "provider/cli/args.h"
#include "provider/core/stats_table.h"

namespace aesmux::cli {

// One statistics file, or the sum of several.
struct StatsRecord {
  std::string file;      // "" for a sum
  long pid = 0;          // a process file's
  long uid = -1;         // the file's owner
  bool summary = false;  // a summary of exited processes
  uint64_t processes = 1;
  core::StatsSnapshot counts;  // counters and hand-offs
  std::vector<core::StatsTableNote> notes;
  std::vector<std::string> absorbed;  // a summary's "<pid>.<id>"
};

// Reads and parses one file (`name` relative to `dirfd`, or a path with
// AT_FDCWD); nullopt and the reason in `error` ("FILE:LINE: why", never
// the file's text) if it is refused or malformed.
std::optional<StatsRecord> ReadStatsFile(int dirfd, const std::string &name,
                                         const std::string &shown,
                                         std::string *error);

// The sum of `records`; nullopt and the counter in `error` if a sum would
// pass 2^64 - 1.
std::optional<StatsRecord> SumStats(const std::vector<StatsRecord> &records,
                                    std::string *error);

// A heading (the number of processes, or the file), then the table of
// core/stats_table.h.
void PrintStatsTable(std::FILE *out, const StatsRecord &record);
// The same as one JSON object, `indent` spaces in.
void PrintStatsJson(std::FILE *out, const StatsRecord &record, int indent);

// The command: aesmux stats [--per-process] [--json] [PREFIX | FILE...];
// `default_prefix` is used when no argument names files (the stats_file in
// force, or ""). Exit status 0, 1 if a file was refused or malformed (the
// others are still shown) or a sum would overflow, 2 for a usage error.
int RunStats(const std::vector<std::string> &args,
             const std::string &default_prefix);
std::span<const OptionSpec> StatsOptionSpecs();

}  // namespace aesmux::cli

#endif  // AESMUX_PROVIDER_CLI_STATS_REPORT_H_
