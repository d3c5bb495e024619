// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
#include "provider/cli/svg_plot.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <limits>
#include <optional>
#include <set>
#include <span>

namespace aesmux::cli {
namespace {

constexpr int kColumns = 4;
constexpr double kPanelWidth = 300, kPanelHeight = 200;
constexpr double kLeft = 46, kRight = 10, kTop = 34, kBottom = 30;  // in panel
constexpr double kMargin = 16;
constexpr double kFont = 10, kLabelFont = 9, kTitleFont = 11;

// Advance widths of DejaVu Sans, in em, of ' ' (0x20) to '~' (0x7e), from
// the font's hmtx table; its bold face is at most 1.25 times as wide.
constexpr std::array<double, 95> kAdvance = {
    0.318, 0.401, 0.460, 0.838, 0.636, 0.950, 0.780, 0.275, 0.390, 0.390,
    0.500, 0.838, 0.318, 0.361, 0.318, 0.337, 0.636, 0.636, 0.636, 0.636,
    0.636, 0.636, 0.636, 0.636, 0.636, 0.636, 0.337, 0.337, 0.838, 0.838,
    0.838, 0.531, 1.000, 0.684, 0.686, 0.698, 0.770, 0.632, 0.575, 0.775,
    0.752, 0.295, 0.295, 0.656, 0.557, 0.863, 0.748, 0.787, 0.603, 0.787,
    0.695, 0.635, 0.611, 0.732, 0.684, 0.989, 0.685, 0.611, 0.685, 0.390,
    0.337, 0.390, 0.838, 0.500, 0.500, 0.613, 0.635, 0.550, 0.635, 0.615,
    0.352, 0.635, 0.634, 0.278, 0.278, 0.579, 0.278, 0.974, 0.634, 0.612,
    0.635, 0.635, 0.411, 0.521, 0.392, 0.634, 0.592, 0.818, 0.592, 0.592,
    0.525, 0.636, 0.337, 0.636, 0.838};
constexpr double kBoldFactor = 1.25;
// How far glyphs reach above and below the baseline, in em (DejaVu Sans'
// ascender and descender, accents and ≤ included).
constexpr double kAscent = 0.93, kDescent = 0.24;
// The white halo around a threshold's label (so that it reads across a
// curve) is this wide; its box leaves room for it.
constexpr double kHalo = 3;

// Colours by path kind, the best first; a path of a kind not listed, or
// beyond its kind's colours, takes the first of kOther nobody has.
constexpr std::string_view kSimd[] = {"#1f4e9c", "#2a9d8f", "#6aa84f",
                                      "#76b7e5"};
constexpr std::string_view kFallback[] = {"#555555"};
constexpr std::string_view kMb[] = {"#e07b00"};
constexpr std::string_view kCombined[] = {"#8e44ad"};
constexpr std::string_view kAlone[] = {"#b8860b"};
constexpr std::string_view kAfalg[] = {"#c0392b", "#e377c2"};
constexpr std::string_view kOther[] = {"#17becf", "#8c564b", "#bcbd22",
                                       "#9467bd", "#2ca02c", "#d62728",
                                       "#7f7f7f", "#ff7f0e"};
// Dash patterns in the legend's order (never the thresholds' "4 3").
constexpr std::string_view kDashes[] = {"",      "7 3",     "2 2",
                                        "7 2 2 2", "12 3",  "5 5",
                                        "1 3",   "12 3 2 3", "7 2 2 2 2 2",
                                        "3 6"};

std::span<const std::string_view> ColoursOfKind(const std::string &path) {
  if (path.starts_with("simd")) return kSimd;
  if (path.starts_with("fallback")) return kFallback;
  if (path.starts_with("mb")) return kMb;
  if (path.starts_with("threads") && path.ends_with("combined")) {
    return kCombined;
  }
  if (path.starts_with("threads") && path.ends_with("alone")) return kAlone;
  if (path.starts_with("afalg")) return kAfalg;
  return {};
}

// A colour nobody has: the next hue by the golden angle, once the lists
// are spent.
std::string FreshColour(const std::set<std::string> &taken) {
  for (int i = 0;; ++i) {
    const double hue = std::fmod(i * 137.508, 360.0) / 60;
    const double x = 1 - std::fabs(std::fmod(hue, 2.0) - 1);
    double rgb[3] = {};
    const int sector = static_cast<int>(hue);
    const int order[6][3] = {{0, 1, 2}, {1, 0, 2}, {2, 0, 1},
                             {2, 1, 0}, {1, 2, 0}, {0, 2, 1}};
    rgb[order[sector][0]] = 1;  // chroma 1 at full value, then darkened
    rgb[order[sector][1]] = x;
    char text[8];
    std::snprintf(text, sizeof(text), "#%02x%02x%02x",
                  static_cast<int>(rgb[0] * 160 + 20),
                  static_cast<int>(rgb[1] * 160 + 20),
                  static_cast<int>(rgb[2] * 160 + 20));
    if (!taken.contains(text)) return text;
  }
}

std::vector<PathStyle> StylesOf(const std::vector<std::string> &paths) {
  std::vector<PathStyle> styles;
  std::set<std::string> taken;
  for (size_t i = 0; i < paths.size(); ++i) {
    std::string colour;
    for (std::span<const std::string_view> list :
         {ColoursOfKind(paths[i]), std::span<const std::string_view>(kOther)}) {
      for (const std::string_view c : list) {
        if (colour.empty() && !taken.contains(std::string(c))) colour = c;
      }
    }
    if (colour.empty()) colour = FreshColour(taken);
    taken.insert(colour);
    styles.push_back({paths[i], colour,
                      i < std::size(kDashes) ? std::string(kDashes[i]) : ""});
  }
  return styles;
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
  if (bytes >= 1024 && bytes % 1024 == 0) {
    return std::to_string(bytes / 1024) + "K";
  }
  return std::to_string(bytes);
}

// Whether the segment (x1,y1)-(x2,y2) passes through `box` (Liang-Barsky).
bool SegmentCrosses(double x1, double y1, double x2, double y2,
                    const PlotBox &box) {
  double t0 = 0, t1 = 1;
  const double dx = x2 - x1, dy = y2 - y1;
  const double p[4] = {-dx, dx, -dy, dy};
  const double q[4] = {x1 - box.x, box.x + box.w - x1, y1 - box.y,
                       box.y + box.h - y1};
  for (int i = 0; i < 4; ++i) {
    if (p[i] == 0) {
      if (q[i] < 0) return false;
      continue;
    }
    const double t = q[i] / p[i];
    if (p[i] < 0) {
      t0 = std::max(t0, t);
    } else {
      t1 = std::min(t1, t);
    }
    if (t0 > t1) return false;
  }
  return true;
}

struct Segment {
  double x1, y1, x2, y2;
};

enum class Anchor { kStart, kMiddle, kEnd };

// The SVG being written and every text box placed in it.
class Canvas {
 public:
  explicit Canvas(PlotLayout *layout) : layout_(layout) {}

