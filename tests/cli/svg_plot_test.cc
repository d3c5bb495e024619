// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
// The calibration plot (provider/cli/svg_plot.h) fed curves and thresholds
// made to collide: a dozen paths, most with names the plot has no colour
// for; six thresholds at one size, others at both edges; curves along the
// top where labels go. Every path gets its own colour and dash, and no
// piece of text overlaps another or leaves its panel. Then, where Debian's
// rsvg-convert is installed, check_plot.py renders the SVG and checks the
// ink of every text against the box the generator reserved for it.
#include "provider/cli/svg_plot.h"

#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <vector>

namespace aesmux::cli {
namespace {

const std::vector<std::string> kPaths = {
    "simd vaes_avx512",     "simd vaes_avx2",    "simd aesni",
    "fallback",             "mb x16",            "threads x16 combined",
    "threads x16 alone",    "afalg cbc-aes-qce", "afalg gcm-aes-qce",
    "a path of the future", "another new path",  "a twelfth path"};

PlotData Colliding() {
  PlotData plot;
  plot.title = "aesmux calibrate: throughput by request size, per path";
  plot.subtitle =
      "a test CPU with a very long name, 2026-01-01; full run; afalg: not "
      "measured: off (force): no AF_ALG in this kernel (EAFNOSUPPORT: "
      "Address family not supported by protocol), which wraps";
  for (size_t size = 16; size <= 65536; size *= 2) plot.sizes.push_back(size);
  for (int i = 0; i < 6; ++i) {
    PlotPanel panel;
    panel.algorithm = "AES-" + std::to_string(128 + 64 * (i / 2)) + "-CBC";
    panel.direction = i % 2 == 0 ? "encrypt" : "decrypt";
    panel.title = panel.algorithm + " " + panel.direction;
    for (size_t p = 0; p < kPaths.size(); ++p) {
      PlotCurve curve{kPaths[p], {}};
      for (size_t k = 0; k < plot.sizes.size(); ++k) {
        // All near the top (where labels go), crossing one another.
        curve.bytes_per_second.push_back(
            i == 0 ? 40e9 * (1 - 0.02 * ((p + k) % 5))
                   : 1e8 * std::pow(1.5, static_cast<double>(k)) * (1 + p));
      }
      panel.curves.push_back(curve);
    }
    if (i == 0) {
      // Six thresholds at one size, both ways, and each edge.
      for (int m = 0; m < 6; ++m) {
        panel.markers.push_back({"k" + std::to_string(m),
                                 (m % 2 ? "mb ≤ 1 KiB #" : "threads ≥ 1 KiB #") +
                                     std::to_string(m),
                                 1024, m % 2 == 1});
      }
      panel.markers.push_back({"left", "fallback ≤ 16 B", 16, true});
      panel.markers.push_back({"right", "afalg ≥ 64 KiB", 65536, false});
      panel.markers.push_back(
          {"beyond", "threads ≥ 128 KiB (never)", 131072, false});
    } else if (i == 1) {
      // Neighbours too close for their labels side by side.
      for (const size_t size : {256, 384, 512, 768}) {
        panel.markers.push_back({"n" + std::to_string(size),
                                 "threshold at " + std::to_string(size) + " B",
                                 size, size % 3 == 0});
      }
    } else {
      panel.note = "fallback_max_len = 0: simd at every size";
      panel.markers.push_back({"one", "mb ≥ 384 B", 384, false});
    }
    plot.panels.push_back(panel);
  }
  return plot;
}

TEST(SvgPlot, EveryPathHasItsOwnColourAndDash) {
  PlotLayout layout;
  RenderSvg(Colliding(), &layout);
  ASSERT_EQ(layout.styles.size(), kPaths.size());
  std::set<std::string> colours, dashes;
  for (size_t i = 0; i < layout.styles.size(); ++i) {
    const PathStyle &s = layout.styles[i];
    EXPECT_EQ(s.path, kPaths[i]);
    EXPECT_TRUE(colours.insert(s.colour).second) << s.path << " " << s.colour;
    EXPECT_NE(s.colour, "#000");
    if (i < 10) {
      EXPECT_TRUE(dashes.insert(s.dash).second) << s.path;
    }
  }
  // The kinds the plot knows keep their colours.
  EXPECT_EQ(layout.styles[0].colour, "#1f4e9c");
  EXPECT_EQ(layout.styles[3].colour, "#555555");
  EXPECT_EQ(layout.styles[0].dash, "");
}

TEST(SvgPlot, NoTextOverlapsAnotherOrLeavesItsPanel) {
  PlotLayout layout;
  RenderSvg(Colliding(), &layout);
  EXPECT_TRUE(layout.dropped.empty()) << layout.dropped.front();
  ASSERT_EQ(layout.marker_labels.size(), 9u + 4 + 4);
  for (const PlotLayout::MarkerLabel &label : layout.marker_labels) {
    EXPECT_TRUE(label.box.Inside(label.frame)) << label.text;
  }
  for (size_t i = 0; i < layout.texts.size(); ++i) {
    for (size_t j = i + 1; j < layout.texts.size(); ++j) {
      EXPECT_FALSE(layout.texts[i].box.Overlaps(layout.texts[j].box))
          << "'" << layout.texts[i].text << "' and '" << layout.texts[j].text
          << "'";
    }
  }
}

TEST(SvgPlot, PutsALabelOnItsSideWhereThereIsRoom) {
  PlotData plot = Colliding();
  plot.panels.resize(3);
  PlotLayout layout;
  RenderSvg(plot, &layout);
  // Panel 3's one threshold (≥ 384 B) reads right of its line: its label
  // starts where the lines at 256 and 512 B enclose it.
  const PlotLayout::MarkerLabel &label = layout.marker_labels.back();
  ASSERT_EQ(label.text, "mb ≥ 384 B");
  const double x384 =
      label.frame.x + label.frame.w * (std::log2(384.0) - 4) / (16 - 4);
  EXPECT_GT(label.box.x, x384);
  EXPECT_LT(label.box.x, x384 + 8);
}

TEST(SvgPlot, MeasuresTextAsDejaVuSansDoes) {
  EXPECT_DOUBLE_EQ(TextWidth("", 10), 0);
  EXPECT_NEAR(TextWidth("1K", 10), 6.36 + 6.56, 1e-9);
  EXPECT_NEAR(TextWidth("mb ≥ 384 B", 9),
              9 * (0.974 + 0.635 + 0.318 * 3 + 0.838 + 3 * 0.636 + 0.686),
              1e-9);
  EXPECT_NEAR(TextWidth("é", 10), 10, 1e-9);  // unknown: a full em
}

bool Installed(const char *program) {
  const std::string command =
      std::string("command -v ") + program + " >/dev/null 2>&1";
  return std::system(command.c_str()) == 0;
}

TEST(SvgPlot, RendersWithRsvgConvertEveryInkInsideItsBox) {
  if (!Installed("rsvg-convert") || !Installed("python3")) {
    GTEST_SKIP() << "rsvg-convert or python3 is not installed (Debian: "
                    "librsvg2-bin; scripts/common.sh installs it for tests)";
  }
  char dir[] = "/tmp/aesmux-svg-plot-XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  const std::string svg = std::string(dir) + "/colliding.svg";
  std::ofstream(svg) << RenderSvg(Colliding());
  const std::string command =
      std::string("python3 ") + AESMUX_CHECK_PLOT + " " + svg;
  const int status = std::system(command.c_str());
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
      << command << " (above)";
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace aesmux::cli
