// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
// The statistics files (provider/core/stats_file.h, core/stats.h): the
// strict parser, reading a file of a directory others may write, folding
// exited processes into a summary without losing or doubling a count, and
// the provider's writer end to end in forked children.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <openssl/evp.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <deque>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "provider/core/stats_file.h"
#include "tests/support/bytes.h"
#include "tests/support/child.h"
#include "tests/support/provider_env.h"

namespace aesmux::test {
namespace {

namespace fs = std::filesystem;
using core::StatsFileView;
using core::StatsOpen;

// A fresh directory, removed with what is in it.
class TempDir {
 public:
  TempDir() {
    char path[] = "/tmp/aesmux-stats-XXXXXX";
    path_ = mkdtemp(path);
  }
  ~TempDir() { fs::remove_all(path_); }
  const std::string &path() const { return path_; }
  std::string operator/(const std::string &name) const {
    return path_ + "/" + name;
  }
  // The names in it, sorted.
  std::vector<std::string> Names() const {
    std::vector<std::string> names;
    for (const auto &entry : fs::directory_iterator(path_)) {
      names.push_back(entry.path().filename());
    }
    std::sort(names.begin(), names.end());
    return names;
  }

 private:
  std::string path_;
};

void WriteText(const std::string &path, const std::string &text) {
  std::ofstream(path, std::ios::binary) << text;
}

std::string ReadText(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)),
                     std::istreambuf_iterator<char>());
}

// A process file's text for `process` with `requests` AES-128-CBC simd
// requests of 16 bytes and one note.
std::string ProcessFile(const core::StatsProcess &process, uint64_t requests) {
  core::StatsSnapshot counts;
  counts.counters[static_cast<size_t>(core::Alg::kAes128Cbc)]
                 [static_cast<size_t>(core::Path::kSimd)] = {requests,
                                                             16 * requests};
  std::vector<char> buffer(core::kMaxStatsFileBytes);
  core::StatsText text{buffer.data(), buffer.size()};
  core::FormatProcessFile(process, counts, "afalg cbc: off (off)\n", text);
  EXPECT_FALSE(text.overflow);
  return std::string(buffer.data(), text.used);
}

// A view's notes point into the text it was parsed from: each text is kept
// for the test program's life, so that a view of a temporary stays valid.
std::unique_ptr<StatsFileView> Parse(const std::string &text,
                                     core::StatsParseError *error = nullptr) {
  static std::deque<std::string> texts;
  const std::string &kept = texts.emplace_back(text);
  auto view = std::make_unique<StatsFileView>();
  core::StatsParseError ignored;
  if (!core::ParseStatsFile(kept, view.get(), error ? error : &ignored)) {
    return nullptr;
  }
  return view;
}

uint64_t CbcRequests(const StatsFileView &view) {
  return view.counts.at(core::Alg::kAes128Cbc, core::Path::kSimd).requests;
}

// The pid of a process that has exited (and been reaped).
pid_t GonePid() {
  const pid_t child = fork();
  if (child == 0) _exit(0);
  waitpid(child, nullptr, 0);
  return child;
}

// ---------------------------------------------------------------------
// The format and its parser.

TEST(StatsFormat, AProcessFileParsesBackToWhatWasWritten) {
  const core::StatsProcess self = core::ThisStatsProcess();
  const std::unique_ptr<StatsFileView> view = Parse(ProcessFile(self, 7));
  ASSERT_NE(view, nullptr);
  EXPECT_FALSE(view->summary);
  EXPECT_EQ(view->processes, 1u);
  EXPECT_EQ(view->process.pid, self.pid);
  EXPECT_EQ(view->process.start, self.start);
  EXPECT_STREQ(view->process.boot.data(), self.boot.data());
  EXPECT_EQ(view->process.pidns, self.pidns);
  EXPECT_EQ(CbcRequests(*view), 7u);
  ASSERT_EQ(view->num_notes, 1u);
  EXPECT_EQ(view->notes[0].text, "afalg cbc: off (off)");
}

// Each of these is refused, naming its line; none is read as numbers it
// does not hold.
TEST(StatsFormat, AnythingButAStatisticsFileIsRefusedWithItsLine) {
  const std::string head = "aesmux-stats 2\nprocess 12 0 - 0\n";
  const std::string summary = "aesmux-stats 2\nsummary 3\n";
  const struct {
    std::string text;
    size_t line;
  } cases[] = {
      {head + "AES-128-CBC simd -1 16\n", 3},
      {head + "AES-128-CBC simd +1 16\n", 3},
      {head + "AES-128-CBC simd 01 16\n", 3},
      {head + "AES-128-CBC simd 1x 16\n", 3},
      {head + "AES-128-CBC simd 1 18446744073709551616\n", 3},
      {head + "AES-128-CBC simd 1 99999999999999999999999\n", 3},
      {head + "AES-128-CBC  simd 1 16\n", 3},
      {head + "AES-128-CBC\tsimd 1 16\n", 3},
      {head + "AES-128-CBC simd 1 16 \n", 3},
      {head + "AES-128-CBC simd 1\n", 3},
      {head + "AES-512-CBC simd 1 16\n", 3},
      {head + "AES-128-CBC warp 1 16\n", 3},
      {head + "AES-128-CBC afalg-fallback:nope 1 16\n", 3},
      {head + "AES-128-CBC simd 1 16\nAES-128-CBC simd 1 16\n", 4},
      {head + "note 1 \x1b]0;owned\x07\n", 3},
      {head + "note 1 \x1b[31mred\n", 3},
      {head + "note 1 caf\xc3\xa9\n", 3},
      {head + "note 2 two processes in a process file\n", 3},
      {head + "note 0 none\n", 3},
      {head + "note 1 twice\nnote 1 twice\n", 4},
      {head + "note 1 " + std::string(256, 'x') + "\n", 3},
      {head + "absorbed 12.0123456789abcdef\n", 3},
      {head + std::string(600, 'A') + "\n", 3},
      {head + "AES-128-CBC simd 1 16", 0},
      {head + "\n", 3},
      {summary + "absorbed 12.0123456789ABCDEF\n", 3},
      {summary + "absorbed 12\n", 3},
      {summary + "absorbed 0.0123456789abcdef\n", 3},
      {"aesmux-stats 3\nsummary 0\n", 1},
      {"AES-128-CBC simd 1 16\n", 1},
      {"root:x:0:0:root:/root:/bin/bash\n", 1},
      {"aesmux-stats 2\n", 1},
      {"aesmux-stats 2\nprocess 0 0 - 0\n", 2},
      {"aesmux-stats 2\nprocess 12 0 not-a-boot-id 0\n", 2},
      {"aesmux-stats 2\nprocess 12 0 - 0 extra\n", 2},
      {"aesmux-stats 2\nsummary -1\n", 2},
      {"", 0},
      {std::string(core::kMaxStatsFileBytes + 1, '\n'), 0},
  };
  for (const auto &c : cases) {
    core::StatsParseError error;
    EXPECT_EQ(Parse(c.text, &error), nullptr) << c.text;
    EXPECT_EQ(error.line, c.line) << c.text << ": " << error.reason;
    EXPECT_NE(std::string(error.reason), "") << c.text;
  }
  // The same heads are accepted with good lines.
  EXPECT_NE(Parse(head + "AES-128-CBC simd 18446744073709551615 0\n"), nullptr);
  EXPECT_NE(Parse(summary + "absorbed 12.0123456789abcdef\nnote 5 a  b\n"),
            nullptr);
}

