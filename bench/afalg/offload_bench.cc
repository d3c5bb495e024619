// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
// offload_bench: aesmux's afalg path (io_uring) against OpenSSL's afalg
// ENGINE on the same kernel driver, AES-128-CBC encryption. Not a test.
//
//   offload_bench [--sizes 1024,16384,65536] [--streams 1,4,16]
//                 [--mode threads,jobs] [--seconds S] [--runs N]
//
// For each mode, stream count and size, the two sides take turns, N runs
// (3) of S seconds (2) each; per run every stream encrypts requests of
// that size through its own EVP context with its own key, as long as it
// can: on a thread of its own (threads), or as an OpenSSL ASYNC job, all
// jobs on one thread (jobs, as `openssl speed -async_jobs N` does). aesmux
// runs under afalg = auto with cbc.afalg_min_len = 0 (every request to
// the offload driver the probe found); the engine binds "cbc(aes)", the
// implementation of highest priority. Prints per cell, medians of the
// runs: requests per second, system calls per request (every syscall the
// streams' threads made, counted by the kernel: perf's
// raw_syscalls:sys_enter tracepoint, so tracefs must be mounted), and, in
// the guest of the VM suites, the device's completed requests per request
// (scripts/vm-control.py: 1.00 means every request reached the device).
//
// Lines: "cell <mode> <streams> <bytes> <side> <req/s> <syscalls/req>
// <device/req>" per run, then the table.
#include <linux/perf_event.h>
#include <openssl/async.h>
#include <openssl/engine.h>
#include <openssl/evp.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "tests/afalg/afalg_support.h"
#include "bench/support/bench_util.h"

using namespace aesmux;
using test::Die;

const char aesmux::test::kBenchName[] = "offload_bench";

namespace {

using Clock = std::chrono::steady_clock;

// Counts this thread's system calls (the raw_syscalls:sys_enter
// tracepoint) from construction to Read().
class SyscallCounter {
 public:
  SyscallCounter() {
    static const long id = TracepointId();
    perf_event_attr attr{};
    attr.type = PERF_TYPE_TRACEPOINT;
    attr.size = sizeof(attr);
    attr.config = static_cast<uint64_t>(id);
    attr.exclude_kernel = 0;
    fd_ = static_cast<int>(syscall(__NR_perf_event_open, &attr, 0, -1, -1, 0));
    if (fd_ < 0) Die(std::string("perf_event_open: ") + std::strerror(errno));
  }
  ~SyscallCounter() { close(fd_); }
  uint64_t Read() const {
    uint64_t count = 0;
    if (read(fd_, &count, sizeof(count)) != sizeof(count)) {
      Die("reading the syscall counter");
    }
    return count;
  }

