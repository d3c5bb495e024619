// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
// The thread combiner's promises, on the batch layer itself (the test
// links aesmux_batch), compared with OpenSSL's default provider:
// - a combiner that stops while it holds other threads' requests (a
//   debugger's pause, a thread descheduled for long; here its test hook
//   parks it, or a tracer process stops it) holds nobody hostage: the threads whose requests it took
//   withdraw them by their deadline and run them alone, get the right
//   output, and the combiner never writes into their buffers after their
//   calls have returned;
// - requests that keep waiting for peers in vain make batching rest (the
//   router's ThreadsRest() says so), for requests of their size only;
// - a long rest during which the process got little of its CPUs' time
//   (as beside other busy processes) goes on;
// - the combiner freed when the last provider instance goes outlives every
//   thread that batched in it, also one that holds no slot (it withdrew its
//   request from a stopped combiner): the thread's exit or next request
//   never touches freed memory (a use after free under AddressSanitizer).
#include <gtest/gtest.h>
#include <openssl/evp.h>

#include <poll.h>
#include <sched.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "kernels/mb/lane_manager.h"
#include "kernels/tiers.h"
#include "provider/batch/cbc_batch.h"
#include "provider/batch/internal/shard.h"
#include "tests/support/child.h"

namespace aesmux::test {
namespace {

using Bytes = std::vector<uint8_t>;

// AES-128-CBC of `in` under `key` and `iv` by the default provider.
Bytes Expected(const Bytes &key, const Bytes &iv, const Bytes &in) {
  Bytes out(in.size());
  EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
  EVP_CIPHER *cipher = EVP_CIPHER_fetch(nullptr, "AES-128-CBC",
                                        "provider=default");
  int len = 0;
  EXPECT_EQ(EVP_EncryptInit_ex2(ctx, cipher, key.data(), iv.data(), nullptr),
            1);
  EVP_CIPHER_CTX_set_padding(ctx, 0);
  EXPECT_EQ(EVP_EncryptUpdate(ctx, out.data(), &len, in.data(),
                              static_cast<int>(in.size())),
            1);
  EVP_CIPHER_free(cipher);
  EVP_CIPHER_CTX_free(ctx);
  return out;
}

// One thread's CBC stream through batch::EncryptCbc, as the router's mb
// path would send it (outside an ASYNC job, counted among the threads).
class Stream {
 public:
  Stream(const kernels::Tier &tier, uint8_t seed, size_t len)
      : key_(16, seed), iv_(16, static_cast<uint8_t>(seed + 1)),
        in_(len), out_(len) {
    for (size_t i = 0; i < len; ++i) in_[i] = static_cast<uint8_t>(i * seed);
    tier.ops.expand_key(&schedule_, key_.data(), key_.size());
  }

  // Encrypts the next record; true if it equals the default provider's.
  bool Next(const kernels::Tier &tier) {
    const Bytes expected = Expected(key_, iv_, in_);
    // As the router would, were threads outnumbering the CPUs; it would
    // run the request alone while batching rests (noted for the test).
    batch::CallerProbe caller;
    caller.OtherThreads();
    rested_ = caller.ThreadsRest(in_.size());
    caller.set_batches(true);
    batch::EncryptCbc(tier,
                      {core::Alg::kAes128Cbc, &schedule_, iv_.data(),
                       out_.data(), in_.data(), in_.size()},
                      caller);
    const bool right = out_ == expected &&
                       std::memcmp(iv_.data(),
                                   expected.data() + expected.size() - 16,
                                   16) == 0;
    return right;
  }

  Bytes &out() { return out_; }
  Bytes &iv() { return iv_; }
  // Whether batching rested when the last record was encrypted.
  bool rested() const { return rested_; }

