// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
// aesmux calibrate's analysis: from the throughput curves measured for
// one algorithm and direction, where each path starts and stops winning,
// and what the family's thresholds are, and the plot panel that shows
// them. No measuring and no output here (calibrate_paths.h measures;
// calibrate.cc drives the run and writes the results).
#ifndef AESMUX_PROVIDER_CLI_CROSSOVERS_H_
#define AESMUX_PROVIDER_CLI_CROSSOVERS_H_

#include <array>
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "provider/cli/svg_plot.h"
#include "provider/cli/throughput.h"
#include "provider/core/algorithm.h"

namespace aesmux::cli {

// What one algorithm and direction measured, and its crossovers.
struct Measured {
  core::AlgInfo alg{};
  Direction direction = Direction::kEncrypt;
  std::vector<PlotCurve> curves;  // in the order of the paths
  // Largest size up to which fallback wins at every size; 0: never.
  size_t fallback_max = 0;
  // Smallest size from which afalg wins at every larger size.
  std::optional<size_t> afalg_min;
  bool afalg_measured = false;
  // mb: from which size it wins, and up to which it goes on winning.
  std::optional<size_t> mb_from, mb_max;
  bool mb_measured = false;
  // Threads beyond the CPUs: the smallest size from which combining them
  // wins over each running alone at every larger size.
  std::optional<size_t> threads_from;
  bool threads_measured = false;
  double simd_over_fallback_low = 0, simd_over_fallback_high = 0;
};

// The family's thresholds: what every key size and direction agrees on.
struct FamilyThresholds {
  bool measured = false;
  size_t fallback_max = 0;
  bool afalg_measured = false;
  std::optional<size_t> afalg_min;
  bool mb_measured = false;
  size_t mb_min = 0;
  size_t mb_max = 0;
  bool threads_measured = false;
  std::optional<size_t> threads_min;  // unset: combining never won
};

const char *DirectionName(Direction direction);

// Where each path starts to win against the reference tier's simd curve
// (`reference` names it), by more than `margin` (0.05: 5 %).
void FindCrossovers(const std::vector<size_t> &sizes, double margin,
                    const std::string &reference, Measured *m);

// The family's thresholds from every algorithm and direction measured.
std::array<FamilyThresholds, core::kNumFamilies> Aggregate(
    const std::vector<Measured> &results);

// One line per algorithm and direction for the file's comments and the
// terminal: where each path wins.
std::string Describe(const Measured &m);

// The plot's panel for one algorithm and direction: its curves, with the
// family's thresholds `t` marked.
PlotPanel PanelOf(const Measured &m, const FamilyThresholds &t);

}  // namespace aesmux::cli

#endif  // AESMUX_PROVIDER_CLI_CROSSOVERS_H_
