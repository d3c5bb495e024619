// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
#include "provider/cli/svg_plot.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

namespace aesmux::cli {
namespace {

constexpr int kColumns = 4;
constexpr double kPanelWidth = 300, kPanelHeight = 200;
constexpr double kLeft = 46, kRight = 10, kTop = 34, kBottom = 28;  // in panel
constexpr double kMargin = 16, kHeader = 86;

// Colours by path kind: the simd tiers in blues and greens (best first),
// the others apart.
std::string ColourOf(const std::string &path, int simd_index) {
  static const char *const kSimd[] = {"#1f4e9c", "#2a9d8f", "#6aa84f",
                                      "#76b7e5"};
  if (path.starts_with("simd")) return kSimd[std::min(simd_index, 3)];
  if (path.starts_with("mb")) return "#e07b00";
  if (path.starts_with("afalg")) return "#c0392b";
  return "#555555";  // fallback
}

std::string Escape(const std::string &text) {
  std::string out;
  for (const char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string Number(double value) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.1f", value);
  return text;
}

std::string SizeLabel(size_t bytes) {
  if (bytes >= 1024 && bytes % 1024 == 0) return std::to_string(bytes / 1024) + "K";
  return std::to_string(bytes);
}

// A round upper bound for the y axis, in GB/s: 1, 2 or 5 times a power of 10.
double NiceCeiling(double value) {
  if (value <= 0) return 1;
  const double magnitude = std::pow(10, std::floor(std::log10(value)));
  for (const double step : {1.0, 2.0, 5.0, 10.0}) {
    if (value <= step * magnitude) return step * magnitude;
  }
  return 10 * magnitude;
}

}  // namespace

std::string RenderSvg(const PlotData &plot) {
  const int rows =
      (static_cast<int>(plot.panels.size()) + kColumns - 1) / kColumns;
  const double width = 2 * kMargin + kColumns * kPanelWidth;
  const double height = kHeader + rows * kPanelHeight + kMargin;
  std::string svg;
  svg += "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  svg += "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + Number(width) +
         "\" height=\"" + Number(height) + "\" viewBox=\"0 0 " +
         Number(width) + " " + Number(height) +
         "\" font-family=\"sans-serif\" font-size=\"10\">\n";
  svg += "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  svg += "<text x=\"" + Number(kMargin) + "\" y=\"22\" font-size=\"15\">" +
         Escape(plot.title) + "</text>\n";
  svg += "<text x=\"" + Number(kMargin) + "\" y=\"40\" fill=\"#444\">" +
         Escape(plot.subtitle) + "</text>\n";

  // The legend: every path of any panel, in order of first appearance.
  std::vector<std::string> paths;
  for (const PlotPanel &panel : plot.panels) {
    for (const PlotCurve &curve : panel.curves) {
      if (std::find(paths.begin(), paths.end(), curve.path) == paths.end()) {
        paths.push_back(curve.path);
      }
    }
  }
  std::map<std::string, std::string> colour;
  int simd_index = 0;
  for (const std::string &path : paths) {
    colour[path] = ColourOf(path, simd_index);
    if (path.starts_with("simd")) ++simd_index;
  }
  svg += "<g class=\"legend\">\n";
  double x = kMargin;
  for (const std::string &path : paths) {
    svg += "<g class=\"legend-entry\" data-path=\"" + Escape(path) + "\">";
    svg += "<line x1=\"" + Number(x) + "\" y1=\"58\" x2=\"" + Number(x + 22) +
           "\" y2=\"58\" stroke=\"" + colour[path] + "\" stroke-width=\"2.5\"/>";
    svg += "<text x=\"" + Number(x + 27) + "\" y=\"62\">" + Escape(path) +
           "</text></g>\n";
    x += 40 + 6.2 * path.size();
  }
  svg += "<line x1=\"" + Number(x) + "\" y1=\"58\" x2=\"" + Number(x + 22) +
         "\" y2=\"58\" stroke=\"#000\" stroke-dasharray=\"4 3\"/>";
  svg += "<text x=\"" + Number(x + 27) +
         "\" y=\"62\">threshold chosen</text>\n</g>\n";

  const double log_min = std::log2(static_cast<double>(plot.sizes.front()));
  const double log_max = std::log2(static_cast<double>(plot.sizes.back()));
  for (size_t i = 0; i < plot.panels.size(); ++i) {
    const PlotPanel &panel = plot.panels[i];
    const double ox = kMargin + (i % kColumns) * kPanelWidth;
    const double oy = kHeader + (i / kColumns) * kPanelHeight;
    const double plot_w = kPanelWidth - kLeft - kRight;
    const double plot_h = kPanelHeight - kTop - kBottom;
    auto px = [&](double size) {
      return ox + kLeft +
             plot_w * (std::log2(size) - log_min) / (log_max - log_min);
    };
    double peak = 0;
    for (const PlotCurve &curve : panel.curves) {
      for (double v : curve.bytes_per_second) peak = std::max(peak, v);
    }
    const double y_max = NiceCeiling(peak / 1e9);  // GB/s
    auto py = [&](double bytes_per_second) {
      return oy + kTop + plot_h * (1 - bytes_per_second / 1e9 / y_max);
    };
    svg += "<g class=\"panel\" data-algorithm=\"" + Escape(panel.algorithm) +
           "\" data-direction=\"" + Escape(panel.direction) + "\">\n";
    svg += "<text x=\"" + Number(ox + kLeft) + "\" y=\"" + Number(oy + 12) +
           "\" font-size=\"11\" font-weight=\"bold\">" + Escape(panel.title) +
           "</text>\n";
    if (!panel.note.empty()) {
      svg += "<text x=\"" + Number(ox + kLeft) + "\" y=\"" + Number(oy + 24) +
             "\" fill=\"#444\" font-size=\"9\">" + Escape(panel.note) +
             "</text>\n";
    }
    // Frame, size ticks at every fourfold step, three throughput ticks.
    svg += "<rect x=\"" + Number(ox + kLeft) + "\" y=\"" + Number(oy + kTop) +
           "\" width=\"" + Number(plot_w) + "\" height=\"" + Number(plot_h) +
           "\" fill=\"none\" stroke=\"#999\"/>\n";
    for (size_t size = plot.sizes.front(); size <= plot.sizes.back();
         size *= 4) {
      const double tx = px(static_cast<double>(size));
      svg += "<line x1=\"" + Number(tx) + "\" y1=\"" + Number(oy + kTop) +
             "\" x2=\"" + Number(tx) + "\" y2=\"" +
             Number(oy + kTop + plot_h) + "\" stroke=\"#eee\"/>";
      svg += "<text x=\"" + Number(tx) + "\" y=\"" +
             Number(oy + kTop + plot_h + 12) + "\" text-anchor=\"middle\">" +
             SizeLabel(size) + "</text>\n";
    }
    for (const double fraction : {0.0, 0.5, 1.0}) {
      const double value = y_max * fraction;
      const double ty = oy + kTop + plot_h * (1 - fraction);
      svg += "<text x=\"" + Number(ox + kLeft - 4) + "\" y=\"" +
             Number(ty + 3) + "\" text-anchor=\"end\">" +
             (value == std::floor(value) ? std::to_string(static_cast<int>(value))
                                         : Number(value)) +
             "</text>\n";
    }
    svg += "<text x=\"" + Number(ox + 10) + "\" y=\"" +
           Number(oy + kTop + plot_h / 2) + "\" transform=\"rotate(-90 " +
           Number(ox + 10) + " " + Number(oy + kTop + plot_h / 2) +
           ")\" text-anchor=\"middle\" fill=\"#444\">GB/s</text>\n";
    for (const PlotCurve &curve : panel.curves) {
      std::string points;
      for (size_t k = 0; k < plot.sizes.size(); ++k) {
        if (k >= curve.bytes_per_second.size() ||
            curve.bytes_per_second[k] <= 0) {
          continue;
        }
        points += Number(px(static_cast<double>(plot.sizes[k]))) + "," +
                  Number(py(curve.bytes_per_second[k])) + " ";
      }
      svg += "<polyline class=\"curve\" data-path=\"" + Escape(curve.path) +
             "\" fill=\"none\" stroke=\"" + colour[curve.path] +
             "\" stroke-width=\"1.8\" points=\"" + points + "\"/>\n";
    }
    for (const PlotMarker &marker : panel.markers) {
      const double mx = px(static_cast<double>(
          std::clamp(marker.size, plot.sizes.front(), plot.sizes.back())));
      svg += "<line class=\"threshold\" data-key=\"" + Escape(marker.key) +
             "\" x1=\"" + Number(mx) + "\" y1=\"" + Number(oy + kTop) +
             "\" x2=\"" + Number(mx) + "\" y2=\"" +
             Number(oy + kTop + plot_h) +
             "\" stroke=\"#000\" stroke-dasharray=\"4 3\"/>";
      svg += "<text x=\"" + Number(mx - 3) + "\" y=\"" +
             Number(oy + kTop + 10) +
             "\" text-anchor=\"end\" font-size=\"9\">" + Escape(marker.label) +
             "</text>\n";
    }
    svg += "</g>\n";
  }
  svg += "</svg>\n";
  return svg;
}

}  // namespace aesmux::cli
