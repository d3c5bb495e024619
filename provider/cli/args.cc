// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
#include "provider/cli/args.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>

namespace aesmux::cli {
namespace {

// Edit distance with adjacent transpositions (optimal string alignment).
size_t Distance(std::string_view a, std::string_view b) {
  std::vector<std::vector<size_t>> d(a.size() + 1,
                                     std::vector<size_t>(b.size() + 1));
  for (size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1,
                          d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) {
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
      }
    }
  }
  return d[a.size()][b.size()];
}

// Numbers in messages: as short as they were meant ("0.5", "1e-05").
std::string Format(double value) {
  char text[32];
  std::snprintf(text, sizeof(text), "%g", value);
  return text;
}

}  // namespace

std::string Nearest(std::string_view word,
                    std::span<const std::string_view> candidates) {
  // Compared without the dashes of an option, so that "-quick" and
  // "quick" find "--quick" as "--qiuck" does.
  const auto bare = [](std::string_view s) {
    return s.substr(std::min(s.find_first_not_of('-'), s.size()));
  };
  const std::string_view w = bare(word);
  if (w.empty()) return "";
  std::string best;
  size_t best_distance = SIZE_MAX;
  std::string prefixed;
  int prefixes = 0;
  for (const std::string_view candidate : candidates) {
    const std::string_view c = bare(candidate);
    const size_t distance = Distance(w, c);
    if (distance < best_distance) {
      best_distance = distance;
      best = candidate;
    }
    if (c.starts_with(w)) {
      ++prefixes;
      prefixed = candidate;
    }
  }
  if (best_distance <= std::max<size_t>(1, w.size() / 3)) return best;
  if (prefixes == 1) return prefixed;
  return "";
}

std::string DidYouMean(std::string_view word,
                       std::span<const std::string_view> candidates) {
  const std::string nearest = Nearest(word, candidates);
  return nearest.empty() ? "" : " (did you mean '" + nearest + "'?)";
}

std::optional<int64_t> ParseInteger(std::string_view text, int64_t min,
                                    int64_t max, std::string *error) {
  int64_t value = 0;
  const char *end = text.data() + text.size();
  // from_chars takes a leading '-'; a count never has one.
  const bool digits = !text.empty() && text[0] != '-';
  const auto [ptr, ec] =
      digits ? std::from_chars(text.data(), end, value)
             : std::from_chars_result{text.data(), std::errc::invalid_argument};
  if (ec == std::errc::result_out_of_range) {
    *error = "'" + std::string(text) + "' is out of range (" +
             std::to_string(min) + " to " + std::to_string(max) + ")";
    return std::nullopt;
  }
  if (ec != std::errc() || ptr != end) {
    *error = "'" + std::string(text) + "' is not a whole number";
    return std::nullopt;
  }
  if (value < min || value > max) {
    *error = std::string(text) + " is out of range (" + std::to_string(min) +
             " to " + std::to_string(max) + ")";
    return std::nullopt;
  }
  return value;
}

std::optional<double> ParseReal(std::string_view text, double min, double max,
                                std::string *error) {
  double value = 0;
  const char *end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (ec == std::errc::result_out_of_range ||
      (ec == std::errc() && ptr == end && !std::isfinite(value))) {
    *error = "'" + std::string(text) + "' is not a finite number";
    return std::nullopt;
  }
  if (ec != std::errc() || ptr != end) {
    *error = "'" + std::string(text) + "' is not a number";
    return std::nullopt;
  }
  if (!(value >= min && value <= max)) {
    *error = std::string(text) + " is out of range (" + Format(min) + " to " +
             Format(max) + ")";
    return std::nullopt;
  }
  return value;
}

bool WantsHelp(std::span<const std::string> args) {
  for (const std::string &arg : args) {
    if (arg == "--") return false;
    if (arg == "--help" || arg == "-h") return true;
  }
  return false;
}

CommandLine::CommandLine(std::string_view command,
                         std::span<const OptionSpec> options,
                         std::span<const std::string> args,
                         std::string_view operands)
    : command_(command), specs_(options) {
  if (WantsHelp(args)) {
    help_ = true;
    return;
  }
  std::vector<std::string_view> names;
  for (const OptionSpec &spec : specs_) names.push_back(spec.name);
  names.push_back("--help");
  bool options_end = false;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string &arg = args[i];
    if (options_end || arg == "-" || !arg.starts_with("-")) {
      if (operands.empty()) {
        Error("unexpected argument '" + arg + "'");
      } else {
        operands_.push_back(arg);
      }
      continue;
    }
    if (arg == "--") {
      options_end = true;
      continue;
    }
    const size_t equals = arg.find('=');
    const std::string name = arg.substr(0, equals);
    const OptionSpec *spec = Find(name);
    if (spec == nullptr) {
      Error("unknown option '" + name + "'" + DidYouMean(name, names));
      continue;
    }
    if (spec->value.empty()) {
      if (equals != std::string::npos) {
        Error(name + " takes no value");
      } else {
        given_.emplace_back(name, "");
      }
      continue;
    }
    if (equals != std::string::npos) {
      given_.emplace_back(name, arg.substr(equals + 1));
    } else if (i + 1 < args.size() && !args[i + 1].starts_with("--")) {
      given_.emplace_back(name, args[++i]);
    } else {
      Error(name + " needs a value (" + std::string(spec->value) + ")");
    }
  }
}

const OptionSpec *CommandLine::Find(std::string_view name) const {
  for (const OptionSpec &spec : specs_) {
    if (spec.name == name) return &spec;
  }
  return nullptr;
}

void CommandLine::Error(const std::string &message) {
  if (ok_) {
    std::fprintf(stderr, "aesmux %s: %s\n", command_.c_str(), message.c_str());
    std::fprintf(stderr, "Try 'aesmux %s --help'.\n", command_.c_str());
  } else {
    // The hint once, after the first error.
    std::fprintf(stderr, "aesmux %s: %s\n", command_.c_str(), message.c_str());
  }
  ok_ = false;
}

bool CommandLine::Flag(std::string_view name) const {
  return std::any_of(given_.begin(), given_.end(),
                     [&](const auto &given) { return given.first == name; });
}

std::optional<std::string> CommandLine::Value(std::string_view name) const {
  for (auto it = given_.rbegin(); it != given_.rend(); ++it) {
    if (it->first == name) return it->second;
  }
  return std::nullopt;
}

bool CommandLine::Integer(std::string_view name, int64_t min, int64_t max,
                          int *out) {
  const std::optional<std::string> text = Value(name);
  if (!text) return true;
  std::string error;
  const std::optional<int64_t> value = ParseInteger(*text, min, max, &error);
  if (!value) {
    Error(std::string(name) + ": " + error);
    return false;
  }
  *out = static_cast<int>(*value);
  return true;
}

bool CommandLine::Real(std::string_view name, double min, double max,
                       double *out) {
  const std::optional<std::string> text = Value(name);
  if (!text) return true;
  std::string error;
  const std::optional<double> value = ParseReal(*text, min, max, &error);
  if (!value) {
    Error(std::string(name) + ": " + error);
    return false;
  }
  *out = *value;
  return true;
}

}  // namespace aesmux::cli