 private:
  aesmux_aes_key schedule_;
  bool rested_ = false;
  Bytes key_, iv_, in_, out_;
};

std::atomic<bool> g_parked{false};
std::atomic<bool> g_release{false};
std::atomic<std::thread::id> g_combiner;

// Parks the first thread that combines two requests or more until the
// test releases it.
void ParkCombiner(size_t batch) {
  if (batch < 2 || g_parked.exchange(true)) return;
  g_combiner = std::this_thread::get_id();
  g_release.wait(false);
}

// A debugger's pause, by the kernel: a tracer process, forked before the
// test's threads start, stops the combining thread with PTRACE_INTERRUPT
// (that thread alone; the others run on) until the test lets it go.
struct Tracer {
  int request[2] = {-1, -1};  // hook -> tracer: the combining thread's id
  int report[2] = {-1, -1};   // tracer -> test: 0 once stopped, or errno
  int command[2] = {-1, -1};  // test -> tracer: detach
  int resume[2] = {-1, -1};   // tracer -> hook: detached
  pid_t pid = -1;
};
Tracer g_tracer;
std::atomic<pid_t> g_combiner_tid{0};

void ReadAll(int fd, void *data, size_t size) {
  auto *bytes = static_cast<char *>(data);
  while (size > 0) {
    const ssize_t n = read(fd, bytes, size);
    if (n == 0) return;
    if (n < 0) {
      if (errno == EINTR) continue;
      return;
    }
    bytes += n;
    size -= static_cast<size_t>(n);
  }
}

void WriteAll(int fd, const void *data, size_t size) {
  while (write(fd, data, size) < 0 && errno == EINTR) {
  }
}

// The tracer's side: only system calls, as after fork() in a threaded
// process.
[[noreturn]] void TraceOne(const Tracer &tracer) {
  for (int fd : {tracer.request[1], tracer.report[0], tracer.command[1],
                 tracer.resume[0]}) {
    close(fd);
  }
  pid_t tid = 0;
  ReadAll(tracer.request[0], &tid, sizeof(tid));
  int error = 0;
  if (ptrace(PTRACE_SEIZE, tid, nullptr, nullptr) != 0 ||
      ptrace(PTRACE_INTERRUPT, tid, nullptr, nullptr) != 0) {
    error = errno;
  } else {
    int status = 0;
    while (waitpid(tid, &status, __WALL) < 0 && errno == EINTR) {
    }
    if (!WIFSTOPPED(status)) error = ECHILD;
  }
  WriteAll(tracer.report[1], &error, sizeof(error));
  if (error == 0) {
    char detach = 0;
    ReadAll(tracer.command[0], &detach, 1);
    ptrace(PTRACE_DETACH, tid, nullptr, nullptr);
  }
  WriteAll(tracer.resume[1], "r", 1);
  _exit(0);
}

// Has the tracer stop the first thread that combines two requests or more,
// and returns when the tracer has let it go.
void StopCombinerByTracer(size_t batch) {
  if (batch < 2 || g_parked.exchange(true)) return;
  g_combiner = std::this_thread::get_id();
  const pid_t tid = static_cast<pid_t>(syscall(SYS_gettid));
  g_combiner_tid = tid;
  WriteAll(g_tracer.request[1], &tid, sizeof(tid));
  char resumed = 0;
  ReadAll(g_tracer.resume[0], &resumed, 1);
}

// The scheduler's state of a thread of this process ('t': stopped by a
// tracer).
char ThreadState(pid_t tid) {
  std::ifstream stat("/proc/self/task/" + std::to_string(tid) + "/stat");
  std::string line;
  std::getline(stat, line);
  const size_t paren = line.rfind(") ");
  return paren == std::string::npos ? '?' : line[paren + 2];
}

class Combiner : public ::testing::Test {
 protected:
  // The threads of a test run on one CPU (threads inherit their creator's
  // CPUs), where they share its shard: threads on different CPUs batch in
  // different shards.
  void SetUp() override {
    ASSERT_EQ(sched_getaffinity(0, sizeof(cpus_), &cpus_), 0);
    cpu_set_t one;
    CPU_ZERO(&one);
    for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
      if (CPU_ISSET(cpu, &cpus_)) {
        CPU_SET(cpu, &one);
        break;
      }
    }
    ASSERT_EQ(sched_setaffinity(0, sizeof(one), &one), 0);
    const kernels::CpuFeatures cpu = kernels::DetectCpuFeatures();
    tier_ = kernels::BestTier(cpu);
    if (tier_ == nullptr) {
      GTEST_SKIP() << "no kernels on this CPU";
    }
    g_parked = false;
    g_release = false;
  }

