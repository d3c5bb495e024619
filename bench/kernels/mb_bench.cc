// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
// mb_bench: multi-buffer CBC encryption through the lane manager against
// one stream on the single-stream aesni kernel and on OpenSSL's default
// provider. Not a test.
//
// A round submits `jobs` jobs of `bytes` each (every job its own key, IV
// and buffer, encrypted in place) and flushes until all are returned, the
// shape of `openssl speed -async_jobs <jobs>`. The single-stream sides
// encrypt one message of `bytes` per call (OpenSSL: one EVP_CipherUpdate on
// a long-lived context). The sides run in alternating batches of about --ms
// milliseconds, --runs times each; the table shows medians in cycles per
// byte of aggregate throughput (core cycles: the clock is measured with a
// chain of dependent adds) and the ratios single-stream / multi-buffer.
// The "kernel" rows call the tier's kernel directly with every lane busy:
// the difference to the manager rows is the manager's overhead. The last
// column shows the calls of one manager round by kernel (aesni: one by one
// on the single-stream kernel). --min-lanes overrides the tier's min_lanes,
// to measure the break-even; --vs-widest adds, in the same alternating
// batches, a manager restricted to the tier's widest kernel (every batch
// on it, as before the narrower kernels) and the gain over it.
//
//   mb_bench [--tier NAME] [--runs N] [--ms M] [--key-bits 128,192,256]
//            [--jobs 1,2,4,8,16] [--bytes 1024,16384] [--same-key]
//            [--min-lanes N] [--vs-widest]
#include <openssl/evp.h>
#include <openssl/provider.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "kernels/kernels.h"
#include "kernels/mb/lane_manager.h"
#include "kernels/tiers.h"
#include "bench/support/bench_util.h"

const char aesmux::test::kBenchName[] = "mb_bench";

