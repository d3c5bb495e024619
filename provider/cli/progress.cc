// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
#include "provider/cli/progress.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>

namespace aesmux::cli {

Progress::Progress(std::string label, double total)
    : label_(std::move(label)),
      total_(std::max(total, 1e-9)),
      terminal_(isatty(STDERR_FILENO) == 1),
      start_(std::chrono::steady_clock::now()) {}

Progress::~Progress() { Finish(); }

std::string Progress::FormatDuration(double seconds) {
  const long whole = std::max(0L, static_cast<long>(seconds + 0.5));
  char text[32];
  std::snprintf(text, sizeof(text), "%ld:%02ld", whole / 60, whole % 60);
  return text;
}

void Progress::Advance(double done, std::string_view what) {
  done_ = std::min(total_, done_ + done);
  if (terminal_) {
    Draw(what);
    return;
  }
  const int tenths = static_cast<int>(10 * done_ / total_);
  if (tenths > tenths_reported_ && tenths < 10) {
    tenths_reported_ = tenths;
    const double elapsed = std::chrono::duration<double>(
                               std::chrono::steady_clock::now() - start_)
                               .count();
    std::fprintf(stderr, "%s: %d%% done, about %s left\n", label_.c_str(),
                 tenths * 10,
                 FormatDuration(elapsed * (total_ - done_) / done_).c_str());
  }
}

void Progress::Draw(std::string_view what) {
  constexpr int kWidth = 30;
  const double share = done_ / total_;
  const int filled = static_cast<int>(share * kWidth);
  const double elapsed =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start_)
          .count();
  const std::string left =
      done_ > 0 ? FormatDuration(elapsed * (total_ - done_) / done_) + " left"
                : "";
  std::fprintf(stderr, "\r\033[K%s [%s%s] %3d%% %s  %.*s", label_.c_str(),
               std::string(filled, '#').c_str(),
               std::string(kWidth - filled, '-').c_str(),
               static_cast<int>(share * 100), left.c_str(),
               static_cast<int>(what.size()), what.data());
  std::fflush(stderr);
  drawn_ = true;
}

void Progress::Clear() {
  if (!drawn_) return;
  std::fprintf(stderr, "\r\033[K");
  std::fflush(stderr);
  drawn_ = false;
}

void Progress::Print(const std::string &line) {
  Clear();
  std::printf("%s\n", line.c_str());
  std::fflush(stdout);
}

void Progress::Finish() { Clear(); }

}  // namespace aesmux::cli