  std::string svg;

  // The box `text` takes with its baseline's anchor point at (x, y).
  static PlotBox BoxOf(const std::string &text, double x, double y,
                       Anchor anchor, double size, bool bold = false,
                       double pad = 0.5) {
    const double w = TextWidth(text, size) * (bold ? kBoldFactor : 1);
    const double left = anchor == Anchor::kStart    ? x
                        : anchor == Anchor::kMiddle ? x - w / 2
                                                    : x - w;
    return {left - pad, y - kAscent * size - pad, w + 2 * pad,
            (kAscent + kDescent) * size + 2 * pad};
  }

  bool Free(const PlotBox &box) const {
    return std::none_of(placed_.begin(), placed_.end(),
                        [&](const PlotBox &b) { return b.Overlaps(box); });
  }

  // Writes a <text> whose box is `box`; `attributes` go on the element.
  void Text(const std::string &text, double x, double y, Anchor anchor,
            double size, const PlotBox &box,
            const std::string &attributes = "") {
    static constexpr const char *kAnchors[] = {"", " text-anchor=\"middle\"",
                                               " text-anchor=\"end\""};
    svg += "<text x=\"" + Number(x) + "\" y=\"" + Number(y) + "\"" +
           kAnchors[static_cast<int>(anchor)] + " font-size=\"" +
           Number(size) + "\"" + attributes + " data-box=\"" +
           Number(box.x) + " " + Number(box.y) + " " + Number(box.w) + " " +
           Number(box.h) + "\">" + Escape(text) + "</text>\n";
    placed_.push_back(box);
    if (layout_ != nullptr) layout_->texts.push_back({text, box});
  }

