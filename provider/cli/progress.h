// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
// Progress of a long measurement on stderr: on a terminal a bar redrawn in
// place with the share done and the time left; otherwise a plain line at
// every tenth of the work (logs and pipes get no control characters).
#ifndef AESMUX_PROVIDER_CLI_PROGRESS_H_
#define AESMUX_PROVIDER_CLI_PROGRESS_H_

#include <chrono>
#include <string>
#include <string_view>

namespace aesmux::cli {

class Progress {
 public:
  // `total` units of work (any unit that grows with the time it takes).
  Progress(std::string label, double total);
  ~Progress();

  // `done` more units finished; `what` is being measured now.
  void Advance(double done, std::string_view what);

  // Prints `line` (with its newline) on stdout without breaking the bar.
  void Print(const std::string &line);

  // Clears the bar (the destructor does too).
  void Finish();

  // "1:05" for 65 seconds.
  static std::string FormatDuration(double seconds);

 private:
  void Draw(std::string_view what);
  void Clear();

  std::string label_;
  double total_;
  double done_ = 0;
  bool terminal_;
  bool drawn_ = false;
  int tenths_reported_ = 0;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace aesmux::cli

#endif  // AESMUX_PROVIDER_CLI_PROGRESS_H_
