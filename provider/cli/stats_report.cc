// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
#include "provider/cli/stats_report.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <map>
#include <memory>
#include <set>
#include <thread>

#include "provider/cli/args.h"
#include "provider/cli/json.h"
#include "provider/core/stats_file.h"

namespace aesmux::cli {
namespace {

using core::Printable;

// A descriptor closed when it goes out of scope.
struct Fd {
  int fd = -1;
  ~Fd() {
    if (fd >= 0) close(fd);
  }
};

constexpr OptionSpec kOptions[] = {{"--per-process", ""}, {"--json", ""}};

// How long `aesmux stats` waits in all for folds under way before it reads
// without their users' locks (which only a fold holds exclusively).
constexpr auto kLockWait = std::chrono::seconds(2);
// How many times it reads the files of users whose lock it does not hold
// while folds of theirs replace their summaries.
constexpr int kReadTries = 3;

bool AddProcesses(uint64_t &sum, uint64_t add) {
  if (sum > UINT64_MAX - add) return false;
  sum += add;
  return true;
}

}  // namespace

std::optional<StatsRecord> ReadStatsFile(int dirfd, const std::string &name,
                                         const std::string &shown,
                                         std::string *error) {
  std::vector<char> buffer(core::kMaxStatsFileBytes + 1);
  size_t length = 0;
  struct stat st;
  int errno_value = 0;
  const core::StatsOpen read = core::ReadStatsFileAt(
      dirfd, name.c_str(), buffer.data(), &length, &st, &errno_value);
  if (read != core::StatsOpen::kOk) {
    *error = Printable(shown) + ": " +
             (read == core::StatsOpen::kError ? std::strerror(errno_value)
                                              : core::StatsOpenText(read));
    return std::nullopt;
  }
  auto view = std::make_unique<core::StatsFileView>();
  core::StatsParseError parse;
  if (!core::ParseStatsFile(std::string_view(buffer.data(), length),
                            view.get(), &parse)) {
    *error = Printable(shown) +
             (parse.line != 0 ? ":" + std::to_string(parse.line) : "") +
             ": not an aesmux statistics file: " + parse.reason;
    return std::nullopt;
  }
  StatsRecord record;
  record.file = shown;
  record.pid = static_cast<long>(view->process.pid);
  record.uid = static_cast<long>(st.st_uid);
  record.summary = view->summary;
  record.processes = view->processes;
  record.counts = view->counts;
  for (size_t i = 0; i < view->num_notes; ++i) {
    record.notes.push_back(
        {std::string(view->notes[i].text), view->notes[i].processes});
  }
  for (size_t i = 0; i < view->num_absorbed; ++i) {
    record.absorbed.emplace_back(view->absorbed[i]);
  }
  return record;
}

std::optional<StatsRecord> SumStats(const std::vector<StatsRecord> &records,
                                    std::string *error) {
  StatsRecord sum;
  sum.processes = 0;
  std::map<std::string, size_t> note_at;
  for (const StatsRecord &record : records) {
    char which[64];
    if (!core::AddStatsCounts(sum.counts, record.counts, which)) {
      *error = std::string("the sum of ") + which + " passes 2^64-1";
      return std::nullopt;
    }
    if (!AddProcesses(sum.processes, record.processes)) {
      *error = "the number of processes passes 2^64-1";
      return std::nullopt;
    }
    for (const core::StatsTableNote &note : record.notes) {
      auto [it, added] = note_at.try_emplace(note.text, sum.notes.size());
      if (added) sum.notes.push_back({note.text, 0});
      if (!AddProcesses(sum.notes[it->second].processes, note.processes)) {
        *error = "a note's number of processes passes 2^64-1";
        return std::nullopt;
      }
    }
  }
  return sum;
}

void PrintStatsTable(std::FILE *out, const StatsRecord &record) {
  if (record.file.empty()) {
    std::fprintf(out, "%s\n", core::Processes(record.processes).c_str());
  } else if (record.summary) {
    std::fprintf(out, "%s (summary of %s that have exited)\n",
                 Printable(record.file).c_str(),
                 core::Processes(record.processes).c_str());
  } else {
    std::fprintf(out, "%s (pid %ld)\n", Printable(record.file).c_str(),
                 record.pid);
  }
  const bool note_counts = record.file.empty() || record.summary;
  std::fputs(
      core::FormatStatsTable(record.counts, record.notes, note_counts).c_str(),
      out);
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

std::string Counts(const core::Counter &counter) {
  return "\"requests\": " + std::to_string(counter.requests) +
         ", \"bytes\": " + std::to_string(counter.bytes);
}

}  // namespace

void PrintStatsJson(std::FILE *out, const StatsRecord &record, int indent) {
  const std::string pad(indent, ' ');
  std::fprintf(out, "%s{\n", pad.c_str());
  if (!record.file.empty()) {
    std::fprintf(out, "%s  \"file\": %s,\n", pad.c_str(),
                 JsonString(Printable(record.file)).c_str());
  }
  if (record.file.empty() || record.summary) {
    if (record.summary) std::fprintf(out, "%s  \"summary\": true,\n", pad.c_str());
    std::fprintf(out, "%s  \"processes\": %llu,\n", pad.c_str(),
                 static_cast<unsigned long long>(record.processes));
  } else {
    std::fprintf(out, "%s  \"pid\": %ld,\n", pad.c_str(), record.pid);
  }
  std::vector<std::string> paths, handoffs, notes;
  for (const core::AlgInfo &info : core::kAlgs) {
    const std::string alg = JsonString(info.name);
    for (size_t p = 0; p < core::kNumPaths; ++p) {
      const auto path = static_cast<core::Path>(p);
      const core::Counter &counter = record.counts.at(info.alg, path);
      if (counter.requests == 0) continue;
      char share[32];
      std::snprintf(share, sizeof(share), "%.4f",
                    core::StatsShare(record.counts, info.alg, path));
      paths.push_back("{\"algorithm\": " + alg + ", \"path\": " +
                      JsonString(core::kPathNames[p]) + ", " +
                      Counts(counter) + ", \"share\": " + share + "}");
    }
  }
  for (const core::AlgInfo &info : core::kAlgs) {
    for (size_t h = 0; h < core::kNumHandoffs; ++h) {
      const core::Counter &counter =
          record.counts.at(info.alg, static_cast<core::Handoff>(h));
      if (counter.requests == 0) continue;
      handoffs.push_back("{\"algorithm\": " + JsonString(info.name) +
                         ", \"reason\": " + JsonString(core::kHandoffNames[h]) +
                         ", " + Counts(counter) + "}");
    }
  }
  for (const core::StatsTableNote &note : record.notes) {
    notes.push_back("{\"note\": " + JsonString(Printable(note.text)) +
                    ", \"processes\": " + std::to_string(note.processes) +
                    "}");
  }
  PrintJsonArray(out, pad, "paths", paths, false);
  PrintJsonArray(out, pad, "afalg_handoffs", handoffs, false);
  PrintJsonArray(out, pad, "notes", notes, true);
  std::fprintf(out, "%s}", pad.c_str());
}

namespace {

// The entries of the directory that are statistics names, sorted by pid
// or uid.
struct Listing {
  std::vector<std::pair<long, std::string>> processes, summaries, asides, locks;
};

Listing List(int dirfd, const std::string &stem) {
  Listing listing;
  if (DIR *d = fdopendir(dup(dirfd))) {
    rewinddir(d);  // (the offset is dirfd's, where the last listing left it)
    while (const dirent *entry = readdir(d)) {
      uint64_t number = 0;
      const auto at = [&](auto &names) {
        names.emplace_back(static_cast<long>(number), entry->d_name);
      };
      switch (core::ClassifyStatsName(stem, entry->d_name, &number, nullptr)) {
        case core::StatsName::kProcess:
          at(listing.processes);
          break;
        case core::StatsName::kSummary:
          at(listing.summaries);
          break;
        case core::StatsName::kSummaryAside:
          at(listing.asides);
          break;
        case core::StatsName::kLock:
          at(listing.locks);
          break;
        default:
          break;
      }
    }
    closedir(d);
  }
  for (auto *names : {&listing.processes, &listing.summaries, &listing.asides,
                      &listing.locks}) {
    std::sort(names->begin(), names->end());
  }
  return listing;
}

// Which file a name held, as far as telling a replaced one goes.
struct Identity {
  bool exists = false;
  ino_t ino = 0;
  timespec ctime{};
  off_t size = 0;
  bool operator==(const Identity &other) const {
    return exists == other.exists && ino == other.ino &&
           ctime.tv_sec == other.ctime.tv_sec &&
           ctime.tv_nsec == other.ctime.tv_nsec && size == other.size;
  }
};

Identity IdentityOf(int dirfd, const std::string &name) {
  struct stat st;
  if (fstatat(dirfd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) return {};
  return {true, st.st_ino, st.st_ctim, st.st_size};
}

// One reading of the files: the records, the problems met, and the
// summaries (of users whose lock this reader does not hold) that a fold
// replaced while they were read.
struct Reading {
  std::vector<StatsRecord> records;
  std::vector<std::string> problems;
  std::vector<std::string> replaced;
};

Reading ReadOnce(int dirfd, const std::string &stem,
                 const std::string &shown_dir, const std::set<long> &locked) {
  Reading reading;
  const Listing listing = List(dirfd, stem);
  // A summary of a user whose lock is not held, as it was before the
  // process files were read: a fold of that user that ran meanwhile shows
  // as a summary replaced.
  std::map<long, Identity> before;
  for (const auto &[uid, name] : listing.summaries) {
    if (locked.count(uid) == 0) before[uid] = IdentityOf(dirfd, name);
  }
  auto report = [&](std::string problem) {
    reading.problems.push_back(std::move(problem));
  };
  // The process files first, the summaries last: a fold that ran between
  // the two moved a file into a summary that lists it.
  std::vector<std::pair<std::string, StatsRecord>> processes;  // by suffix
  std::vector<StatsRecord> summaries;
  for (const auto &[pid, name] : listing.processes) {
    std::string error;
    std::optional<StatsRecord> record =
        ReadStatsFile(dirfd, name, shown_dir + name, &error);
    if (record && (record->summary || record->pid != pid)) {
      error = Printable(shown_dir + name) + ": not the file of process " +
              std::to_string(pid);
      record.reset();
    }
    if (!record) {
      if (error.find("does not exist") == std::string::npos) report(error);
      continue;  // (gone since it was listed: folded, or replaced)
    }
    processes.emplace_back(name.substr(stem.size() + 1), std::move(*record));
  }
  std::map<long, std::set<std::string>> absorbed;  // by owner
  for (const auto &[uid, name] : listing.summaries) {
    std::string error;
    std::optional<StatsRecord> record =
        ReadStatsFile(dirfd, name, shown_dir + name, &error);
    if (record && !record->summary) {
      error = Printable(shown_dir + name) + ": not a summary";
      record.reset();
    } else if (record && record->uid != uid) {
      error = Printable(shown_dir + name) + ": ignored: it belongs to uid " +
              std::to_string(record->uid) + ", not to uid " +
              std::to_string(uid);
      record.reset();
    }
    if (const auto it = before.find(uid);
        it != before.end() && !(it->second == IdentityOf(dirfd, name))) {
      reading.replaced.push_back(shown_dir + name);
    }
    if (!record) {
      report(error);
      continue;
    }
    absorbed[uid].insert(record->absorbed.begin(), record->absorbed.end());
    summaries.push_back(std::move(*record));
  }
  for (const auto &[uid, name] : listing.asides) {
    report(Printable(shown_dir + name) +
           ": a summary that a fold could not read, set aside: its counts "
           "are not in these totals");
  }
  for (const auto &[uid, name] : listing.locks) {
    struct stat st;
    if (fstatat(dirfd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
    const core::StatsOpen state =
        core::StatsLockState(st, static_cast<uid_t>(uid));
    if (state == core::StatsOpen::kOk) continue;
    const std::string why = state == core::StatsOpen::kNotOwned
                                ? "belongs to uid " +
                                      std::to_string(st.st_uid) +
                                      ", not to uid " + std::to_string(uid)
                                : core::StatsOpenText(state);
    const std::string user = "uid " + std::to_string(uid) + "'s";
    report(Printable(shown_dir + name) + ": " + why + ": while it is there, " +
           user +
           " exited processes are not "
           "folded, and its processes write no statistics file");
  }
  for (auto &[suffix, record] : processes) {
    const auto owner = absorbed.find(record.uid);
    if (owner != absorbed.end() && owner->second.count(suffix) != 0) continue;
    reading.records.push_back(std::move(record));
  }
  for (StatsRecord &record : summaries) {
    reading.records.push_back(std::move(record));
  }
  return reading;
}

// The statistics under PREFIX: this user's exited processes folded first,
// then every process file not absorbed by its owner's summary, and the
// summaries; a summary set aside, and a lock that keeps a user's folds
// from running, are named, not summed. The reading holds a shared lock on
// this user's STEM.lock.<uid> (root: on every user's), so that no fold of
// theirs runs meanwhile. A user's files read without their lock (another
// user's, for anyone but root; one whose lock stayed held for kLockWait)
// are read again if a fold of that user replaced its summary meanwhile
// (two such folds could make the reading count a process twice), up to
// kReadTries times, and then said. Problems go to stderr and make the
// status 1.
std::vector<StatsRecord> ReadPrefix(const std::string &prefix, int *status) {
  const size_t slash = prefix.rfind('/');
  const std::string dir = slash == std::string::npos
                              ? "."
                              : prefix.substr(0, slash == 0 ? 1 : slash);
  const std::string stem =
      slash == std::string::npos ? prefix : prefix.substr(slash + 1);
  const std::string shown_dir =
      slash == std::string::npos ? "" : prefix.substr(0, slash + 1);
  Fd dirfd{open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC)};
  if (dirfd.fd < 0) {
    std::fprintf(stderr, "aesmux stats: cannot open the directory %s: %s\n",
                 Printable(dir).c_str(), std::strerror(errno));
    *status = 1;
    return {};
  }
  char problem[512];
  core::FoldStats(dirfd.fd, stem, "", problem);
  if (problem[0] != '\0') {
    std::fprintf(stderr, "aesmux stats: warning: %s\n",
                 Printable(problem).c_str());
  }

  // The locks to hold: this user's, and, for root, every user's. Opened
  // without waiting (nothing but a regular file of one link owned by the
  // uid it names), held without waiting longer than kLockWait in all.
  const uid_t self = geteuid();
  std::vector<std::pair<long, std::string>> wanted = {
      {static_cast<long>(self), stem + ".lock." + std::to_string(self)}};
  if (self == 0) {
    for (const auto &[uid, name] : List(dirfd.fd, stem).locks) {
      if (uid != 0) wanted.emplace_back(uid, name);
    }
  }
  std::vector<std::pair<long, std::unique_ptr<Fd>>> locks;  // not yet held
  for (const auto &[uid, name] : wanted) {
    core::StatsOpen result;
    struct stat st;
    int error = 0;
    auto fd = std::make_unique<Fd>();
    fd->fd =
        core::OpenStatsLockAt(dirfd.fd, name.c_str(), static_cast<uid_t>(uid),
                              false, &result, &st, &error);
    if (fd->fd >= 0) locks.emplace_back(uid, std::move(fd));
  }
  std::set<long> locked;
  std::vector<std::unique_ptr<Fd>> held;
  const auto give_up = std::chrono::steady_clock::now() + kLockWait;
  while (true) {
    for (auto it = locks.begin(); it != locks.end();) {
      if (flock(it->second->fd, LOCK_SH | LOCK_NB) == 0) {
        locked.insert(it->first);
        held.push_back(std::move(it->second));
        it = locks.erase(it);
      } else {
        ++it;
      }
    }
    if (locks.empty()) break;
    if (std::chrono::steady_clock::now() > give_up) {
      // Only a fold holds one exclusively (or the user who owns it): read
      // that user's files as they are.
      for (const auto &[uid, fd] : locks) {
        std::fprintf(
            stderr,
            "aesmux stats: warning: another process holds %s; "
            "uid %ld's files are read without it\n",
            Printable(shown_dir + stem + ".lock." + std::to_string(uid))
                .c_str(),
            uid);
      }
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }

  Reading reading;
  for (int attempt = 0; attempt < kReadTries; ++attempt) {
    reading = ReadOnce(dirfd.fd, stem, shown_dir, locked);
    if (reading.replaced.empty()) break;
  }
  for (const std::string &problem : reading.problems) {
    std::fprintf(stderr, "aesmux stats: %s\n", problem.c_str());
    *status = 1;
  }
  for (const std::string &name : reading.replaced) {
    std::fprintf(stderr,
                 "aesmux stats: warning: %s was replaced while it was read, "
                 "each of %d times (folds of its user's exited processes): "
                 "a process of that user may be counted twice\n",
                 Printable(name).c_str(), kReadTries);
  }
  return std::move(reading.records);
}

}  // namespace

std::span<const OptionSpec> StatsOptionSpecs() { return kOptions; }

int RunStats(const std::vector<std::string> &args,
             const std::string &default_prefix) {
  CommandLine line("stats", kOptions, args, "PREFIX | FILE...");
  if (!line.ok()) return kUsageError;
  const bool per_process = line.Flag("--per-process");
  const bool json = line.Flag("--json");
  const std::vector<std::string> &names = line.operands();
  std::string prefix;
  if (names.empty()) {
    if (default_prefix.empty()) {
      std::fprintf(stderr,
                   "aesmux stats: no statistics named: give a PREFIX or "
                   "files, or set stats_file in aesmux's openssl.cnf "
                   "section\n");
      return kUsageError;
    }
    prefix = default_prefix;
  } else if (struct stat st;
             names.size() == 1 &&
             (lstat(names[0].c_str(), &st) != 0 || !S_ISREG(st.st_mode))) {
    // One argument that is not a regular file is a prefix.
    prefix = names[0];
  }
  int status = 0;
  std::vector<StatsRecord> records;
  if (!prefix.empty()) {
    records = ReadPrefix(prefix, &status);
    if (records.empty() && status == 0) {
      std::fprintf(stderr,
                   "aesmux stats: no statistics files %s.<pid>.<id> or "
                   "%s.summary.<uid>\n",
                   Printable(prefix).c_str(), Printable(prefix).c_str());
      return 1;
    }
  } else {
    for (const std::string &file : names) {
      std::string error;
      std::optional<StatsRecord> record =
          ReadStatsFile(AT_FDCWD, file, file, &error);
      if (!record) {
        std::fprintf(stderr, "aesmux stats: %s\n", error.c_str());
        return 1;
      }
      records.push_back(std::move(*record));
    }
  }
  if (records.empty()) return status;
  if (!per_process) {
    std::string error;
    std::optional<StatsRecord> sum = SumStats(records, &error);
    if (!sum) {
      std::fprintf(stderr, "aesmux stats: %s\n", error.c_str());
      return 1;
    }
    records = {std::move(*sum)};
  }
  if (json) {
    if (per_process) std::printf("{\n  \"processes\": [\n");
    for (size_t i = 0; i < records.size(); ++i) {
      PrintStatsJson(stdout, records[i], per_process ? 4 : 0);
      std::printf("%s\n", per_process && i + 1 < records.size() ? "," : "");
    }
    if (per_process) std::printf("  ]\n}\n");
    return status;
  }
  for (size_t i = 0; i < records.size(); ++i) {
    if (i > 0) std::printf("\n");
    PrintStatsTable(stdout, records[i]);
  }
  return status;
}

}  // namespace aesmux::cli