TEST(StatsFormat, SumsThatWouldPassTwoToTheSixtyFourAreRefused) {
  core::StatsSnapshot sum, add;
  sum.counters[3][0].bytes = UINT64_MAX - 5;
  add.counters[3][0].bytes = 5;
  char which[64];
  ASSERT_TRUE(core::AddStatsCounts(sum, add, which));
  EXPECT_EQ(sum.counters[3][0].bytes, UINT64_MAX);
  EXPECT_FALSE(core::AddStatsCounts(sum, add, which));
  EXPECT_EQ(sum.counters[3][0].bytes, UINT64_MAX) << "left unchanged";
  EXPECT_STREQ(which, "AES-128-CBC simd");
}

TEST(StatsFormat, NamesOfTheDirectory) {
  uint64_t number = 0;
  std::string_view suffix;
  using core::StatsName;
  EXPECT_EQ(core::ClassifyStatsName("s", "s.42.0123456789abcdef", &number,
                                    &suffix),
            StatsName::kProcess);
  EXPECT_EQ(number, 42u);
  EXPECT_EQ(suffix, "42.0123456789abcdef");
  EXPECT_EQ(core::ClassifyStatsName("s", "s.42.0123456789abcdef.89abcdef.tmp",
                                    &number, &suffix),
            StatsName::kProcessTemp);
  EXPECT_EQ(suffix, "42.0123456789abcdef");
  EXPECT_EQ(core::ClassifyStatsName("s", "s.summary.0", &number, nullptr),
            StatsName::kSummary);
  EXPECT_EQ(core::ClassifyStatsName("s", "s.summary.33.00000000.tmp", &number,
                                    nullptr),
            StatsName::kSummaryTemp);
  EXPECT_EQ(number, 33u);
  EXPECT_EQ(core::ClassifyStatsName("s", "s.summary.34.bad", &number, nullptr),
            StatsName::kSummaryAside);
  EXPECT_EQ(number, 34u);
  EXPECT_EQ(core::ClassifyStatsName("s", "s.lock.35", &number, nullptr),
            StatsName::kLock);
  EXPECT_EQ(number, 35u);
  for (const char *other :
       {"s.42", "s.42.tmp", "s.42.0123456789ABCDEF", "s.summary.x",
        "s.summary.01", "t.42.0123456789abcdef", "s", "s.",
        "s.-1.0123456789abcdef", "s.42.0123456789abcdef.tmp",
        "ss.42.0123456789abcdef", "s.summary.x.bad",
        "s.summary.0.bad.01234567.tmp", "s.lock.", "s.lock.x", "s.lock.01",
        "s.lock.0.01234567.tmp"}) {
    EXPECT_EQ(core::ClassifyStatsName("s", other, &number, nullptr),
              StatsName::kOther)
        << other;
  }
}

TEST(StatsFormat, PrefixesThatCannotWork) {
  EXPECT_EQ(core::StatsPrefixProblem("/var/tmp/aesmux/stats"), nullptr);
  EXPECT_EQ(core::StatsPrefixProblem("stats"), nullptr);
  EXPECT_NE(core::StatsPrefixProblem("/var/tmp/aesmux/"), nullptr);
  EXPECT_NE(core::StatsPrefixProblem("/tmp/" + std::string(4096, 'd') + "/s"),
            nullptr);
  EXPECT_NE(core::StatsPrefixProblem("/tmp/" + std::string(201, 's')), nullptr);
}

// ---------------------------------------------------------------------
// Reading a file of a directory others may write.

StatsOpen TryRead(const TempDir &dir, const std::string &name) {
  std::vector<char> buffer(core::kMaxStatsFileBytes + 1);
  size_t length = 0;
  struct stat st;
  int error = 0;
  const int dirfd = open(dir.path().c_str(), O_RDONLY | O_DIRECTORY);
  const StatsOpen result = core::ReadStatsFileAt(
      dirfd, name.c_str(), buffer.data(), &length, &st, &error);
  close(dirfd);
  return result;
}

TEST(StatsRead, OnlyARegularFileOfOneLinkAndBoundedSizeIsRead) {
  TempDir dir;
  WriteText(dir / "ok", ProcessFile(core::ThisStatsProcess(), 1));
  EXPECT_EQ(TryRead(dir, "ok"), StatsOpen::kOk);
  EXPECT_EQ(TryRead(dir, "missing"), StatsOpen::kMissing);
  // A symlink to a readable file is not followed, nor one to /dev/zero.
  ASSERT_EQ(symlink((dir / "ok").c_str(), (dir / "link").c_str()), 0);
  EXPECT_EQ(TryRead(dir, "link"), StatsOpen::kSymlink);
  ASSERT_EQ(symlink("/dev/zero", (dir / "zero").c_str()), 0);
  EXPECT_EQ(TryRead(dir, "zero"), StatsOpen::kSymlink);
  // A hard link to someone's file.
  ASSERT_EQ(link((dir / "ok").c_str(), (dir / "hard").c_str()), 0);
  EXPECT_EQ(TryRead(dir, "hard"), StatsOpen::kLinked);
  ASSERT_EQ(mkdir((dir / "dir").c_str(), 0755), 0);
  EXPECT_EQ(TryRead(dir, "dir"), StatsOpen::kNotRegular);
  WriteText(dir / "big", std::string(core::kMaxStatsFileBytes + 1, 'x'));
  EXPECT_EQ(TryRead(dir, "big"), StatsOpen::kTooLarge);
}

