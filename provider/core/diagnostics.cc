// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
#include "provider/core/diagnostics.h"

#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdint>

#include "provider/core/process.h"

namespace aesmux::core {
namespace {

enum Pin : int { kUnpinned, kPinnedOpen, kPinnedClosed };

// What descriptor 2 was at the first PinStderr. Constant-initialized;
// written once, under InitLock (so that a forked child never inherits it
// half written), and read without a lock: `state` is stored last.
struct StderrPin {
  std::atomic<int> state{kUnpinned};
  std::atomic<uint64_t> dev{0};
  std::atomic<uint64_t> ino{0};
};
constinit StderrPin g_pin;

// Whether a write of a short line to `fd` (a pipe or a character device)
// would complete now.
bool HasRoom(int fd) {
  pollfd entry{fd, POLLOUT, 0};
  if (poll(&entry, 1, 0) != 1) return false;
  return (entry.revents & POLLOUT) != 0 &&
         (entry.revents & (POLLERR | POLLHUP | POLLNVAL)) == 0;
}

}  // namespace

void PinStderr() {
  InitLock lock;
  if (g_pin.state.load(std::memory_order_relaxed) != kUnpinned) return;
  struct stat st;
  if (fstat(STDERR_FILENO, &st) != 0) {
    g_pin.state.store(kPinnedClosed, std::memory_order_relaxed);
    return;
  }
  g_pin.dev.store(st.st_dev, std::memory_order_relaxed);
  g_pin.ino.store(st.st_ino, std::memory_order_relaxed);
  g_pin.state.store(kPinnedOpen, std::memory_order_release);
}

bool PrintDiagnostic(std::string_view text) {
  const int state = g_pin.state.load(std::memory_order_acquire);
  if (state == kPinnedClosed || text.empty()) return false;
  struct stat st;
  if (fstat(STDERR_FILENO, &st) != 0) return false;
  if (state == kPinnedOpen &&
      (st.st_dev != g_pin.dev.load(std::memory_order_relaxed) ||
       st.st_ino != g_pin.ino.load(std::memory_order_relaxed))) {
    return false;  // not the file stderr was: closed since, and reused
  }
  const size_t len = std::min(text.size(), kMaxDiagnosticBytes);
  ssize_t written = -1;
  if (S_ISREG(st.st_mode)) {
    written = write(STDERR_FILENO, text.data(), len);
  } else if (S_ISSOCK(st.st_mode)) {
    written = send(STDERR_FILENO, text.data(), len,
                   MSG_DONTWAIT | MSG_NOSIGNAL);
  } else if ((S_ISFIFO(st.st_mode) || S_ISCHR(st.st_mode)) &&
             HasRoom(STDERR_FILENO)) {
    written = write(STDERR_FILENO, text.data(), len);
  }
  return written > 0;
}

}  // namespace aesmux::core
