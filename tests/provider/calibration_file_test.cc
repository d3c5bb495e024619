// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
// The calibration file's reader: only a regular file of at most 64 KiB is
// read, never blocking (a FIFO, a device, a directory, a huge file are
// refused at once, unread), a link is not followed in a directory other
// users can write, and a message quotes at most an escaped excerpt of a
// line.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <grp.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <string>
#include <string_view>

#include "provider/route/calibration_file.h"
#include "provider/route/excerpt.h"
#include "tests/support/child.h"

namespace aesmux::route {
namespace {

bool AnyKey(std::string_view) { return true; }

// A directory of its own under /tmp, with `mode`, removed with what it
// holds when the test ends.
class TempDir {
 public:
  explicit TempDir(mode_t mode = 0700) {
    char path[] = "/tmp/aesmux-calfile-XXXXXX";
    EXPECT_NE(mkdtemp(path), nullptr);
    path_ = path;
    EXPECT_EQ(chmod(path, mode), 0);
  }
  ~TempDir() {
    const std::string command = "rm -rf '" + path_ + "'";
    EXPECT_EQ(std::system(command.c_str()), 0);
  }
  std::string File(std::string_view name, std::string_view text) const {
    const std::string path = path_ + "/" + std::string(name);
    std::ofstream(path) << text;
    return path;
  }
  const std::string &path() const { return path_; }

