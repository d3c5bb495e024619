// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
// The calibration plot: throughput against request size, one panel per
// algorithm and direction, one curve per path, both axes logarithmic (so
// that 16 B and 64 KiB, 0.1 and 50 GB/s are read alike; each panel spans
// the decades its own values need), the thresholds chosen marked. Written as SVG by hand (no dependency), so that a README
// can show it as it is.
//
// Every path has a colour and a dash pattern of its own (the first ten
// paths both; after them a colour of its own), whatever it is called.
// Every piece of text is placed by a collision check against all text
// placed before it: a threshold's label goes beside its line, in the first
// row and side where it stays inside the panel's frame, overlaps no other
// text and, where possible, crosses no curve and no other threshold's line.
// The boxes it checked are written on each <text> (data-box="x y w h") and
// returned in PlotLayout, so that a test can check them.
#ifndef AESMUX_PROVIDER_CLI_SVG_PLOT_H_
#define AESMUX_PROVIDER_CLI_SVG_PLOT_H_

#include <cstddef>
#include <string>
#include <string_view>
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
  // Whether the threshold bounds the sizes below it (≤), so that its label
  // reads best left of the line, or those above it (≥): right of it.
  bool bounds_below = false;
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

// A rectangle in the SVG's coordinates (y down).
struct PlotBox {
  double x = 0, y = 0, w = 0, h = 0;
  bool Overlaps(const PlotBox &other) const;
  bool Inside(const PlotBox &outer) const;
};

// How a path is drawn.
struct PathStyle {
  std::string path;
  std::string colour;  // "#1f4e9c"
  std::string dash;    // stroke-dasharray, "" for a solid line
};

// What RenderSvg placed, for tests.
struct PlotLayout {
  std::vector<PathStyle> styles;  // in the legend's order
  struct Label {
    std::string text;
    PlotBox box;
  };
  std::vector<Label> texts;  // every piece of text drawn
  // Threshold labels and their panel's frame (which they stay inside).
  struct MarkerLabel {
    std::string text;
    PlotBox box;
    PlotBox frame;
  };
  std::vector<MarkerLabel> marker_labels;
  // Threshold labels that found no free place and were left out (their
  // line carries the text as a tooltip).
  std::vector<std::string> dropped;
};

// The whole plot as an SVG document; `layout`, when given, receives where
// everything went.
std::string RenderSvg(const PlotData &plot, PlotLayout *layout = nullptr);

// The advance width of `text` (UTF-8) at `font_size` in DejaVu Sans, the
// sans-serif font of Debian's rsvg-convert and wider than most others'.
double TextWidth(std::string_view text, double font_size);

}  // namespace aesmux::cli

#endif  // AESMUX_PROVIDER_CLI_SVG_PLOT_H_
