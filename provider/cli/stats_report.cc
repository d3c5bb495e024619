// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
#include "provider/cli/stats_report.h"

#include <dirent.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>

#include "provider/cli/args.h"
#include "provider/cli/json.h"

namespace aesmux::cli {
namespace {

constexpr std::string_view kHandoffPrefix = "afalg-fallback:";

constexpr OptionSpec kOptions[] = {{"--per-process", ""}, {"--json", ""}};

bool IsHandoff(const StatsCounter &counter) {
  return counter.path.starts_with(kHandoffPrefix);
}

// The pid at the end of "<prefix>.<pid>", or 0.
long PidOf(const std::string &path) {
  const size_t dot = path.rfind('.');
  if (dot == std::string::npos || dot + 1 == path.size()) return 0;
  const std::string digits = path.substr(dot + 1);
  if (digits.find_first_not_of("0123456789") != std::string::npos) return 0;
  return std::strtol(digits.c_str(), nullptr, 10);
}

// The bytes of every path of `algorithm` (hand-offs are counted again on
// the path that served them, so they are left out).
uint64_t AlgorithmBytes(const StatsRecord &record,
                        const std::string &algorithm) {
  uint64_t total = 0;
  for (const StatsCounter &counter : record.counters) {
    if (counter.algorithm == algorithm && !IsHandoff(counter)) {
      total += counter.bytes;
    }
  }
  return total;
}

double Share(uint64_t part, uint64_t whole) {
  return whole == 0 ? 0.0 : static_cast<double>(part) / whole;
}

std::string Plural(int count, const char *one, const char *many) {
  return std::to_string(count) + " " + (count == 1 ? one : many);
}

}  // namespace

std::optional<StatsRecord> ReadStatsFile(const std::string &path,
                                         std::string *error) {
  std::ifstream in(path);
  if (!in) {
    *error = path + ": " + std::strerror(errno);
    return std::nullopt;
  }
  StatsRecord record;
  record.file = path;
  record.pid = PidOf(path);
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    if (line.empty()) continue;
    if (line.starts_with("# ")) {
      record.notes.emplace_back(line.substr(2), 1);
      continue;
    }
    std::istringstream fields(line);
    StatsCounter counter;
    std::string rest;
    if (!(fields >> counter.algorithm >> counter.path >> counter.requests >>
          counter.bytes) ||
        (fields >> rest)) {
      *error = path + ":" + std::to_string(number) +
               ": expected '<algorithm> <path> <requests> <bytes>', got '" +
               line + "'";
      return std::nullopt;
    }
    record.counters.push_back(std::move(counter));
  }
  return record;
}

std::vector<std::string> StatsFilesOf(const std::string &prefix) {
  const size_t slash = prefix.rfind('/');
  const std::string dir =
      slash == std::string::npos ? "." : prefix.substr(0, slash + 1);
  const std::string stem =
      slash == std::string::npos ? prefix : prefix.substr(slash + 1);
  std::vector<std::pair<long, std::string>> found;
  if (DIR *d = opendir(dir.c_str())) {
    while (const dirent *entry = readdir(d)) {
      const std::string name = entry->d_name;
      if (!name.starts_with(stem + ".")) continue;
      // Only "<stem>.<pid>": not the .tmp files of writes under way.
      const std::string pid = name.substr(stem.size() + 1);
      if (pid.empty() || pid.find_first_not_of("0123456789") != pid.npos) {
        continue;
      }
      const std::string path = (slash == std::string::npos ? "" : dir) + name;
      found.emplace_back(PidOf(path), path);
    }
    closedir(d);
  }
  std::sort(found.begin(), found.end());
  std::vector<std::string> files;
  for (auto &[pid, path] : found) files.push_back(std::move(path));
  return files;
}

StatsRecord SumStats(const std::vector<StatsRecord> &records) {
  StatsRecord sum;
  sum.processes = 0;
  std::map<std::string, size_t> counter_at, note_at;
  for (const StatsRecord &record : records) {
    sum.processes += record.processes;
    for (const StatsCounter &counter : record.counters) {
      const std::string key = counter.algorithm + " " + counter.path;
      auto [it, added] = counter_at.try_emplace(key, sum.counters.size());
      if (added) {
        sum.counters.push_back({counter.algorithm, counter.path, 0, 0});
      }
      sum.counters[it->second].requests += counter.requests;
      sum.counters[it->second].bytes += counter.bytes;
    }
    for (const auto &[note, processes] : record.notes) {
      auto [it, added] = note_at.try_emplace(note, sum.notes.size());
      if (added) sum.notes.emplace_back(note, 0);
      sum.notes[it->second].second += processes;
    }
  }
  return sum;
}

void PrintStatsTable(std::FILE *out, const StatsRecord &record) {
  if (record.file.empty()) {
    std::fprintf(out, "%s\n",
                 Plural(record.processes, "process", "processes").c_str());
  } else {
    std::fprintf(out, "%s (pid %ld)\n", record.file.c_str(), record.pid);
  }
  std::fprintf(out, "%-12s %-9s %12s %16s %7s\n", "algorithm", "path",
               "requests", "bytes", "share");
  bool any = false;
  for (const StatsCounter &counter : record.counters) {
    if (IsHandoff(counter) || counter.requests == 0) continue;
    any = true;
    std::fprintf(
        out, "%-12s %-9s %12llu %16llu %6.1f%%\n", counter.algorithm.c_str(),
        counter.path.c_str(), static_cast<unsigned long long>(counter.requests),
        static_cast<unsigned long long>(counter.bytes),
        100 * Share(counter.bytes, AlgorithmBytes(record, counter.algorithm)));
  }
  if (!any) std::fprintf(out, "(no requests)\n");
  bool header = false;
  for (const StatsCounter &counter : record.counters) {
    if (!IsHandoff(counter) || counter.requests == 0) continue;
    if (!header) {
      std::fprintf(out,
                   "afalg hand-offs (then served, and counted, on the CPU)\n"
                   "%-12s %-12s %9s %16s\n",
                   "algorithm", "reason", "requests", "bytes");
      header = true;
    }
    std::fprintf(out, "%-12s %-12s %9llu %16llu\n", counter.algorithm.c_str(),
                 counter.path.substr(kHandoffPrefix.size()).c_str(),
                 static_cast<unsigned long long>(counter.requests),
                 static_cast<unsigned long long>(counter.bytes));
  }
  for (const auto &[note, processes] : record.notes) {
    if (record.file.empty()) {
      std::fprintf(out, "%s (%s)\n", note.c_str(),
                   Plural(processes, "process", "processes").c_str());
    } else {
      std::fprintf(out, "%s\n", note.c_str());
    }
  }
}

