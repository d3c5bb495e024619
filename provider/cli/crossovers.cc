// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
#include "provider/cli/crossovers.h"

#include <algorithm>
#include <cstdio>

#include "provider/cli/bench.h"

namespace aesmux::cli {

using core::kNumFamilies;

const char *DirectionName(Direction direction) {
  return direction == Direction::kEncrypt ? "encrypt" : "decrypt";
}

void FindCrossovers(const std::vector<size_t> &sizes, double margin,
                    const std::string &reference, Measured *m) {
  const PlotCurve *simd = nullptr, *fallback = nullptr, *afalg = nullptr,
                  *mb = nullptr, *combined = nullptr, *alone = nullptr;
  for (const PlotCurve &curve : m->curves) {
    if (curve.path == reference) simd = &curve;
    if (curve.path == "fallback") fallback = &curve;
    if (curve.path.starts_with("afalg")) afalg = &curve;
    if (curve.path.starts_with("mb")) mb = &curve;
    if (curve.path.starts_with("threads")) {
      (curve.path.ends_with("combined") ? combined : alone) = &curve;
    }
  }
  auto wins = [&](const PlotCurve *a, double b, size_t k) {
    return a->bytes_per_second[k] > b * (1 + margin);
  };
  auto cpu = [&](size_t k) {
    double best = 0;
    if (simd != nullptr) best = simd->bytes_per_second[k];
    if (fallback != nullptr) best = std::max(best, fallback->bytes_per_second[k]);
    return best;
  };
  if (simd != nullptr && fallback != nullptr) {
    for (size_t k = 0; k < sizes.size(); ++k) {
      if (!wins(fallback, simd->bytes_per_second[k], k)) break;
      m->fallback_max = sizes[k];
    }
    m->simd_over_fallback_low = 1e9;
    for (size_t k = 0; k < sizes.size(); ++k) {
      const double ratio =
          simd->bytes_per_second[k] / std::max(fallback->bytes_per_second[k], 1.0);
      m->simd_over_fallback_low = std::min(m->simd_over_fallback_low, ratio);
      m->simd_over_fallback_high = std::max(m->simd_over_fallback_high, ratio);
    }
  }
  if (afalg != nullptr) {
    m->afalg_measured = true;
    for (size_t k = sizes.size(); k-- > 0;) {
      if (!wins(afalg, cpu(k), k)) break;
      m->afalg_min = sizes[k];
    }
  }
  if (combined != nullptr && alone != nullptr) {
    m->threads_measured = true;
    for (size_t k = sizes.size(); k-- > 0;) {
      if (!wins(combined, alone->bytes_per_second[k], k)) break;
      m->threads_from = sizes[k];
    }
  }
  if (mb != nullptr && simd != nullptr) {
    m->mb_measured = true;
    for (size_t k = 0; k < sizes.size(); ++k) {
      const bool won = wins(mb, simd->bytes_per_second[k], k);
      if (won && !m->mb_from) m->mb_from = sizes[k];
      if (won && m->mb_from) m->mb_max = sizes[k];
      if (!won && m->mb_from) break;
    }
  }
}

std::array<FamilyThresholds, kNumFamilies> Aggregate(
    const std::vector<Measured> &results) {
  std::array<FamilyThresholds, kNumFamilies> families{};
  std::array<bool, kNumFamilies> afalg_everywhere{}, threads_everywhere{};
  afalg_everywhere.fill(true);
  threads_everywhere.fill(true);
  for (const Measured &m : results) {
    const auto f = static_cast<size_t>(m.alg.family);
    FamilyThresholds &t = families[f];
    t.fallback_max = t.measured ? std::min(t.fallback_max, m.fallback_max)
                                : m.fallback_max;
    if (m.afalg_measured) {
      t.afalg_measured = true;
      if (!m.afalg_min) afalg_everywhere[f] = false;
      if (m.afalg_min && (!t.afalg_min || *m.afalg_min > *t.afalg_min)) {
        t.afalg_min = m.afalg_min;
      }
    }
    if (m.threads_measured) {
      t.threads_measured = true;
      if (!m.threads_from) threads_everywhere[f] = false;
      if (m.threads_from &&
          (!t.threads_min || *m.threads_from > *t.threads_min)) {
        t.threads_min = m.threads_from;
      }
    }
    if (m.mb_measured) {
      const size_t mb_max = m.mb_max.value_or(0);
      t.mb_max = t.mb_measured ? std::min(t.mb_max, mb_max) : mb_max;
      // The smallest size batching wins from: 0 when that is the smallest
      // measured (no lower bound was found).
      const size_t mb_min = m.mb_from && *m.mb_from > 16 ? *m.mb_from : 0;
      t.mb_min = std::max(t.mb_min, mb_min);
      t.mb_measured = true;
    }
    t.measured = true;
  }
  for (size_t f = 0; f < kNumFamilies; ++f) {
    FamilyThresholds &t = families[f];
    if (!afalg_everywhere[f]) t.afalg_min.reset();
    if (!threads_everywhere[f]) t.threads_min.reset();
    // Ranges that share no size (one key size wins up to 64 B, another
    // from 8K): no size where batching wins for every key size, so it is
    // off, as when one of them never wins.
    if (t.mb_min > t.mb_max) t.mb_min = t.mb_max = 0;
  }
  return families;
}

std::string Describe(const Measured &m) {
  char line[256];
  std::string text = std::string(m.alg.name) + " " + DirectionName(m.direction) +
                     ": fallback ";
  text += m.fallback_max == 0 ? "never wins"
                              : "wins up to " + FormatSize(m.fallback_max);
  std::snprintf(line, sizeof(line), " (simd/fallback %.2fx..%.2fx)",
                m.simd_over_fallback_low, m.simd_over_fallback_high);
  text += line;
  if (m.afalg_measured) {
    text += m.afalg_min ? "; afalg wins from " + FormatSize(*m.afalg_min)
                        : "; afalg never wins";
  }
  if (m.mb_measured) {
    if (!m.mb_from) {
      text += "; mb never wins";
    } else {
      text += "; mb wins from " + FormatSize(*m.mb_from) + " to " +
              FormatSize(*m.mb_max);
    }
  }
  if (m.threads_measured) {
    text += m.threads_from ? "; threads combined win from " +
                                 FormatSize(*m.threads_from)
                           : "; threads combined never win";
  }
  return text;
}

PlotPanel PanelOf(const Measured &m, const FamilyThresholds &t) {
  PlotPanel panel;
  panel.algorithm = std::string(m.alg.name);
  panel.direction = DirectionName(m.direction);
  panel.title = panel.algorithm + " " + panel.direction;
  panel.curves = m.curves;
  const std::string family(core::FamilyName(m.alg.family));
  if (t.fallback_max > 0) {
    panel.markers.push_back({family + ".fallback_max_len",
                             "fallback ≤ " + FormatSize(t.fallback_max),
                             t.fallback_max, true});
  } else {
    panel.note = "fallback_max_len = 0: simd at every size";
  }
  if (t.afalg_min) {
    panel.markers.push_back({family + ".afalg_min_len",
                             "afalg ≥ " + FormatSize(*t.afalg_min),
                             *t.afalg_min});
  }
  if (t.mb_measured && m.direction == Direction::kEncrypt && t.mb_max > 0) {
    if (t.mb_min > 0) {
      panel.markers.push_back({family + ".mb_min_len",
                               "mb ≥ " + FormatSize(t.mb_min), t.mb_min});
    }
    panel.markers.push_back(
        {family + ".mb_max_len", "mb ≤ " + FormatSize(t.mb_max), t.mb_max,
         true});
  }
  if (t.threads_min && m.direction == Direction::kEncrypt) {
    panel.markers.push_back({family + ".mb_threads_min_len",
                             "threads ≥ " + FormatSize(*t.threads_min),
                             *t.threads_min});
  }
  return panel;
}

}  // namespace aesmux::cli