 private:
  static long TracepointId() {
    for (const char *path :
         {"/sys/kernel/tracing/events/raw_syscalls/sys_enter/id",
          "/sys/kernel/debug/tracing/events/raw_syscalls/sys_enter/id"}) {
      std::ifstream in(path);
      long id = -1;
      if (in >> id) return id;
    }
    Die("no raw_syscalls:sys_enter tracepoint (mount tracefs on "
        "/sys/kernel/tracing)");
  }
  int fd_ = -1;
};

// One stream: an EVP context with its own key, encrypting `size` bytes per
// request (CBC chaining on, padding off).
struct Stream {
  Stream(const EVP_CIPHER *cipher, ENGINE *engine, size_t size, uint64_t seed)
      : ctx(EVP_CIPHER_CTX_new()), in(size), out(size) {
    std::mt19937_64 rng(seed);
    uint8_t key[16], iv[16];
    for (uint8_t &b : key) b = static_cast<uint8_t>(rng());
    for (uint8_t &b : iv) b = static_cast<uint8_t>(rng());
    for (uint8_t &b : in) b = static_cast<uint8_t>(rng());
    if (ctx == nullptr ||
        !EVP_EncryptInit_ex(ctx.get(), cipher, engine, key, iv)) {
      Die("EVP_EncryptInit_ex");
    }
    EVP_CIPHER_CTX_set_padding(ctx.get(), 0);
  }
  void Request() {
    int len = 0;
    if (!EVP_EncryptUpdate(ctx.get(), out.data(), &len, in.data(),
                           static_cast<int>(in.size()))) {
      Die("EVP_EncryptUpdate");
    }
    ++requests;
  }
  test::CipherCtxPtr ctx;
  std::vector<uint8_t> in, out;
  uint64_t requests = 0;
  Clock::time_point deadline;
};

int StreamJob(void *arg) {
  Stream *stream = *static_cast<Stream **>(arg);
  while (Clock::now() < stream->deadline) stream->Request();
  return 1;
}

struct Result {
  double requests_per_second = 0;
  double syscalls_per_request = 0;
  double device_per_request = -1;  // unknown outside the VM guest
};

// One run of `streams` streams for `seconds`.
Result Run(const EVP_CIPHER *cipher, ENGINE *engine, bool jobs, int streams,
           size_t size, double seconds) {
  std::vector<std::unique_ptr<Stream>> all;
  for (int s = 0; s < streams; ++s) {
    all.push_back(std::make_unique<Stream>(cipher, engine, size, 7 + s));
    all.back()->Request();  // sockets, kernel keys: not counted
    all.back()->requests = 0;
  }
  const std::optional<uint64_t> device_before = test::DeviceRequests();
  std::atomic<uint64_t> syscalls{0};
  const auto start = Clock::now();
  const auto deadline =
      start + std::chrono::duration_cast<Clock::duration>(
                  std::chrono::duration<double>(seconds));
  for (auto &stream : all) stream->deadline = deadline;
  std::vector<std::thread> threads;
  if (jobs) {
    threads.emplace_back([&] {
      if (!ASYNC_init_thread(streams, streams)) Die("ASYNC_init_thread");
      std::vector<void *> args;
      for (auto &stream : all) args.push_back(stream.get());
      SyscallCounter counter;
      for (int result : test::RunJobs(streams, StreamJob, args)) {
        if (result != 1) Die("a job failed");
      }
      syscalls += counter.Read();
      ASYNC_cleanup_thread();
    });
  } else {
    for (auto &stream : all) {
      threads.emplace_back([&, s = stream.get()] {
        SyscallCounter counter;
        while (Clock::now() < s->deadline) s->Request();
        syscalls += counter.Read();
      });
    }
  }
  for (std::thread &thread : threads) thread.join();
  const double elapsed =
      std::chrono::duration<double>(Clock::now() - start).count();
  const std::optional<uint64_t> device_after = test::DeviceRequests();
  uint64_t requests = 0;
  for (auto &stream : all) requests += stream->requests;
  if (requests == 0) Die("no request completed");
  Result result;
  result.requests_per_second = requests / elapsed;
  result.syscalls_per_request = static_cast<double>(syscalls) / requests;
  if (device_before && device_after) {
    result.device_per_request =
        static_cast<double>(*device_after - *device_before) / requests;
  }
  return result;
}

}  // namespace

