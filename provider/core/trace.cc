// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
#include "provider/core/trace.h"

#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "provider/core/diagnostics.h"

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
  // The count of dropped lines, if any, then this one: one write.
  char text[256];
  size_t used = 0;
  uint64_t reported = 0;  // the dropped lines `text` counts
  int64_t second = g_limiter.second.load(std::memory_order_relaxed);
  if (second != now.tv_sec &&
      g_limiter.second.compare_exchange_strong(second, now.tv_sec)) {
    // The first line of a new second starts its count.
    if (const uint64_t dropped = g_limiter.dropped.exchange(0);
        dropped != 0) {
      const int n = std::snprintf(
          text, sizeof(text),
          "aesmux: %llu routing decisions not printed (AESMUX_TRACE "
          "prints %llu a second, none that would block or go anywhere but "
          "stderr)\n",
          static_cast<unsigned long long>(dropped),
          static_cast<unsigned long long>(kTraceLinesPerSecond));
      used = static_cast<size_t>(std::clamp(n, 0, int{sizeof(text)} - 1));
      reported = dropped;
    }
    g_limiter.printed.store(0);
  }
  if (g_limiter.printed.fetch_add(1) >= kTraceLinesPerSecond) {
    g_limiter.dropped.fetch_add(1);
    return;
  }
  const size_t take = std::min(static_cast<size_t>(len), sizeof(text) - used);
  std::memcpy(text + used, line, take);
  if (!PrintDiagnostic(std::string_view(text, used + take))) {
    // Not written (core/diagnostics.h): counted with the others, and the
    // count it carried kept for the next line.
    g_limiter.dropped.fetch_add(reported + 1);
  }
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