// A FIFO nobody writes: refused at once, in a child killed if it hangs.
TEST(StatsRead, AFifoIsRefusedWithoutWaiting) {
  TempDir dir;
  ASSERT_EQ(mkfifo((dir / "fifo").c_str(), 0666), 0);
  EXPECT_EQ(RunInChild(
                [&] {
                  return TryRead(dir, "fifo") == StatsOpen::kNotRegular ? 0 : 1;
                },
                std::chrono::seconds(10)),
            "");
}

// ---------------------------------------------------------------------
// Folding.

class StatsFold : public testing::Test {
 protected:
  void SetUp() override {
    self_ = core::ThisStatsProcess();
    if (self_.boot[0] == '\0' || self_.pidns == 0) {
      GTEST_SKIP() << "no /proc/sys/kernel/random/boot_id or "
                      "/proc/self/ns/pid: no process can be told gone";
    }
    dirfd_ = open(dir_.path().c_str(), O_RDONLY | O_DIRECTORY);
  }
  void TearDown() override {
    if (dirfd_ >= 0) close(dirfd_);
  }
  // A process file under stem "s" for `process`, named after its pid.
  std::string Put(const core::StatsProcess &process, uint64_t requests,
                  const char *id = "0123456789abcdef") {
    const std::string name =
        "s." + std::to_string(process.pid) + "." + std::string(id);
    WriteText(dir_ / name, ProcessFile(process, requests));
    return name;
  }
  core::StatsProcess Gone() {
    core::StatsProcess process = self_;
    process.pid = GonePid();
    return process;
  }
  int Fold(const std::string &keep = "") {
    char problem[512];
    const int folded = core::FoldStats(dirfd_, "s", keep, problem);
    problem_ = problem;
    return folded;
  }
  std::unique_ptr<StatsFileView> Summary() {
    return Parse(ReadText(dir_ / ("s.summary." + std::to_string(geteuid()))));
  }
  // This user's lock, which its first fold makes.
  static std::string Lock() { return "s.lock." + std::to_string(geteuid()); }

  TempDir dir_;
  int dirfd_ = -1;
  core::StatsProcess self_;
  std::string problem_;
};

TEST_F(StatsFold, ExitedProcessesAreFoldedAndLiveOnesLeft) {
  const std::string live = Put(self_, 1);
  core::StatsProcess reused = self_;  // this pid, another start time
  reused.start = self_.start + 1;
  const std::string a = Put(Gone(), 10, "aaaaaaaaaaaaaaaa");
  const std::string b = Put(reused, 100, "bbbbbbbbbbbbbbbb");
  core::StatsProcess earlier_boot = self_;
  earlier_boot.boot[0] = earlier_boot.boot[0] == '0' ? '1' : '0';
  const std::string c = Put(earlier_boot, 1000, "cccccccccccccccc");
  // Not to be told gone: another pid namespace, or identity unknown.
  core::StatsProcess other_ns = Gone();
  other_ns.pidns += 1;
  const std::string d = Put(other_ns, 10000, "dddddddddddddddd");
  core::StatsProcess unknown = Gone();
  unknown.boot = {};
  const std::string e = Put(unknown, 100000, "eeeeeeeeeeeeeeee");

  EXPECT_EQ(Fold(), 3) << problem_;
  EXPECT_EQ(problem_, "");
  const std::unique_ptr<StatsFileView> summary = Summary();
  ASSERT_NE(summary, nullptr);
  EXPECT_EQ(summary->processes, 3u);
  EXPECT_EQ(CbcRequests(*summary), 1110u);
  ASSERT_EQ(summary->num_notes, 1u);
  EXPECT_EQ(summary->notes[0].processes, 3u);
  const std::string summary_name = "s.summary." + std::to_string(geteuid());
  std::vector<std::string> expected = {live, d, e, summary_name, Lock()};
  std::sort(expected.begin(), expected.end());
  EXPECT_EQ(dir_.Names(), expected);

  // Again: nothing more to fold, nothing changes.
  EXPECT_EQ(Fold(), 0);
  EXPECT_EQ(CbcRequests(*Summary()), 1110u);
}

// A fold that stopped after its summary was in place but before it removed
// the files: the next fold removes them and counts them no second time.
TEST_F(StatsFold, AFoldInterruptedAfterItsSummaryCountsNothingTwice) {
  const std::string a = Put(Gone(), 10, "aaaaaaaaaaaaaaaa");
  const std::string text = ReadText(dir_ / a);
  ASSERT_EQ(Fold(), 1) << problem_;
  WriteText(dir_ / a, text);  // as if never removed
  // A reader meanwhile (aesmux stats) skips it: the summary lists it.
  ASSERT_EQ(Summary()->num_absorbed, 1u);
  EXPECT_EQ(Summary()->absorbed[0], a.substr(2));
  const std::string b = Put(Gone(), 100, "bbbbbbbbbbbbbbbb");
  EXPECT_EQ(Fold(), 1) << problem_;
  EXPECT_EQ(CbcRequests(*Summary()), 110u);
  EXPECT_EQ(Summary()->processes, 2u);
  EXPECT_FALSE(fs::exists(dir_ / a));
  EXPECT_FALSE(fs::exists(dir_ / b));
  // Once the file is gone, its name leaves the list.
  const std::string c = Put(Gone(), 1000, "cccccccccccccccc");
  EXPECT_EQ(Fold(), 1);
  ASSERT_EQ(Summary()->num_absorbed, 1u);
  EXPECT_EQ(Summary()->absorbed[0], c.substr(2));
  EXPECT_EQ(CbcRequests(*Summary()), 1110u);
}

// A reader of this user's (aesmux stats) holds its lock shared: no fold
// of this user's runs meanwhile.
TEST_F(StatsFold, NoFoldWhileItsUsersLockIsHeld) {
  Put(Gone(), 10);
  EXPECT_EQ(Fold(), 1) << problem_;  // and the lock made
  const std::string b = Put(Gone(), 100, "bbbbbbbbbbbbbbbb");
  const int reader = open((dir_ / Lock()).c_str(), O_RDONLY);
  ASSERT_EQ(flock(reader, LOCK_SH), 0);
  EXPECT_EQ(Fold(), 0);
  EXPECT_TRUE(fs::exists(dir_ / b));
  close(reader);
  EXPECT_EQ(Fold(), 1);
  EXPECT_FALSE(fs::exists(dir_ / b));
}

