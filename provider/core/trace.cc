// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
#include "provider/core/trace.h"

#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace aesmux::core {
namespace {

// Lines printed this second, counted without a lock (a forked child must
// not inherit one held, and an approximate count serves diagnostics).
struct Limiter {
  std::atomic<int64_t> second{-1};
  std::atomic<uint64_t> printed{0};
  std::atomic<uint64_t> dropped{0};
};

constinit Limiter g_limiter;

void Print(const char *line, int len) {
  if (len <= 0) return;
  timespec now{};
  clock_gettime(CLOCK_MONOTONIC_COARSE, &now);
  char dropped_line[96];
  int dropped_len = 0;
  int64_t second = g_limiter.second.load(std::memory_order_relaxed);
  if (second != now.tv_sec &&
      g_limiter.second.compare_exchange_strong(second, now.tv_sec)) {
    // The first line of a new second starts its count.
    if (const uint64_t dropped = g_limiter.dropped.exchange(0);
        dropped != 0) {
      dropped_len = std::snprintf(
          dropped_line, sizeof(dropped_line),
          "aesmux: %llu routing decisions not printed (AESMUX_TRACE "
          "prints %llu a second)\n",
          static_cast<unsigned long long>(dropped),
          static_cast<unsigned long long>(kTraceLinesPerSecond));
    }
    g_limiter.printed.store(0);
  }
  if (g_limiter.printed.fetch_add(1) >= kTraceLinesPerSecond) {
    g_limiter.dropped.fetch_add(1);
    return;
  }
  // Diagnostics only: a failed or short write to stderr is not retried.
  if (dropped_len > 0) {
    [[maybe_unused]] ssize_t ignored =
        write(STDERR_FILENO, dropped_line, static_cast<size_t>(dropped_len));
  }
  [[maybe_unused]] ssize_t ignored =
      write(STDERR_FILENO, line, static_cast<size_t>(len));
}

}  // namespace

bool TraceOn() {
  // -1 until first asked; constant-initialized, so without the guard a
  // fork can leave held (core/process.h, ProcessValue).
  static constinit std::atomic<int> on{-1};
  int value = on.load(std::memory_order_relaxed);
  if (value < 0) {
    const char *text = secure_getenv("AESMUX_TRACE");
    value = text != nullptr && text[0] != '\0' && std::strcmp(text, "0") != 0;
    on.store(value, std::memory_order_relaxed);
  }
  return value != 0;
}

void TraceRequest(Alg alg, Path path, uint64_t bytes) {
  const std::string_view name = Info(alg).name;
  const std::string_view path_name = PathName(path);
  char line[128];
  Print(line, std::snprintf(line, sizeof(line), "aesmux: %.*s %llu B -> %.*s\n",
                            static_cast<int>(name.size()), name.data(),
                            static_cast<unsigned long long>(bytes),
                            static_cast<int>(path_name.size()),
                            path_name.data()));
}

void TraceHandoff(Alg alg, Handoff handoff, uint64_t bytes) {
  const std::string_view name = Info(alg).name;
  const std::string_view reason = HandoffName(handoff);
  char line[128];
  Print(line, std::snprintf(line, sizeof(line),
                            "aesmux: %.*s %llu B afalg -> handed on (%.*s)\n",
                            static_cast<int>(name.size()), name.data(),
                            static_cast<unsigned long long>(bytes),
                            static_cast<int>(reason.size()), reason.data()));
}

}  // namespace aesmux::core
