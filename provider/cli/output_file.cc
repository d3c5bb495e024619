// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
#include "provider/cli/output_file.h"

#include <fcntl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>

namespace aesmux::cli {
namespace {

std::string Reason(const std::string &path, const char *what) {
  return path + ": " + what;
}

std::string Errno(const std::string &path) {
  return Reason(path, std::strerror(errno));
}

// What a non-regular file is, for the refusal.
const char *KindOf(mode_t mode) {
  if (S_ISLNK(mode)) return "is a symbolic link";
  if (S_ISDIR(mode)) return "is a directory";
  if (S_ISFIFO(mode)) return "is a FIFO";
  if (S_ISCHR(mode) || S_ISBLK(mode)) return "is a device";
  if (S_ISSOCK(mode)) return "is a socket";
  return "is not a regular file";
}

// The process's umask (read by setting it, and set back at once).
mode_t CurrentUmask() {
  const mode_t mask = umask(022);
  umask(mask);
  return mask;
}

}  // namespace

std::unique_ptr<OutputFile> OutputFile::Create(const std::string &path,
                                               std::string *error) {
  std::unique_ptr<OutputFile> file(new OutputFile);
  file->path_ = path;
  if (path.empty() || path.back() == '/') {
    *error = Reason(path.empty() ? "''" : path, "not a file name");
    return nullptr;
  }
  const size_t slash = path.rfind('/');
  const std::string dir = slash == std::string::npos ? "."
                          : slash == 0               ? "/"
                                                     : path.substr(0, slash);
  file->base_name_ =
      slash == std::string::npos ? path : path.substr(slash + 1);
  if (file->base_name_ == "." || file->base_name_ == "..") {
    *error = Reason(path, "not a file name");
    return nullptr;
  }
  file->dir_fd_ = open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (file->dir_fd_ < 0) {
    *error = Errno(dir);
    return nullptr;
  }
  mode_t mode = 0666 & ~CurrentUmask();
  struct stat st {};
  if (fstatat(file->dir_fd_, file->base_name_.c_str(), &st,
              AT_SYMLINK_NOFOLLOW) == 0) {
    if (!S_ISREG(st.st_mode)) {
      *error = Reason(path, KindOf(st.st_mode)) + ": not replaced";
      return nullptr;
    }
    mode = st.st_mode & 0777;  // never set-id bits
  } else if (errno != ENOENT) {
    *error = Errno(path);
    return nullptr;
  }
  // ".<name>.<random>": O_EXCL fails rather than open what another user
  // put there (a link included), so a taken name is tried again.
  for (int attempt = 0; attempt < 100; ++attempt) {
    uint64_t random = 0;
    if (getrandom(&random, sizeof(random), 0) != sizeof(random)) {
      random = static_cast<uint64_t>(getpid()) * 1000003u + attempt;
    }
    char suffix[24];
    std::snprintf(suffix, sizeof(suffix), ".%016llx",
                  static_cast<unsigned long long>(random));
    file->temp_name_ = "." + file->base_name_ + suffix;
    file->fd_ = openat(file->dir_fd_, file->temp_name_.c_str(),
                       O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                       mode);
    if (file->fd_ >= 0 || errno != EEXIST) break;
  }
  if (file->fd_ < 0) {
    *error = Reason(path, std::strerror(errno));
    file->temp_name_.clear();
    return nullptr;
  }
  // The umask applies to openat's mode; a replaced file's bits are kept.
  if (fchmod(file->fd_, mode) != 0) {
    *error = Errno(path);
    return nullptr;
  }
  return file;
}

OutputFile::~OutputFile() {
  if (fd_ >= 0) close(fd_);
  if (!committed_ && !temp_name_.empty()) {
    unlinkat(dir_fd_, temp_name_.c_str(), 0);
  }
  if (dir_fd_ >= 0) close(dir_fd_);
}

bool OutputFile::Write(std::string_view data, std::string *error) {
  while (!data.empty()) {
    const ssize_t n = write(fd_, data.data(), data.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      *error = Errno(path_);
      return false;
    }
    data.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

bool OutputFile::Commit(std::string *error) {
  if (fsync(fd_) != 0 ||
      renameat(dir_fd_, temp_name_.c_str(), dir_fd_, base_name_.c_str()) !=
          0) {
    *error = Errno(path_);
    return false;
  }
  committed_ = true;
  fsync(dir_fd_);  // the rename itself on disk; nothing to do if it fails
  return true;
}

std::string CheckWritable(const std::string &path) {
  std::string error;
  return OutputFile::Create(path, &error) != nullptr ? "" : error;
}

bool WriteFileReplacing(const std::string &path, std::string_view contents,
                        std::string *error) {
  std::unique_ptr<OutputFile> file = OutputFile::Create(path, error);
  return file != nullptr && file->Write(contents, error) &&
         file->Commit(error);
}

}  // namespace aesmux::cli