// Anyone may open the directory and hold a flock on it for good: that
// keeps no fold from running.
TEST_F(StatsFold, ALockOnTheDirectoryKeepsNoFoldFromRunning) {
  for (const int kind : {LOCK_SH, LOCK_EX}) {
    Put(Gone(), 10);
    const int other = open(dir_.path().c_str(), O_RDONLY | O_DIRECTORY);
    ASSERT_EQ(flock(other, kind), 0);
    EXPECT_EQ(Fold(), 1) << problem_;
    EXPECT_EQ(problem_, "");
    close(other);
  }
  ASSERT_NE(Summary(), nullptr);
  EXPECT_EQ(Summary()->processes, 2u);
}

// What is under this user's lock name and is not a regular file of one
// link of this user's (here this user's own: a symbolic link, a FIFO, a
// directory, a hard link; another user's in
// StatsWriter.APlantedLockIsReportedAndAddsNoFile) keeps every fold of
// this user's from running, is never opened through or waited on, and
// is named.
TEST_F(StatsFold, ALockNameHoldingAnythingElseIsNamedAndNotUsed) {
  const std::string target = dir_.path() + "-target";
  WriteText(target, "");
  const struct {
    const char *kind;
    std::function<int()> make;
    const char *why;
  } cases[] = {
      {"symlink",
       [&] { return symlink(target.c_str(), (dir_ / Lock()).c_str()); },
       "is a symbolic link (not followed)"},
      {"fifo", [&] { return mkfifo((dir_ / Lock()).c_str(), 0600); },
       "is not a regular file"},
      {"directory", [&] { return mkdir((dir_ / Lock()).c_str(), 0700); },
       "is not a regular file"},
      {"hard link",
       [&] { return link(target.c_str(), (dir_ / Lock()).c_str()); },
       "has more than one link"},
  };
  for (const auto &c : cases) {
    ASSERT_EQ(c.make(), 0) << c.kind;
    const std::string a = Put(Gone(), 10);
    EXPECT_EQ(
        RunInChild([&] { return Fold() == core::kStatsSummaryTaken ? 0 : 1; },
                   std::chrono::seconds(10)),
        "")
        << c.kind;
    EXPECT_EQ(Fold(), core::kStatsSummaryTaken) << c.kind;
    EXPECT_NE(problem_.find(Lock() + " " + c.why), std::string::npos)
        << c.kind << ": " << problem_;
    EXPECT_NE(problem_.find("its processes write no statistics file"),
              std::string::npos)
        << problem_;
    EXPECT_EQ(dir_.Names(), (std::vector<std::string>{a, Lock()})) << c.kind;
    fs::remove(dir_ / a);
    fs::remove(dir_ / Lock());
  }
  fs::remove(target);
  // Once it is gone, folding goes on.
  const std::string a = Put(Gone(), 10);
  EXPECT_EQ(Fold(), 1) << problem_;
  struct stat st;
  ASSERT_EQ(lstat((dir_ / Lock()).c_str(), &st), 0);
  EXPECT_TRUE(S_ISREG(st.st_mode));
  EXPECT_EQ(st.st_mode & 07777, 0600u);
}

