// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
// The time `aesmux calibrate` says it will take (provider/cli/progress.h),
// on a fake clock: a run shaped like calibrate's (CPU-time measurements
// that a busy machine stretches threefold, thread measurements that cost
// their start-up, each piece jittered) is replayed, and the estimate after
// the trial and the time left at every tenth must hold within 25 % of what
// the rest of the replay then takes. No timing of this machine is involved.
#include "provider/cli/progress.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

namespace aesmux::cli {
namespace {

constexpr double kSeconds = 0.005;  // --quick's measurement

struct Piece {
  std::string kind;
  double units;    // measurements of kSeconds
  double seconds;  // what it takes on the fake clock
};

// A deterministic jitter in [1 - spread, 1 + spread].
double Jitter(uint32_t *state, double spread) {
  *state = *state * 1664525u + 1013904223u;
  return 1 + spread * (2.0 * (*state >> 8) / (1u << 24) - 1);
}

// What a measurement of `kind` costs in seconds per unit, given how much
// the machine stretches CPU-time measurements.
double CostPerUnit(const std::string &kind, double stretch) {
  // Threads: wall-clock measurements, plus starting 16 threads each time.
  if (kind.starts_with("threads")) return kSeconds * 1.1 + 0.02 / 10;
  return kSeconds * stretch;
}

// Calibrate's order: 14 algorithms, both directions, 10 sizes, 3 runs, the
// paths in turn; mb and the two threads paths (10 units each) for CBC
// encryption only. `stretch_at(i)`: the stretch at piece i.
template <typename Stretch>
std::vector<Piece> Calibration(Stretch stretch_at) {
  const std::vector<std::string> cpu = {"simd vaes_avx512", "simd vaes_avx2",
                                        "simd aesni", "fallback"};
  std::vector<Piece> pieces;
  uint32_t state = 1;
  for (int alg = 0; alg < 14; ++alg) {
    for (int direction = 0; direction < 2; ++direction) {
      const bool cbc_encrypt = alg >= 3 && alg < 6 && direction == 0;
      for (int piece = 0; piece < 10 * 3; ++piece) {
        std::vector<std::pair<std::string, double>> paths;
        for (const std::string &p : cpu) paths.emplace_back(p, 1);
        if (cbc_encrypt) {
          paths.emplace_back("mb x16", 1);
          paths.emplace_back("threads x16 combined", 10);
          paths.emplace_back("threads x16 alone", 10);
        }
        for (const auto &[kind, units] : paths) {
          const double stretch = stretch_at(pieces.size());
          pieces.push_back({kind, units,
                            units * CostPerUnit(kind, stretch) *
                                Jitter(&state, 0.3)});
        }
      }
    }
  }
  return pieces;
}

TimeEstimate PlanOf(const std::vector<Piece> &pieces) {
  TimeEstimate plan;
  for (const Piece &p : pieces) plan.Plan(p.kind, p.units);
  return plan;
}

// The trial calibrate runs first: each path three times, CBC encryption at
// one size, under the same load.
void Trial(double stretch, TimeEstimate *plan) {
  TimeEstimate trial;
  uint32_t state = 7;
  for (int run = 0; run < 3; ++run) {
    for (const char *kind : {"simd vaes_avx512", "simd vaes_avx2",
                             "simd aesni", "fallback", "mb x16"}) {
      trial.Learn(kind, 1, CostPerUnit(kind, stretch) * Jitter(&state, 0.3));
    }
    for (const char *kind : {"threads x16 combined", "threads x16 alone"}) {
      trial.Learn(kind, 10,
                  10 * CostPerUnit(kind, stretch) * Jitter(&state, 0.3));
    }
  }
  plan->LearnFrom(trial);
}

double SecondsOf(const std::vector<Piece> &pieces, size_t from) {
  double seconds = 0;
  for (size_t i = from; i < pieces.size(); ++i) seconds += pieces[i].seconds;
  return seconds;
}

// Replays `pieces` on a fake clock; at every tenth of the pieces from
// `check_from`, the time left must be within 25 % of the truth.
void Replay(const std::vector<Piece> &pieces, TimeEstimate plan,
            size_t check_from) {
  double now = 0;
  Progress progress("", std::move(plan), [&] { return now; });
  for (size_t i = 0; i < pieces.size(); ++i) {
    now += pieces[i].seconds;
    progress.Advance(pieces[i].kind, pieces[i].units, "");
    const size_t done = i + 1;
    if (done >= check_from && done % (pieces.size() / 10) == 0 &&
        done < pieces.size()) {
      const double truth = SecondsOf(pieces, done);
      EXPECT_NEAR(progress.SecondsLeft(), truth, 0.25 * truth)
          << "after " << done << " of " << pieces.size() << " pieces";
    }
  }
  EXPECT_NEAR(progress.Elapsed(), SecondsOf(pieces, 0), 1e-9);
  EXPECT_EQ(progress.SecondsLeft(), 0);
}

TEST(TimeEstimate, ATrialOfEveryPathEstimatesTheRunWithin25Percent) {
  // A busy machine: CPU-time measurements take three times as long.
  const std::vector<Piece> pieces = Calibration([](size_t) { return 3.0; });
  TimeEstimate plan = PlanOf(pieces);
  Trial(3.0, &plan);
  const double truth = SecondsOf(pieces, 0);
  EXPECT_NEAR(plan.SecondsLeft(), truth, 0.25 * truth);
  Replay(pieces, std::move(plan), 0);
}

TEST(TimeEstimate, FollowsAMachineWhoseLoadChanges) {
  // Three times at first, 1.2 times from 40 % on (the other jobs ended):
  // after a tenth of the work more, the time left holds again.
  const std::vector<Piece> pieces =
      Calibration([](size_t i) { return i < 1400 ? 3.0 : 1.2; });
  ASSERT_EQ(pieces.size(), 3630u);
  TimeEstimate plan = PlanOf(pieces);
  Trial(3.0, &plan);
  Replay(pieces, std::move(plan), 1400 + 363);
}

TEST(TimeEstimate, AKindNotYetSeenCostsWhatTheOthersDo) {
  TimeEstimate plan;
  EXPECT_EQ(plan.SecondsLeft(), 0);
  plan.Plan("a", 10);
  plan.Plan("b", 10);
  EXPECT_EQ(plan.SecondsLeft(), 20);  // a second a unit, nothing seen
  plan.Done("a", 2, 6);               // a: 3 s a unit
  EXPECT_DOUBLE_EQ(plan.SecondsLeft(), 8 * 3 + 10 * 3);
  plan.Learn("b", 1, 1);  // b: 1 s a unit
  EXPECT_DOUBLE_EQ(plan.SecondsLeft(), 8 * 3 + 10 * 1);
  EXPECT_EQ(plan.UnitsPlanned(), 20);
  EXPECT_EQ(plan.UnitsDone(), 2);
}

TEST(Progress, FormatsDurations) {
  EXPECT_EQ(Progress::FormatDuration(0), "0:00");
  EXPECT_EQ(Progress::FormatDuration(65.4), "1:05");
  EXPECT_EQ(Progress::FormatDuration(-3), "0:00");
  EXPECT_EQ(Progress::FormatDuration(3600), "60:00");
}

}  // namespace
}  // namespace aesmux::cli
