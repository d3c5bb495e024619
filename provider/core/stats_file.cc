// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
#include "provider/core/stats_file.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <mutex>

namespace aesmux::core {
namespace {

constexpr std::string_view kMagic = "aesmux-stats 2";
constexpr size_t kMaxLineBytes = 512;
constexpr size_t kIdDigits = 16;    // a process file's <id>
constexpr size_t kTempDigits = 8;   // a temporary file's <r>
constexpr std::string_view kAsideSuffix = ".bad";  // a summary set aside

bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsHex(char c) { return IsDigit(c) || (c >= 'a' && c <= 'f'); }

// A decimal number without sign or leading zero, at most `max`.
bool ParseNumber(std::string_view text, uint64_t max, uint64_t *value) {
  if (text.empty() || text.size() > 20 || (text[0] == '0' && text.size() > 1)) {
    return false;
  }
  uint64_t result = 0;
  for (char c : text) {
    if (!IsDigit(c)) return false;
    const auto digit = static_cast<uint64_t>(c - '0');
    if (result > (max - digit) / 10) return false;
    result = result * 10 + digit;
  }
  *value = result;
  return true;
}

bool AllHex(std::string_view text, size_t digits) {
  return text.size() == digits && std::all_of(text.begin(), text.end(), IsHex);
}

// "<pid>.<id>": a process file's name after "STEM.".
bool ParseProcessSuffix(std::string_view text, uint64_t *pid) {
  const size_t dot = text.find('.');
  return dot != std::string_view::npos &&
         ParseNumber(text.substr(0, dot), INT32_MAX, pid) && *pid != 0 &&
         AllHex(text.substr(dot + 1), kIdDigits);
}

// A boot id as the kernel prints it: 8-4-4-4-12 lowercase hex digits.
bool IsBootId(std::string_view text) {
  if (text.size() != 36) return false;
  for (size_t i = 0; i < text.size(); ++i) {
    const bool dash = i == 8 || i == 13 || i == 18 || i == 23;
    if (dash ? text[i] != '-' : !IsHex(text[i])) return false;
  }
  return true;
}

// Splits `line` at single spaces into at most `max` fields; false if a
// field is empty (a leading, trailing or double space).
size_t SplitFields(std::string_view line, std::string_view *fields,
                   size_t max) {
  size_t count = 0;
  while (count < max) {
    const size_t space = line.find(' ');
    fields[count++] = line.substr(0, space);
    if (space == std::string_view::npos) break;
    line.remove_prefix(space + 1);
  }
  for (size_t i = 0; i < count; ++i) {
    if (fields[i].empty()) return 0;
  }
  return count;
}

// The counter "<ALGORITHM> <path>" names, or null.
Counter *CounterOf(StatsSnapshot &counts, std::string_view alg_name,
                   std::string_view path_name, size_t *index) {
  for (const AlgInfo &info : kAlgs) {
    if (info.name != alg_name) continue;
    const auto a = static_cast<size_t>(info.alg);
    for (size_t p = 0; p < kNumPaths; ++p) {
      if (kPathNames[p] == path_name) {
        *index = a * (kNumPaths + kNumHandoffs) + p;
        return &counts.counters[a][p];
      }
    }
    if (!path_name.starts_with(kHandoffStatPrefix)) return nullptr;
    path_name.remove_prefix(kHandoffStatPrefix.size());
    for (size_t h = 0; h < kNumHandoffs; ++h) {
      if (kHandoffNames[h] == path_name) {
        *index = a * (kNumPaths + kNumHandoffs) + kNumPaths + h;
        return &counts.handoffs[a][h];
      }
    }
  }
  return nullptr;
}

bool Fail(StatsParseError *error, size_t line, const char *reason) {
  error->line = line;
  error->reason = reason;
  return false;
}

}  // namespace

const char *StatsPrefixProblem(std::string_view prefix) {
  if (prefix.size() > kMaxStatsPrefixBytes) {
    return "longer than 4000 bytes: the files named after it would not fit "
           "a path";
  }
  const size_t slash = prefix.rfind('/');
  const std::string_view stem =
      slash == std::string_view::npos ? prefix : prefix.substr(slash + 1);
  if (stem.empty()) {
    return "names a directory; it must end in a file name (DIR/STEM: each "
           "process writes DIR/STEM.<pid>.<id>)";
  }
  if (stem.size() > kMaxStatsStemBytes) {
    return "its last component is longer than 200 bytes: the files named "
           "after it would not fit a file name";
  }
  if (prefix.find('\0') != std::string_view::npos) return "holds a NUL byte";
  return nullptr;
}

bool ParseStatsFile(std::string_view text, StatsFileView *out,
                    StatsParseError *error) {
  *out = StatsFileView{};
  if (text.size() > kMaxStatsFileBytes) {
    return Fail(error, 0, "larger than any statistics file");
  }
  if (text.empty() || text.back() != '\n') {
    return Fail(error, 0, "does not end with a whole line");
  }
  // One bit per counter and hand-off counter, against repeats.
  std::array<bool, kNumAlgs *(kNumPaths + kNumHandoffs)> seen{};
  size_t number = 0;
  while (!text.empty()) {
    ++number;
    const size_t end = text.find('\n');
    const std::string_view line = text.substr(0, end);
    text.remove_prefix(end + 1);
    if (line.size() > kMaxLineBytes) {
      return Fail(error, number, "a line longer than any statistics line");
    }
    for (char c : line) {
      if (c < 0x20 || c > 0x7e) {
        return Fail(error, number, "a character that is not printable ASCII");
      }
    }
    if (number == 1) {
      if (line == kMagic) continue;
      return Fail(error, number,
                  line.starts_with("aesmux-stats ")
                      ? "a statistics file of another format version"
                      : "not an aesmux statistics file");
    }
    if (line.starts_with("note ")) {
      // "note <processes> <text>": the text may hold any spaces.
      const std::string_view rest = line.substr(5);
      const size_t space = rest.find(' ');
      uint64_t processes = 0;
      if (number == 2 || space == std::string_view::npos ||
          !ParseNumber(rest.substr(0, space), UINT64_MAX, &processes) ||
          processes == 0 || (!out->summary && processes != 1)) {
        return Fail(error, number,
                    "a note line that is not 'note <processes> <text>'");
      }
      const std::string_view note = rest.substr(space + 1);
      if (note.empty() || note.size() > kMaxStatsNoteBytes) {
        return Fail(error, number, "a note that is empty or too long");
      }
      for (size_t i = 0; i < out->num_notes; ++i) {
        if (out->notes[i].text == note) {
          return Fail(error, number, "a note given twice");
        }
      }
      if (out->num_notes == kMaxStatsNotes) {
        return Fail(error, number, "more notes than a statistics file holds");
      }
      out->notes[out->num_notes++] = {note, processes};
      continue;
    }
    std::string_view fields[6];
    const size_t count = SplitFields(line, fields, 6);
    if (count == 0) {
      return Fail(error, number, "fields not separated by single spaces");
    }
    if (number == 2) {
      if (fields[0] == "process" && count == 5) {
        uint64_t pid = 0;
        if (!ParseNumber(fields[1], INT32_MAX, &pid) || pid == 0 ||
            !ParseNumber(fields[2], UINT64_MAX, &out->process.start) ||
            !(fields[3] == "-" || IsBootId(fields[3])) ||
            !ParseNumber(fields[4], UINT64_MAX, &out->process.pidns)) {
          return Fail(error, number,
                      "a process line that is not 'process <pid> <start> "
                      "<boot> <pidns>'");
        }
        out->process.pid = static_cast<int64_t>(pid);
        if (fields[3] != "-") {
          std::memcpy(out->process.boot.data(), fields[3].data(), 36);
        }
        out->processes = 1;
        continue;
      }
      if (fields[0] == "summary" && count == 2) {
        if (!ParseNumber(fields[1], UINT64_MAX, &out->processes)) {
          return Fail(error, number,
                      "a summary line that is not 'summary <processes>'");
        }
        out->summary = true;
        continue;
      }
      return Fail(error, number, "no process or summary line after the first");
    }
    if (fields[0] == "absorbed" && count == 2) {
      uint64_t pid = 0;
      if (!out->summary || !ParseProcessSuffix(fields[1], &pid)) {
        return Fail(error, number,
                    "an absorbed line that is not 'absorbed <pid>.<id>' in "
                    "a summary");
      }
      for (size_t i = 0; i < out->num_absorbed; ++i) {
        if (out->absorbed[i] == fields[1]) {
          return Fail(error, number, "a file absorbed twice");
        }
      }
      if (out->num_absorbed == kMaxStatsAbsorbed) {
        return Fail(error, number, "more absorbed files than a summary holds");
      }
      out->absorbed[out->num_absorbed++] = fields[1];
      continue;
    }
    if (count != 4) return Fail(error, number, "not a statistics line");
    size_t index = 0;
    Counter *counter = CounterOf(out->counts, fields[0], fields[1], &index);
    if (counter == nullptr) {
      return Fail(error, number, "an unknown algorithm or path");
    }
    if (seen[index]) return Fail(error, number, "a counter given twice");
    seen[index] = true;
    if (!ParseNumber(fields[2], UINT64_MAX, &counter->requests) ||
        !ParseNumber(fields[3], UINT64_MAX, &counter->bytes)) {
      return Fail(error, number,
                  "a count that is not a decimal number from 0 to 2^64-1");
    }
  }
  if (number < 2) return Fail(error, number, "no process or summary line");
  return true;
}

namespace {

bool AddChecked(uint64_t &sum, uint64_t add) {
  if (sum > UINT64_MAX - add) return false;
  sum += add;
  return true;
}

void NameCounter(char (&which)[64], const AlgInfo &info, std::string_view a,
                 std::string_view b) {
  std::snprintf(which, sizeof(which), "%.*s %.*s%.*s",
                static_cast<int>(info.name.size()), info.name.data(),
                static_cast<int>(a.size()), a.data(),
                static_cast<int>(b.size()), b.data());
}

}  // namespace

bool AddStatsCounts(StatsSnapshot &sum, const StatsSnapshot &add,
                    char (&which)[64]) {
  StatsSnapshot result = sum;
  for (const AlgInfo &info : kAlgs) {
    const auto a = static_cast<size_t>(info.alg);
    for (size_t p = 0; p < kNumPaths; ++p) {
      if (!AddChecked(result.counters[a][p].requests,
                      add.counters[a][p].requests) ||
          !AddChecked(result.counters[a][p].bytes, add.counters[a][p].bytes)) {
        NameCounter(which, info, kPathNames[p], "");
        return false;
      }
    }
    for (size_t h = 0; h < kNumHandoffs; ++h) {
      if (!AddChecked(result.handoffs[a][h].requests,
                      add.handoffs[a][h].requests) ||
          !AddChecked(result.handoffs[a][h].bytes, add.handoffs[a][h].bytes)) {
        NameCounter(which, info, kHandoffStatPrefix, kHandoffNames[h]);
        return false;
      }
    }
  }
  sum = result;
  return true;
}

bool NothingCounted(const StatsSnapshot &counts) {
  for (size_t a = 0; a < kNumAlgs; ++a) {
    for (const Counter &counter : counts.counters[a]) {
      if (counter.requests != 0 || counter.bytes != 0) return false;
    }
    for (const Counter &counter : counts.handoffs[a]) {
      if (counter.requests != 0 || counter.bytes != 0) return false;
    }
  }
  return true;
}

StatsName ClassifyStatsName(std::string_view stem, std::string_view name,
                            uint64_t *number, std::string_view *suffix) {
  if (!name.starts_with(stem) || name.size() <= stem.size() ||
      name[stem.size()] != '.') {
    return StatsName::kOther;
  }
  std::string_view rest = name.substr(stem.size() + 1);
  // "<r>.tmp" at the end: a temporary file of what comes before.
  bool temporary = false;
  if (rest.size() > kTempDigits + 5 && rest.ends_with(".tmp") &&
      AllHex(rest.substr(rest.size() - 4 - kTempDigits, kTempDigits), kTempDigits) &&
      rest[rest.size() - 5 - kTempDigits] == '.') {
    temporary = true;
    rest.remove_suffix(kTempDigits + 5);
  }
  if (!temporary && rest.starts_with("lock.")) {
    return ParseNumber(rest.substr(5), UINT32_MAX, number) ? StatsName::kLock
                                                           : StatsName::kOther;
  }
  if (rest.starts_with("summary.")) {
    std::string_view uid = rest.substr(8);
    const bool aside = !temporary && uid.ends_with(kAsideSuffix);
    if (aside) uid.remove_suffix(kAsideSuffix.size());
    if (!ParseNumber(uid, UINT32_MAX, number)) return StatsName::kOther;
    if (aside) return StatsName::kSummaryAside;
    return temporary ? StatsName::kSummaryTemp : StatsName::kSummary;
  }
  if (!ParseProcessSuffix(rest, number)) return StatsName::kOther;
  if (suffix != nullptr) *suffix = rest;
  return temporary ? StatsName::kProcessTemp : StatsName::kProcess;
}

const char *StatsOpenText(StatsOpen result) {
  switch (result) {
    case StatsOpen::kOk: return "read";
    case StatsOpen::kMissing: return "does not exist";
    case StatsOpen::kSymlink: return "is a symbolic link (not followed)";
    case StatsOpen::kNotRegular: return "is not a regular file";
    case StatsOpen::kLinked: return "has more than one link (a hard link to another file?)";
    case StatsOpen::kTooLarge: return "is larger than any statistics file";
    case StatsOpen::kNotOwned: return "belongs to another user";
    case StatsOpen::kError: return "";
  }
  return "";
}

StatsOpen ReadStatsFileAt(int dirfd, const char *name, char *buffer,
                          size_t *length, struct stat *st, int *error) {
  *length = 0;
  *error = 0;
  // Refused by what the entry is before opening it, and again by what was
  // opened (it may have been replaced in between).
  if (fstatat(dirfd, name, st, AT_SYMLINK_NOFOLLOW) != 0) {
    *error = errno;
    return errno == ENOENT ? StatsOpen::kMissing : StatsOpen::kError;
  }
  if (S_ISLNK(st->st_mode)) return StatsOpen::kSymlink;
  if (!S_ISREG(st->st_mode)) return StatsOpen::kNotRegular;
  const int fd = openat(dirfd, name,
                        O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) {
    *error = errno;
    if (errno == ENOENT) return StatsOpen::kMissing;
    if (errno == ELOOP) return StatsOpen::kSymlink;
    if (errno == ENXIO) return StatsOpen::kNotRegular;
    return StatsOpen::kError;
  }
  StatsOpen result = StatsOpen::kOk;
  if (fstat(fd, st) != 0) {
    *error = errno;
    result = StatsOpen::kError;
  } else if (!S_ISREG(st->st_mode)) {
    result = StatsOpen::kNotRegular;
  } else if (st->st_nlink != 1) {
    result = StatsOpen::kLinked;
  } else if (static_cast<uint64_t>(st->st_size) > kMaxStatsFileBytes) {
    result = StatsOpen::kTooLarge;
  }
  // One byte more than the bound may be asked for: a file that grew.
  while (result == StatsOpen::kOk) {
    const ssize_t n = read(fd, buffer + *length, kMaxStatsFileBytes + 1 - *length);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      *error = errno;
      result = StatsOpen::kError;
    } else if (n == 0) {
      break;
    } else {
      *length += static_cast<size_t>(n);
      if (*length > kMaxStatsFileBytes) result = StatsOpen::kTooLarge;
    }
  }
  close(fd);
  return result;
}