// A lock this user made readable by others (flock(1) makes it 0644) is
// made 0600: anyone who could open it could hold it for good.
TEST_F(StatsFold, ALockOthersCouldOpenIsMadePrivate) {
  WriteText(dir_ / Lock(), "");
  ASSERT_EQ(chmod((dir_ / Lock()).c_str(), 0644), 0);
  Put(Gone(), 10);
  EXPECT_EQ(Fold(), 1) << problem_;
  struct stat st;
  ASSERT_EQ(stat((dir_ / Lock()).c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0600u);
}

// A summary that cannot be read or parsed (a crash's empty file, a line
// cut short, a FIFO) would stop every fold, and the directory would grow
// by a file per process: it is set aside, named once, and folding goes on
// into a new summary.
TEST_F(StatsFold, AnUnreadableSummaryIsSetAsideAndFoldingGoesOn) {
  const std::string summary = "s.summary." + std::to_string(geteuid());
  const std::string aside = summary + ".bad";
  const std::string malformed =
      "aesmux-stats 2\nsummary 1\nAES-128-CBC simd -7 0\n";
  const struct {
    const char *kind;
    std::function<void()> make;
    const char *why;
  } cases[] = {
      {"malformed", [&] { WriteText(dir_ / summary, malformed); }, "line 3"},
      {"empty", [&] { WriteText(dir_ / summary, ""); }, "line 0"},
      {"fifo", [&] { mkfifo((dir_ / summary).c_str(), 0644); },
       "is not a regular file"},
  };
  for (const auto &c : cases) {
    c.make();
    const std::string a = Put(Gone(), 10);
    EXPECT_EQ(Fold(), 1) << c.kind << ": " << problem_;
    EXPECT_NE(problem_.find(summary + " "), std::string::npos) << problem_;
    EXPECT_NE(problem_.find(c.why), std::string::npos) << problem_;
    EXPECT_NE(problem_.find("set aside as " + aside), std::string::npos)
        << problem_;
    EXPECT_EQ(problem_.find("-7"), std::string::npos) << "quoted: " << problem_;
    EXPECT_FALSE(fs::exists(dir_ / a)) << c.kind;
    ASSERT_NE(Summary(), nullptr) << c.kind;
    EXPECT_EQ(CbcRequests(*Summary()), 10u) << c.kind;
    EXPECT_EQ(Summary()->processes, 1u) << c.kind;
    ASSERT_TRUE(fs::exists(fs::symlink_status(dir_ / aside))) << c.kind;
    if (std::string(c.kind) == "malformed") {
      EXPECT_EQ(ReadText(dir_ / aside), malformed) << "kept to recover";
    }
    // Said once: the next fold goes on from the new summary.
    Put(Gone(), 100, "bbbbbbbbbbbbbbbb");
    EXPECT_EQ(Fold(), 1) << c.kind << ": " << problem_;
    EXPECT_EQ(problem_, "");
    EXPECT_EQ(CbcRequests(*Summary()), 110u) << c.kind;
    std::vector<std::string> expected = {summary, aside, Lock()};
    std::sort(expected.begin(), expected.end());
    EXPECT_EQ(dir_.Names(), expected) << c.kind;
    fs::remove(dir_ / summary);
  }
}

TEST_F(StatsFold, StaleTemporaryFilesOfGoneProcessesAreRemoved) {
  const pid_t gone = GonePid();
  const std::string old_temp =
      "s." + std::to_string(gone) + ".0123456789abcdef.01234567.tmp";
  const std::string new_temp =
      "s." + std::to_string(gone) + ".0123456789abcdef.89abcdef.tmp";
  WriteText(dir_ / old_temp, "half");
  WriteText(dir_ / new_temp, "half");
  const struct timespec times[2] = {{0, UTIME_OMIT}, {1, 0}};  // long ago
  ASSERT_EQ(utimensat(AT_FDCWD, (dir_ / old_temp).c_str(), times, 0), 0);
  Fold();
  EXPECT_FALSE(fs::exists(dir_ / old_temp));
  EXPECT_TRUE(fs::exists(dir_ / new_temp)) << "maybe a write under way";
}

// ---------------------------------------------------------------------
// The provider's writer, in forked children.

// Encrypts `len` bytes of AES-128-CBC in one update (no padding).
bool EncryptCbc(const ProviderEnv &env, size_t len) {
  CipherPtr cipher = env.Aesmux("AES-128-CBC");
  auto ctx = NewCipherCtx();
  const Bytes key(16, 1), iv(16, 2), in(len, 3);
  Bytes out(len + 16);
  int out_len = 0;
  return cipher != nullptr &&
         EVP_EncryptInit_ex2(ctx.get(), cipher.get(), key.data(), iv.data(),
                             nullptr) == 1 &&
         EVP_CIPHER_CTX_set_padding(ctx.get(), 0) == 1 &&
         EVP_EncryptUpdate(ctx.get(), out.data(), &out_len, in.data(),
                           static_cast<int>(len)) == 1;
}

// Runs `work` in a child with aesmux writing statistics under DIR/s;
// returns the child's process file, parsed, after checking that the
// directory holds nothing else of the child's.
std::unique_ptr<StatsFileView> RunChildAndReadStats(
    const TempDir &dir, const std::function<int(const std::string &)> &work) {
  const std::string prefix = dir / "s";
  const pid_t child = fork();
  if (child == 0) _exit(work(prefix));
  int status = 0;
  EXPECT_EQ(waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  std::vector<std::string> mine;
  for (const std::string &name : dir.Names()) {
    uint64_t pid = 0;
    const core::StatsName kind =
        core::ClassifyStatsName("s", name, &pid, nullptr);
    if (pid == static_cast<uint64_t>(child) &&
        (kind == core::StatsName::kProcess ||
         kind == core::StatsName::kProcessTemp)) {
      mine.push_back(name);
    }
  }
  EXPECT_EQ(mine.size(), 1u) << "one file per process, no temporary left";
  if (mine.size() != 1) return nullptr;
  std::unique_ptr<StatsFileView> view = Parse(ReadText(dir / mine[0]));
  EXPECT_NE(view, nullptr) << ReadText(dir / mine[0]);
  if (view != nullptr) {
    EXPECT_EQ(view->process.pid, child);
    EXPECT_EQ(view->num_notes, 5u) << "why the afalg path is on or off";
  }
  return view;
}

void ExpectOnlyCbcFallback(const StatsFileView *view, uint64_t requests,
                           uint64_t bytes) {
  ASSERT_NE(view, nullptr);
  for (const core::AlgInfo &info : core::kAlgs) {
    for (size_t p = 0; p < core::kNumPaths; ++p) {
      const auto path = static_cast<core::Path>(p);
      const core::Counter &counter = view->counts.at(info.alg, path);
      if (info.alg == core::Alg::kAes128Cbc && path == core::Path::kFallback) {
        EXPECT_EQ(counter.requests, requests);
        EXPECT_EQ(counter.bytes, bytes);
      } else {
        EXPECT_EQ(counter.requests, 0u) << info.name << " " << p;
      }
    }
  }
}

TEST(StatsWriter, WrittenWhenTheProviderIsUnloaded) {
  TempDir dir;
  const auto view = RunChildAndReadStats(dir, [](const std::string &prefix) {
    ProviderEnv env({"kernels = none", "stats_file = " + prefix});
    return env.loaded() && EncryptCbc(env, 48) && EncryptCbc(env, 32) ? 0 : 2;
  });
  ExpectOnlyCbcFallback(view.get(), 2, 80);
}

// A library context the application never frees is never torn down; the
// statistics are still written when the process exits.
TEST(StatsWriter, WrittenAtExitWhenTheProviderIsNeverUnloaded) {
  TempDir dir;
  const auto view = RunChildAndReadStats(dir, [](const std::string &prefix) -> int {
    // Deliberately never freed (kept reachable for LeakSanitizer).
    static ProviderEnv *env =
        new ProviderEnv({"kernels = none", "stats_file = " + prefix});
    if (!env->loaded() || !EncryptCbc(*env, 16)) std::_Exit(2);
    std::exit(0);
  });
  ExpectOnlyCbcFallback(view.get(), 1, 16);
}

// Processes that end with _exit() (sshd's session processes) run no exit
// handlers; while serving, the file is rewritten at most once a second,
// checked every kProgressBytes a thread serves.
TEST(StatsWriter, KeptUpToDateForProcessesThatSkipExitHandlers) {
  TempDir dir;
  const auto view = RunChildAndReadStats(dir, [](const std::string &prefix) -> int {
    static ProviderEnv *env =
        new ProviderEnv({"kernels = none", "stats_file = " + prefix});
    if (!env->loaded()) std::_Exit(2);
    for (int i = 0; i < 32; ++i) EncryptCbc(*env, 65536);  // 2 MiB
    std::this_thread::sleep_for(std::chrono::milliseconds(1100));
    for (int i = 0; i < 16; ++i) EncryptCbc(*env, 65536);  // 1 MiB more
    _exit(0);
  });
  ExpectOnlyCbcFallback(view.get(), 48, 48 * 65536);
}

// Writing is rare: after the first MiB, nothing more within the second.
TEST(StatsWriter, RewrittenAtMostOnceASecond) {
  TempDir dir;
  const auto view = RunChildAndReadStats(dir, [](const std::string &prefix) -> int {
    static ProviderEnv *env =
        new ProviderEnv({"kernels = none", "stats_file = " + prefix});
    if (!env->loaded()) std::_Exit(2);
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < 64; ++i) EncryptCbc(*env, 65536);  // 4 MiB
    // 4 MiB take milliseconds: anything near a second would make the
    // expectation below wrong, so say so instead.
    const auto elapsed = std::chrono::steady_clock::now() - start;
    if (elapsed > std::chrono::milliseconds(500)) std::_Exit(3);
    _exit(0);
  });
  ExpectOnlyCbcFallback(view.get(), 16, 16 * 65536);
}

// A process that counted nothing (`aesmux stats` itself, `openssl
// version`) leaves nothing in the directory.
TEST(StatsWriter, AProcessThatCountedNothingWritesNothing) {
  TempDir dir;
  EXPECT_EQ(RunInChild([&] {
              ProviderEnv env({"kernels = none", "stats_file = " + (dir / "s")});
              return env.loaded() ? 0 : 2;
            }),
            "");
  EXPECT_EQ(dir.Names(), std::vector<std::string>{});
}

// Whatever others put under the names an earlier writer used (its pid,
// with and without .tmp; here symlinks to a file of this user), the
// writer neither follows nor stops at them: it writes names of its own.
TEST(StatsWriter, PlantedNamesAreNeitherFollowedNorInTheWay) {
  TempDir dir;
  const std::string target = dir / "precious";
  WriteText(target, "not aesmux's to overwrite\n");
  const auto view =
      RunChildAndReadStats(dir, [&](const std::string &prefix) {
        umask(022);
        const std::string pid = std::to_string(getpid());
        if (symlink(target.c_str(), (prefix + "." + pid).c_str()) != 0 ||
            symlink(target.c_str(), (prefix + "." + pid + ".tmp").c_str()) !=
                0) {
          return 3;
        }
        ProviderEnv env({"kernels = none", "stats_file = " + prefix});
        return env.loaded() && EncryptCbc(env, 16) ? 0 : 2;
      });
  ExpectOnlyCbcFallback(view.get(), 1, 16);
  EXPECT_EQ(ReadText(target), "not aesmux's to overwrite\n");
}

// What the child printed on stderr (a file put there before aesmux
// loaded), and whether it succeeded.
std::string StderrOfChild(const std::function<int()> &work,
                          std::string *result) {
  std::FILE *capture = std::tmpfile();
  *result = RunInChild([&] {
    dup2(fileno(capture), STDERR_FILENO);
    return work();
  });
  std::rewind(capture);
  std::string text;
  char line[1024];
  while (std::fgets(line, sizeof(line), capture) != nullptr) text += line;
  std::fclose(capture);
  return text;
}

size_t Count(const std::string &text, const std::string &what) {
  size_t count = 0;
  for (size_t at = text.find(what); at != std::string::npos;
       at = text.find(what, at + 1)) {
    ++count;
  }
  return count;
}

// A directory that does not exist: said once on stderr, at load, and in
// the provider's "stats-file" and "problems" parameters (`aesmux info`
// shows it and exits 1); the write at exit says nothing more.
TEST(StatsWriter, AMissingDirectoryIsReportedOnce) {
  TempDir dir;
  const std::string prefix = dir / "missing/s";
  std::string result;
  const std::string printed = StderrOfChild(
      [&] {
        static ProviderEnv *env = new ProviderEnv(
            {"kernels = none", "stats_file = " + prefix}, ProviderEnv::kLeave);
        if (!env->loaded() || !EncryptCbc(*env, 16)) return 2;
        const std::string state = env->ProviderParam("stats-file");
        if (!state.starts_with("no statistics are written: ") ||
            state.find(dir / "missing") == std::string::npos) {
          return 3;
        }
        if (env->ProviderParam("problems") != "stats_file: " + state + "\n") {
          return 4;
        }
        std::exit(0);
      },
      &result);
  EXPECT_EQ(result, "");
  EXPECT_EQ(Count(printed, "aesmux: stats_file: "), 1u) << printed;
  EXPECT_NE(printed.find("No such file or directory"), std::string::npos)
      << printed;
}

constexpr uid_t kUserA = 65531;
constexpr uid_t kUserB = 65532;

// A directory this process's user cannot write (root's, 0755), for a
// process that is not root: once at load, once only.
TEST(StatsWriter, AnUnwritableDirectoryIsReportedOnce) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to run a child as another user";
  std::string why;
  ASSERT_TRUE(UseAModuleAnyUserCanLoad(&why)) << why;
  TempDir dir;
  ASSERT_EQ(chmod(dir.path().c_str(), 0755), 0);
  std::string result;
  const std::string printed = StderrOfChild(
      [&] {
        if (setgid(kUserA) != 0 || setuid(kUserA) != 0) return 4;
        static ProviderEnv *env = new ProviderEnv(
            {"kernels = none", "stats_file = " + (dir / "s")},
            ProviderEnv::kLeave);
        if (!env->loaded() || !EncryptCbc(*env, 16)) return 2;
        std::exit(0);
      },
      &result);
  EXPECT_EQ(result, "");
  EXPECT_EQ(Count(printed, "aesmux: stats_file: "), 1u) << printed;
  EXPECT_NE(printed.find("cannot write into " + dir.path()), std::string::npos)
      << printed;
  EXPECT_EQ(dir.Names(), std::vector<std::string>{});
}

