// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
// aesmux calibrate's measuring: the paths this machine has, each as an
// instance of aesmux forced onto it, and the alternating runs of every
// path at every size for one algorithm and direction. No analysis and no
// output here (crossovers.h finds the thresholds; calibrate.cc drives the
// run and writes the results).
#ifndef AESMUX_PROVIDER_CLI_CALIBRATE_PATHS_H_
#define AESMUX_PROVIDER_CLI_CALIBRATE_PATHS_H_

#include <array>
#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "provider/cli/crossovers.h"
#include "provider/cli/progress.h"
#include "provider/cli/provider_handle.h"
#include "provider/cli/throughput.h"
#include "provider/core/algorithm.h"

namespace aesmux::cli {

// What `aesmux calibrate` was asked for (calibrate.cc parses it).
struct CalibrateOptions {
  bool quick = false;
  std::string output = "aesmux-calibration.conf";
  std::string plot = "aesmux-calibration.svg";
  bool cnf = false;
  std::string module;
  int streams = 0;  // 0: the multi-buffer tier's lanes
  double margin = 0.05;
  int runs = 0;         // 0: by --quick
  double seconds = 0;   // 0: by --quick
  // The families measured (--families): all unless some are named.
  std::array<bool, core::kNumFamilies> families = {true, true, true, true,
                                                   true};
};

// One way aesmux can serve a request, as a provider instance that takes
// only that way.
struct PathUnderTest {
  std::string name;  // "simd vaes_avx512", "fallback", "mb x16", "afalg …"
  std::unique_ptr<ProviderHandle> provider;
  bool async = false;  // mb: N streams in ASYNC jobs
  // Threads beyond the CPUs, N streams on N threads at once (CBC
  // encryption): thread combining, or each request alone; 0: one stream
  // on this thread.
  int threads = 0;
  std::array<bool, core::kNumFamilies> serves{};
  std::array<std::string, core::kNumFamilies> label{};  // the name per family
};

// What calibrate measures: the paths this machine has, as provider
// instances forced onto each.
struct Plan {
  std::vector<PathUnderTest> paths;
  std::string best_tier;   // the simd tier thresholds are measured against
  std::string version;     // aesmux's
  int streams = 0;         // of the mb path
  int threads = 0;         // of the threads paths (0: none measured)
  int cpus = 0;            // this process may run on
  std::string afalg_note;  // why afalg is not measured, or ""
};

// Loads one provider instance per path: simd at every tier this CPU runs,
// fallback, mb where there are multi-buffer kernels (with the threads
// paths: more threads than CPUs, combined or each alone), afalg where
// AF_ALG binds. False, having said why, if one does not load.
bool SetUpPaths(const CalibrateOptions &options, Plan *plan);

// How long one measurement of a threads path runs (wall-clock seconds):
// longer than the others', since threads take scheduler time slices.
double ThreadsSeconds(const CalibrateOptions &options);

// Measures every path that serves `alg` in `direction` at every size, the
// paths taking turns; nullopt, having said why, if OpenSSL refuses.
std::optional<Measured> MeasureAlgorithm(const core::AlgInfo &alg,
                                         Direction direction,
                                         const Plan &plan,
                                         const std::vector<size_t> &sizes,
                                         const CalibrateOptions &options,
                                         Progress *progress);

}  // namespace aesmux::cli

#endif  // AESMUX_PROVIDER_CLI_CALIBRATE_PATHS_H_
