// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
// threads_bench: many threads encrypting CBC records through EVP at once,
// the shape of a multi-threaded TLS server's senders, beside CPU-bound
// processes (a busy host), on OpenSSL's default provider, on aesmux with
// batching off (cbc.mb_max_len = 0: every record on the single-stream
// kernel) and on aesmux with batching on as by default (records of at
// least cbc.mb_threads_min_len from more threads than CPUs combined into
// multi-buffer lanes; AESMUX_CBC_MB_THREADS_MIN_LEN=0 in the environment
// combines them at every size, which the batching-off side ignores). Not
// a test.
//
// For every cell (background load x threads x record size): --load
// processes that only spin are started, then the three sides run in
// alternating runs, --runs times each, every thread with its own key and
// IV set once (EVP_EncryptInit_ex2, padding off) encrypting one record of
// --bytes per EVP_EncryptUpdate from its own 64-byte aligned buffers until
// the run's --seconds are over. A row gives the median total MB/s of each
// side, the ratios, the share of records that ran in lanes ("mb %") and
// the lanes per kernel call (from the statistics of the batching runs),
// and the latency of one request: its median and 99th percentile with
// batching off ("solo": the request run alone, under the same threads and
// load) and its 99th percentile with batching. "p99 vs bound" is the
// batching p99 over twice the solo p99 plus 50 us: at most 1 where
// batching keeps its latency promise.
//
//   threads_bench [--alg AES-128-CBC] [--bytes 16,...,65536]
//                 [--threads 1,2,4,8,16,32,64] [--load 0,1,2] [--runs 5]
//                 [--seconds 1] [--kernels NAME]
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <latch>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "tests/provider/aligned_buffer.h"
#include "bench/support/bench_util.h"
#include "tests/support/provider_env.h"

namespace aesmux::test {

const char kBenchName[] = "threads_bench";

namespace {

struct Options {
  std::string alg = "AES-128-CBC";
  std::vector<int> bytes = {16, 64, 256, 1024, 4096, 8192, 16384, 65536};
  std::vector<int> threads = {1, 2, 4, 8, 16, 32, 64};
  std::vector<int> loads = {0};
  int runs = 5;
  double seconds = 1;
  std::string kernels;  // empty: aesmux's own choice
};

constexpr char kUsage[] =
    "usage: threads_bench [--alg AES-128-CBC] [--bytes 16,...,65536] "
    "[--threads 1,2,4,8,16,32,64] [--load 0,1,2] [--runs 5] [--seconds 1] "
    "[--kernels NAME]";

Options ParseOptions(int argc, char **argv) {
  Options opt;
  ArgReader args(argc, argv);
  while (args.Next()) {
    const std::string &arg = args.arg();
    if (arg == "--alg") {
      opt.alg = args.Value();
    } else if (arg == "--bytes") {
      opt.bytes = ParseList(args.Value());
    } else if (arg == "--threads") {
      opt.threads = ParseList(args.Value());
      for (int &n : opt.threads) n = std::max(1, n);
    } else if (arg == "--load") {
      opt.loads = ParseList(args.Value());
      for (int &n : opt.loads) n = std::max(0, n);
    } else if (arg == "--runs") {
      opt.runs = args.Int(1);
    } else if (arg == "--seconds") {
      opt.seconds = args.Double(0.05);
    } else if (arg == "--kernels") {
      opt.kernels = args.Value();
    } else {
      Die(kUsage);
    }
  }
  // Whole blocks: with padding off, EVP would hold a partial block back.
  for (int bytes : opt.bytes) {
    if (bytes < 16 || bytes % 16 != 0) {
      Die("--bytes: each size must be a positive multiple of 16");
    }
  }
  if (opt.bytes.empty() || opt.threads.empty() || opt.loads.empty()) {
    Die(kUsage);
  }
  std::transform(opt.alg.begin(), opt.alg.end(), opt.alg.begin(),
                 [](unsigned char c) { return std::toupper(c); });
  return opt;
}

using Clock = std::chrono::steady_clock;

// CPU-bound processes, spinning until the object goes.
class BackgroundLoad {
 public:
  explicit BackgroundLoad(int processes) {
    for (int i = 0; i < processes; ++i) {
      const pid_t pid = fork();
      if (pid < 0) Die("fork failed");
      if (pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        for (;;) asm volatile("");
      }
      children_.push_back(pid);
    }
  }
  ~BackgroundLoad() {
    for (pid_t pid : children_) kill(pid, SIGKILL);
    for (pid_t pid : children_) waitpid(pid, nullptr, 0);
  }
  BackgroundLoad(const BackgroundLoad &) = delete;
  BackgroundLoad &operator=(const BackgroundLoad &) = delete;

