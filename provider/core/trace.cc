#include "provider/core/trace.h"

#include <time.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>

namespace aesmux::core {
namespace {

struct Limiter {
  std::mutex mutex;
  int64_t second = -1;
  uint64_t printed = 0;
  uint64_t dropped = 0;
};

Limiter &TheLimiter() {
  static Limiter limiter;
  return limiter;
}

void Print(const char *line, int len) {
  if (len <= 0) return;
  Limiter &limiter = TheLimiter();
  timespec now{};
  clock_gettime(CLOCK_MONOTONIC_COARSE, &now);
  char dropped_line[96];
  int dropped_len = 0;
  {
    std::lock_guard lock(limiter.mutex);
    if (now.tv_sec != limiter.second) {
      if (limiter.dropped != 0) {
        dropped_len = std::snprintf(
            dropped_line, sizeof(dropped_line),
            "aesmux: %llu routing decisions not printed (AESMUX_TRACE "
            "prints %llu a second)\n",
            static_cast<unsigned long long>(limiter.dropped),
            static_cast<unsigned long long>(kTraceLinesPerSecond));
      }
      limiter.second = now.tv_sec;
      limiter.printed = 0;
      limiter.dropped = 0;
    }
    if (limiter.printed == kTraceLinesPerSecond) {
      ++limiter.dropped;
      return;
    }
    ++limiter.printed;
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
  static const bool on = [] {
    const char *value = secure_getenv("AESMUX_TRACE");
    return value != nullptr && value[0] != '\0' && std::strcmp(value, "0") != 0;
  }();
  return on;
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