StatsOpen StatsLockState(const struct stat &st, uid_t uid) {
  if (S_ISLNK(st.st_mode)) return StatsOpen::kSymlink;
  if (!S_ISREG(st.st_mode)) return StatsOpen::kNotRegular;
  if (st.st_uid != uid) return StatsOpen::kNotOwned;
  if (st.st_nlink != 1) return StatsOpen::kLinked;
  return StatsOpen::kOk;
}

int OpenStatsLockAt(int dirfd, const char *name, uid_t uid, bool create,
                    StatsOpen *result, struct stat *st, int *error) {
  *error = 0;
  constexpr int kFlags =
      O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY;
  int fd = -1;
  // Looked at before it is opened (an open may have effects on a device or
  // FIFO), and again once open (it may have been replaced in between).
  // Twice at most: a fold of the same user may make it between the two.
  for (int attempt = 0; attempt < 2 && fd < 0; ++attempt) {
    if (fstatat(dirfd, name, st, AT_SYMLINK_NOFOLLOW) == 0) {
      *result = StatsLockState(*st, uid);
      if (*result != StatsOpen::kOk) return -1;
      fd = openat(dirfd, name, kFlags);
    } else if (errno == ENOENT && create) {
      fd = openat(dirfd, name, kFlags | O_CREAT | O_EXCL, 0600);
      if (fd < 0 && errno != EEXIST) {
        *error = errno;
        *result = StatsOpen::kMissing;
        return -1;
      }
    } else {
      *error = errno;
      *result = errno == ENOENT ? StatsOpen::kMissing : StatsOpen::kError;
      return -1;
    }
    if (fd < 0 && errno != ENOENT && errno != EEXIST) {
      *error = errno;
      *result = errno == ELOOP ? StatsOpen::kSymlink : StatsOpen::kError;
      return -1;
    }
  }
  if (fd < 0) {
    *error = errno;
    *result = StatsOpen::kError;
    return -1;
  }
  if (fstat(fd, st) != 0) {
    *error = errno;
    *result = StatsOpen::kError;
  } else {
    *result = StatsLockState(*st, uid);
    // Anyone who could open it could hold it, and keep the user's folds
    // from running.
    if (*result == StatsOpen::kOk && (st->st_mode & 077) != 0 &&
        fchmod(fd, 0600) != 0) {
      *error = errno;
      *result = StatsOpen::kError;
    }
  }
  if (*result != StatsOpen::kOk) {
    close(fd);
    return -1;
  }
  return fd;
}

