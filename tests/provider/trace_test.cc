// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
// AESMUX_TRACE (provider/core/trace.h): each routing decision on stderr,
// written only where stderr was when aesmux loaded and never blocking
// (provider/core/diagnostics.h). ctest runs this suite with AESMUX_TRACE=1
// in its environment.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <openssl/evp.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "tests/support/child.h"
#include "tests/support/provider_env.h"

namespace aesmux::test {
namespace {

// This process's stderr for the whole suite: a temporary file put on
// descriptor 2 before aesmux first loads, so that aesmux prints into it,
// and read from where the previous read ended.
class StderrFile {
 public:
  static StderrFile &Get() {
    static StderrFile file;
    return file;
  }
  std::string TakeNew() {
    std::string text;
    char buffer[4096];
    ssize_t n;
    while ((n = pread(fd_, buffer, sizeof(buffer), offset_)) > 0) {
      text.append(buffer, static_cast<size_t>(n));
      offset_ += n;
    }
    return text;
  }

 private:
  StderrFile() {
    std::FILE *file = std::tmpfile();
    fd_ = dup(fileno(file));
    std::fclose(file);
    std::fflush(stderr);
    dup2(fd_, STDERR_FILENO);
  }
  int fd_ = -1;
  off_t offset_ = 0;
};

// Encrypts `len` bytes of `alg` `times` times through aesmux.
void Encrypt(const ProviderEnv &env, const char *alg, size_t len,
             int times = 1) {
  CipherPtr cipher = env.Aesmux(alg);
  EXPECT_NE(cipher, nullptr) << alg;
  if (cipher == nullptr) return;
  const std::vector<unsigned char> key(64, 7), iv(16, 9), in(len, 1);
  std::vector<unsigned char> out(len + 16);
  CipherCtxPtr ctx = NewCipherCtx();
  EXPECT_EQ(EVP_EncryptInit_ex2(ctx.get(), cipher.get(), key.data(),
                                iv.data(), nullptr), 1);
  EVP_CIPHER_CTX_set_padding(ctx.get(), 0);
  int out_len = 0;
  for (int i = 0; i < times; ++i) {
    EXPECT_EQ(EVP_EncryptUpdate(ctx.get(), out.data(), &out_len, in.data(),
                                static_cast<int>(len)), 1);
  }
}

// The same, returning what aesmux printed on stderr meanwhile.
std::string EncryptAndCapture(const ProviderEnv &env, const char *alg,
                              size_t len, int times = 1) {
  StderrFile::Get().TakeNew();
  Encrypt(env, alg, len, times);
  return StderrFile::Get().TakeNew();
}

class TraceTest : public testing::Test {
 protected:
  void SetUp() override {
    const char *trace = std::getenv("AESMUX_TRACE");
    ASSERT_TRUE(trace != nullptr && std::string(trace) == "1")
        << "run through ctest, which sets AESMUX_TRACE=1";
    StderrFile::Get();
  }
};

TEST_F(TraceTest, FallbackDecisionIsPrinted) {
  ProviderEnv env({"kernels = none"}, ProviderEnv::kLeave);
  ASSERT_TRUE(env.loaded()) << env.error();
  EXPECT_EQ(EncryptAndCapture(env, "AES-128-CBC", 16),
            "aesmux: AES-128-CBC 16 B -> fallback\n");
}

TEST_F(TraceTest, SimdDecisionIsPrinted) {
  ProviderEnv env({}, ProviderEnv::kLeave);
  ASSERT_TRUE(env.loaded()) << env.error();
  if (env.ProviderParam("tier") == "none") {
    GTEST_SKIP() << "no kernel tier on this CPU: nothing runs on simd";
  }
  EXPECT_EQ(EncryptAndCapture(env, "AES-256-CTR", 4096),
            "aesmux: AES-256-CTR 4096 B -> simd\n");
}

TEST_F(TraceTest, LinesAreRateLimitedAndTheDroppedOnesCounted) {
  ProviderEnv env({"kernels = none"}, ProviderEnv::kLeave);
  ASSERT_TRUE(env.loaded()) << env.error();
  // 3000 requests take milliseconds: they fall into one second, or two,
  // of at most 1000 lines each, none of them shared with the lines of the
  // tests before.
  std::this_thread::sleep_for(std::chrono::milliseconds(1100));
  const std::string burst = EncryptAndCapture(env, "AES-128-ECB", 16, 3000);
  size_t lines = 0;
  for (char c : burst) lines += c == '\n';
  EXPECT_GE(lines, 1000u);
  EXPECT_LE(lines, 2001u);
  // The next second's first line says how many were dropped.
  std::this_thread::sleep_for(std::chrono::milliseconds(1100));
  const std::string after = EncryptAndCapture(env, "AES-128-ECB", 16);
  EXPECT_NE((burst + after).find("routing decisions not printed"),
            std::string::npos);
  EXPECT_NE(after.find("aesmux: AES-128-ECB 16 B -> fallback\n"),
            std::string::npos)
      << after;
}

// Where the requests that may print run, in BytesTracedIntoADataFile.
enum class Later {
  kSameInstance,  // on the instance loaded before
  kNewInstance,   // on aesmux loaded again, into a new library context
  kForkedChild,   // the same, in a child forked after the first load
};

// A data file that took descriptor 2's number, in a child: aesmux loaded
// while stderr was open (or closed), then the program closed it and opened
// the file, and `later` says what served the traced requests then. Returns
// the file's size after them, or -1.
off_t BytesTracedIntoADataFile(bool stderr_open_at_load,
                               Later later = Later::kSameInstance) {
  char path[] = "/tmp/aesmux-trace-data-XXXXXX";
  const int made = mkstemp(path);
  if (made < 0) return -1;
  close(made);
  const auto reuse_and_trace = [&](const ProviderEnv &env) {
    close(STDERR_FILENO);
    if (open(path, O_WRONLY | O_APPEND) != STDERR_FILENO) return 3;
    if (later == Later::kSameInstance) {
      Encrypt(env, "AES-128-CBC", 16, 5);
      return 0;
    }
    ProviderEnv again({"kernels = none"}, ProviderEnv::kLeave);
    if (!again.loaded()) return 4;
    Encrypt(again, "AES-128-CBC", 16, 5);
    return 0;
  };
  const std::string result = RunInChild([&] {
    if (!stderr_open_at_load) close(STDERR_FILENO);
    ProviderEnv env({"kernels = none"}, ProviderEnv::kLeave);
    if (!env.loaded()) return 2;
    if (later != Later::kForkedChild) return reuse_and_trace(env);
    const std::string child = RunInChild([&] { return reuse_and_trace(env); });
    return child.empty() ? 0 : 5;
  });
  EXPECT_EQ(result, "");
  struct stat st;
  const off_t size = stat(path, &st) == 0 ? st.st_size : -1;
  unlink(path);
  return size;
}

TEST_F(TraceTest, NothingGoesIntoAFileThatReusedStderrsNumber) {
  EXPECT_EQ(BytesTracedIntoADataFile(true), 0);
}

TEST_F(TraceTest, NothingGoesToDescriptorTwoIfStderrWasClosedAtLoad) {
  EXPECT_EQ(BytesTracedIntoADataFile(false), 0);
}

// aesmux loaded again after the file took the number: the new instance
// prints where the first did, not into the file.
TEST_F(TraceTest, NothingGoesIntoItFromAnInstanceLoadedAfterwards) {
  EXPECT_EQ(BytesTracedIntoADataFile(true, Later::kNewInstance), 0);
}

TEST_F(TraceTest, NothingGoesIntoItFromAForkedChildsNewInstance) {
  EXPECT_EQ(BytesTracedIntoADataFile(true, Later::kForkedChild), 0);
}

// stderr a pipe (or socket) nobody reads, already full: requests go on,
// their lines dropped; the child is killed as hung otherwise.
void ExpectNoBlockOnAFullStderr(bool socket) {
  const std::string result = RunInChild(
      [&] {
        int ends[2];
        if (socket ? socketpair(AF_UNIX, SOCK_STREAM, 0, ends) != 0
                   : pipe(ends) != 0) {
          return 2;
        }
        dup2(ends[1], STDERR_FILENO);
        // Fill it through a non-blocking descriptor of its own, then leave
        // stderr blocking, as a program's is.
        const int flags = fcntl(STDERR_FILENO, F_GETFL);
        fcntl(STDERR_FILENO, F_SETFL, flags | O_NONBLOCK);
        const std::vector<char> chunk(4096, 'x');
        while (write(STDERR_FILENO, chunk.data(), chunk.size()) > 0) {
        }
        fcntl(STDERR_FILENO, F_SETFL, flags);
        ProviderEnv env({"kernels = none"}, ProviderEnv::kLeave);
        if (!env.loaded()) return 3;
        Encrypt(env, "AES-128-CBC", 16, 200);
        return 0;
      },
      std::chrono::seconds(30));
  EXPECT_EQ(result, "");
}

TEST_F(TraceTest, AFullPipeOnStderrNeverBlocksARequest) {
  ExpectNoBlockOnAFullStderr(false);
}

TEST_F(TraceTest, AFullSocketOnStderrNeverBlocksARequest) {
  ExpectNoBlockOnAFullStderr(true);
}

}  // namespace
}  // namespace aesmux::test