namespace {

// "<pad>  "<name>": [ items, one a line ]," with `last` deciding the comma.
void PrintJsonArray(std::FILE *out, const std::string &pad, const char *name,
                    const std::vector<std::string> &items, bool last) {
  std::fprintf(out, "%s  \"%s\": [", pad.c_str(), name);
  for (size_t i = 0; i < items.size(); ++i) {
    std::fprintf(out, "%s\n%s    %s", i == 0 ? "" : ",", pad.c_str(),
                 items[i].c_str());
  }
  std::fprintf(out, "%s]%s\n", items.empty() ? "" : ("\n" + pad + "  ").c_str(),
               last ? "" : ",");
}

}  // namespace

void PrintStatsJson(std::FILE *out, const StatsRecord &record, int indent) {
  const std::string pad(indent, ' ');
  std::fprintf(out, "%s{\n", pad.c_str());
  if (record.file.empty()) {
    std::fprintf(out, "%s  \"processes\": %d,\n", pad.c_str(),
                 record.processes);
  } else {
    std::fprintf(out, "%s  \"file\": %s,\n%s  \"pid\": %ld,\n", pad.c_str(),
                 JsonString(record.file).c_str(), pad.c_str(), record.pid);
  }
  std::vector<std::string> paths, handoffs, notes;
  for (const StatsCounter &counter : record.counters) {
    if (counter.requests == 0) continue;
    const std::string counts =
        "\"requests\": " + std::to_string(counter.requests) +
        ", \"bytes\": " + std::to_string(counter.bytes);
    if (IsHandoff(counter)) {
      handoffs.push_back(
          "{\"algorithm\": " + JsonString(counter.algorithm) +
          ", \"reason\": " +
          JsonString(counter.path.substr(kHandoffPrefix.size())) + ", " +
          counts + "}");
      continue;
    }
    char share[32];
    std::snprintf(share, sizeof(share), "%.4f",
                  Share(counter.bytes,
                        AlgorithmBytes(record, counter.algorithm)));
    paths.push_back("{\"algorithm\": " + JsonString(counter.algorithm) +
                    ", \"path\": " + JsonString(counter.path) + ", " +
                    counts + ", \"share\": " + share + "}");
  }
  for (const auto &[note, processes] : record.notes) {
    notes.push_back("{\"note\": " + JsonString(note) +
                    ", \"processes\": " + std::to_string(processes) + "}");
  }
  PrintJsonArray(out, pad, "paths", paths, false);
  PrintJsonArray(out, pad, "afalg_handoffs", handoffs, false);
  PrintJsonArray(out, pad, "notes", notes, true);
  std::fprintf(out, "%s}", pad.c_str());
}

std::span<const OptionSpec> StatsOptionSpecs() { return kOptions; }

int RunStats(const std::vector<std::string> &args,
             const std::string &default_prefix) {
  CommandLine line("stats", kOptions, args, "PREFIX | FILE...");
  if (!line.ok()) return kUsageError;
  const bool per_process = line.Flag("--per-process");
  const bool json = line.Flag("--json");
  std::vector<std::string> names = line.operands();
  if (names.empty() && !default_prefix.empty()) names = {default_prefix};
  if (names.empty()) {
    std::fprintf(stderr,
                 "aesmux stats: no statistics named: give a PREFIX or files, "
                 "or set stats_file in aesmux's openssl.cnf section\n");
    return 2;
  }
  // One argument that is not a file is a prefix.
  std::vector<std::string> files = names;
  if (names.size() == 1 && std::ifstream(names[0]).fail()) {
    files = StatsFilesOf(names[0]);
    if (files.empty()) {
      std::fprintf(stderr, "aesmux stats: no files %s.<pid>\n",
                   names[0].c_str());
      return 1;
    }
  }
  std::vector<StatsRecord> records;
  for (const std::string &file : files) {
    std::string error;
    std::optional<StatsRecord> record = ReadStatsFile(file, &error);
    if (!record) {
      std::fprintf(stderr, "aesmux stats: %s\n", error.c_str());
      return 1;
    }
    records.push_back(std::move(*record));
  }
  if (!per_process) records = {SumStats(records)};
  if (json) {
    if (per_process) std::printf("{\n  \"processes\": [\n");
    for (size_t i = 0; i < records.size(); ++i) {
      PrintStatsJson(stdout, records[i], per_process ? 4 : 0);
      std::printf("%s\n", per_process && i + 1 < records.size() ? "," : "");
    }
    if (per_process) std::printf("  ]\n}\n");
    return 0;
  }
  for (size_t i = 0; i < records.size(); ++i) {
    if (i > 0) std::printf("\n");
    PrintStatsTable(stdout, records[i]);
  }
  return 0;
}

}  // namespace aesmux::cli