// In a sticky directory every user writes (as README suggests), another
// user has put files under the names an earlier writer would have used
// for this process (STEM.<pid> and STEM.<pid>.tmp): the counts are
// written all the same, and nothing is said.
TEST(StatsWriter, AnotherUsersFilesUnderItsNamesLoseNothing) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to act as two users";
  std::string why;
  ASSERT_TRUE(UseAModuleAnyUserCanLoad(&why)) << why;
  TempDir dir;
  ASSERT_EQ(chmod(dir.path().c_str(), 01777), 0);
  int go[2];
  ASSERT_EQ(pipe(go), 0);
  std::FILE *capture = std::tmpfile();
  const pid_t child = fork();
  if (child == 0) {
    dup2(fileno(capture), STDERR_FILENO);
    char byte;
    if (setgid(kUserA) != 0 || setuid(kUserA) != 0 || read(go[0], &byte, 1) != 1) {
      _exit(4);
    }
    bool served = false;
    {
      ProviderEnv env({"kernels = none", "stats_file = " + (dir / "s")},
                      ProviderEnv::kLeave);
      served = env.loaded() && EncryptCbc(env, 16);
    }  // written here, as the provider is unloaded
    _exit(served ? 0 : 2);
  }
  for (const std::string &name : {"s." + std::to_string(child),
                                  "s." + std::to_string(child) + ".tmp"}) {
    WriteText(dir / name, "planted\n");
    ASSERT_EQ(chown((dir / name).c_str(), kUserB, kUserB), 0);
  }
  ASSERT_EQ(write(go[1], "x", 1), 1);
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  close(go[0]);
  close(go[1]);
  std::rewind(capture);
  char line[512];
  EXPECT_EQ(std::fgets(line, sizeof(line), capture), nullptr)
      << "printed: " << line;
  std::fclose(capture);
  int found = 0;
  for (const std::string &name : dir.Names()) {
    uint64_t pid = 0;
    if (core::ClassifyStatsName("s", name, &pid, nullptr) !=
        core::StatsName::kProcess) {
      continue;
    }
    ++found;
    struct stat st;
    ASSERT_EQ(stat((dir / name).c_str(), &st), 0);
    EXPECT_EQ(st.st_uid, kUserA);
    EXPECT_EQ(pid, static_cast<uint64_t>(child));
    const auto view = Parse(ReadText(dir / name));
    ASSERT_NE(view, nullptr);
    EXPECT_EQ(view->counts.at(core::Alg::kAes128Cbc, core::Path::kFallback)
                  .requests,
              1u);
  }
  EXPECT_EQ(found, 1);
}

