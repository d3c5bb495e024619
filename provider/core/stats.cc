// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
#include "provider/core/stats.h"

#include <fcntl.h>
#include <pthread.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <new>
#include <string_view>

#include "provider/core/diagnostics.h"
#include "provider/core/process.h"
#include "provider/core/stats_file.h"
#include "provider/core/thread_exit.h"
#include "provider/core/trace.h"

namespace aesmux::core {

namespace stats_internal {
thread_local ThreadCounters *t_counters = nullptr;
}  // namespace stats_internal

namespace {

using stats_internal::Bump;
using stats_internal::t_counters;
using stats_internal::ThreadCounters;

// This thread's counters once registered, also while AESMUX_TRACE keeps
// t_counters null.
thread_local ThreadCounters *t_registered = nullptr;

// The registry of every thread's counters. Constant-initialized and
// trivially destructible: it is never destroyed (threads may exit after
// static destructors run) and owns no heap memory.
struct Registry {
  std::mutex mutex;
  ThreadCounters *live = nullptr;  // guarded by mutex
  StatsSnapshot retired;           // guarded by mutex: exited threads
  // What threads count that have no counters of their own (memory ran out
  // when they first counted): shared, so added to atomically.
  ThreadCounters shared;
  std::array<char, kMaxStatsPrefixBytes + 1> file_prefix{};  // guarded by
                                                             // mutex; "": none
  std::array<char, 2048> file_notes{};   // guarded by mutex
  // The first problem with the file (core/stats.h, StatsFileState); "": none.
  std::array<char, 512> file_problem{};  // guarded by mutex
  std::atomic<bool> problem_printed{false};
  std::atomic<bool> progress_writes{false};
  // CLOCK_MONOTONIC (ns) before which no progress write is due; the thread
  // that moves it on writes.
  std::atomic<int64_t> next_progress_write{0};
};

Registry &TheRegistry();

// A progress write of the statistics file (defined with the writer below).
int WriteProgressFile();

// The statistics file's writer: one at a time (a process has one file),
// with its buffers here rather than on a stack that may be an ASYNC job's.
struct FileWriter {
  std::mutex mutex;
  char dir[kMaxStatsPrefixBytes + 1] = {};
  char stem[kMaxStatsStemBytes + 1] = {};
  char notes[sizeof(Registry::file_notes)] = {};
  StatsSnapshot snapshot;
  char text[kMaxStatsFileBytes] = {};
  // This process as its file names it, drawn on its first write (and again in
  // a forked child, whose pid differs). Zero, not a sentinel: a writer of all
  // zeros lies in .bss, which costs a process nothing until it writes the file
  // (BENCHMARKS.md, "What does loading aesmux cost: start-up and memory?").
  long self_pid = 0;
  StatsProcess self;
  char suffix[32] = {};  // "<pid>.<id>"
  bool written = false;  // this process's file is there
  char name[kMaxStatsStemBytes + 64] = {};
  char problem[1024] = {};
};
constinit FileWriter g_writer;

void AddInto(StatsSnapshot &sum, const ThreadCounters &counters) {
  for (size_t a = 0; a < kNumAlgs; ++a) {
    sum.key_setups[a] += counters.key_setups[a].load(std::memory_order_relaxed);
    sum.mb_batches[a] += counters.mb_batches[a].load(std::memory_order_relaxed);
    sum.mb_lanes[a] += counters.mb_lanes[a].load(std::memory_order_relaxed);
    for (size_t p = 0; p < kNumPaths; ++p) {
      sum.counters[a][p].requests +=
          counters.requests[a][p].load(std::memory_order_relaxed);
      sum.counters[a][p].bytes +=
          counters.bytes[a][p].load(std::memory_order_relaxed);
    }
    for (size_t h = 0; h < kNumHandoffs; ++h) {
      sum.handoffs[a][h].requests +=
          counters.handoff_requests[a][h].load(std::memory_order_relaxed);
      sum.handoffs[a][h].bytes +=
          counters.handoff_bytes[a][h].load(std::memory_order_relaxed);
    }
  }
}

void ZeroCounters(ThreadCounters &counters) {
  for (size_t a = 0; a < kNumAlgs; ++a) {
    counters.key_setups[a].store(0, std::memory_order_relaxed);
    counters.mb_batches[a].store(0, std::memory_order_relaxed);
    counters.mb_lanes[a].store(0, std::memory_order_relaxed);
    for (size_t p = 0; p < kNumPaths; ++p) {
      counters.requests[a][p].store(0, std::memory_order_relaxed);
      counters.bytes[a][p].store(0, std::memory_order_relaxed);
    }
    for (size_t h = 0; h < kNumHandoffs; ++h) {
      counters.handoff_requests[a][h].store(0, std::memory_order_relaxed);
      counters.handoff_bytes[a][h].store(0, std::memory_order_relaxed);
    }
  }
}

// fork(): hold the writer's and the registry's locks across it (after
// core::InitLock, as a thread counting under that lock takes them) so the
// child never inherits them locked; in the child, drop the other threads'
// counters (those threads do not exist there) and start from zero.
void BeforeFork() {
  core::HoldInitLockForFork();  // a thread may count under it
  g_writer.mutex.lock();
  TheRegistry().mutex.lock();
}
void AfterForkInParent() {
  TheRegistry().mutex.unlock();
  g_writer.mutex.unlock();
  core::ReleaseInitLockAfterFork();
}
void AfterForkInChild() {
  Registry &registry = TheRegistry();
  ThreadCounters *mine = t_registered;
  for (ThreadCounters *node = registry.live; node != nullptr;) {
    ThreadCounters *next = node->next;
    if (node != mine) delete node;
    node = next;
  }
  registry.live = mine;
  if (mine != nullptr) {
    mine->next = nullptr;
    ZeroCounters(*mine);
  }
  registry.retired = StatsSnapshot{};
  ZeroCounters(registry.shared);
  registry.next_progress_write.store(0, std::memory_order_relaxed);
  registry.mutex.unlock();
  g_writer.mutex.unlock();
  core::ReleaseInitLockAfterFork();
}

constinit Registry g_registry;
constinit std::once_flag g_fork_handlers;

Registry &TheRegistry() {
  std::call_once(g_fork_handlers, [] {
    pthread_atfork(BeforeFork, AfterForkInParent, AfterForkInChild);
  });
  return g_registry;
}

// Retires an exiting thread's counters (core/thread_exit.h).
void RetireThread(void *object) {
  auto *counters = static_cast<ThreadCounters *>(object);
  t_counters = nullptr;
  t_registered = nullptr;
  Registry &registry = TheRegistry();
  std::lock_guard lock(registry.mutex);
  AddInto(registry.retired, *counters);
  for (ThreadCounters **link = &registry.live; *link != nullptr;
       link = &(*link)->next) {
    if (*link == counters) {
      *link = counters->next;
      break;
    }
  }
  delete counters;
}


}  // namespace

namespace stats_internal {

ThreadCounters *RegisterThread() {
  if (t_registered != nullptr) return t_registered;
  auto *counters = new (std::nothrow) ThreadCounters;
  if (counters == nullptr) return nullptr;
  if (!SetThreadObject(ThreadSlot::kStats, counters, RetireThread)) {
    delete counters;
    return nullptr;
  }
  Registry &registry = TheRegistry();
  {
    std::lock_guard lock(registry.mutex);
    counters->next = registry.live;
    registry.live = counters;
  }
  t_registered = counters;
  if (!TraceOn()) t_counters = counters;
  return counters;
}

void CountRequestSlow(Alg alg, Path path, uint64_t bytes) {
  if (TraceOn()) TraceRequest(alg, path, bytes);
  if (ThreadCounters *counters = RegisterThread()) {
    AddRequest(*counters, alg, path, bytes);
    return;
  }
  ThreadCounters &shared = TheRegistry().shared;
  const auto a = static_cast<size_t>(alg);
  const auto p = static_cast<size_t>(path);
  shared.requests[a][p].fetch_add(1, std::memory_order_relaxed);
  shared.bytes[a][p].fetch_add(bytes, std::memory_order_relaxed);
}

void WriteProgress() {
  ThreadCounters *counters = RegisterThread();
  if (counters == nullptr) return;
  counters->unwritten_bytes = 0;
  Registry &registry = TheRegistry();
  if (!registry.progress_writes.load(std::memory_order_relaxed)) return;
  timespec now{};
  clock_gettime(CLOCK_MONOTONIC, &now);
  const int64_t now_ns = now.tv_sec * int64_t{1'000'000'000} + now.tv_nsec;
  int64_t due = registry.next_progress_write.load(std::memory_order_relaxed);
  // Not due yet, or another thread is writing for this interval.
  if (now_ns < due || !registry.next_progress_write.compare_exchange_strong(
                          due, now_ns + kProgressIntervalNs,
                          std::memory_order_relaxed)) {
    return;
  }
  if (WriteProgressFile() != 0) {
    registry.progress_writes.store(false, std::memory_order_relaxed);
  }
}

}  // namespace stats_internal

StatsSnapshot ReadStats() {
  Registry &registry = TheRegistry();
  std::lock_guard lock(registry.mutex);
  StatsSnapshot sum = registry.retired;
  AddInto(sum, registry.shared);
  for (const ThreadCounters *node = registry.live; node != nullptr;
       node = node->next) {
    AddInto(sum, *node);
  }
  return sum;
}

namespace {

// Calls `emit(line, length)` for each line of FormatStats, without
// allocating: the statistics file is written from request paths too.
template <typename Emit>
void EmitStats(const StatsSnapshot &snapshot, Emit emit) {
  char line[160];
  auto emit_counter = [&](std::string_view alg, std::string_view prefix,
                          std::string_view name, const Counter &counter) {
    const int len = std::snprintf(
        line, sizeof(line), "%.*s %.*s%.*s %llu %llu\n",
        static_cast<int>(alg.size()), alg.data(),
        static_cast<int>(prefix.size()), prefix.data(),
        static_cast<int>(name.size()), name.data(),
        static_cast<unsigned long long>(counter.requests),
        static_cast<unsigned long long>(counter.bytes));
    emit(line, static_cast<size_t>(std::clamp(len, 0, int{sizeof(line)} - 1)));
  };
  for (const AlgInfo &info : kAlgs) {
    for (size_t p = 0; p < kNumPaths; ++p) {
      emit_counter(info.name, "", kPathNames[p],
                   snapshot.at(info.alg, static_cast<Path>(p)));
    }
  }
  for (const AlgInfo &info : kAlgs) {
    for (size_t h = 0; h < kNumHandoffs; ++h) {
      const Counter &counter = snapshot.at(info.alg, static_cast<Handoff>(h));
      if (counter.requests == 0) continue;
      emit_counter(info.name, kHandoffStatPrefix, kHandoffNames[h], counter);
    }
  }
}

}  // namespace

std::string FormatStats(const StatsSnapshot &snapshot) {
  std::string out;
  EmitStats(snapshot,
            [&](const char *line, size_t len) { out.append(line, len); });
  return out;
}

namespace {

// Adds `amount` to `counter` of this thread's counters, or of the shared
// ones if it has none (atomically there).
template <typename Field>
void Add(Field field, uint64_t amount) {
  ThreadCounters *counters = t_counters;
  if (counters == nullptr) counters = stats_internal::RegisterThread();
  if (counters != nullptr) {
    Bump(field(*counters), amount);
  } else {
    field(TheRegistry().shared).fetch_add(amount, std::memory_order_relaxed);
  }
}

}  // namespace

void CountKeySetup(Alg alg) {
  const auto a = static_cast<size_t>(alg);
  Add([a](ThreadCounters &c) -> auto & { return c.key_setups[a]; }, 1);
}

void CountHandoff(Alg alg, Handoff handoff, uint64_t bytes) {
  if (TraceOn()) TraceHandoff(alg, handoff, bytes);
  const auto a = static_cast<size_t>(alg);
  const auto h = static_cast<size_t>(handoff);
  Add([a, h](ThreadCounters &c) -> auto & { return c.handoff_requests[a][h]; },
      1);
  Add([a, h](ThreadCounters &c) -> auto & { return c.handoff_bytes[a][h]; },
      bytes);
}

std::string HandoffStatName(Handoff handoff) {
  return std::string(kHandoffStatPrefix) + std::string(HandoffName(handoff));
}

void SetStatsFileNotes(const std::string &notes) {
  Registry &registry = TheRegistry();
  std::lock_guard lock(registry.mutex);
  const size_t len = std::min(notes.size(), registry.file_notes.size() - 1);
  std::copy(notes.begin(), notes.begin() + len, registry.file_notes.begin());
  registry.file_notes[len] = '\0';
}

void CountBatches(Alg alg, uint64_t batches, uint64_t lanes) {
  const auto a = static_cast<size_t>(alg);
  Add([a](ThreadCounters &c) -> auto & { return c.mb_batches[a]; }, batches);
  Add([a](ThreadCounters &c) -> auto & { return c.mb_lanes[a]; }, lanes);
}

namespace {

// Records the first problem with the statistics file and prints it on
// stderr, once per process (a forked child inherits that it was printed).
void ReportProblem(const char *text) {
  Registry &registry = TheRegistry();
  {
    std::lock_guard lock(registry.mutex);
    if (registry.file_problem[0] == '\0') {
      std::snprintf(registry.file_problem.data(), registry.file_problem.size(),
                    "%s", text);
    }
  }
  if (!registry.problem_printed.exchange(true)) {
    char line[sizeof(Registry::file_problem) + 32];
    const int len =
        std::snprintf(line, sizeof(line), "aesmux: stats_file: %s\n", text);
    PrintDiagnostic(std::string_view(
        line, static_cast<size_t>(std::clamp(len, 0, int{sizeof(line)} - 1))));
  }
}

// "DIR" and "STEM" of a prefix DIR/STEM ("." for a prefix without '/').
void SplitPrefix(const char *prefix, char (&dir)[kMaxStatsPrefixBytes + 1],
                 char (&stem)[kMaxStatsStemBytes + 1]) {
  const char *slash = std::strrchr(prefix, '/');
  if (slash == nullptr) {
    std::snprintf(dir, sizeof(dir), ".");
    std::snprintf(stem, sizeof(stem), "%s", prefix);
  } else {
    std::snprintf(dir, sizeof(dir), "%.*s",
                  static_cast<int>(slash == prefix ? 1 : slash - prefix),
                  prefix);
    std::snprintf(stem, sizeof(stem), "%s", slash + 1);
  }
}

// The directory of the prefix, opened; -1 after reporting why not.
int OpenStatsDir(const char *dir, bool check_writable) {
  char problem[sizeof(Registry::file_problem)];
  const int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) {
    std::snprintf(problem, sizeof(problem),
                  "no statistics are written: cannot open the directory "
                  "%.300s: %s",
                  dir, std::strerror(errno));
    ReportProblem(problem);
    return -1;
  }
  if (check_writable && faccessat(fd, ".", W_OK | X_OK, AT_EACCESS) != 0) {
    std::snprintf(problem, sizeof(problem),
                  "no statistics are written: this process (uid %u) cannot "
                  "write into %.300s: %s",
                  static_cast<unsigned>(geteuid()), dir, std::strerror(errno));
    ReportProblem(problem);
    close(fd);
    return -1;
  }
  return fd;
}

}  // namespace

void SetStatsFilePrefix(const std::string &prefix) {
  Registry &registry = TheRegistry();
  const char *problem = StatsPrefixProblem(prefix);
  {
    std::lock_guard lock(registry.mutex);
    // A prefix that cannot be used is refused rather than cut short (the
    // settings refuse it first, naming stats_file).
    const std::string_view stored =
        problem == nullptr ? std::string_view(prefix) : "";
    std::copy(stored.begin(), stored.end(), registry.file_prefix.begin());
    registry.file_prefix[stored.size()] = '\0';
    registry.progress_writes.store(!stored.empty(), std::memory_order_relaxed);
  }
  if (problem != nullptr) {
    char text[sizeof(Registry::file_problem)];
    std::snprintf(text, sizeof(text),
                  "no statistics are written: stats_file %s", problem);
    ReportProblem(text);
    return;
  }
  if (prefix.empty()) return;
  // A directory that is missing or not writable is said at load, once.
  FileWriter &writer = g_writer;
  std::lock_guard writing(writer.mutex);
  SplitPrefix(prefix.c_str(), writer.dir, writer.stem);
  const int fd = OpenStatsDir(writer.dir, true);
  if (fd >= 0) close(fd);
}

std::string StatsFileProblem() {
  Registry &registry = TheRegistry();
  std::lock_guard lock(registry.mutex);
  return registry.file_problem.data();
}

std::string StatsFileState() {
  Registry &registry = TheRegistry();
  std::lock_guard lock(registry.mutex);
  const std::string prefix = registry.file_prefix.data();
  if (registry.file_problem[0] != '\0') return registry.file_problem.data();
  if (prefix.empty()) return "off (stats_file not set)";
  return prefix + ".<pid>.<id> per process that counts anything, exited "
         "ones folded into " + prefix + ".summary.<uid>";
}

namespace {

// Writes this process's file (kProgress, kFinal); at its first write and
// its last, it first folds the files of this user's exited processes.
enum class WriteKind { kProgress, kFinal };

int WriteFile(WriteKind kind) {
  FileWriter &writer = g_writer;
  std::lock_guard writing(writer.mutex);
  {
    Registry &registry = TheRegistry();
    std::lock_guard lock(registry.mutex);
    if (registry.file_prefix[0] == '\0') return 0;
    SplitPrefix(registry.file_prefix.data(), writer.dir, writer.stem);
    std::memcpy(writer.notes, registry.file_notes.data(), sizeof(writer.notes));
  }
  writer.snapshot = ReadStats();
  // A process that counted nothing leaves nothing behind.
  if (NothingCounted(writer.snapshot)) return 0;

  const int dirfd = OpenStatsDir(writer.dir, false);
  if (dirfd < 0) return -EACCES;
  if (writer.self_pid != getpid()) {
    writer.self = ThisStatsProcess();
    writer.self_pid = writer.self.pid;
    char id[16];
    RandomHex(id, sizeof(id));
    std::snprintf(writer.suffix, sizeof(writer.suffix), "%ld.%.16s",
                  writer.self_pid, id);
    writer.written = false;
  }
  if (!writer.written || kind == WriteKind::kFinal) {
    char problem[512];
    const int folded = FoldStats(dirfd, writer.stem, writer.suffix, problem);
    if (folded < 0 || problem[0] != '\0') ReportProblem(problem);
    // Nothing would fold a new file: none is written, so that the directory
    // stays bounded (a file written before is kept up to date). A progress
    // write failing stops them; the last write tries again.
    if (folded == kStatsSummaryTaken && !writer.written) {
      close(dirfd);
      return -EPERM;
    }
  }
  StatsText text{writer.text, sizeof(writer.text)};
  FormatProcessFile(writer.self, writer.snapshot,
                    std::string_view(writer.notes,
                                     strnlen(writer.notes, sizeof(writer.notes))),
                    text);
  // Through a temporary file of a name drawn anew: nothing another user
  // of the directory put there is written through or in the way.
  std::snprintf(writer.name, sizeof(writer.name), "%s.%s", writer.stem,
                writer.suffix);
  const char *step = "";
  // Not flushed to disk (it is rewritten every second on request paths): a
  // crash may lose or empty it, which costs its own process's counts only.
  const int error =
      ReplaceStatsFile(dirfd, writer.name,
                       std::string_view(writer.text, text.used), false, &step);
  close(dirfd);
  if (error != 0) {
    std::snprintf(writer.problem, sizeof(writer.problem),
                  "no statistics are written: cannot %s %.300s/%.300s: %s",
                  step, writer.dir, writer.name,
                  std::strerror(error));
    ReportProblem(writer.problem);
    return -error;
  }
  writer.written = true;
  return 0;
}

int WriteProgressFile() { return WriteFile(WriteKind::kProgress); }

}  // namespace

int WriteStatsFile() { return WriteFile(WriteKind::kFinal); }

}  // namespace aesmux::core