namespace aesmux::kernels::mb {
namespace {

using test::ArgReader;
using test::Calibrate;
using test::Die;
using test::Median;
using test::Op;
using test::ParseList;
using test::Time;

struct Options {
  std::string tier;
  int runs = 11;
  double batch_ms = 5;
  std::vector<int> key_bits = {128, 256};
  std::vector<int> jobs = {1, 2, 4, 8, 16};
  std::vector<int> bytes = {1024, 16384};
  bool same_key = false;
  int min_lanes = -1;  // the tier's
  bool vs_widest = false;
};

using Clock = std::chrono::steady_clock;

double Seconds(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// The core clock in Hz: a chain of dependent adds runs one per cycle
// (register operands: recent cores fold add-immediate chains at rename).
double CoreHz() {
  double best = 1e9;
  for (int attempt = 0; attempt < 5; ++attempt) {
    uint64_t x = 1;
    const auto start = Clock::now();
    for (int i = 0; i < 200000; ++i) {
      asm volatile(".rept 100\n\tadd %0, %0\n\t.endr" : "+r"(x));
    }
    best = std::min(best, Seconds(start));
  }
  return 200000 * 100 / best;
}

// Median bytes per second of each op, run in alternating batches.
std::vector<double> Compare(const std::vector<std::pair<Op, size_t>> &ops,
                            const Options &opt) {
  const double batch = opt.batch_ms / 1000;
  std::vector<long> iterations;
  for (const auto &[op, bytes] : ops) {
    op();
    iterations.push_back(Calibrate(op, batch));
  }
  std::vector<std::vector<double>> rates(ops.size());
  for (int r = 0; r < opt.runs; ++r) {
    for (size_t i = 0; i < ops.size(); ++i) {
      const double t = Time(ops[i].first, iterations[i]);
      rates[i].push_back(ops[i].second * iterations[i] / t);
    }
  }
  std::vector<double> medians;
  for (auto &r : rates) medians.push_back(Median(r));
  return medians;
}

struct CtxDeleter {
  void operator()(EVP_CIPHER_CTX *ctx) const { EVP_CIPHER_CTX_free(ctx); }
};

class Bench {
 public:
  Bench(const Tier &tier, const Options &opt)
      : tier_(tier), widest_tier_(tier), opt_(opt) {
    widest_tier_.mb.kernels = tier.mb.kernels.last(1);
    libctx_ = OSSL_LIB_CTX_new();
    if (libctx_ == nullptr ||
        OSSL_PROVIDER_load(libctx_, "default") == nullptr) {
      Die("cannot load OpenSSL's default provider");
    }
    core_hz_ = CoreHz();
  }
  ~Bench() { OSSL_LIB_CTX_free(libctx_); }

  void Run() {
    std::printf("core clock %.2f GHz (measured)\n", core_hz_ / 1e9);
    std::printf("%4s %4s %6s %10s %10s %10s %8s %10s %8s", "key", "jobs",
                "bytes", "mb c/B", "mb MB/s", "aesni c/B", "ratio",
                "OpenSSL c/B", "ratio");
    if (opt_.vs_widest) std::printf(" %10s %8s", "widest c/B", "gain");
    std::printf("  %s\n", "calls per round");
    for (int bits : opt_.key_bits) {
      for (int bytes : opt_.bytes) {
        for (int jobs : opt_.jobs) RunOne(bits, jobs, bytes, false);
        RunOne(bits, tier_.mb.lanes, bytes, true);
      }
    }
  }

 private:
  double CyclesPerByte(double bytes_per_second) const {
    return core_hz_ / bytes_per_second;
  }

  void RunOne(int bits, size_t num_jobs, size_t bytes, bool kernel_only) {
    const size_t key_len = bits / 8;
    const uint32_t rounds = static_cast<uint32_t>(6 + key_len / 4);
    // Every job's key, IV and buffer. The buffers sit in one arena at page
    // offsets 1088 bytes apart (17 cache lines), so the lanes' current lines
    // fall in different L1 sets as they would for separately allocated
    // buffers; buffers at one page offset would all compete for one set.
    std::vector<aesmux_aes_key> keys(num_jobs);
    std::vector<std::array<uint8_t, 16>> ivs(num_jobs);
    const size_t stride = (bytes + 4095) / 4096 * 4096 + 1088;
    std::vector<uint8_t> arena(num_jobs * stride + 4096, 0x5a);
    uint8_t *base = arena.data() +
                    (4096 - reinterpret_cast<uintptr_t>(arena.data()) % 4096);
    std::vector<uint8_t *> buffers(num_jobs);
    std::vector<CbcJob> jobs(num_jobs);
    for (size_t i = 0; i < num_jobs; ++i) {
      uint8_t key[32];
      for (size_t b = 0; b < 32; ++b) {
        key[b] = static_cast<uint8_t>(opt_.same_key ? b : b * 7 + i);
      }
      aesmux_aes_expand_key_aesni(&keys[i], key, key_len);
      ivs[i].fill(static_cast<uint8_t>(i));
      buffers[i] = base + i * stride;
      jobs[i].key = &keys[i];
      jobs[i].iv = ivs[i].data();
      jobs[i].in = jobs[i].out = buffers[i];
      jobs[i].len = bytes;
    }
    auto manager = std::make_unique<CbcLaneManager>(tier_, rounds);
    uint64_t manager_rounds = 0;
    auto widest = std::make_unique<CbcLaneManager>(widest_tier_, rounds);
    std::vector<CbcJob> widest_jobs = jobs;
    const Op mb_widest = [&] {
      for (CbcJob &job : widest_jobs) widest->Submit(&job);
      while (widest->Flush() != nullptr) {
      }
    };
    auto lanes = std::make_unique<aesmux_mb_cbc_lanes>();
    for (size_t l = 0; l < num_jobs && l < 16; ++l) {
      for (uint32_t r = 0; r <= rounds; ++r) {
        std::memcpy(lanes->round_keys[r][l], keys[l].round_keys[r], 16);
      }
    }
    const Op mb = kernel_only ? Op([&] {
      for (size_t l = 0; l < num_jobs; ++l) {
        lanes->in[l] = lanes->out[l] = buffers[l];
      }
      tier_.mb.widest().cbc_encrypt(lanes.get(), (1u << num_jobs) - 1, bytes,
                                 rounds);
    })
                              : Op([&] {
                                  for (CbcJob &job : jobs)
                                    manager->Submit(&job);
                                  while (manager->Flush() != nullptr) {
                                  }
                                  ++manager_rounds;
                                });
    // One stream on the single-stream kernel and on OpenSSL.
    uint8_t iv[16] = {};
    const Op single = [&] {
      aesmux_cbc_encrypt_aesni(&keys[0], iv, buffers[0], buffers[0], bytes);
    };
    EVP_CIPHER *cipher = EVP_CIPHER_fetch(
        libctx_, ("AES-" + std::to_string(bits) + "-CBC").c_str(),
        "provider=default");
    std::unique_ptr<EVP_CIPHER_CTX, CtxDeleter> ctx(EVP_CIPHER_CTX_new());
    uint8_t raw_key[32] = {1};
    if (cipher == nullptr ||
        EVP_EncryptInit_ex2(ctx.get(), cipher, raw_key, iv, nullptr) != 1) {
      Die("cannot set up OpenSSL's AES-CBC");
    }
    EVP_CIPHER_free(cipher);
    EVP_CIPHER_CTX_set_padding(ctx.get(), 0);
    const Op openssl = [&] {
      int out_len = 0;
      EVP_EncryptUpdate(ctx.get(), buffers[0], &out_len, buffers[0],
                        static_cast<int>(bytes));
    };
    std::vector<std::pair<Op, size_t>> ops = {
        {mb, num_jobs * bytes}, {single, bytes}, {openssl, bytes}};
    const bool vs_widest = opt_.vs_widest && !kernel_only;
    if (vs_widest) ops.emplace_back(mb_widest, num_jobs * bytes);
    const std::vector<double> rates = Compare(ops, opt_);
    const double mb_cpb = CyclesPerByte(rates[0]);
    const double single_cpb = CyclesPerByte(rates[1]);
    const double openssl_cpb = CyclesPerByte(rates[2]);
    std::string calls;
    if (!kernel_only && manager_rounds != 0) {
      uint64_t batches = 0;
      for (size_t k = 0; k < tier_.mb.kernels.size(); ++k) {
        const uint64_t n = manager->calls_of_kernel(k);
        batches += n;
        if (n == 0) continue;
        calls += Calls("x" + std::to_string(tier_.mb.kernels[k].lanes), n,
                       manager_rounds);
      }
      if (manager->kernel_calls() > batches) {
        calls += Calls("aesni", manager->kernel_calls() - batches,
                       manager_rounds);
      }
    }
    std::printf("%4d %4s %6zu %10.3f %10.0f %10.3f %8.2f %10.3f %8.2f", bits,
                kernel_only ? "krnl" : std::to_string(num_jobs).c_str(), bytes,
                mb_cpb, rates[0] / 1e6, single_cpb, single_cpb / mb_cpb,
                openssl_cpb, openssl_cpb / mb_cpb);
    if (vs_widest) {
      const double widest_cpb = CyclesPerByte(rates[3]);
      std::printf(" %10.3f %8.2f", widest_cpb, widest_cpb / mb_cpb);
    } else if (opt_.vs_widest) {
      std::printf(" %10s %8s", "", "");
    }
    std::printf("  %s\n", calls.c_str());
    std::fflush(stdout);
  }

  static std::string Calls(const std::string &name, uint64_t calls,
                           uint64_t rounds) {
    char text[48];
    std::snprintf(text, sizeof(text), " %s:%.3g", name.c_str(),
                  static_cast<double>(calls) / rounds);
    return text;
  }

  const Tier &tier_;
  Tier widest_tier_;  // tier_ with its widest kernel only
  const Options &opt_;
  OSSL_LIB_CTX *libctx_ = nullptr;
  double core_hz_ = 0;
};

Options ParseOptions(int argc, char **argv) {
  Options opt;
  ArgReader args(argc, argv);
  while (args.Next()) {
    const std::string &arg = args.arg();
    if (arg == "--tier") {
      opt.tier = args.Value();
    } else if (arg == "--runs") {
      opt.runs = args.Int(1);
    } else if (arg == "--ms") {
      opt.batch_ms = args.Double(0.1);
    } else if (arg == "--same-key") {
      opt.same_key = true;
    } else if (arg == "--key-bits") {
      opt.key_bits = ParseList(args.Value());
    } else if (arg == "--jobs") {
      opt.jobs = ParseList(args.Value());
    } else if (arg == "--bytes") {
      opt.bytes = ParseList(args.Value());
    } else if (arg == "--min-lanes") {
      opt.min_lanes = args.Int(0);
    } else if (arg == "--vs-widest") {
      opt.vs_widest = true;
    } else {
      Die("usage: mb_bench [--tier NAME] [--runs N] [--ms M] "
          "[--key-bits 128,192,256] [--jobs 1,2,4,8,16] "
          "[--bytes 1024,16384] [--same-key] [--min-lanes N] "
          "[--vs-widest]");
    }
  }
  return opt;
}

}  // namespace
}  // namespace aesmux::kernels::mb

int main(int argc, char **argv) {
  using namespace aesmux::kernels;
  const mb::Options opt = mb::ParseOptions(argc, argv);
  const CpuFeatures cpu = DetectCpuFeatures();
  const Tier *found = opt.tier.empty() ? BestTier(cpu) : TierByName(opt.tier);
  if (found == nullptr) mb::Die("no such tier");
  Tier tier_copy = *found;
  if (opt.min_lanes >= 0) tier_copy.mb.min_lanes = opt.min_lanes;
  const Tier *tier = &tier_copy;
  if (!Supported(*tier, cpu)) {
    mb::Die("CPU lacks " + DescribeCpuFeatures(tier->required & ~cpu) +
            " needed by tier " + std::string(tier->name));
  }
  std::printf(
      "multi-buffer tier %s (%zu lanes) vs one stream on aesni and on %s "
      "(default provider); median of %d alternating batches of ~%.1f ms%s; "
      "min_lanes %zu\n",
      std::string(tier->name).c_str(), tier->mb.lanes,
      OpenSSL_version(OPENSSL_VERSION), opt.runs, opt.batch_ms,
      opt.same_key ? "; every job the same key" : "", tier->mb.min_lanes);
  mb::Bench(*tier, opt).Run();
  return 0;
}
