// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
// The files `aesmux calibrate` writes (provider/cli/output_file.h): never
// through a symbolic link planted at the name, never over anything but a
// regular file, never half-written, nothing left behind.
#include "provider/cli/output_file.h"

#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace aesmux::cli {
namespace {

using ::testing::HasSubstr;

class OutputFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char templ[] = "/tmp/aesmux-output-file-XXXXXX";
    ASSERT_NE(mkdtemp(templ), nullptr);
    dir_ = templ;
    old_umask_ = umask(022);
  }
  void TearDown() override {
    umask(old_umask_);
    std::string command = "rm -rf '" + dir_ + "'";
    EXPECT_EQ(std::system(command.c_str()), 0);
  }

  std::string Path(const std::string &name) const { return dir_ + "/" + name; }

  static std::string Read(const std::string &path) {
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
  }

  static void Put(const std::string &path, const std::string &text) {
    std::ofstream(path) << text;
  }

  // The names in the directory, sorted.
  std::vector<std::string> Names() const {
    std::vector<std::string> names;
    DIR *d = opendir(dir_.c_str());
    while (const dirent *e = readdir(d)) {
      const std::string name = e->d_name;
      if (name != "." && name != "..") names.push_back(name);
    }
    closedir(d);
    std::sort(names.begin(), names.end());
    return names;
  }

  static mode_t ModeOf(const std::string &path) {
    struct stat st {};
    EXPECT_EQ(lstat(path.c_str(), &st), 0) << path;
    return st.st_mode;
  }

  std::string dir_;
  mode_t old_umask_ = 0;
};

TEST_F(OutputFileTest, WritesANewFileWithTheUmasksMode) {
  std::string error;
  ASSERT_TRUE(WriteFileReplacing(Path("cal.conf"), "a = 1\n", &error))
      << error;
  EXPECT_EQ(Read(Path("cal.conf")), "a = 1\n");
  EXPECT_EQ(ModeOf(Path("cal.conf")) & 07777, 0644u);
  EXPECT_EQ(Names(), std::vector<std::string>{"cal.conf"});
}

TEST_F(OutputFileTest, ReplacesARegularFileKeepingItsMode) {
  Put(Path("cal.conf"), "old and longer\n");
  ASSERT_EQ(chmod(Path("cal.conf").c_str(), 0640), 0);
  std::string error;
  ASSERT_TRUE(WriteFileReplacing(Path("cal.conf"), "new\n", &error)) << error;
  EXPECT_EQ(Read(Path("cal.conf")), "new\n");
  EXPECT_EQ(ModeOf(Path("cal.conf")) & 07777, 0640u);
  EXPECT_EQ(Names(), std::vector<std::string>{"cal.conf"});
}

TEST_F(OutputFileTest, NeverWritesThroughAPlantedSymlink) {
  Put(Path("victim"), "precious\n");
  ASSERT_EQ(symlink(Path("victim").c_str(), Path("cal.conf").c_str()), 0);
  ASSERT_EQ(symlink(Path("absent").c_str(), Path("cal.svg").c_str()), 0);
  for (const char *name : {"cal.conf", "cal.svg"}) {
    std::string error;
    EXPECT_FALSE(WriteFileReplacing(Path(name), "x\n", &error)) << name;
    EXPECT_THAT(error, HasSubstr("is a symbolic link: not replaced"));
    EXPECT_THAT(CheckWritable(Path(name)),
                HasSubstr("is a symbolic link: not replaced"));
    EXPECT_TRUE(S_ISLNK(ModeOf(Path(name)))) << name;
  }
  EXPECT_EQ(Read(Path("victim")), "precious\n");
  EXPECT_EQ(Names(),
            (std::vector<std::string>{"cal.conf", "cal.svg", "victim"}));
}

TEST_F(OutputFileTest, ReplacesALinkPlantedAfterTheCheckNotItsTarget) {
  Put(Path("victim"), "precious\n");
  std::string error;
  std::unique_ptr<OutputFile> file = OutputFile::Create(Path("cal.conf"), &error);
  ASSERT_NE(file, nullptr) << error;
  ASSERT_TRUE(file->Write("mine\n", &error)) << error;
  // Between the check and the rename, another user plants a link.
  ASSERT_EQ(symlink(Path("victim").c_str(), Path("cal.conf").c_str()), 0);
  ASSERT_TRUE(file->Commit(&error)) << error;
  EXPECT_EQ(Read(Path("victim")), "precious\n");
  EXPECT_TRUE(S_ISREG(ModeOf(Path("cal.conf"))));
  EXPECT_EQ(Read(Path("cal.conf")), "mine\n");
}

TEST_F(OutputFileTest, RefusesEveryNonRegularFile) {
  ASSERT_EQ(mkfifo(Path("fifo").c_str(), 0600), 0);
  ASSERT_EQ(mkdir(Path("dir").c_str(), 0700), 0);
  for (const auto &[name, kind] :
       std::vector<std::pair<std::string, std::string>>{
           {"fifo", "is a FIFO"}, {"dir", "is a directory"}}) {
    std::string error;
    EXPECT_FALSE(WriteFileReplacing(Path(name), "x\n", &error)) << name;
    EXPECT_EQ(error, Path(name) + ": " + kind + ": not replaced");
  }
  std::string error;
  EXPECT_FALSE(WriteFileReplacing("/dev/null", "x\n", &error));
  EXPECT_EQ(error, "/dev/null: is a device: not replaced");
  EXPECT_TRUE(S_ISFIFO(ModeOf(Path("fifo"))));
  EXPECT_TRUE(S_ISDIR(ModeOf(Path("dir"))));
  EXPECT_EQ(Names(), (std::vector<std::string>{"dir", "fifo"}));
}

TEST_F(OutputFileTest, LeavesNothingBehindUnlessCommitted) {
  Put(Path("cal.conf"), "kept\n");
  {
    std::string error;
    std::unique_ptr<OutputFile> file =
        OutputFile::Create(Path("cal.conf"), &error);
    ASSERT_NE(file, nullptr) << error;
    ASSERT_TRUE(file->Write("half", &error));
    EXPECT_EQ(Names().size(), 2u);  // the target and the temporary file
  }
  EXPECT_EQ(Names(), std::vector<std::string>{"cal.conf"});
  EXPECT_EQ(Read(Path("cal.conf")), "kept\n");
  EXPECT_EQ(CheckWritable(Path("new.svg")), "");
  EXPECT_EQ(Names(), std::vector<std::string>{"cal.conf"});
}

TEST_F(OutputFileTest, NamesWhatCannotBeWritten) {
  EXPECT_EQ(CheckWritable(Path("no/such/dir/cal.conf")),
            Path("no/such/dir") + ": No such file or directory");
  EXPECT_THAT(CheckWritable(dir_ + "/"), HasSubstr("not a file name"));
  EXPECT_THAT(CheckWritable(""), HasSubstr("not a file name"));
  if (geteuid() != 0) {
    ASSERT_EQ(chmod(dir_.c_str(), 0500), 0);
    EXPECT_THAT(CheckWritable(Path("cal.conf")),
                HasSubstr("Permission denied"));
    ASSERT_EQ(chmod(dir_.c_str(), 0700), 0);
  }
}

}  // namespace
}  // namespace aesmux::cli