  // Two threads encrypt until one of them, combining, takes the other's
  // request with its own and `hook` stops it; the other must then return,
  // with the right output, while the combiner is held (`held` is called
  // then, and `release` lets the combiner go on).
  void ExpectARequestWhoseCombinerStopsCompletes(
      batch::internal::CombineHook hook, const std::function<bool()> &stopped,
      const std::function<void()> &held,
      const std::function<void()> &release) {
    const kernels::Tier *tier = tier_;
    constexpr size_t kLen = 4096;
    Stream streams[2] = {{*tier, 3, kLen}, {*tier, 5, kLen}};
    // The batch layer times its first requests alone to learn how long a
    // request takes (its deadlines are from that).
    for (int i = 0; i < 8; ++i) ASSERT_TRUE(streams[0].Next(*tier));

    batch::internal::SetCombineHookForTesting(hook);
    std::atomic<int> finished{0};
    bool right[2] = {true, true};
    std::thread::id ids[2];
    std::vector<std::thread> threads;
    for (int t = 0; t < 2; ++t) {
      threads.emplace_back([&, t] {
        ids[t] = std::this_thread::get_id();
        while (!g_parked.load()) right[t] &= streams[t].Next(*tier);
        // The caller reuses its buffers at once.
        std::memset(streams[t].out().data(), 0xee, kLen);
        std::memset(streams[t].iv().data(), 0xee, 16);
        ++finished;
      });
    }
    // Not a timing test: a deadline is microseconds; this only keeps a
    // hang from hanging the suite.
    const auto give_up =
        std::chrono::steady_clock::now() + std::chrono::seconds(30);
    const bool is_stopped = stopped();
    while (is_stopped && finished.load() != 1 &&
           std::chrono::steady_clock::now() < give_up) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    if (is_stopped) {
      EXPECT_EQ(finished.load(), 1)
          << "the request of a thread whose combiner stopped did not complete";
      held();
    }
    release();
    g_parked = true;  // the threads stop even if the requests never met
    for (std::thread &thread : threads) thread.join();
    batch::internal::SetCombineHookForTesting(nullptr);
    if (!is_stopped) return;

    EXPECT_TRUE(right[0]);
    EXPECT_TRUE(right[1]);
    // The combiner went on, dropped the withdrawn request and left the
    // other thread's buffers alone.
    const int other = ids[0] == g_combiner.load() ? 1 : 0;
    EXPECT_EQ(streams[other].out(), Bytes(kLen, 0xee));
    EXPECT_EQ(streams[other].iv(), Bytes(16, 0xee));
    // Both go on batching, the one that withdrew with a new slot.
    std::thread again([&] { EXPECT_TRUE(streams[0].Next(*tier)); });
    EXPECT_TRUE(streams[1].Next(*tier));
    again.join();
  }

  void TearDown() override { sched_setaffinity(0, sizeof(cpus_), &cpus_); }