void StatsText::Append(std::string_view text) {
  if (overflow || text.size() > size - used) {
    overflow = true;
    return;
  }
  std::memcpy(data + used, text.data(), text.size());
  used += text.size();
}

void StatsText::AppendNumber(uint64_t value) {
  char digits[24];
  const int len = std::snprintf(digits, sizeof(digits), "%llu",
                                static_cast<unsigned long long>(value));
  Append(std::string_view(digits, static_cast<size_t>(len)));
}

namespace {

void AppendCounter(StatsText &out, std::string_view alg, std::string_view a,
                   std::string_view b, const Counter &counter) {
  out.Append(alg);
  out.Append(" ");
  out.Append(a);
  out.Append(b);
  out.Append(" ");
  out.AppendNumber(counter.requests);
  out.Append(" ");
  out.AppendNumber(counter.bytes);
  out.Append("\n");
}

// Every algorithm and path, then the hand-off counters that are not zero.
void AppendCounts(StatsText &out, const StatsSnapshot &counts) {
  for (const AlgInfo &info : kAlgs) {
    for (size_t p = 0; p < kNumPaths; ++p) {
      AppendCounter(out, info.name, kPathNames[p], "",
                    counts.at(info.alg, static_cast<Path>(p)));
    }
  }
  for (const AlgInfo &info : kAlgs) {
    for (size_t h = 0; h < kNumHandoffs; ++h) {
      const Counter &counter = counts.at(info.alg, static_cast<Handoff>(h));
      if (counter.requests == 0 && counter.bytes == 0) continue;
      AppendCounter(out, info.name, kHandoffStatPrefix, kHandoffNames[h],
                    counter);
    }
  }
}

void AppendNote(StatsText &out, uint64_t processes, std::string_view text) {
  out.Append("note ");
  out.AppendNumber(processes);
  out.Append(" ");
  out.Append(text);
  out.Append("\n");
}

// Reads a small file of /proc into `buffer` (NUL-terminated); its length,
// or -1.
ssize_t ReadSmallFile(const char *path, char *buffer, size_t size) {
  const int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) return -1;
  ssize_t n;
  do {
    n = read(fd, buffer, size - 1);
  } while (n < 0 && errno == EINTR);
  close(fd);
  if (n < 0) return -1;
  buffer[n] = '\0';
  return n;
}