// Makes `dir` sticky and writable by all, and puts user B's file holding
// `text` under user A's summary name (STEM "s"); returns that name.
std::string PlantSummaryOfUserA(const TempDir &dir, const std::string &text) {
  const std::string name = "s.summary." + std::to_string(kUserA);
  EXPECT_EQ(chmod(dir.path().c_str(), 01777), 0);
  WriteText(dir / name, text);
  EXPECT_EQ(chown((dir / name).c_str(), kUserB, kUserB), 0);
  return name;
}

// Each user's exited processes go into that user's summary: in a sticky
// directory nobody else could replace or remove them. A summary under a
// user's name that another user made is not read, and removed only by
// root; until then that user's processes write no file, which nothing
// could fold.
TEST(StatsWriter, EachUserFoldsOnlyItsOwnFiles) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to act as two users";
  std::string why;
  ASSERT_TRUE(UseAModuleAnyUserCanLoad(&why)) << why;
  TempDir dir;
  // An impostor's summary for user A, claiming a million requests.
  const std::string summary_a = PlantSummaryOfUserA(
      dir, "aesmux-stats 2\nsummary 1\nAES-128-CBC fallback 1000000 0\n");
  auto run_as = [&](uid_t uid) {
    return RunInChild([&] {
      if (setgid(uid) != 0 || setuid(uid) != 0) return 4;
      ProviderEnv env({"kernels = none", "stats_file = " + (dir / "s")});
      return env.loaded() && EncryptCbc(env, 16) ? 0 : 2;
    });
  };
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(run_as(kUserA), "");
    EXPECT_EQ(run_as(kUserB), "");
  }
  // B folded B's exited processes; A could not replace the impostor, so
  // A's processes wrote nothing; nothing of the impostor was counted into
  // B's.
  const auto b = Parse(ReadText(dir / ("s.summary." + std::to_string(kUserB))));
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(b->processes, 2u);
  EXPECT_EQ(b->counts.at(core::Alg::kAes128Cbc, core::Path::kFallback).requests,
            2u);
  auto files_of = [&](uid_t uid) {
    size_t files = 0;
    for (const std::string &name : dir.Names()) {
      struct stat st;
      if (stat((dir / name).c_str(), &st) == 0 && st.st_uid == uid) ++files;
    }
    return files;
  };
  EXPECT_EQ(files_of(kUserA), 1u) << "its lock alone";
  // Root's fold of A's files is not root's business: root folds root's.
  const int dirfd = open(dir.path().c_str(), O_RDONLY | O_DIRECTORY);
  char problem[512];
  EXPECT_EQ(core::FoldStats(dirfd, "s", "", problem), 0);
  close(dirfd);
  // Once root has removed the impostor, A folds as B does.
  ASSERT_EQ(unlink((dir / summary_a).c_str()), 0);
  for (int i = 0; i < 2; ++i) EXPECT_EQ(run_as(kUserA), "");
  const auto a = Parse(ReadText(dir / summary_a));
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->processes, 1u);
  EXPECT_EQ(files_of(kUserA), 3u)
      << "the summary, the lock and the last process's";
}

// Another user has put a file under this user's summary's name, which this
// user cannot remove: no fold of this user's can complete, so its
// processes write no file (else one per process would stay for good),
// whether or not the user's lock is held when they look, and say so once,
// naming the file; `aesmux info` lists it.
TEST(StatsWriter, AnotherUsersFileUnderItsSummaryNameIsReportedAndAddsNoFile) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to act as two users";
  std::string why;
  ASSERT_TRUE(UseAModuleAnyUserCanLoad(&why)) << why;
  TempDir dir;
  const std::string summary_a = PlantSummaryOfUserA(dir, "planted\n");
  const std::string said = summary_a + " belongs to uid " +
                           std::to_string(kUserB) + ", not to uid " +
                           std::to_string(kUserA);
  const std::string lock_a = "s.lock." + std::to_string(kUserA);
  for (const bool locked : {false, true}) {
    // A reader's lock: the fold cannot run, and looks all the same.
    const int reader = open((dir / lock_a).c_str(), O_RDONLY | O_CREAT, 0600);
    ASSERT_EQ(fchown(reader, kUserA, kUserA), 0);
    ASSERT_EQ(flock(reader, locked ? LOCK_SH : LOCK_UN), 0);
    std::string result;
    const std::string printed = StderrOfChild(
        [&] {
          if (setgid(kUserA) != 0 || setuid(kUserA) != 0) return 4;
          static ProviderEnv *env =
              new ProviderEnv({"kernels = none", "stats_file = " + (dir / "s")},
                              ProviderEnv::kLeave);
          if (!env->loaded()) return 2;
          // Past a MiB twice, a second apart: two progress writes due.
          for (int i = 0; i < 32; ++i) EncryptCbc(*env, 65536);
          std::this_thread::sleep_for(std::chrono::milliseconds(1100));
          for (int i = 0; i < 32; ++i) EncryptCbc(*env, 65536);
          if (env->ProviderParam("problems").find(said) == std::string::npos) {
            return 3;
          }
          std::exit(0);  // and the last write
        },
        &result);
    close(reader);
    EXPECT_EQ(result, "") << (locked ? "locked" : "unlocked");
    EXPECT_EQ(Count(printed, "aesmux: stats_file: "), 1u) << printed;
    EXPECT_NE(printed.find(said), std::string::npos) << printed;
    EXPECT_EQ(dir.Names(), (std::vector<std::string>{lock_a, summary_a}));
  }
}