 private:
  std::vector<pid_t> children_;
};

// One run of one side: total bytes per second, and the latencies (ns) of
// the requests sampled.
struct RunResult {
  double rate = 0;
  std::vector<uint64_t> latencies;
};

// `num_threads` threads encrypting records of `bytes` with `cipher` for
// about `seconds`. Keys, buffers and contexts are set up before the
// threads are released together; the clock runs from the release until
// the last thread has finished its last record. Records under 4 KiB are
// timed one in 4096 / bytes, so that reading the clock does not weigh on
// them.
RunResult RunThreads(const EVP_CIPHER *cipher, int num_threads, size_t bytes,
                     double seconds) {
  const int key_len = EVP_CIPHER_get_key_length(cipher);
  const uint64_t sample_every = std::max<size_t>(1, 4096 / bytes);
  std::latch ready(num_threads);
  std::atomic<bool> go{false}, stop{false};
  std::vector<uint64_t> records(num_threads, 0);
  std::vector<std::vector<uint64_t>> latencies(num_threads);
  std::vector<std::thread> pool;
  for (int t = 0; t < num_threads; ++t) {
    pool.emplace_back([&, t] {
      AlignedBuffer in(bytes), out(bytes);
      std::fill_n(in.data(), bytes, static_cast<uint8_t>(t));
      std::array<uint8_t, 32> key;
      std::array<uint8_t, 16> iv;
      for (size_t i = 0; i < key.size(); ++i) {
        key[i] = static_cast<uint8_t>(i * 7 + t);
      }
      iv.fill(static_cast<uint8_t>(0xa0 + t));
      CipherCtxPtr ctx = NewCipherCtx();
      const bool ok = ctx != nullptr &&
                      key_len <= static_cast<int>(key.size()) &&
                      EVP_EncryptInit_ex2(ctx.get(), cipher, key.data(),
                                          iv.data(), nullptr) == 1;
      if (ok) EVP_CIPHER_CTX_set_padding(ctx.get(), 0);
      std::vector<uint64_t> &mine = latencies[t];
      mine.reserve(1 << 16);
      ready.count_down();
      go.wait(false);
      if (!ok) {
        Die("cannot set up " + std::string(EVP_CIPHER_get0_name(cipher)));
      }
      uint64_t count = 0;
      while (!stop.load(std::memory_order_relaxed)) {
        const bool timed = count % sample_every == 0;
        const Clock::time_point start = timed ? Clock::now() : Clock::time_point();
        int out_len = 0;
        if (EVP_EncryptUpdate(ctx.get(), out.data(), &out_len, in.data(),
                              static_cast<int>(bytes)) != 1 ||
            out_len != static_cast<int>(bytes)) {
          Die("EVP_EncryptUpdate failed");
        }
        if (timed) {
          mine.push_back(static_cast<uint64_t>(
              std::chrono::duration_cast<std::chrono::nanoseconds>(
                  Clock::now() - start)
                  .count()));
        }
        ++count;
      }
      records[t] = count;
    });
  }
  ready.wait();
  const auto start = Clock::now();
  go = true;
  go.notify_all();
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
  stop = true;
  for (std::thread &thread : pool) thread.join();
  const double elapsed =
      std::chrono::duration<double>(Clock::now() - start).count();
  RunResult result;
  uint64_t total = 0;
  for (int t = 0; t < num_threads; ++t) {
    total += records[t];
    result.latencies.insert(result.latencies.end(), latencies[t].begin(),
                            latencies[t].end());
  }
  result.rate = static_cast<double>(total * bytes) / elapsed;
  return result;
}

// The `fraction` quantile of `values` (not empty), in microseconds.
double QuantileUs(std::vector<uint64_t> &values, double fraction) {
  const size_t k = std::min(values.size() - 1,
                            static_cast<size_t>(fraction * values.size()));
  std::nth_element(values.begin(), values.begin() + k, values.end());
  return static_cast<double>(values[k]) / 1000;
}

// The batching counters of one algorithm (process-wide: every aesmux
// instance in this process counts into the same statistics).
struct BatchCounts {
  uint64_t mb_requests = 0, simd_requests = 0, batches = 0, lanes = 0;
};

BatchCounts Counts(const ProviderEnv &env, const std::string &alg) {
  return {env.Stat(alg, "mb", "requests"), env.Stat(alg, "simd", "requests"),
          env.Stat(alg, "mb.batches"), env.Stat(alg, "mb.lanes")};
}

BatchCounts operator-(const BatchCounts &a, const BatchCounts &b) {
  return {a.mb_requests - b.mb_requests, a.simd_requests - b.simd_requests,
          a.batches - b.batches, a.lanes - b.lanes};
}

BatchCounts &operator+=(BatchCounts &a, const BatchCounts &b) {
  a.mb_requests += b.mb_requests;
  a.simd_requests += b.simd_requests;
  a.batches += b.batches;
  a.lanes += b.lanes;
  return a;
}

std::unique_ptr<ProviderEnv> LoadAesmux(const Options &opt,
                                        std::vector<std::string> settings) {
  if (!opt.kernels.empty()) settings.push_back("kernels = " + opt.kernels);
  auto env = std::make_unique<ProviderEnv>(settings);
  if (!env->loaded()) Die("aesmux did not load: " + env->error());
  return env;
}

// What the summary at the end reports.
struct Summary {
  double worst_ratio = 1e9;
  std::string worst_ratio_cell;
  double worst_latency = 0;
  std::string worst_latency_cell;
};

void Run(const Options &opt) {
  // The environment overrides openssl.cnf: it would give both aesmux
  // instances the same setting.
  if (std::getenv("AESMUX_CBC_MB_MAX_LEN") != nullptr) {
    Die("unset AESMUX_CBC_MB_MAX_LEN: it overrides cbc.mb_max_len of both "
        "aesmux configurations");
  }
  const auto batching = LoadAesmux(opt, {});
  const auto single = LoadAesmux(opt, {"cbc.mb_max_len = 0"});
  enum Side { kDefault, kOff, kMb, kSides };
  const CipherPtr ciphers[kSides] = {batching->Default(opt.alg),
                                     single->Aesmux(opt.alg),
                                     batching->Aesmux(opt.alg)};
  for (const CipherPtr &cipher : ciphers) {
    if (cipher == nullptr) Die("cannot fetch " + opt.alg);
  }
  std::printf("# %s, one record per EVP_EncryptUpdate; %s; %u CPUs\n",
              opt.alg.c_str(), OpenSSL_version(OPENSSL_VERSION),
              std::thread::hardware_concurrency());
  std::printf(
      "# aesmux tier %s; median of %d alternating runs of %.2f s; "
      "\"off\": cbc.mb_max_len = 0; \"mb\": the default settings\n",
      batching->ProviderParam("tier").c_str(), opt.runs, opt.seconds);
  std::printf(
      "| load | threads | bytes | default MB/s | off MB/s | mb MB/s | "
      "mb / off | mb / default | mb %% | lanes / batch | solo p50 us | "
      "solo p99 us | mb p99 us | p99 vs bound |\n");
  std::printf(
      "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
      "---:|\n");
  std::fflush(stdout);
  Summary summary;
  for (int load : opt.loads) {
    const BackgroundLoad background(load);
    for (int num_threads : opt.threads) {
      for (int bytes : opt.bytes) {
        std::array<std::vector<double>, kSides> rates;
        std::array<std::vector<uint64_t>, kSides> latencies;
        BatchCounts mb_side, off_side;
        for (int r = 0; r < opt.runs; ++r) {
          for (int side = 0; side < kSides; ++side) {
            const BatchCounts before = Counts(*batching, opt.alg);
            RunResult run = RunThreads(ciphers[side].get(), num_threads,
                                       static_cast<size_t>(bytes), opt.seconds);
            const BatchCounts delta = Counts(*batching, opt.alg) - before;
            if (side == kOff) off_side += delta;
            if (side == kMb) mb_side += delta;
            rates[side].push_back(run.rate);
            latencies[side].insert(latencies[side].end(),
                                   run.latencies.begin(), run.latencies.end());
          }
        }
        // With batching off nothing may reach the lanes, or the comparison
        // is not what it claims to be.
        if (off_side.mb_requests != 0 || off_side.batches != 0) {
          Die("cbc.mb_max_len = 0 did not turn batching off");
        }
        for (const auto &side : latencies) {
          if (side.empty()) Die("a run timed no request");
        }
        const double base = Median(rates[kDefault]);
        const double off = Median(rates[kOff]);
        const double mb = Median(rates[kMb]);
        const uint64_t requests = mb_side.mb_requests + mb_side.simd_requests;
        const double solo_p50 = QuantileUs(latencies[kOff], 0.50);
        const double solo_p99 = QuantileUs(latencies[kOff], 0.99);
        const double mb_p99 = QuantileUs(latencies[kMb], 0.99);
        const double vs_bound = mb_p99 / (2 * solo_p99 + 50);
        std::printf(
            "| %d | %d | %d | %.0f | %.0f | %.0f | %.2f | %.2f | %.1f | %.2f "
            "| %.1f | %.1f | %.1f | %.2f |\n",
            load, num_threads, bytes, base / 1e6, off / 1e6, mb / 1e6,
            mb / off, mb / base,
            requests == 0 ? 0.0 : 100.0 * mb_side.mb_requests / requests,
            mb_side.batches == 0
                ? 0.0
                : static_cast<double>(mb_side.lanes) / mb_side.batches,
            solo_p50, solo_p99, mb_p99, vs_bound);
        std::fflush(stdout);
        const std::string cell = "load " + std::to_string(load) + ", " +
                                 std::to_string(num_threads) + " threads, " +
                                 std::to_string(bytes) + " B";
        if (mb / off < summary.worst_ratio) {
          summary.worst_ratio = mb / off;
          summary.worst_ratio_cell = cell;
        }
        if (vs_bound > summary.worst_latency) {
          summary.worst_latency = vs_bound;
          summary.worst_latency_cell = cell;
        }
      }
    }
  }
  std::printf("# lowest mb / off: %.2f (%s); highest p99 vs bound: %.2f (%s)\n",
              summary.worst_ratio, summary.worst_ratio_cell.c_str(),
              summary.worst_latency, summary.worst_latency_cell.c_str());
}

}  // namespace
}  // namespace aesmux::test

int main(int argc, char **argv) {
  aesmux::test::Run(aesmux::test::ParseOptions(argc, argv));
  return 0;
}