  // A text at a place fixed by the layout.
  void FixedText(const std::string &text, double x, double y, Anchor anchor,
                 double size, const std::string &attributes = "",
                 bool bold = false) {
    Text(text, x, y, anchor, size, BoxOf(text, x, y, anchor, size, bold),
         attributes);
  }

  PlotLayout *layout() const { return layout_; }

 private:
  PlotLayout *layout_;
  std::vector<PlotBox> placed_;
};

// Splits `text` into lines at most `width` wide, at spaces.
std::vector<std::string> Wrap(const std::string &text, double width,
                              double size) {
  std::vector<std::string> lines;
  std::string line;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find(' ', start);
    if (end == std::string::npos) end = text.size();
    const std::string word = text.substr(start, end - start);
    const std::string longer = line.empty() ? word : line + " " + word;
    if (!line.empty() && TextWidth(longer, size) > width) {
      lines.push_back(line);
      line = word;
    } else {
      line = longer;
    }
    start = end + 1;
  }
  if (!line.empty()) lines.push_back(line);
  return lines;
}

// A panel's throughput axis: whole decades of GB/s around every value it
// shows.
struct ThroughputAxis {
  double low_decade = -1, high_decade = 1;  // log10 of GB/s
};

ThroughputAxis AxisOf(const PlotPanel &panel) {
  double low = std::numeric_limits<double>::infinity(), high = 0;
  for (const PlotCurve &curve : panel.curves) {
    for (const double v : curve.bytes_per_second) {
      if (v > 0 && std::isfinite(v)) {
        low = std::min(low, v / 1e9);
        high = std::max(high, v / 1e9);
      }
    }
  }
  ThroughputAxis axis;
  if (high <= 0) return axis;
  axis.high_decade = std::ceil(std::log10(high));
  // At most five decades: a value far below the rest sits on the floor.
  axis.low_decade = std::max(std::floor(std::log10(low)),
                             axis.high_decade - 5);
  // At least two decades, so that the scale shows (three ticks).
  axis.low_decade = std::min(axis.low_decade, axis.high_decade - 2);
  return axis;
}

std::string DecadeLabel(double decade) {
  char text[32];
  std::snprintf(text, sizeof(text), "%g", std::pow(10.0, decade));
  return text;
}

}  // namespace

bool PlotBox::Overlaps(const PlotBox &o) const {
  return x < o.x + o.w && o.x < x + w && y < o.y + o.h && o.y < y + h;
}

bool PlotBox::Inside(const PlotBox &o) const {
  return x >= o.x && y >= o.y && x + w <= o.x + o.w && y + h <= o.y + o.h;
}

double TextWidth(std::string_view text, double font_size) {
  double em = 0;
  for (size_t i = 0; i < text.size();) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c >= 0x20 && c < 0x7f) {
      em += kAdvance[c - 0x20];
      ++i;
      continue;
    }
    // A UTF-8 sequence: ≤, ≥ and × are 0.838 em; anything else is taken
    // as a full em, wider than most glyphs.
    size_t length = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : c >= 0xc0 ? 2 : 1;
    length = std::min(length, text.size() - i);
    const std::string_view glyph = text.substr(i, length);
    em += glyph == "≤" || glyph == "≥" || glyph == "×" ? 0.838 : 1.0;
    i += length;
  }
  return em * font_size;
}