// Field 22 of /proc/<pid>/stat (starttime), or 0.
uint64_t StartTimeOf(const char *stat_path) {
  char buffer[1024];
  const ssize_t len = ReadSmallFile(stat_path, buffer, sizeof(buffer));
  if (len <= 0) return 0;
  // After the command name, which may hold anything, "(...)": field 3 on.
  const std::string_view text(buffer, static_cast<size_t>(len));
  const size_t paren = text.rfind(')');
  if (paren == std::string_view::npos) return 0;
  std::string_view rest = text.substr(paren + 1);
  for (int field = 2; field < 22; ++field) {
    const size_t space = rest.find(' ');
    if (space == std::string_view::npos) return 0;
    rest.remove_prefix(space + 1);
  }
  uint64_t start = 0;
  return ParseNumber(rest.substr(0, rest.find(' ')), UINT64_MAX, &start)
             ? start
             : 0;
}

}  // namespace

void FormatProcessFile(const StatsProcess &process, const StatsSnapshot &counts,
                       std::string_view notes, StatsText &out) {
  out.Append(kMagic);
  out.Append("\nprocess ");
  out.AppendNumber(static_cast<uint64_t>(process.pid));
  out.Append(" ");
  out.AppendNumber(process.start);
  out.Append(" ");
  out.Append(process.boot[0] != '\0' ? std::string_view(process.boot.data())
                                     : std::string_view("-"));
  out.Append(" ");
  out.AppendNumber(process.pidns);
  out.Append("\n");
  AppendCounts(out, counts);
  // Each line of `notes`, made printable and cut to what a note may hold.
  size_t kept = 0;
  while (!notes.empty() && kept < kMaxStatsNotes) {
    const size_t end = notes.find('\n');
    std::string_view line = notes.substr(0, end);
    notes.remove_prefix(end == std::string_view::npos ? notes.size() : end + 1);
    if (line.empty()) continue;
    line = line.substr(0, kMaxStatsNoteBytes);
    char text[kMaxStatsNoteBytes];
    for (size_t i = 0; i < line.size(); ++i) {
      text[i] = line[i] >= 0x20 && line[i] <= 0x7e ? line[i] : '?';
    }
    AppendNote(out, 1, std::string_view(text, line.size()));
    ++kept;
  }
}

