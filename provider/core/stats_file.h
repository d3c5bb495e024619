// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
// The statistics files on disk: their names and format, a strict parser,
// reading one without trusting the directory, and folding the files of
// processes that have exited into one summary per user. The writer
// (core/stats.h) and `aesmux stats` (provider/cli/stats_report.h) share
// all of it.
//
// With stats_file = DIR/STEM, DIR holds
//   STEM.<pid>.<id>                a live (or not yet folded) process's
//                                  counts; <id> is 16 random hex digits,
//                                  drawn once per process, so that nobody
//                                  can take the name before it is written
//   STEM.<pid>.<id>.<r>.tmp        one write of it under way (<r>: 8 hex
//                                  digits, drawn per write)
//   STEM.summary.<uid>             the counts of that user's processes that
//                                  have exited, folded together
//   STEM.summary.<uid>.<r>.tmp     a fold under way
//   STEM.summary.<uid>.bad         a summary a fold could not read, set
//                                  aside (summed by nobody)
//   STEM.lock.<uid>                empty, mode 0600: what that user's folds
//                                  and readers flock (made by its first
//                                  fold; nothing of aesmux's removes it)
// and nothing else of aesmux's: however many processes come and go, the
// directory holds one file per live process (and per process not yet
// folded) and, per user, one summary, at most one summary set aside, and
// one lock.
//
// A file is text, lines of single-space-separated fields, each line ended
// by '\n', at most kMaxStatsFileBytes in all:
//   aesmux-stats 2
//   process <pid> <start> <boot> <pidns>      (a process file)
//   summary <processes>                        (a summary)
//   absorbed <pid>.<id>                        (summary only, any number)
//   <ALGORITHM> <path> <requests> <bytes>      (once per algorithm and path)
//   <ALGORITHM> afalg-fallback:<reason> <requests> <bytes>
//   note <processes> <text>
// Numbers are decimal, without sign or leading zero, at most 2^64 - 1;
// <start> is the process's start time in clock ticks after boot (0:
// unknown), <boot> the kernel's boot id ("-": unknown), <pidns> the inode
// of its pid namespace (0: unknown); a note's text is printable ASCII.
// Anything else is not a statistics file, and the parser says which line
// and why, never quoting it.
//
// Folding, under an exclusive flock on the folding user's lock (taken
// without waiting: a fold of the user under way makes another
// unnecessary; readers of its files hold a shared one): the summary of the
// folding user is read, each of that user's process files whose process
// is gone (an earlier boot, or no process of that pid and start time in
// this pid namespace; a process that cannot be told gone is left alone) is
// added to it and listed as "absorbed", the new summary is written,
// flushed to disk, renamed into place and the rename flushed, and only
// then are the absorbed files removed. A crash between the two leaves
// files that the summary already lists: readers skip them, and the next
// fold removes them and drops them from the list. So no count is lost or
// counted twice, whichever step a fold stops at. Only the files of the
// folding user are folded (a sticky directory lets nobody else remove
// them), and a summary is trusted only if its owner is the uid it names.
// Another user's file under the folding user's summary name is never
// read; it is removed where the user may (root, the directory's owner).
//
// Folds of different users share no file, so nothing one user can open or
// lock keeps another's folds from running: the directory itself is never
// locked, and a lock is used only if it is a regular file of one link
// owned by the uid it names, which nobody but that user and root can open
// (its mode is made 0600 if the user made it otherwise). A lock name
// holding anything else (another user's file, a symbolic link, a FIFO) is
// never removed (nothing would keep two folds apart while it was
// replaced). While it is there, or while another user's file the user
// cannot remove holds the user's summary name, no fold of that user's can
// run, so that user's processes write no file (FoldStats says so, naming
// it): the directory stays bounded.
// A summary of the folding user that cannot be read or parsed (a FIFO, a
// hard link, a file cut short) is set aside as STEM.summary.<uid>.bad and
// folding goes on into a new one, so that it never stops for good.
//
// Opening: every file is opened relative to the directory's descriptor
// with O_NOFOLLOW | O_NONBLOCK (a symlink is refused, a FIFO does not
// block), and read only if it is a regular file with one link (not a hard
// link to someone's file) and at most kMaxStatsFileBytes.
//
// Nothing here allocates: the writer runs on request paths and while an
// application is out of memory.
#ifndef AESMUX_PROVIDER_CORE_STATS_FILE_H_
#define AESMUX_PROVIDER_CORE_STATS_FILE_H_