std::string RenderSvg(const PlotData &plot, PlotLayout *layout) {
  Canvas canvas(layout);
  std::string &svg = canvas.svg;
  const double width = 2 * kMargin + kColumns * kPanelWidth;

  // The header: title, subtitle (wrapped), the axes, the legend (wrapped).
  Canvas &c = canvas;
  double y = 22;
  c.FixedText(plot.title, kMargin, y, Anchor::kStart, 15);
  std::vector<std::string> lines =
      Wrap(plot.subtitle, width - 2 * kMargin, kFont);
  lines.push_back(
      "x: request size in bytes, y: throughput in GB/s, both on "
      "logarithmic scales");
  for (const std::string &line : lines) {
    y += 15;
    c.FixedText(line, kMargin, y, Anchor::kStart, kFont, " fill=\"#444\"");
  }

  std::vector<std::string> paths;
  for (const PlotPanel &panel : plot.panels) {
    for (const PlotCurve &curve : panel.curves) {
      if (std::find(paths.begin(), paths.end(), curve.path) == paths.end()) {
        paths.push_back(curve.path);
      }
    }
  }
  const std::vector<PathStyle> styles = StylesOf(paths);
  if (layout != nullptr) layout->styles = styles;
  auto style_of = [&](const std::string &path) -> const PathStyle & {
    return *std::find_if(styles.begin(), styles.end(),
                         [&](const PathStyle &s) { return s.path == path; });
  };
  auto stroke = [](const std::string &colour, const std::string &dash) {
    return " stroke=\"" + colour + "\"" +
           (dash.empty() ? "" : " stroke-dasharray=\"" + dash + "\"");
  };

  y += 22;
  svg += "<g class=\"legend\">\n";
  double x = kMargin;
  auto legend_entry = [&](const std::string &name, const std::string &colour,
                          const std::string &dash, double line_width,
                          const std::string &attributes) {
    // (`attributes` name the class: a path's entry, or the thresholds'.)
    const double entry = 31 + TextWidth(name, kFont);
    if (x > kMargin && x + entry > width - kMargin) {
      x = kMargin;
      y += 16;
    }
    svg += "<g" + attributes + ">";
    svg += "<line x1=\"" + Number(x) + "\" y1=\"" + Number(y - 3.5) +
           "\" x2=\"" + Number(x + 26) + "\" y2=\"" + Number(y - 3.5) + "\"" +
           stroke(colour, dash) + " stroke-width=\"" + Number(line_width) +
           "\"/>";
    c.FixedText(name, x + 31, y, Anchor::kStart, kFont);
    svg += "</g>\n";
    x += entry + 18;
  };
  for (const PathStyle &s : styles) {
    legend_entry(s.path, s.colour, s.dash, 2.5,
                 " class=\"legend-entry\" data-path=\"" + Escape(s.path) +
                     "\"");
  }
  legend_entry("threshold chosen", "#000", "4 3", 1,
               " class=\"legend-threshold\"");
  svg += "</g>\n";
  const double header_height = y + 20;

  const int rows =
      (static_cast<int>(plot.panels.size()) + kColumns - 1) / kColumns;
  const double height = header_height + rows * kPanelHeight + kMargin;
  svg = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" +
        Number(width) + "\" height=\"" + Number(height) +
        "\" viewBox=\"0 0 " + Number(width) + " " + Number(height) +
        "\" font-family=\"sans-serif\">\n"
        "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n" +
        svg;

  if (plot.sizes.empty()) return svg + "</svg>\n";
  const double log_min = std::log2(static_cast<double>(plot.sizes.front()));
  const double log_max =
      std::max(std::log2(static_cast<double>(plot.sizes.back())), log_min + 1);
  for (size_t i = 0; i < plot.panels.size(); ++i) {
    const PlotPanel &panel = plot.panels[i];
    const ThroughputAxis axis = AxisOf(panel);
    const double ox = kMargin + (i % kColumns) * kPanelWidth;
    const double oy = header_height + (i / kColumns) * kPanelHeight;
    const PlotBox frame = {ox + kLeft, oy + kTop, kPanelWidth - kLeft - kRight,
                           kPanelHeight - kTop - kBottom};
    auto px = [&](double size) {
      return frame.x + frame.w * (std::log2(size) - log_min) /
                           (log_max - log_min);
    };
    auto py = [&](double bytes_per_second) {
      const double decade = std::clamp(std::log10(bytes_per_second / 1e9),
                                       axis.low_decade, axis.high_decade);
      return frame.y + frame.h * (axis.high_decade - decade) /
                           (axis.high_decade - axis.low_decade);
    };
    svg += "<g class=\"panel\" data-algorithm=\"" + Escape(panel.algorithm) +
           "\" data-direction=\"" + Escape(panel.direction) + "\">\n";
    c.FixedText(panel.title, frame.x, oy + 12, Anchor::kStart, kTitleFont,
                " font-weight=\"bold\"", true);
    if (!panel.note.empty()) {
      c.FixedText(panel.note, frame.x, oy + 25.5, Anchor::kStart, kLabelFont,
                  " fill=\"#444\"");
    }
    // Grid: every doubling of the size (labelled every fourfold step from
    // the first power of four), every 1-2-5 step of the throughput
    // (labelled at each decade).
    for (double e = std::ceil(log_min); e <= log_max + 1e-9; ++e) {
      const double tx = px(std::exp2(e));
      const bool labelled = static_cast<long>(e) % 2 == 0;
      svg += "<line x1=\"" + Number(tx) + "\" y1=\"" + Number(frame.y) +
             "\" x2=\"" + Number(tx) + "\" y2=\"" +
             Number(frame.y + frame.h) + "\" stroke=\"" +
             (labelled ? "#e4e4e4" : "#f2f2f2") + "\"/>\n";
      if (labelled) {
        c.FixedText(SizeLabel(static_cast<size_t>(std::exp2(e))), tx,
                    frame.y + frame.h + 16, Anchor::kMiddle, kFont,
                    " class=\"size-tick\"");
      }
    }
    for (double d = axis.low_decade; d <= axis.high_decade + 1e-9; ++d) {
      for (const double step : {1.0, 2.0, 5.0}) {
        const double value = std::pow(10.0, d) * step * 1e9;
        if (std::log10(value / 1e9) > axis.high_decade + 1e-9) break;
        const double ty = py(value);
        svg += "<line x1=\"" + Number(frame.x) + "\" y1=\"" + Number(ty) +
               "\" x2=\"" + Number(frame.x + frame.w) + "\" y2=\"" +
               Number(ty) + "\" stroke=\"" +
               (step == 1 ? "#e4e4e4" : "#f2f2f2") + "\"/>\n";
      }
      c.FixedText(DecadeLabel(d), frame.x - 4, py(std::pow(10.0, d) * 1e9) + 3,
                  Anchor::kEnd, kFont, " class=\"rate-tick\"");
    }
    svg += "<rect x=\"" + Number(frame.x) + "\" y=\"" + Number(frame.y) +
           "\" width=\"" + Number(frame.w) + "\" height=\"" +
           Number(frame.h) + "\" fill=\"none\" stroke=\"#999\"/>\n";
    {
      // "GB/s" up the left side, turned a quarter: its box turns too.
      const double ax = ox + 10, ay = frame.y + frame.h / 2;
      const double w = TextWidth("GB/s", kFont);
      const PlotBox box = {ax - kAscent * kFont - 0.5, ay - w / 2 - 0.5,
                           (kAscent + kDescent) * kFont + 1, w + 1};
      c.Text("GB/s", ax, ay, Anchor::kMiddle, kFont, box,
             " transform=\"rotate(-90 " + Number(ax) + " " + Number(ay) +
                 ")\" fill=\"#444\"");
    }

    std::vector<Segment> obstacles;
    for (const PlotCurve &curve : panel.curves) {
      const PathStyle &s = style_of(curve.path);
      std::string points;
      bool have_last = false;
      double last_x = 0, last_y = 0;
      for (size_t k = 0; k < plot.sizes.size(); ++k) {
        if (k >= curve.bytes_per_second.size() ||
            !(curve.bytes_per_second[k] > 0)) {
          continue;
        }
        const double cx = px(static_cast<double>(plot.sizes[k]));
        const double cy = py(curve.bytes_per_second[k]);
        points += Number(cx) + "," + Number(cy) + " ";
        if (have_last) obstacles.push_back({last_x, last_y, cx, cy});
        last_x = cx;
        last_y = cy;
        have_last = true;
      }
      svg += "<polyline class=\"curve\" data-path=\"" + Escape(curve.path) +
             "\" fill=\"none\"" + stroke(s.colour, s.dash) +
             " stroke-width=\"1.6\" stroke-linejoin=\"round\" points=\"" +
             points + "\"/>\n";
    }
    std::vector<double> marker_x;
    for (const PlotMarker &marker : panel.markers) {
      const double mx = px(static_cast<double>(
          std::clamp(marker.size, plot.sizes.front(), plot.sizes.back())));
      marker_x.push_back(mx);
      obstacles.push_back({mx, frame.y, mx, frame.y + frame.h});
      svg += "<line class=\"threshold\" data-key=\"" + Escape(marker.key) +
             "\" x1=\"" + Number(mx) + "\" y1=\"" + Number(frame.y) +
             "\" x2=\"" + Number(mx) + "\" y2=\"" +
             Number(frame.y + frame.h) +
             "\" stroke=\"#000\" stroke-dasharray=\"4 3\"><title>" +
             Escape(marker.key + ": " + marker.label) + "</title></line>\n";
    }
    // Each label in the first place, row by row from the top and its
    // preferred side first, inside the frame and clear of all text; among
    // those, one that crosses no curve or other threshold if there is one,
    // else the one that crosses fewest.
    for (size_t m = 0; m < panel.markers.size(); ++m) {
      const PlotMarker &marker = panel.markers[m];
      const double mx = marker_x[m];
      std::optional<PlotBox> best;
      double best_x = 0, best_y = 0;
      size_t best_crossings = SIZE_MAX;
      const double pad = kHalo / 2 + 0.5;
      for (int row = 0; best_crossings > 0; ++row) {
        const double baseline = frame.y + 1 + pad + kAscent * kLabelFont +
                                row * ((kAscent + kDescent) * kLabelFont +
                                       2 * pad);
        if (baseline + kDescent * kLabelFont + pad > frame.y + frame.h - 1) {
          break;
        }
        for (const bool left : {marker.bounds_below, !marker.bounds_below}) {
          const double tx = left ? mx - 3 - pad : mx + 3 + pad;
          const PlotBox box =
              Canvas::BoxOf(marker.label, tx, baseline,
                            left ? Anchor::kEnd : Anchor::kStart, kLabelFont,
                            false, pad);
          if (!box.Inside(frame) || !c.Free(box)) continue;
          size_t crossings = 0;
          for (size_t o = 0; o < obstacles.size(); ++o) {
            const Segment &s = obstacles[o];
            // Its own line it stands beside, not across.
            if (s.x1 == mx && s.x2 == mx && s.y1 == frame.y) continue;
            crossings += SegmentCrosses(s.x1, s.y1, s.x2, s.y2, box) ? 1 : 0;
          }
          if (crossings < best_crossings) {
            best = box;
            best_x = tx;
            best_y = baseline;
            best_crossings = crossings;
            if (crossings == 0) break;
          }
        }
      }
      if (!best) {
        if (layout != nullptr) layout->dropped.push_back(marker.label);
        continue;
      }
      c.Text(marker.label, best_x, best_y,
             best_x < mx ? Anchor::kEnd : Anchor::kStart, kLabelFont, *best,
             " class=\"threshold-label\" stroke=\"white\" stroke-width=\"" +
                 Number(kHalo) +
                 "\" stroke-linejoin=\"round\" paint-order=\"stroke\"");
      if (layout != nullptr) {
        layout->marker_labels.push_back({marker.label, *best, frame});
      }
    }
    svg += "</g>\n";
  }
  svg += "</svg>\n";
  return svg;
}

}  // namespace aesmux::cli
