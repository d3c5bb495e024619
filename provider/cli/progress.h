// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
// Progress of a long measurement on stderr: on a terminal a bar redrawn in
// place with the share done and the time left; otherwise a plain line at
// every tenth of the work (logs and pipes get no control characters).
//
// The time left is learnt, not assumed. Work is planned in units of
// nominal seconds (what a measurement is asked to last) of several kinds
// (one per path measured), and each kind's clock time per unit is learnt
// from its own pieces as they finish: a measurement of CPU time stretches
// on a machine busy with other work, one on many threads adds their
// start-up, and the per-size set-up adds to every kind. Recent pieces
// count most, so the estimate follows a machine whose load changes.
#ifndef AESMUX_PROVIDER_CLI_PROGRESS_H_
#define AESMUX_PROVIDER_CLI_PROGRESS_H_

#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace aesmux::cli {

// The time a planned piece of work will take, from what its pieces took so
// far. No clock of its own: callers say what each piece took.
class TimeEstimate {
 public:
  // Adds `units` of planned work of `kind`.
  void Plan(std::string_view kind, double units);
  // A piece of `units` of `kind` finished, having taken `seconds`.
  void Done(std::string_view kind, double units, double seconds);
  // A trial of `kind` outside the plan: teaches its cost only.
  void Learn(std::string_view kind, double units, double seconds);
  // Learns every kind's cost from `trial` (what its pieces taught it).
  void LearnFrom(const TimeEstimate &trial);

  // Seconds the work not yet done will take. A kind not yet seen is
  // assumed to cost what the seen ones do on average (one second per unit
  // before anything is seen).
  double SecondsLeft() const;
  double UnitsPlanned() const;
  double UnitsDone() const;

 private:
  struct Kind {
    std::string name;
    double planned = 0, done = 0;
    // Decayed sums of the pieces' units and seconds: their ratio is the
    // kind's recent clock time per unit.
    double seen_units = 0, seen_seconds = 0;
  };
  Kind &Find(std::string_view kind);

  std::vector<Kind> kinds_;
};

class Progress {
 public:
  // Seconds on some monotonic clock (tests give their own).
  using Clock = std::function<double()>;

  // `plan`: the work; `clock`: wall-clock time by default. An empty
  // `label` prints nothing (a trial).
  Progress(std::string label, TimeEstimate plan, Clock clock = {});
  // One kind of `total` units.
  Progress(std::string label, double total);
  ~Progress();

  // `units` more of `kind` finished (since the last call, which the clock
  // measures); `what` is being measured now.
  void Advance(std::string_view kind, double units, std::string_view what);
  void Advance(double units, std::string_view what) {
    Advance("", units, what);
  }

  // Seconds the rest will take, and seconds since the start.
  double SecondsLeft() const { return estimate_.SecondsLeft(); }
  double Elapsed() const { return clock_() - start_; }
  const TimeEstimate &estimate() const { return estimate_; }

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
  TimeEstimate estimate_;
  Clock clock_;
  bool terminal_;
  bool quiet_;
  bool drawn_ = false;
  int tenths_reported_ = 0;
  double start_ = 0;
  double last_ = 0;  // the clock at the last Advance
};

}  // namespace aesmux::cli

#endif  // AESMUX_PROVIDER_CLI_PROGRESS_H_
