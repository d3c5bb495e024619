// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
// The calibration plot: throughput against request size, one panel per
// algorithm and direction, one curve per path, the size axis log-scaled,
// the thresholds chosen marked. Written as SVG by hand (no dependency), so
// that a README can show it as it is.
#ifndef AESMUX_PROVIDER_CLI_SVG_PLOT_H_
#define AESMUX_PROVIDER_CLI_SVG_PLOT_H_

#include <cstddef>
#include <string>
#include <vector>

namespace aesmux::cli {

struct PlotCurve {
  std::string path;                     // "simd vaes_avx512", "fallback", …
  std::vector<double> bytes_per_second;  // one per PlotData::sizes; 0: none
};

// A threshold: a dashed line at `size` bytes, labelled.
struct PlotMarker {
  std::string key;    // "cbc.mb_max_len"
  std::string label;  // "mb ≤ 64 KiB"
  size_t size;
};

struct PlotPanel {
  std::string title;      // "AES-128-GCM encrypt"
  std::string algorithm;  // "AES-128-GCM"
  std::string direction;  // "encrypt"
  std::vector<PlotCurve> curves;
  std::vector<PlotMarker> markers;
  std::string note;  // one line under the title, or ""
};

struct PlotData {
  std::string title;
  std::string subtitle;
  std::vector<size_t> sizes;  // ascending, the x values of every curve
  std::vector<PlotPanel> panels;
};

// The whole plot as an SVG document.
std::string RenderSvg(const PlotData &plot);

}  // namespace aesmux::cli

#endif  // AESMUX_PROVIDER_CLI_SVG_PLOT_H_