#include <sys/stat.h>
#include <sys/types.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "provider/core/stats.h"

namespace aesmux::core {

inline constexpr size_t kMaxStatsFileBytes = 64 * 1024;
inline constexpr size_t kMaxStatsNotes = 64;       // distinct, per file
inline constexpr size_t kMaxStatsNoteBytes = 255;  // a note's text
inline constexpr size_t kMaxStatsAbsorbed = 256;   // per summary
// stats_file: the whole prefix, and its last component (STEM): the longest
// name made from it must fit NAME_MAX.
inline constexpr size_t kMaxStatsPrefixBytes = 4000;
inline constexpr size_t kMaxStatsStemBytes = 200;

// Why a stats_file prefix cannot be used, or null if it can.
const char *StatsPrefixProblem(std::string_view prefix);

// A process as its statistics file identifies it.
struct StatsProcess {
  int64_t pid = 0;
  uint64_t start = 0;           // clock ticks after boot; 0: unknown
  std::array<char, 37> boot{};  // the boot id; "": unknown
  uint64_t pidns = 0;           // inode of its pid namespace; 0: unknown
};

// This process (from /proc, read each call: a forked child is another).
StatsProcess ThisStatsProcess();

// Whether `process` has certainly exited, as seen from `self`.
bool StatsProcessGone(const StatsProcess &process, const StatsProcess &self);

struct StatsNote {
  std::string_view text;
  uint64_t processes = 0;
};

// A parsed file: views into the text it was parsed from.
struct StatsFileView {
  bool summary = false;
  StatsProcess process;        // a process file's
  uint64_t processes = 0;      // 1 for a process file
  StatsSnapshot counts;        // counters and hand-offs only
  std::array<StatsNote, kMaxStatsNotes> notes{};
  size_t num_notes = 0;
  std::array<std::string_view, kMaxStatsAbsorbed> absorbed{};  // <pid>.<id>
  size_t num_absorbed = 0;
};

struct StatsParseError {
  size_t line = 0;  // 1-based; 0 for the file as a whole
  const char *reason = "";
};

bool ParseStatsFile(std::string_view text, StatsFileView *out,
                    StatsParseError *error);

// Adds `add`'s counters and hand-offs to `sum`; false, `sum` unchanged, if
// one would pass 2^64 - 1 (`*which` then names it: "<ALGORITHM> <path>").
bool AddStatsCounts(StatsSnapshot &sum, const StatsSnapshot &add,
                    char (&which)[64]);

// Whether nothing was counted (no request, no hand-off): such a process
// writes no file.
bool NothingCounted(const StatsSnapshot &counts);

// What a directory entry is, for STEM. `*number` gets the pid or uid, and
// `*suffix` (process files and their temporary files) "<pid>.<id>".
enum class StatsName {
  kOther,
  kProcess,
  kProcessTemp,
  kSummary,
  kSummaryTemp,
  kSummaryAside,
  kLock
};
StatsName ClassifyStatsName(std::string_view stem, std::string_view name,
                            uint64_t *number, std::string_view *suffix);

// Reading one file of a directory others may write.
enum class StatsOpen {
  kOk,
  kMissing,     // ENOENT
  kSymlink,     // refused: not followed
  kNotRegular,  // refused: a FIFO, device, directory, socket
  kLinked,      // refused: more than one link
  kTooLarge,    // refused: over kMaxStatsFileBytes
  kNotOwned,    // refused (a lock): not the file of the uid it names
  kError,       // another errno (in *error)
};
// Why in words ("is a symbolic link"), for messages; kError: "".
const char *StatsOpenText(StatsOpen result);
// Reads `name` (relative to `dirfd`, or a path if dirfd is AT_FDCWD) into
// `buffer` (at least kMaxStatsFileBytes + 1 bytes: one more tells a file
// that grew); `*length` its size, `*st` what fstat said.
StatsOpen ReadStatsFileAt(int dirfd, const char *name, char *buffer,
                          size_t *length, struct stat *st, int *error);

// What keeps a lock file, as fstatat(AT_SYMLINK_NOFOLLOW) or fstat saw it,
// from being `uid`'s lock: kSymlink, kNotRegular, kNotOwned or kLinked;
// kOk if nothing does.
StatsOpen StatsLockState(const struct stat &st, uid_t uid);

// Opens `name` (STEM.lock.<uid>, relative to `dirfd`) for flock(2) by a
// fold or reader of `uid`'s files; with `create`, makes it (empty, mode
// 0600) if there is none. Returns a descriptor, or -1 with `*result`:
// kMissing (there is none, or, with `create`, it cannot be made: errno in
// `*error`), kSymlink, kNotRegular, kLinked, kNotOwned (`st->st_uid` is
// its owner) or kError (`*error`). Only a regular file of one link owned
// by `uid` is opened, and its mode made 0600 if it was not.
int OpenStatsLockAt(int dirfd, const char *name, uid_t uid, bool create,
                    StatsOpen *result, struct stat *st, int *error);

// Appends text to a fixed buffer; `overflow` once anything did not fit.
struct StatsText {
  char *data;
  size_t size;
  size_t used = 0;
  bool overflow = false;
  void Append(std::string_view text);
  void AppendNumber(uint64_t value);
};

// A process file's text: header, identity, one line per algorithm and path,
// a line per hand-off counter that is not zero, and one note line per line
// of `notes` (each made printable and cut to kMaxStatsNoteBytes).
void FormatProcessFile(const StatsProcess &process, const StatsSnapshot &counts,
                       std::string_view notes, StatsText &out);

// Replaces `name` in `dirfd` by `text`: written to "<name>.<r>.tmp" under
// a name drawn anew (O_CREAT | O_EXCL | O_NOFOLLOW, mode 0644 less the
// umask: whatever is found under any name is never written through), then
// renamed into place, so that readers never see half a file. With
// `durable`, the file is flushed to disk before the rename and the
// directory after it, so that after a crash `name` holds the old text or
// the new one, never an empty file. Returns 0, or an errno with `*step`
// the step that failed ("create a file in", "write", "rename", "sync").
int ReplaceStatsFile(int dirfd, const char *name, std::string_view text,
                     bool durable, const char **step);

// Folds, as above, the files of this user's processes that are gone into
// STEM.summary.<euid>, leaving the file named STEM.<keep> (this process's,
// or "") alone. Returns how many files it folded, 0 if STEM.lock.<euid>
// was held by another fold or a reader, if nothing was gone, or if this
// user can make no lock in the directory (nor any other file), -1 with
// `problem` set ("STEM.summary.0 cannot be read: ..."), or
// kStatsSummaryTaken with `problem` naming the file when no fold of this
// user's can run: STEM.summary.<euid> is another user's that this user
// cannot remove, or STEM.lock.<euid> cannot be used (another user's, not
// a regular file of one link, or not to be opened). Then a process that
// has written no file must write none (nothing would fold it). `problem`
// may also be set when it folded: a file left as it is, or a summary set
// aside ("STEM.summary.0 is not a statistics summary (line 3: ...): set
// aside as ...").
inline constexpr int kStatsSummaryTaken = -2;
int FoldStats(int dirfd, std::string_view stem, std::string_view keep,
              char (&problem)[512]);

// 8 or 16 random hex digits (getrandom; the clock and pid if it fails).
void RandomHex(char *out, size_t digits);

}  // namespace aesmux::core

#endif  // AESMUX_PROVIDER_CORE_STATS_FILE_H_
