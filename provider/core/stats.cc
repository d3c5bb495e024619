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
  std::array<char, 4096> file_prefix{};  // guarded by mutex; "" = none
  std::array<char, 2048> file_notes{};   // guarded by mutex
  std::atomic<bool> progress_writes{false};
  // CLOCK_MONOTONIC (ns) before which no progress write is due; the thread
  // that moves it on writes.
  std::atomic<int64_t> next_progress_write{0};
};

Registry &TheRegistry();

// The statistics file's writer: one at a time (they would share the
// temporary file), with its buffers here rather than on a stack that may
// be an ASYNC job's.
struct FileWriter {
  std::mutex mutex;
  char path[sizeof(Registry::file_prefix) + 24] = {};
  char temporary[sizeof(path) + 4] = {};
  char notes[sizeof(Registry::file_notes)] = {};
  StatsSnapshot snapshot;
  char buffer[4096] = {};
  size_t buffered = 0;
  // Set before each use (WriteStatsFile). Zero, not -1: a writer of all
  // zeros lies in .bss, which costs a process nothing until it writes the
  // file, where -1 put all 18 KiB of it in .data (BENCHMARKS.md,
  // "Start-up").
  int fd = 0;
  int error = 0;

  void Append(const char *data, size_t len) {
    while (len != 0 && error == 0) {
      if (buffered == sizeof(buffer)) Flush();
      const size_t take = std::min(len, sizeof(buffer) - buffered);
      std::memcpy(buffer + buffered, data, take);
      buffered += take;
      data += take;
      len -= take;
    }
  }

  void Flush() {
    size_t written = 0;
    while (written < buffered && error == 0) {
      const ssize_t n = write(fd, buffer + written, buffered - written);
      if (n < 0 && errno != EINTR) error = -errno;
      if (n > 0) written += static_cast<size_t>(n);
    }
    buffered = 0;
  }
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

// fork(): hold the registry lock across it so the child never inherits it
// locked; in the child, drop the other threads' counters (those threads do
// not exist there) and start from zero.
void BeforeFork() {
  g_writer.mutex.lock();
  TheRegistry().mutex.lock();
}
void AfterForkInParent() {
  TheRegistry().mutex.unlock();
  g_writer.mutex.unlock();
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
  if (WriteStatsFile() != 0) {
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

void SetStatsFilePrefix(const std::string &prefix) {
  Registry &registry = TheRegistry();
  std::lock_guard lock(registry.mutex);
  // A prefix that does not fit is refused rather than cut short.
  const bool fits = prefix.size() < registry.file_prefix.size();
  const std::string_view stored = fits ? std::string_view(prefix) : "";
  std::copy(stored.begin(), stored.end(), registry.file_prefix.begin());
  registry.file_prefix[stored.size()] = '\0';
  registry.progress_writes.store(!stored.empty(), std::memory_order_relaxed);
}

namespace {


}  // namespace

namespace {

// The temporary file, made anew: the directory may be writable by others
// (README), so an existing entry (a symlink planted there, or a file left by
// a process of the same pid) is never opened, only removed (unlink does not
// follow a symlink) before one more exclusive try. Returns the descriptor
// or -errno.
int CreateTemporary(const char *path) {
  constexpr int kFlags =
      O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC;
  int fd = open(path, kFlags, 0644);
  if (fd < 0 && errno == EEXIST) {
    if (unlink(path) != 0) return -errno;
    fd = open(path, kFlags, 0644);
  }
  return fd >= 0 ? fd : -errno;
}

}  // namespace

int WriteStatsFile() {
  FileWriter &writer = g_writer;
  std::lock_guard writing(writer.mutex);
  {
    Registry &registry = TheRegistry();
    std::lock_guard lock(registry.mutex);
    if (registry.file_prefix[0] == '\0') return 0;
    std::snprintf(writer.path, sizeof(writer.path), "%s.%ld",
                  registry.file_prefix.data(), static_cast<long>(getpid()));
    std::memcpy(writer.notes, registry.file_notes.data(), sizeof(writer.notes));
  }
  // The precision bounds the copy for the compiler too (path always fits).
  std::snprintf(writer.temporary, sizeof(writer.temporary), "%.*s.tmp",
                static_cast<int>(sizeof(writer.path) - 1), writer.path);
  writer.snapshot = ReadStats();

  writer.fd = CreateTemporary(writer.temporary);
  if (writer.fd < 0) return writer.fd;
  writer.buffered = 0;
  writer.error = 0;
  EmitStats(writer.snapshot,
            [&](const char *line, size_t len) { writer.Append(line, len); });
  writer.Append(writer.notes, strnlen(writer.notes, sizeof(writer.notes)));
  writer.Flush();
  int error = writer.error;
  if (close(writer.fd) != 0 && error == 0) error = -errno;
  writer.fd = -1;
  if (error == 0 && rename(writer.temporary, writer.path) != 0) error = -errno;
  if (error != 0) unlink(writer.temporary);
  return error;
}

}  // namespace aesmux::core