StatsProcess ThisStatsProcess() {
  StatsProcess self;
  self.pid = getpid();
  self.start = StartTimeOf("/proc/self/stat");
  char boot[64];
  if (ReadSmallFile("/proc/sys/kernel/random/boot_id", boot, sizeof(boot)) >=
          36 &&
      IsBootId(std::string_view(boot, 36))) {
    std::memcpy(self.boot.data(), boot, 36);
  }
  struct stat ns;
  if (stat("/proc/self/ns/pid", &ns) == 0) self.pidns = ns.st_ino;
  return self;
}

bool StatsProcessGone(const StatsProcess &process, const StatsProcess &self) {
  if (process.boot[0] == '\0' || self.boot[0] == '\0') return false;
  if (std::strcmp(process.boot.data(), self.boot.data()) != 0) return true;
  if (process.pidns == 0 || process.pidns != self.pidns) return false;
  if (kill(static_cast<pid_t>(process.pid), 0) != 0 && errno == ESRCH) {
    return true;
  }
  if (process.start == 0) return false;
  char path[48];
  std::snprintf(path, sizeof(path), "/proc/%lld/stat",
                static_cast<long long>(process.pid));
  const uint64_t start = StartTimeOf(path);
  // Another process of that pid now: the one that wrote the file is gone.
  return start != 0 && start != process.start;
}

void RandomHex(char *out, size_t digits) {
  unsigned char bytes[8] = {};
  const size_t want = (digits + 1) / 2;
  if (getrandom(bytes, want, GRND_NONBLOCK) != static_cast<ssize_t>(want)) {
    timespec now{};
    clock_gettime(CLOCK_REALTIME, &now);
    uint64_t mix = static_cast<uint64_t>(now.tv_nsec) * 0x9e3779b97f4a7c15u ^
                   static_cast<uint64_t>(now.tv_sec) ^
                   (static_cast<uint64_t>(getpid()) << 32);
    std::memcpy(bytes, &mix, sizeof(mix));
  }
  constexpr char kHex[] = "0123456789abcdef";
  for (size_t i = 0; i < digits; ++i) {
    out[i] = kHex[(bytes[i / 2] >> (i % 2 == 0 ? 4 : 0)) & 0xf];
  }
}

int ReplaceStatsFile(int dirfd, const char *name, std::string_view text,
                     bool durable, const char **step) {
  char temporary[kMaxStatsStemBytes + 80];
  int fd = -1;
  for (int attempt = 0; attempt < 4 && fd < 0; ++attempt) {
    char random[kTempDigits];
    RandomHex(random, kTempDigits);
    std::snprintf(temporary, sizeof(temporary), "%s.%.*s.tmp", name,
                  static_cast<int>(kTempDigits), random);
    fd = openat(dirfd, temporary,
                O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd < 0 && errno != EEXIST) break;
  }
  if (fd < 0) {
    *step = "create a file in";
    return errno;
  }
  size_t written = 0;
  int error = 0;
  *step = "write";
  while (written < text.size() && error == 0) {
    const ssize_t n = write(fd, text.data() + written, text.size() - written);
    if (n < 0 && errno != EINTR) error = errno;
    if (n > 0) written += static_cast<size_t>(n);
  }
  if (error == 0 && durable && fsync(fd) != 0) error = errno;
  if (close(fd) != 0 && error == 0) error = errno;
  if (error == 0 && renameat(dirfd, temporary, dirfd, name) != 0) {
    *step = "rename";
    error = errno;
  }
  if (error != 0) {
    unlinkat(dirfd, temporary, 0);
    return error;
  }
  if (durable && fsync(dirfd) != 0) {
    *step = "sync";
    return errno;
  }
  return 0;
}