int main(int argc, char **argv) {
  std::vector<int> sizes = {1024, 16384, 65536};
  std::vector<int> stream_counts = {1, 4, 16};
  std::vector<std::string> modes = {"threads", "jobs"};
  double seconds = 2;
  int runs = 3;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const bool has_value = i + 1 < argc;
    if (arg == "--sizes" && has_value) {
      sizes = test::ParseList(argv[++i]);
    } else if (arg == "--streams" && has_value) {
      stream_counts = test::ParseList(argv[++i]);
    } else if (arg == "--mode" && has_value) {
      modes = test::SplitList(argv[++i]);
    } else if (arg == "--seconds" && has_value) {
      seconds = std::atof(argv[++i]);
    } else if (arg == "--runs" && has_value) {
      runs = std::atoi(argv[++i]);
    } else {
      std::fprintf(stderr,
                   "usage: offload_bench [--sizes 1024,16384,65536] "
                   "[--streams 1,4,16] [--mode threads,jobs] [--seconds S] "
                   "[--runs N]\n");
      return 2;
    }
  }

  ENGINE *engine = ENGINE_by_id("afalg");
  if (engine == nullptr || !ENGINE_init(engine)) {
    Die("OpenSSL's afalg engine is not available (ENGINESDIR, or no AF_ALG)");
  }
  const EVP_CIPHER *engine_cipher = ENGINE_get_cipher(engine, NID_aes_128_cbc);
  if (engine_cipher == nullptr) Die("the afalg engine has no AES-128-CBC");
  auto env = test::LoadAfalgEnv({"afalg = auto", "cbc.afalg_min_len = 0"});
  if (!env->loaded()) Die(env->error());
  const std::string state = test::AfalgReport(*env, "cbc");
  if (!state.starts_with("on")) Die("aesmux's afalg path is off: " + state);
  test::CipherPtr aesmux_cipher = env->Aesmux("AES-128-CBC");
  std::printf("aesmux: afalg.cbc %s\nengine: %s (binds cbc(aes): the "
              "implementation of highest priority)\n",
              state.c_str(), ENGINE_get_name(engine));
  std::printf("%d runs of %.1f s per side and cell, alternating; medians\n",
              runs, seconds);
  std::fflush(stdout);

  struct Row {
    std::string mode;
    int streams, size;
    Result side[2];  // engine, aesmux
  };
  std::vector<Row> rows;
  for (const std::string &mode : modes) {
    const bool jobs = mode == "jobs";
    if (!jobs && mode != "threads") Die("unknown mode " + mode);
    for (int streams : stream_counts) {
      for (int size : sizes) {
        std::vector<Result> results[2];
        for (int run = 0; run < runs; ++run) {
          for (int side = 0; side < 2; ++side) {
            const Result r = Run(side == 0 ? engine_cipher : aesmux_cipher.get(),
                                 side == 0 ? engine : nullptr, jobs, streams,
                                 static_cast<size_t>(size), seconds);
            std::printf("cell %s %d %d %s %.1f %.2f %.2f\n", mode.c_str(),
                        streams, size, side == 0 ? "engine" : "aesmux",
                        r.requests_per_second, r.syscalls_per_request,
                        r.device_per_request);
            std::fflush(stdout);
            results[side].push_back(r);
          }
        }
        Row row{mode, streams, size, {}};
        for (int side = 0; side < 2; ++side) {
          std::vector<double> rps, sys, dev;
          for (const Result &r : results[side]) {
            rps.push_back(r.requests_per_second);
            sys.push_back(r.syscalls_per_request);
            dev.push_back(r.device_per_request);
          }
          row.side[side] = {test::Median(rps), test::Median(sys),
                            test::Median(dev)};
        }
        rows.push_back(row);
      }
    }
  }

  std::printf("\n%-8s %7s %6s | %10s %9s %7s | %10s %9s %7s | %6s\n", "mode",
              "streams", "bytes", "engine r/s", "sys/req", "dev/req",
              "aesmux r/s", "sys/req", "dev/req", "ratio");
  for (const Row &row : rows) {
    std::printf("%-8s %7d %6d | %10.1f %9.2f %7.2f | %10.1f %9.2f %7.2f | "
                "%5.2fx\n",
                row.mode.c_str(), row.streams, row.size,
                row.side[0].requests_per_second,
                row.side[0].syscalls_per_request,
                row.side[0].device_per_request,
                row.side[1].requests_per_second,
                row.side[1].syscalls_per_request,
                row.side[1].device_per_request,
                row.side[1].requests_per_second /
                    row.side[0].requests_per_second);
  }
  ENGINE_finish(engine);
  ENGINE_free(engine);
  return 0;
}
