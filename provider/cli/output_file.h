// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
// The files the aesmux command writes (calibrate's thresholds and plots),
// written so that nobody else's file is touched and nobody sees half of
// one: the contents go to a new file created exclusively (O_CREAT | O_EXCL
// | O_NOFOLLOW) in the target's directory, then renamed over the target.
// A symbolic link planted at the target's name (in /tmp, say) is never
// written through; the target is refused unless it is absent or a regular
// file, so that a symbolic link, directory, FIFO or device keeps what it
// is. A replaced file keeps its permission bits; a new one gets 0666 less
// the umask.
#ifndef AESMUX_PROVIDER_CLI_OUTPUT_FILE_H_
#define AESMUX_PROVIDER_CLI_OUTPUT_FILE_H_

#include <memory>
#include <string>
#include <string_view>

namespace aesmux::cli {

class OutputFile {
 public:
  // Creates the temporary file next to `path`; null, with the reason
  // ("<path>: is a symbolic link: not replaced"), if `path` may not be
  // replaced or the directory refuses.
  static std::unique_ptr<OutputFile> Create(const std::string &path,
                                            std::string *error);
  // Removes the temporary file unless Commit() renamed it.
  ~OutputFile();
  OutputFile(const OutputFile &) = delete;
  OutputFile &operator=(const OutputFile &) = delete;

  // The temporary file, open for reading and writing (a child process may
  // write to it, or read it back from offset 0).
  int fd() const { return fd_; }

  bool Write(std::string_view data, std::string *error);
  // Flushes the file to disk and renames it over the target. False, with
  // the reason, if either fails (the target is then untouched).
  bool Commit(std::string *error);

 private:
  OutputFile() = default;

  std::string path_;       // the target, as given
  std::string temp_name_;  // in the directory of dir_fd_
  std::string base_name_;  // the target's name in that directory
  int dir_fd_ = -1;
  int fd_ = -1;
  bool committed_ = false;
};

// Whether `path` can be written as above (it is created and removed again),
// so that a long run can refuse before it starts. "" or the reason.
std::string CheckWritable(const std::string &path);

// Writes `contents` to `path` through an OutputFile.
bool WriteFileReplacing(const std::string &path, std::string_view contents,
                        std::string *error);

}  // namespace aesmux::cli

#endif  // AESMUX_PROVIDER_CLI_OUTPUT_FILE_H_