namespace {

// The suffix of a process file's name: "<pid>.<id>".
using Suffix = std::array<char, 32>;

// The folder's memory, kept here rather than on a stack that may be an
// ASYNC job's; one fold at a time.
struct Folder {
  std::mutex mutex;
  char summary_text[kMaxStatsFileBytes + 1] = {};
  char file_text[kMaxStatsFileBytes + 1] = {};
  char out_text[kMaxStatsFileBytes] = {};
  StatsFileView summary;
  StatsFileView file;
  // The new summary.
  StatsSnapshot counts;
  uint64_t processes = 0;
  std::array<std::array<char, kMaxStatsNoteBytes>, kMaxStatsNotes> note_text{};
  std::array<size_t, kMaxStatsNotes> note_len{};
  std::array<uint64_t, kMaxStatsNotes> note_count{};
  size_t num_notes = 0;
  std::array<Suffix, kMaxStatsAbsorbed> absorbed{};  // NUL-terminated
  size_t num_absorbed = 0;
  char name[kMaxStatsStemBytes + 64] = {};
  alignas(8) char entries[8192] = {};
};
constinit Folder g_folder;

// Adds a note to the new summary; a note beyond kMaxStatsNotes distinct
// ones is left out (notes say why the afalg path was off: a summary keeps
// the first kinds it met).
bool AddNote(Folder &f, std::string_view text, uint64_t processes) {
  for (size_t i = 0; i < f.num_notes; ++i) {
    if (std::string_view(f.note_text[i].data(), f.note_len[i]) == text) {
      return AddChecked(f.note_count[i], processes);
    }
  }
  if (f.num_notes == kMaxStatsNotes) return true;
  std::memcpy(f.note_text[f.num_notes].data(), text.data(), text.size());
  f.note_len[f.num_notes] = text.size();
  f.note_count[f.num_notes] = processes;
  ++f.num_notes;
  return true;
}

// "STEM.<rest>" into `out`.
const char *Name(char (&out)[kMaxStatsStemBytes + 64], std::string_view stem,
                 std::string_view rest) {
  std::snprintf(out, sizeof(out), "%.*s.%.*s", static_cast<int>(stem.size()),
                stem.data(), static_cast<int>(rest.size()), rest.data());
  return out;
}

void SetProblem(char (&problem)[512], const char *format, auto... args) {
  if (problem[0] != '\0') return;  // the first one is reported
  std::snprintf(problem, sizeof(problem), format, args...);
}

// A name of this user's (its summary's, its lock's) holds what keeps its
// folds from running: said, naming it; no file of this user's processes
// could be folded while it is there.
int Taken(char (&problem)[512], const char *name, const char *why) {
  SetProblem(problem,
             "%s %s: while it is there, this user's exited processes are "
             "not folded, and its processes write no statistics file",
             name, why);
  return kStatsSummaryTaken;
}

int Taken(char (&problem)[512], const char *name, uid_t owner, uid_t uid) {
  char why[64];
  std::snprintf(why, sizeof(why), "belongs to uid %u, not to uid %u",
                static_cast<unsigned>(owner), static_cast<unsigned>(uid));
  return Taken(problem, name, why);
}

// Whether a summary already lists `suffix`.
bool Lists(const StatsFileView &summary, std::string_view suffix) {
  for (size_t i = 0; i < summary.num_absorbed; ++i) {
    if (summary.absorbed[i] == suffix) return true;
  }
  return false;
}

}  // namespace