  const kernels::Tier *tier_ = nullptr;
  cpu_set_t cpus_;
};

// The combiner parks in the test hook.
TEST_F(Combiner, ARequestWhoseCombinerStopsCompletesAlone) {
  ExpectARequestWhoseCombinerStopsCompletes(
      ParkCombiner,
      [] {
        const auto give_up =
            std::chrono::steady_clock::now() + std::chrono::seconds(30);
        while (!g_parked.load() &&
               std::chrono::steady_clock::now() < give_up) {
          std::this_thread::sleep_for(std::chrono::milliseconds(1));
        }
        EXPECT_TRUE(g_parked.load()) << "the two requests never met in one batch";
        return g_parked.load();
      },
      [] {},
      [] {
        g_release = true;
        g_release.notify_all();
      });
}

// The combining thread is stopped by a tracer, as a debugger stops it.
TEST_F(Combiner, ARequestWhoseCombinerIsStoppedByATracerCompletesAlone) {
  for (int *pipe_fds : {g_tracer.request, g_tracer.report, g_tracer.command,
                        g_tracer.resume}) {
    ASSERT_EQ(pipe(pipe_fds), 0);
  }
  g_tracer.pid = fork();
  ASSERT_GE(g_tracer.pid, 0);
  if (g_tracer.pid == 0) TraceOne(g_tracer);
  int error = -1;
  bool skipped = false;
  ExpectARequestWhoseCombinerStopsCompletes(
      StopCombinerByTracer,
      [&] {
        // The tracer answers once the combining thread is stopped (it
        // waits for the two requests to meet, which takes microseconds).
        pollfd answer = {g_tracer.report[0], POLLIN, 0};
        if (poll(&answer, 1, 30000) == 1) {
          ReadAll(g_tracer.report[0], &error, sizeof(error));
        }
        skipped = error > 0;
        if (error < 0) ADD_FAILURE() << "the two requests never met in one batch";
        return error == 0;
      },
      [] {
        EXPECT_EQ(ThreadState(g_combiner_tid.load()), 't')
            << "the combining thread ran while its tracer held it";
      },
      [] {
        WriteAll(g_tracer.command[1], "d", 1);  // detach
      });
  // A tracer that never heard of a combiner hears EOF (closed only once
  // the threads, which write there, are gone).
  close(g_tracer.request[1]);
  g_tracer.request[1] = -1;
  int status = 0;
  waitpid(g_tracer.pid, &status, 0);
  for (int *pipe_fds : {g_tracer.request, g_tracer.report, g_tracer.command,
                        g_tracer.resume}) {
    for (int end = 0; end < 2; ++end) {
      if (pipe_fds[end] >= 0) close(pipe_fds[end]);
      pipe_fds[end] = -1;
    }
  }
  if (skipped) {
    GTEST_SKIP() << "this system forbids ptrace (" << std::strerror(error)
                 << "); the test hook's pause above stands in for it";
  }
}

// In a forked child, where no thread of an earlier test holds a slot in
// the combiner (this process's main thread holds one once a test here
// batched on it, and would keep any combiner from being freed): two threads
// encrypt until one, combining, takes the other's request and parks; the
// other withdraws its request, which leaves it holding no slot, and waits.
// The parked one finishes and exits, and the last provider instance
// "goes" (ReleaseIdleCombiner); then the waiting thread sends another
// request (`send_again`) and exits. Returns 0 if every output was right.
int WithdrawThenReleaseTheCombiner(const kernels::Tier &tier, bool send_again) {
  g_parked = false;
  g_release = false;
  g_combiner = std::thread::id();
  batch::internal::SetCombineHookForTesting(ParkCombiner);
  constexpr size_t kLen = 4096;
  Stream streams[2] = {{tier, 17, kLen}, {tier, 19, kLen}};
  std::atomic<bool> withdrawn{false}, go_on{false};
  std::atomic<int> wrong{0};
  std::thread threads[2];
  for (int t = 0; t < 2; ++t) {
    threads[t] = std::thread([&, t] {
      while (!g_parked.load()) wrong += !streams[t].Next(tier);
      if (std::this_thread::get_id() == g_combiner.load()) return;
      withdrawn = true;
      withdrawn.notify_all();
      go_on.wait(false);
      if (send_again) wrong += !streams[t].Next(tier);
    });
  }
  withdrawn.wait(false);
  while (g_combiner.load() == std::thread::id()) std::this_thread::yield();
  g_release = true;
  g_release.notify_all();
  const int parked = threads[0].get_id() == g_combiner.load() ? 0 : 1;
  threads[parked].join();  // its slot given back, the other's freed
  batch::internal::SetCombineHookForTesting(nullptr);
  batch::ReleaseIdleCombiner();
  go_on = true;
  go_on.notify_all();
  threads[1 - parked].join();
  batch::ReleaseIdleCombiner();  // nobody is left to keep it now
  return wrong.load() == 0 ? 0 : 1;
}

// A thread that withdrew its request holds no slot, but still has its
// place in its shard: the combiner freed when the last provider instance
// goes waits for it.
TEST_F(Combiner, AThreadThatWithdrewKeepsTheCombinerItBatchedIn) {
  if (ThreadsInAChild(2) < 2) {
    GTEST_SKIP() << "this sanitizer cannot run threads in a forked child";
  }
  for (const bool send_again : {false, true}) {
    EXPECT_EQ(
        RunInChild(
            [&] { return WithdrawThenReleaseTheCombiner(*tier_, send_again); },
            std::chrono::seconds(120)),
        "")
        << "the thread that withdrew "
        << (send_again ? "sent another request" : "exited");
  }
}

// A thread that sends one request, which gives it its slot in the shard,
// and then holds the slot, sending nothing more, until the object goes.
class IdlePeer {
 public:
  IdlePeer(const kernels::Tier &tier, uint8_t seed, size_t len)
      : stream_(tier, seed, len), thread_([this, &tier] {
          EXPECT_TRUE(stream_.Next(tier));
          holding_ = true;
          holding_.notify_all();
          leave_.wait(false);
        }) {
    holding_.wait(false);
  }
  IdlePeer(const IdlePeer &) = delete;
  IdlePeer &operator=(const IdlePeer &) = delete;
  ~IdlePeer() {
    leave_ = true;
    leave_.notify_all();
    thread_.join();
  }

