// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
// `aesmux calibrate`: measures, on this machine, every path aesmux can take
// (simd at each kernel tier the CPU runs, mb with N streams for CBC
// encryption, afalg where the kernel has AF_ALG, fallback) for every
// algorithm, key size and direction from 16 B to 64 KiB; finds where each
// path starts to win; writes the thresholds as a calibration file (or an
// openssl.cnf snippet) and the measurements as an SVG plot (and PNG when
// rsvg-convert is installed).
//
// Method: each path is aesmux loaded in its own library context with the
// settings that force it (kernels = <tier> or none, afalg = force, …);
// for each algorithm, direction and size the paths take turns (alternating
// runs, the median of each), since the machine may be shared. A path
// "wins" at a size when it is faster by more than the margin (5 %): the
// hysteresis that keeps noise from moving a threshold off its default.
// The router's thresholds are per family (ecb, cbc, ctr, xts, gcm), so a
// family takes the value all its key sizes and directions agree on:
//   <family>.fallback_max_len  the largest size up to which fallback wins
//                              at every size (0: never);
//   <family>.afalg_min_len     the smallest size from which afalg wins at
//                              every larger size (left unset: never);
//   cbc.mb_min_len             the size from which mb (N streams in ASYNC
//                              jobs) beats simd (0: from the smallest);
//   cbc.mb_max_len             the largest size up to which it goes on
//                              beating simd from there (0: never);
//   cbc.mb_threads_min_len     the smallest size from which 8 threads per
//                              CPU, combined, beat the same threads each
//                              alone at every larger size (128K: never).
#ifndef AESMUX_PROVIDER_CLI_CALIBRATE_H_
#define AESMUX_PROVIDER_CLI_CALIBRATE_H_

#include <cstddef>
#include <span>
#include <string>
#include <vector>

#include "provider/cli/args.h"

namespace aesmux::cli {

// aesmux calibrate [--quick] [--output FILE] [--plot FILE.svg] [--cnf]
//                  [--module PATH] [--streams N] [--margin PERCENT]
//                  [--runs N] [--seconds S] [--families LIST]
int RunCalibrate(const std::vector<std::string> &args);
std::span<const OptionSpec> CalibrateOptionSpecs();

// The request sizes measured, ascending: every fourfold step from 16 B to
// 64 KiB (quick) or two per doubling, and every length where a threshold's
// default sits (cbc.mb_min_len's 512, cbc.mb_threads_min_len's 8K, the
// afalg_min_len defaults), so that a default the measurements bear out is
// written back as it is.
std::vector<size_t> CalibrationSizes(bool quick);

}  // namespace aesmux::cli

#endif  // AESMUX_PROVIDER_CLI_CALIBRATE_H_
