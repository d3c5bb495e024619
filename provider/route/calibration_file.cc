// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
#include "provider/route/calibration_file.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>

namespace aesmux::route {
namespace {

std::string_view Trim(std::string_view text) {
  constexpr std::string_view kSpace = " \t\r";
  const size_t first = text.find_first_not_of(kSpace);
  if (first == std::string_view::npos) return {};
  return text.substr(first, text.find_last_not_of(kSpace) - first + 1);
}

}  // namespace

std::optional<Calibration> ReadCalibration(
    const std::string &path, bool (*may_set)(std::string_view key),
    std::string *error) {
  // C stdio, not std::ifstream: an iostream drew libstdc++'s locale and
  // wide-character code into the module, and with it about a hundred
  // symbols the dynamic loader binds in every process that loads aesmux
  // (BENCHMARKS.md, "Start-up").
  const std::unique_ptr<std::FILE, int (*)(std::FILE *)> file(
      std::fopen(path.c_str(), "re"), &std::fclose);
  std::string contents;
  char chunk[4096];
  for (size_t n; file != nullptr &&
                 (n = std::fread(chunk, 1, sizeof(chunk), file.get())) > 0;) {
    contents.append(chunk, n);
  }
  if (file == nullptr || std::ferror(file.get())) {
    *error = "cannot read: " + std::string(std::strerror(errno));
    return std::nullopt;
  }
  Calibration calibration;
  std::string_view rest = contents;
  for (int number = 1; !rest.empty(); ++number) {
    const size_t newline = rest.find('\n');
    const std::string_view line = rest.substr(0, newline);
    rest.remove_prefix(newline == std::string_view::npos ? rest.size()
                                                         : newline + 1);
    const std::string where = path + ":" + std::to_string(number);
    const std::string_view text = Trim(line);
    if (text.empty() || text.front() == '#') continue;
    const size_t equals = text.find('=');
    const std::string_view key = Trim(text.substr(0, equals));
    if (equals == std::string_view::npos || key.empty()) {
      *error = where + ": expected 'key = value', got '" + std::string(line) +
               "'";
      return std::nullopt;
    }
    if (!may_set(key)) {
      *error = where + ": '" + std::string(key) +
               "' is not a threshold a calibration file may set";
      return std::nullopt;
    }
    const auto [it, added] = calibration.try_emplace(
        std::string(key),
        CalibrationEntry{std::string(Trim(text.substr(equals + 1))), where});
    if (!added) {
      *error = where + ": '" + std::string(key) + "' again (first at " +
               it->second.source + ")";
      return std::nullopt;
    }
  }
  return calibration;
}


}  // namespace aesmux::route