 private:
  Stream stream_;
  std::atomic<bool> holding_{false}, leave_{false};
  std::thread thread_;
};

// One thread publishes request after request into a shard where another
// thread holds a slot but sends nothing: each waits for its peer until its
// deadline, runs alone, and after a few the router is told to rest
// batching requests of that size.
TEST_F(Combiner, WaitingForPeersInVainRestsBatching) {
  constexpr size_t kLen = 4096;
  Stream lonely(*tier_, 7, kLen);
  for (int i = 0; i < 8; ++i) ASSERT_TRUE(lonely.Next(*tier_));
  bool rests = false;
  {
    const IdlePeer idle(*tier_, 9, kLen);
    for (int i = 0; i < 16 && !rests; ++i) {
      ASSERT_TRUE(lonely.Next(*tier_));
      rests = lonely.rested();
    }
  }
  EXPECT_TRUE(rests) << "requests that waited in vain did not rest batching";
  // Requests of another size go on batching.
  Stream larger(*tier_, 11, 16 * kLen);
  ASSERT_TRUE(larger.Next(*tier_));
  EXPECT_FALSE(larger.rested()) << "a rest of 4 KiB requests held 64 KiB ones";
}

// Batching tries again after a long rest only if the process had its
// CPUs to itself meanwhile: after a rest of 32 ms during which the process
// slept (as beside other busy processes, it got a small share of its
// CPUs' time), requests of that size still run alone.
TEST_F(Combiner, ARestWhileTheProcessGotLittleCpuGoesOn) {
  constexpr size_t kLen = 2048;  // a size class no other test rests
  Stream lonely(*tier_, 13, kLen);
  for (int i = 0; i < 8; ++i) ASSERT_TRUE(lonely.Next(*tier_));
  const IdlePeer idle(*tier_, 15, kLen);
  // Rests of 2, 4, 8, 16 and 32 ms, each after requests that waited for
  // their peer in vain; the process sleeps through the shorter ones.
  int rests = 0;
  for (int i = 0; i < 200 && rests < 5; ++i) {
    ASSERT_TRUE(lonely.Next(*tier_));
    if (!lonely.rested()) continue;
    ++rests;
    if (rests < 5) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ASSERT_EQ(rests, 5) << "requests that waited in vain did not rest batching";
  std::this_thread::sleep_for(std::chrono::milliseconds(60));
  ASSERT_TRUE(lonely.Next(*tier_));
  EXPECT_TRUE(lonely.rested())
      << "batching tried again after a rest in which the process got "
         "almost none of its CPUs' time";
}

}  // namespace
}  // namespace aesmux::test
