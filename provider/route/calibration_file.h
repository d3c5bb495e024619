// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
// A calibration file: "key = value" lines of thresholds, '#' comments,
// as `aesmux calibrate` writes them (README.md, "Calibration"). What the
// values mean and which keys are thresholds is the settings' business
// (settings.cc); this reads the lines and says where each value stands.
#ifndef AESMUX_PROVIDER_ROUTE_CALIBRATION_FILE_H_
#define AESMUX_PROVIDER_ROUTE_CALIBRATION_FILE_H_

// Layers (DEVELOPERS.md): only what links aesmux_route includes this.
#if defined(AESMUX_LAYER) && !defined(AESMUX_SEES_route)
#error "provider/route/calibration_file.h belongs to a layer above the one that includes it"
#endif

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace aesmux::route {

// A value from the calibration file and where it stands.
struct CalibrationEntry {
  std::string value;
  std::string source;  // "<file>:<line>"
};
using Calibration = std::map<std::string, CalibrationEntry, std::less<>>;

// Reads `path`, whose every key must pass `may_set`; on failure returns
// nullopt with what is wrong, and where, in `error`: an unreadable file, a
// line that is not "key = value", a key `may_set` refuses, a key twice.
std::optional<Calibration> ReadCalibration(
    const std::string &path, bool (*may_set)(std::string_view key),
    std::string *error);

}  // namespace aesmux::route

#endif  // AESMUX_PROVIDER_ROUTE_CALIBRATION_FILE_H_