// Runs `processes` children as `uid`, one after another, each serving a
// request with aesmux writing statistics under DIR/s, each within 10 s;
// returns what they printed on stderr, and "" in `*result` if each
// succeeded.
std::string RunWriters(const TempDir &dir, uid_t uid, int processes,
                       std::string *result) {
  std::string printed;
  for (int i = 0; i < processes && result->empty(); ++i) {
    std::FILE *capture = std::tmpfile();
    *result = RunInChild(
        [&] {
          dup2(fileno(capture), STDERR_FILENO);
          if (uid != geteuid() && (setgid(uid) != 0 || setuid(uid) != 0)) {
            return 4;
          }
          ProviderEnv env({"kernels = none", "stats_file = " + (dir / "s")},
                          ProviderEnv::kLeave);
          return env.loaded() && EncryptCbc(env, 16) ? 0 : 2;
        },
        std::chrono::seconds(10));
    std::rewind(capture);
    char line[1024];
    while (std::fgets(line, sizeof(line), capture) != nullptr) printed += line;
    std::fclose(capture);
  }
  return printed;
}

// Another user (as root) or this one opens the directory and holds a
// shared flock on it for good: the processes that exit are folded all the
// same, and the directory holds the summary, the lock and the last
// process's file, however many come and go.
TEST(StatsWriter, ALockOnTheDirectoryHeldForeverKeepsNothingUnfolded) {
  if (core::ThisStatsProcess().boot[0] == '\0') {
    GTEST_SKIP() << "no /proc/sys/kernel/random/boot_id: no process can be "
                    "told gone";
  }
  const bool root = geteuid() == 0;
  std::string why;
  if (root) {
    ASSERT_TRUE(UseAModuleAnyUserCanLoad(&why)) << why;
  }
  TempDir dir;
  ASSERT_EQ(chmod(dir.path().c_str(), 01777), 0);
  int ready[2];
  ASSERT_EQ(pipe(ready), 0);
  const pid_t holder = fork();
  if (holder == 0) {
    if (root && (setgid(kUserB) != 0 || setuid(kUserB) != 0)) _exit(4);
    const int fd = open(dir.path().c_str(), O_RDONLY | O_DIRECTORY);
    if (fd < 0 || flock(fd, LOCK_SH) != 0 || write(ready[1], "x", 1) != 1) {
      _exit(3);
    }
    for (;;) pause();
  }
  close(ready[1]);
  char byte = 0;
  ASSERT_EQ(read(ready[0], &byte, 1), 1) << "the holder did not lock";
  constexpr int kProcesses = 6;
  std::string result;
  const std::string printed =
      RunWriters(dir, root ? kUserA : geteuid(), kProcesses, &result);
  kill(holder, SIGKILL);
  waitpid(holder, nullptr, 0);
  close(ready[0]);
  EXPECT_EQ(result, "");
  EXPECT_EQ(printed, "");
  const uid_t uid = root ? kUserA : geteuid();
  const std::string summary = "s.summary." + std::to_string(uid);
  size_t process_files = 0;
  for (const std::string &name : dir.Names()) {
    uint64_t number = 0;
    if (core::ClassifyStatsName("s", name, &number, nullptr) ==
        core::StatsName::kProcess) {
      ++process_files;
    }
  }
  EXPECT_EQ(process_files, 1u) << "the last process's";
  EXPECT_EQ(dir.Names().size(), 3u);
  const auto view = Parse(ReadText(dir / summary));
  ASSERT_NE(view, nullptr) << summary;
  EXPECT_EQ(view->processes, static_cast<uint64_t>(kProcesses - 1));
}

// Another user has put a file under this user's lock name, or a symbolic
// link or a FIFO is there: no fold of this user's can run, so its
// processes write no file, say so once each, naming it, and never wait on
// it.
TEST(StatsWriter, APlantedLockIsReportedAndAddsNoFile) {
  const bool root = geteuid() == 0;
  std::string why;
  if (root) {
    ASSERT_TRUE(UseAModuleAnyUserCanLoad(&why)) << why;
  }
  const uid_t uid = root ? kUserA : geteuid();
  const std::string lock = "s.lock." + std::to_string(uid);
  const struct {
    const char *kind;
    std::function<bool(const std::string &)> plant;
    std::string said;
  } cases[] = {
      {"another user's file",
       [](const std::string &path) {
         WriteText(path, "");
         return chown(path.c_str(), kUserB, kUserB) == 0;
       },
       lock + " belongs to uid " + std::to_string(kUserB) + ", not to uid " +
           std::to_string(uid)},
      {"a symbolic link",
       [](const std::string &path) {
         return symlink("/dev/zero", path.c_str()) == 0;
       },
       lock + " is a symbolic link (not followed)"},
      {"a FIFO",
       [](const std::string &path) { return mkfifo(path.c_str(), 0666) == 0; },
       lock + " is not a regular file"},
  };
  for (const auto &c : cases) {
    if (!root && std::string(c.kind) == "another user's file") continue;
    TempDir dir;
    ASSERT_EQ(chmod(dir.path().c_str(), 01777), 0);
    ASSERT_TRUE(c.plant(dir / lock)) << c.kind;
    std::string result;
    const std::string printed = RunWriters(dir, uid, 3, &result);
    EXPECT_EQ(result, "") << c.kind;
    EXPECT_EQ(Count(printed, "aesmux: stats_file: "), 3u) << printed;
    const std::string said =
        c.said +
        ": while it is there, this user's exited processes are not folded, "
        "and its processes write no statistics file";
    EXPECT_EQ(Count(printed, said), 3u) << printed;
    EXPECT_EQ(dir.Names(), std::vector<std::string>{lock}) << c.kind;
  }
}

// A user whose uid has ten digits folds into STEM.summary.<all ten>, not
// into a summary named after the uid cut short (which users whose uids
// begin alike would share).
TEST(StatsWriter, ASummaryNamesTheWholeUid) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to act as another user";
  std::string why;
  ASSERT_TRUE(UseAModuleAnyUserCanLoad(&why)) << why;
  constexpr uid_t kLongUid = 4000000000u;
  TempDir dir;
  ASSERT_EQ(chmod(dir.path().c_str(), 01777), 0);
  for (int i = 0; i < 2; ++i) {
    EXPECT_EQ(RunInChild([&] {
                if (setgid(kUserA) != 0 || setuid(kLongUid) != 0) return 4;
                ProviderEnv env({"kernels = none", "stats_file = " + (dir / "s")});
                return env.loaded() && EncryptCbc(env, 16) ? 0 : 2;
              }),
              "");
  }
  const std::string summary = dir / ("s.summary." + std::to_string(kLongUid));
  const auto view = Parse(ReadText(summary));
  ASSERT_NE(view, nullptr) << summary;
  EXPECT_EQ(view->processes, 1u);
}

}  // namespace
}  // namespace aesmux::test