int FoldStats(int dirfd, std::string_view stem, std::string_view keep,
              char (&problem)[512]) {
  Folder &f = g_folder;
  std::lock_guard lock(f.mutex);
  problem[0] = '\0';
  const uid_t uid = geteuid();
  char uid_text[24];
  std::snprintf(uid_text, sizeof(uid_text), "summary.%u",
                static_cast<unsigned>(uid));
  char summary_name[kMaxStatsStemBytes + 64];
  Name(summary_name, stem, uid_text);
  struct stat st;
  std::snprintf(uid_text, sizeof(uid_text), "lock.%u",
                static_cast<unsigned>(uid));
  char lock_name[kMaxStatsStemBytes + 64];
  Name(lock_name, stem, uid_text);
  StatsOpen opened = StatsOpen::kOk;
  int error = 0;
  const int lock_fd =
      OpenStatsLockAt(dirfd, lock_name, uid, true, &opened, &st, &error);
  if (lock_fd < 0) {
    // A user who may make no file here has none here to fold.
    if (opened == StatsOpen::kMissing &&
        (error == EACCES || error == EPERM || error == EROFS)) {
      return 0;
    }
    if (opened == StatsOpen::kNotOwned) {
      return Taken(problem, lock_name, st.st_uid, uid);
    }
    char why[160];
    if (opened == StatsOpen::kMissing || opened == StatsOpen::kError) {
      std::snprintf(why, sizeof(why), "cannot be %s: %s",
                    opened == StatsOpen::kMissing ? "made" : "opened",
                    std::strerror(error));
    } else {
      std::snprintf(why, sizeof(why), "%s", StatsOpenText(opened));
    }
    return Taken(problem, lock_name, why);
  }
  // Closing it lets the lock go.
  struct Close {
    int fd;
    ~Close() { close(fd); }
  } close_lock{lock_fd};
  if (flock(lock_fd, LOCK_EX | LOCK_NB) != 0) {  // another fold, or a reader
    // Said without the lock too (which removing it would need): a file
    // the caller wrote now might never be folded.
    if (fstatat(dirfd, summary_name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
        st.st_uid != uid) {
      return Taken(problem, summary_name, st.st_uid, uid);
    }
    return 0;
  }
  const StatsProcess self = ThisStatsProcess();

  // The summary so far: this user's, or none.
  f.summary = StatsFileView{};
  size_t length = 0;
  if (fstatat(dirfd, summary_name, &st, AT_SYMLINK_NOFOLLOW) != 0) {
    if (errno != ENOENT) {
      SetProblem(problem, "cannot read %s: %s", summary_name,
                 std::strerror(errno));
      return -1;
    }
  } else if (st.st_uid == uid) {
    const StatsOpen read = ReadStatsFileAt(dirfd, summary_name, f.summary_text,
                                           &length, &st, &error);
    StatsParseError parse;
    if (read == StatsOpen::kMissing || read == StatsOpen::kError) {
      SetProblem(problem, "%s %s%s: exited processes are not folded",
                 summary_name, StatsOpenText(read),
                 error != 0 ? std::strerror(error) : "");
      return -1;
    }
    char why[160];
    if (read != StatsOpen::kOk) {
      std::snprintf(why, sizeof(why), "%s", StatsOpenText(read));
    } else if (!ParseStatsFile(std::string_view(f.summary_text, length),
                               &f.summary, &parse) ||
               !f.summary.summary) {
      std::snprintf(why, sizeof(why),
                    "is not a statistics summary (line %zu: %s)", parse.line,
                    parse.line != 0 || parse.reason[0] != '\0'
                        ? parse.reason
                        : "not a summary");
    } else {
      why[0] = '\0';
    }
    if (why[0] != '\0') {
      // Kept, it would stop every fold of this user's files for good (the
      // directory would then grow by a file per process). It is set aside
      // rather than replaced, so that its counts are still there to
      // recover, and folding starts a new summary. Nobody sums a summary
      // set aside, so nothing is counted twice by a reader: a file it had
      // absorbed but not yet removed is counted again, in the new one only.
      // One such name per user: a later one replaces it.
      f.summary = StatsFileView{};
      char aside[sizeof(summary_name) + kAsideSuffix.size()];
      std::snprintf(aside, sizeof(aside), "%s%.*s", summary_name,
                    static_cast<int>(kAsideSuffix.size()), kAsideSuffix.data());
      if (renameat(dirfd, summary_name, dirfd, aside) == 0) {
        SetProblem(problem,
                   "%s %s: set aside as %s (its counts are not summed); "
                   "exited processes are folded into a new summary",
                   summary_name, why, aside);
      } else {
        SetProblem(problem,
                   "%s %s: exited processes are folded into a new summary "
                   "in its place (it cannot be set aside as %s: %s)",
                   summary_name, why, aside, std::strerror(errno));
      }
    }
  } else if (unlinkat(dirfd, summary_name, 0) != 0 && errno != ENOENT) {
    // Another user's file under this user's name (a sticky directory lets
    // anyone take a free name), never read: removed where this user may
    // (root, the directory's owner), as a new summary would replace it.
    // Else no fold of this user's can put a summary in place, so nothing
    // would remove a file its processes wrote: they write none.
    return Taken(problem, summary_name, st.st_uid, uid);
  }

  f.counts = f.summary.counts;
  f.processes = f.summary.processes;
  f.num_notes = 0;
  for (size_t i = 0; i < f.summary.num_notes; ++i) {
    AddNote(f, f.summary.notes[i].text, f.summary.notes[i].processes);
  }
  // Files the summary lists that are still there: counted already, to be
  // removed (a fold that stopped before it could).
  f.num_absorbed = 0;
  size_t carried = 0;
  for (size_t i = 0; i < f.summary.num_absorbed; ++i) {
    Name(f.name, stem, f.summary.absorbed[i]);
    if (fstatat(dirfd, f.name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
        st.st_uid == uid) {
      const std::string_view suffix = f.summary.absorbed[i];
      std::memcpy(f.absorbed[f.num_absorbed].data(), suffix.data(),
                  suffix.size());
      f.absorbed[f.num_absorbed][suffix.size()] = '\0';
      ++f.num_absorbed;
      ++carried;
    }
  }

  // This user's files of processes that are gone.
  size_t folded = 0;
  const int scan = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (scan < 0) {
    SetProblem(problem, "cannot list the statistics directory: %s",
               std::strerror(errno));
    return -1;
  }
  long got;
  while (f.num_absorbed < kMaxStatsAbsorbed &&
         (got = syscall(SYS_getdents64, scan, f.entries, sizeof(f.entries))) > 0) {
    for (long at = 0; at < got;) {
      const auto *entry = reinterpret_cast<const dirent64 *>(f.entries + at);
      at += entry->d_reclen;
      uint64_t number = 0;
      std::string_view suffix;
      const StatsName kind =
          ClassifyStatsName(stem, entry->d_name, &number, &suffix);
      if (kind == StatsName::kOther || kind == StatsName::kSummary ||
          kind == StatsName::kSummaryAside || kind == StatsName::kLock) {
        continue;
      }
      if (fstatat(dirfd, entry->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 ||
          st.st_uid != uid) {
        continue;
      }
      if (kind == StatsName::kSummaryTemp) {
        // A fold of this user that stopped half-way: this one holds the
        // user's lock.
        if (number == uid) unlinkat(dirfd, entry->d_name, 0);
        continue;
      }
      if (kind == StatsName::kProcessTemp) {
        // A write that stopped half-way: its process is gone, and it is
        // older than any write takes (a pid of another pid namespace may
        // name no process here).
        timespec now{};
        clock_gettime(CLOCK_REALTIME, &now);
        if (suffix != keep && now.tv_sec - st.st_mtim.tv_sec > 60 &&
            kill(static_cast<pid_t>(number), 0) != 0 && errno == ESRCH) {
          unlinkat(dirfd, entry->d_name, 0);
        }
        continue;
      }
      if (suffix == keep || Lists(f.summary, suffix) ||
          f.num_absorbed == kMaxStatsAbsorbed) {
        continue;
      }
      const StatsOpen read = ReadStatsFileAt(dirfd, entry->d_name, f.file_text,
                                             &length, &st, &error);
      StatsParseError parse;
      if (read != StatsOpen::kOk ||
          !ParseStatsFile(std::string_view(f.file_text, length), &f.file,
                          &parse) ||
          f.file.summary || f.file.process.pid != static_cast<int64_t>(number)) {
        SetProblem(problem, "%s is not a statistics file of process %llu: "
                   "left as it is", entry->d_name,
                   static_cast<unsigned long long>(number));
        continue;
      }
      if (!StatsProcessGone(f.file.process, self)) continue;
      // Read again now that its process is gone: what was read before may
      // have been replaced by the process's last write since.
      const StatsProcess process = f.file.process;
      if (ReadStatsFileAt(dirfd, entry->d_name, f.file_text, &length, &st,
                          &error) != StatsOpen::kOk ||
          !ParseStatsFile(std::string_view(f.file_text, length), &f.file,
                          &parse) ||
          f.file.summary || f.file.process.pid != process.pid ||
          f.file.process.start != process.start) {
        continue;
      }
      char which[64];
      if (!AddChecked(f.processes, 1) ||
          !AddStatsCounts(f.counts, f.file.counts, which)) {
        SetProblem(problem, "folding %s would pass 2^64-1: left as it is",
                   entry->d_name);
        continue;
      }
      for (size_t i = 0; i < f.file.num_notes; ++i) {
        AddNote(f, f.file.notes[i].text, f.file.notes[i].processes);
      }
      std::memcpy(f.absorbed[f.num_absorbed].data(), suffix.data(),
                  suffix.size());
      f.absorbed[f.num_absorbed][suffix.size()] = '\0';
      ++f.num_absorbed;
      ++folded;
    }
  }
  close(scan);

  if (folded > 0) {
    StatsText out{f.out_text, sizeof(f.out_text)};
    out.Append(kMagic);
    out.Append("\nsummary ");
    out.AppendNumber(f.processes);
    out.Append("\n");
    for (size_t i = 0; i < f.num_absorbed; ++i) {
      out.Append("absorbed ");
      out.Append(f.absorbed[i].data());
      out.Append("\n");
    }
    AppendCounts(out, f.counts);
    for (size_t i = 0; i < f.num_notes; ++i) {
      AppendNote(out, f.note_count[i],
                 std::string_view(f.note_text[i].data(), f.note_len[i]));
    }
    if (out.overflow) {
      SetProblem(problem, "%s would be larger than a statistics file may be",
                 summary_name);
      return -1;
    }
    const char *step = "";
    if (const int error = ReplaceStatsFile(
            dirfd, summary_name, std::string_view(f.out_text, out.used), true,
            &step)) {
      SetProblem(problem, "cannot %s the statistics directory to fold into "
                 "%s: %s", step, summary_name, std::strerror(error));
      return -1;
    }
  }
  // Only now that the summary holding them is in place, and on disk: else
  // a crash could keep the removals and lose the summary.
  for (size_t i = 0; i < f.num_absorbed; ++i) {
    unlinkat(dirfd, Name(f.name, stem, f.absorbed[i].data()), 0);
  }
  return static_cast<int>(folded);
}

}  // namespace aesmux::core
