// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
// A calibration file: "key = value" lines of thresholds, '#' comments,
// as `aesmux calibrate` writes them (docs/operating.md, "Calibrating"). What the
// values mean and which keys are thresholds is the settings' business
// (settings.cc); this reads the lines and says where each value stands.
#ifndef AESMUX_PROVIDER_ROUTE_CALIBRATION_FILE_H_
#define AESMUX_PROVIDER_ROUTE_CALIBRATION_FILE_H_

// Layers (DEVELOPERS.md): only what links aesmux_route includes this.
#if defined(AESMUX_LAYER) && !defined(AESMUX_SEES_route)
#error "provider/route/calibration_file.h belongs to a layer above the one that includes it"
#endif

#include <cstddef>
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

// A calibration file is small (`aesmux calibrate` writes a few KiB): a
// larger one is refused unread.
inline constexpr size_t kMaxCalibrationBytes = 64 * 1024;

// The whole of the file `path`, or nullopt with why not in `error`: one
// that cannot be opened, is not a regular file (a FIFO would block, a
// device such as /dev/zero never ends) or holds more than `max_bytes`
// (refused unread, or as soon as it is seen to have grown past them).
// Never blocks: opened with O_NONBLOCK.
//
// The path is the operator's (openssl.cnf, or the environment, which
// setuid programs ignore), so a symbolic link is followed, as the operator
// may have made it; but not one in a directory that another user could
// have planted it in (writable by its group or by others, or owned by
// someone other than root or this process's user): that is refused.
std::optional<std::string> ReadRegularFile(const std::string &path,
                                           size_t max_bytes,
                                           std::string *error);

// Reads `path` (ReadRegularFile, at most kMaxCalibrationBytes), whose every
// key must pass `may_set`; on failure returns nullopt with what is wrong,
// and where, in `error`: what ReadRegularFile or ParseCalibration finds.
std::optional<Calibration> ReadCalibration(
    const std::string &path, bool (*may_set)(std::string_view key),
    std::string *error);

// Parses the text of a calibration file (`path` names it in messages and
// in each entry's `source`; ReadCalibration gives it Escaped()):
// '#' comments, blank lines and "key = value" lines, each key passing
// `may_set` and given once. On failure returns nullopt with the line and
// what is wrong with it in `error`, quoting at most an excerpt of it
// (excerpt.h).
std::optional<Calibration> ParseCalibration(
    std::string_view text, std::string_view path,
    bool (*may_set)(std::string_view key), std::string *error);

}  // namespace aesmux::route

#endif  // AESMUX_PROVIDER_ROUTE_CALIBRATION_FILE_H_
