// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
// threads_bench: many threads encrypting CBC records through EVP at once,
// the shape of a multi-threaded TLS server's senders, on OpenSSL's default
// provider, on aesmux with batching off (cbc.mb_max_len = 0: every record
// on the single-stream kernel) and on aesmux with batching on as by
// default (concurrent records of at least cbc.mb_threads_min_len combined
// into multi-buffer lanes; AESMUX_CBC_MB_THREADS_MIN_LEN=0 in the
// environment combines them at every size, which the batching-off side
// ignores). Not a test.
//
// Every thread sets its own key and IV once (EVP_EncryptInit_ex2, padding
// off), then encrypts one record of --bytes per EVP_EncryptUpdate from its
// own 64-byte aligned buffers until the run's --seconds are over. The three
// sides run in alternating runs, --runs times each; the table shows the
// median total MB/s of each and the ratios mb / default and mb / single.
// The statistics of the batching-on runs show how many records ran in
// multi-buffer lanes ("mb %") and the mean lanes per kernel call.
//
//   threads_bench [--alg AES-128-CBC] [--bytes 16384]
//                 [--threads 1,2,4,8,16,32] [--runs 5] [--seconds 1]
//                 [--kernels NAME]
#include <openssl/crypto.h>
#include <openssl/evp.h>

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
#include "tests/support/bench_util.h"
#include "tests/support/provider_env.h"

namespace aesmux::test {

const char kBenchName[] = "threads_bench";

namespace {

struct Options {
  std::string alg = "AES-128-CBC";
  int bytes = 16384;
  std::vector<int> threads = {1, 2, 4, 8, 16, 32};
  int runs = 5;
  double seconds = 1;
  std::string kernels;  // empty: aesmux's own choice
};

Options ParseOptions(int argc, char **argv) {
  Options opt;
  ArgReader args(argc, argv);
  while (args.Next()) {
    const std::string &arg = args.arg();
    if (arg == "--alg") {
      opt.alg = args.Value();
    } else if (arg == "--bytes") {
      opt.bytes = args.Int();
    } else if (arg == "--threads") {
      opt.threads = ParseList(args.Value());
      for (int &n : opt.threads) n = std::max(1, n);
    } else if (arg == "--runs") {
      opt.runs = args.Int(1);
    } else if (arg == "--seconds") {
      opt.seconds = args.Double(0.05);
    } else if (arg == "--kernels") {
      opt.kernels = args.Value();
    } else {
      Die("usage: threads_bench [--alg AES-128-CBC] [--bytes 16384] "
          "[--threads 1,2,4,8,16,32] [--runs 5] [--seconds 1] "
          "[--kernels NAME]");
    }
  }
  // Whole blocks: with padding off, EVP would hold a partial block back.
  if (opt.bytes < 16 || opt.bytes % 16 != 0) {
    Die("--bytes must be a positive multiple of 16");
  }
  std::transform(opt.alg.begin(), opt.alg.end(), opt.alg.begin(),
                 [](unsigned char c) { return std::toupper(c); });
  return opt;
}

using Clock = std::chrono::steady_clock;

// Total bytes per second of `num_threads` threads encrypting records of
// `bytes` with `cipher` for about `seconds`. Keys, buffers and contexts are
// set up before the threads are released together; the clock runs from the
// release until the last thread has finished its last record.
double RunThreads(const EVP_CIPHER *cipher, int num_threads, size_t bytes,
                  double seconds) {
  const int key_len = EVP_CIPHER_get_key_length(cipher);
  std::latch ready(num_threads);
  std::atomic<bool> go{false}, stop{false};
  std::vector<uint64_t> records(num_threads, 0);
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
      ready.count_down();
      go.wait(false);
      if (!ok) {
        Die("cannot set up " + std::string(EVP_CIPHER_get0_name(cipher)));
      }
      uint64_t count = 0;
      while (!stop.load(std::memory_order_relaxed)) {
        int out_len = 0;
        if (EVP_EncryptUpdate(ctx.get(), out.data(), &out_len, in.data(),
                              static_cast<int>(bytes)) != 1 ||
            out_len != static_cast<int>(bytes)) {
          Die("EVP_EncryptUpdate failed");
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
  uint64_t total = 0;
  for (uint64_t count : records) total += count;
  return static_cast<double>(total * bytes) / elapsed;
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

void Run(const Options &opt) {
  // The environment overrides openssl.cnf: it would give both aesmux
  // instances the same setting.
  if (std::getenv("AESMUX_CBC_MB_MAX_LEN") != nullptr) {
    Die("unset AESMUX_CBC_MB_MAX_LEN: it overrides cbc.mb_max_len of both "
        "aesmux configurations");
  }
  const auto batching = LoadAesmux(opt, {});
  const auto single = LoadAesmux(opt, {"cbc.mb_max_len = 0"});
  const CipherPtr ciphers[] = {batching->Default(opt.alg),
                               single->Aesmux(opt.alg),
                               batching->Aesmux(opt.alg)};
  for (const CipherPtr &cipher : ciphers) {
    if (cipher == nullptr) Die("cannot fetch " + opt.alg);
  }
  std::printf("# %s, %d-byte records, one EVP_EncryptUpdate each; %s\n",
              opt.alg.c_str(), opt.bytes, OpenSSL_version(OPENSSL_VERSION));
  std::printf("# aesmux tier %s; median of %d alternating runs of %.2f s\n",
              batching->ProviderParam("tier").c_str(), opt.runs, opt.seconds);
  std::printf("%7s %12s %12s %12s %10s %9s %6s %11s\n", "threads",
              "default MB/s", "single MB/s", "mb MB/s", "mb/default",
              "mb/single", "mb %", "lanes/batch");
  for (int num_threads : opt.threads) {
    std::array<std::vector<double>, 3> rates;
    BatchCounts mb_side, single_side;
    for (int r = 0; r < opt.runs; ++r) {
      for (size_t side = 0; side < rates.size(); ++side) {
        const BatchCounts before = Counts(*batching, opt.alg);
        rates[side].push_back(RunThreads(ciphers[side].get(), num_threads,
                                         opt.bytes, opt.seconds));
        const BatchCounts delta = Counts(*batching, opt.alg) - before;
        if (side == 1) single_side += delta;
        if (side == 2) mb_side += delta;
      }
    }
    // With batching off nothing may reach the lanes, or the comparison is
    // not what it claims to be.
    if (single_side.mb_requests != 0 || single_side.batches != 0) {
      Die("cbc.mb_max_len = 0 did not turn batching off");
    }
    const double base = Median(rates[0]);
    const double lone = Median(rates[1]);
    const double mb = Median(rates[2]);
    const uint64_t requests = mb_side.mb_requests + mb_side.simd_requests;
    std::printf("%7d %12.0f %12.0f %12.0f %10.2f %9.2f %6.1f %11.2f\n",
                num_threads, base / 1e6, lone / 1e6, mb / 1e6, mb / base,
                mb / lone,
                requests == 0 ? 0.0 : 100.0 * mb_side.mb_requests / requests,
                mb_side.batches == 0
                    ? 0.0
                    : static_cast<double>(mb_side.lanes) / mb_side.batches);
    std::fflush(stdout);
  }
}

}  // namespace
}  // namespace aesmux::test

int main(int argc, char **argv) {
  aesmux::test::Run(aesmux::test::ParseOptions(argc, argv));
  return 0;
}
