// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
#include "provider/cli/progress.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>

namespace aesmux::cli {
namespace {

// Each piece a kind finishes weighs its earlier ones down by this much, so
// that about the last 1 / (1 - kDecay) pieces make its estimate.
constexpr double kDecay = 0.95;

double SteadySeconds() {
  return std::chrono::duration<double>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace

TimeEstimate::Kind &TimeEstimate::Find(std::string_view kind) {
  for (Kind &k : kinds_) {
    if (k.name == kind) return k;
  }
  kinds_.push_back({std::string(kind)});
  return kinds_.back();
}

void TimeEstimate::Plan(std::string_view kind, double units) {
  Find(kind).planned += units;
}

void TimeEstimate::Learn(std::string_view kind, double units,
                         double seconds) {
  Kind &k = Find(kind);
  k.seen_units = k.seen_units * kDecay + units;
  k.seen_seconds = k.seen_seconds * kDecay + std::max(seconds, 0.0);
}

void TimeEstimate::LearnFrom(const TimeEstimate &trial) {
  for (const Kind &t : trial.kinds_) {
    Kind &k = Find(t.name);
    k.seen_units = k.seen_units * kDecay + t.seen_units;
    k.seen_seconds = k.seen_seconds * kDecay + t.seen_seconds;
  }
}

void TimeEstimate::Done(std::string_view kind, double units, double seconds) {
  Learn(kind, units, seconds);
  Kind &k = Find(kind);
  k.done = std::min(k.planned, k.done + units);
}

double TimeEstimate::SecondsLeft() const {
  double seen_units = 0, seen_seconds = 0;
  for (const Kind &k : kinds_) {
    if (k.seen_units > 0) {
      seen_units += k.seen_units;
      seen_seconds += k.seen_seconds;
    }
  }
  const double average = seen_units > 0 ? seen_seconds / seen_units : 1;
  double left = 0;
  for (const Kind &k : kinds_) {
    const double per_unit =
        k.seen_units > 0 ? k.seen_seconds / k.seen_units : average;
    left += (k.planned - k.done) * per_unit;
  }
  return left;
}

double TimeEstimate::UnitsPlanned() const {
  double units = 0;
  for (const Kind &k : kinds_) units += k.planned;
  return units;
}

double TimeEstimate::UnitsDone() const {
  double units = 0;
  for (const Kind &k : kinds_) units += k.done;
  return units;
}

Progress::Progress(std::string label, TimeEstimate plan, Clock clock)
    : label_(std::move(label)),
      estimate_(std::move(plan)),
      clock_(clock ? std::move(clock) : Clock(SteadySeconds)),
      terminal_(isatty(STDERR_FILENO) == 1),
      quiet_(label_.empty()),
      start_(clock_()),
      last_(start_) {}

Progress::Progress(std::string label, double total)
    : Progress(std::move(label), [total] {
        TimeEstimate plan;
        plan.Plan("", total);
        return plan;
      }()) {}

Progress::~Progress() { Finish(); }

std::string Progress::FormatDuration(double seconds) {
  const long whole = std::max(0L, static_cast<long>(seconds + 0.5));
  char text[32];
  std::snprintf(text, sizeof(text), "%ld:%02ld", whole / 60, whole % 60);
  return text;
}

void Progress::Advance(std::string_view kind, double units,
                       std::string_view what) {
  const double now = clock_();
  estimate_.Done(kind, units, now - last_);
  last_ = now;
  if (quiet_) return;
  if (terminal_) {
    Draw(what);
    return;
  }
  const double share =
      estimate_.UnitsDone() / std::max(estimate_.UnitsPlanned(), 1e-9);
  const int tenths = static_cast<int>(10 * share);
  if (tenths > tenths_reported_ && tenths < 10) {
    tenths_reported_ = tenths;
    std::fprintf(stderr, "%s: %d%% done, about %s left\n", label_.c_str(),
                 tenths * 10, FormatDuration(SecondsLeft()).c_str());
  }
}

void Progress::Draw(std::string_view what) {
  constexpr int kWidth = 30;
  const double share =
      estimate_.UnitsDone() / std::max(estimate_.UnitsPlanned(), 1e-9);
  const int filled = std::clamp(static_cast<int>(share * kWidth), 0, kWidth);
  std::fprintf(stderr, "\r\033[K%s [%s%s] %3d%% %s left  %.*s",
               label_.c_str(), std::string(filled, '#').c_str(),
               std::string(kWidth - filled, '-').c_str(),
               static_cast<int>(share * 100),
               FormatDuration(SecondsLeft()).c_str(),
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
  if (quiet_) return;
  Clear();
  std::printf("%s\n", line.c_str());
  std::fflush(stdout);
}

void Progress::Finish() { Clear(); }

}  // namespace aesmux::cli
