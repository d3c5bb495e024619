// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
#include "provider/route/calibration_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>

#include "provider/route/excerpt.h"

namespace aesmux::route {
namespace {

std::string_view Trim(std::string_view text) {
  constexpr std::string_view kSpace = " \t\r";
  const size_t first = text.find_first_not_of(kSpace);
  if (first == std::string_view::npos) return {};
  return text.substr(first, text.find_last_not_of(kSpace) - first + 1);
}

// Whether a user other than root and this process's could have made an
// entry in the directory of `path`.
bool OthersCanWriteDirectoryOf(const std::string &path) {
  const size_t slash = path.rfind('/');
  const std::string directory = slash == std::string::npos ? "."
                                : slash == 0               ? "/"
                                                           : path.substr(0, slash);
  struct stat st;
  if (stat(directory.c_str(), &st) != 0) return false;  // open says why
  return (st.st_mode & (S_IWGRP | S_IWOTH)) != 0 ||
         (st.st_uid != 0 && st.st_uid != geteuid());
}

std::string_view KindOf(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

class Descriptor {
 public:
  explicit Descriptor(int fd) : fd_(fd) {}
  ~Descriptor() {
    if (fd_ >= 0) close(fd_);
  }
  Descriptor(const Descriptor &) = delete;
  Descriptor &operator=(const Descriptor &) = delete;
  int get() const { return fd_; }

 private:
  int fd_;
};

}  // namespace

std::optional<std::string> ReadRegularFile(const std::string &path,
                                           size_t max_bytes,
                                           std::string *error) {
  const bool no_links = OthersCanWriteDirectoryOf(path);
  const Descriptor file(open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY |
                                               O_NONBLOCK |
                                               (no_links ? O_NOFOLLOW : 0)));
  if (file.get() < 0) {
    *error = no_links && errno == ELOOP
                 ? "a symbolic link in a directory that other users can "
                   "write: not followed"
                 : "cannot open: " + std::string(std::strerror(errno));
    return std::nullopt;
  }
  struct stat st;
  if (fstat(file.get(), &st) != 0) {
    *error = "cannot read: " + std::string(std::strerror(errno));
    return std::nullopt;
  }
  if (!S_ISREG(st.st_mode)) {
    *error = "not a regular file but " + std::string(KindOf(st.st_mode));
    return std::nullopt;
  }
  auto too_large = [&] {
    *error = "more than " + std::to_string(max_bytes) + " bytes: not read";
    return std::nullopt;
  };
  if (static_cast<uint64_t>(st.st_size) > max_bytes) return too_large();
  // One byte more than fstat says, to see the end; more if it has grown,
  // up to one byte more than the most allowed.
  std::string contents(static_cast<size_t>(st.st_size) + 1, '\0');
  size_t used = 0;
  for (;;) {
    if (used == contents.size()) {
      if (used > max_bytes) return too_large();
      contents.resize(std::min(2 * used, max_bytes + 1));
    }
    const ssize_t n = read(file.get(), contents.data() + used,
                           contents.size() - used);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      *error = "cannot read: " + std::string(std::strerror(errno));
      return std::nullopt;
    }
    if (n == 0) break;
    used += static_cast<size_t>(n);
  }
  contents.resize(used);
  return contents;
}

std::optional<Calibration> ReadCalibration(
    const std::string &path, bool (*may_set)(std::string_view key),
    std::string *error) {
  const std::optional<std::string> contents =
      ReadRegularFile(path, kMaxCalibrationBytes, error);
  if (!contents) return std::nullopt;
  return ParseCalibration(*contents, Escaped(path), may_set, error);
}

std::optional<Calibration> ParseCalibration(
    std::string_view text, std::string_view path,
    bool (*may_set)(std::string_view key), std::string *error) {
  Calibration calibration;
  std::string_view rest = text;
  for (int number = 1; !rest.empty(); ++number) {
    const size_t newline = rest.find('\n');
    const std::string_view line = rest.substr(0, newline);
    rest.remove_prefix(newline == std::string_view::npos ? rest.size()
                                                         : newline + 1);
    const std::string_view content = Trim(line);
    if (content.empty() || content.front() == '#') continue;
    const std::string where = std::string(path) + ":" + std::to_string(number);
    const size_t equals = content.find('=');
    const std::string_view key = Trim(content.substr(0, equals));
    if (equals == std::string_view::npos || key.empty()) {
      *error = where + ": expected 'key = value', got " + Excerpt(line);
      return std::nullopt;
    }
    if (!may_set(key)) {
      *error = where + ": " + Excerpt(key) +
               " is not a threshold a calibration file may set";
      return std::nullopt;
    }
    const auto [it, added] = calibration.try_emplace(
        std::string(key),
        CalibrationEntry{std::string(Trim(content.substr(equals + 1))), where});
    if (!added) {
      *error = where + ": '" + it->first + "' again (first at " +
               it->second.source + ")";
      return std::nullopt;
    }
  }
  return calibration;
}

}  // namespace aesmux::route