 private:
  std::string path_;
};

std::string ReadError(const std::string &path) {
  std::string error;
  EXPECT_FALSE(ReadCalibration(path, AnyKey, &error)) << path;
  return error;
}

TEST(ReadCalibration, ReadsARegularFile) {
  const TempDir dir;
  const std::string path =
      dir.File("cal.conf", "# measured\ncbc.mb_min_len = 512\n");
  std::string error;
  const std::optional<Calibration> read = ReadCalibration(path, AnyKey, &error);
  ASSERT_TRUE(read) << error;
  EXPECT_EQ(read->at("cbc.mb_min_len").value, "512");
  EXPECT_EQ(read->at("cbc.mb_min_len").source, path + ":2");
}

// Whether ReadCalibration refuses `path` with `expected`, in a child with
// little memory that is killed if it hangs: a reader without bounds would
// wait for a FIFO's writer forever and read /dev/zero until memory ran out.
std::string RefusedInChild(const std::string &path,
                           const std::string &expected) {
  return test::RunInChild(
      [&] {
#if !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
        // (The sanitizers reserve terabytes of address space.)
        const rlimit memory = {1u << 30, 1u << 30};
        if (setrlimit(RLIMIT_AS, &memory) != 0) return 3;
#endif
        std::string error;
        if (ReadCalibration(path, AnyKey, &error)) return 1;
        if (error != expected) {
          std::fprintf(stderr, "%s: %s\n", path.c_str(), error.c_str());
          return 2;
        }
        return 0;
      },
      std::chrono::seconds(20));
}

TEST(ReadCalibration, AFifoIsRefusedWithoutWaitingForAWriter) {
  const TempDir dir;
  const std::string fifo = dir.path() + "/cal.fifo";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_EQ(RefusedInChild(fifo, "not a regular file but a FIFO"), "");
}

TEST(ReadCalibration, DevicesAndDirectoriesAreRefusedUnread) {
  for (const char *device : {"/dev/zero", "/dev/urandom", "/dev/null"}) {
    EXPECT_EQ(RefusedInChild(device, "not a regular file but a character device"),
              "")
        << device;
  }
  const TempDir dir;
  EXPECT_EQ(ReadError(dir.path()), "not a regular file but a directory");
  EXPECT_EQ(ReadError(dir.path() + "/none").rfind("cannot open: No such file", 0),
            0u);
}

TEST(ReadCalibration, AFileOfMoreThan64KibIsRefusedUnread) {
  const TempDir dir;
  // 64 MiB on one line, sparse: refused by its size, never read.
  const std::string huge = dir.File("huge.conf", "");
  ASSERT_EQ(truncate(huge.c_str(), 64 << 20), 0);
  EXPECT_EQ(ReadError(huge), "more than 65536 bytes: not read");

  std::string text(kMaxCalibrationBytes, '#');
  text.back() = '\n';
  const std::string most = dir.File("most.conf", text);
  std::string error;
  EXPECT_TRUE(ReadCalibration(most, AnyKey, &error)) << error;
  const std::string over = dir.File("over.conf", text + "#");
  EXPECT_EQ(ReadError(over), "more than 65536 bytes: not read");
}

// The operator's own link is followed; one in a directory that others can
// write (where anyone could have planted it) is not.
TEST(ReadCalibration, FollowsALinkOnlyInADirectoryOthersCannotWrite) {
  const TempDir target_dir;
  const std::string target =
      target_dir.File("target.conf", "ctr.fallback_max_len = 64\n");
  const TempDir own(0755);
  const std::string own_link = own.path() + "/cal.conf";
  ASSERT_EQ(symlink(target.c_str(), own_link.c_str()), 0);
  std::string error;
  EXPECT_TRUE(ReadCalibration(own_link, AnyKey, &error)) << error;

  for (const mode_t mode : {0777, 0775, 01777}) {
    const TempDir shared(mode);
    const std::string link = shared.path() + "/cal.conf";
    ASSERT_EQ(symlink(target.c_str(), link.c_str()), 0);
    EXPECT_EQ(ReadError(link),
              "a symbolic link in a directory that other users can write: "
              "not followed")
        << std::oct << mode;
    // A regular file there is read.
    const std::string file = shared.File("plain.conf", "x = 1\n");
    EXPECT_TRUE(ReadCalibration(file, AnyKey, &error)) << error;
  }
}

// A file the program's user may not read (mode 600, another owner).
TEST(ReadCalibration, AFileThisUserMayNotReadSaysSo) {
  const TempDir dir(0755);
  const std::string path = dir.File("cal.conf", "cbc.mb_min_len = 512\n");
  ASSERT_EQ(chmod(path.c_str(), 0600), 0);
  const std::string result = test::RunInChild([&] {
    // Root reads any file: be nobody; another user takes its own read
    // permission away.
    if (geteuid() == 0) {
      if (setgroups(0, nullptr) != 0 || setgid(65534) != 0 ||
          setuid(65534) != 0) {
        return 3;
      }
    } else if (chmod(path.c_str(), 0) != 0) {
      return 4;
    }
    std::string error;
    if (ReadCalibration(path, AnyKey, &error)) return 1;
    return error == "cannot open: Permission denied" ? 0 : 2;
  });
  EXPECT_EQ(result, "");
}

TEST(ParseCalibration, QuotesAtMostAnEscapedExcerptOfALine) {
  std::string error;
  const std::string line(10000, 'x');
  EXPECT_FALSE(ParseCalibration("# ok\n" + line + "\n", "f", AnyKey, &error));
  EXPECT_EQ(error, "f:2: expected 'key = value', got '" +
                       std::string(kExcerptBytes, 'x') + "...' (10000 bytes)");
  EXPECT_FALSE(ParseCalibration("\x1b[2J\x07 here\n", "f", AnyKey, &error));
  EXPECT_EQ(error, "f:1: expected 'key = value', got '\\x1b[2J\\x07 here'");
  // A key is quoted the same way.
  EXPECT_FALSE(ParseCalibration(std::string(500, 'k') + " = 1\n", "f",
                                [](std::string_view) { return false; },
                                &error));
  EXPECT_LT(error.size(), 150u) << error;
}

TEST(Excerpt, EscapesWhatIsNotPrintableAsciiAndShortensLongText) {
  EXPECT_EQ(Excerpt(""), "''");
  EXPECT_EQ(Excerpt("16K"), "'16K'");
  EXPECT_EQ(Excerpt(std::string_view("a\0b", 3)), "'a\\x00b'");
  EXPECT_EQ(Excerpt("it's \\ \xff\n"), "'it\\x27s \\x5c \\xff\\x0a'");
  EXPECT_EQ(Excerpt(std::string(kExcerptBytes, 'z')),
            "'" + std::string(kExcerptBytes, 'z') + "'");
  EXPECT_EQ(Excerpt(std::string(kExcerptBytes + 1, 'z')),
            "'" + std::string(kExcerptBytes, 'z') + "...' (49 bytes)");
}

}  // namespace
}  // namespace aesmux::route
