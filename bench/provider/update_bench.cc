// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
// update_bench: `openssl speed -evp`'s loop (one EVP_EncryptUpdate or
// EVP_DecryptUpdate after another on one buffer, in place, padding off)
// through aesmux and through the default provider, in one process, in
// alternating batches of about a millisecond: the ratio of the two
// providers' median batch times. Host noise that moves one `openssl speed`
// run by a tenth or more hits both sides of neighbouring batches alike,
// so short cells resolve to a percent (bench/speed.sh runs this beside
// openssl speed: BENCHMARKS.md, "How fast is aesmux against OpenSSL's
// default provider?").
//
// Each side's key is random and both contexts live through the whole run.
// Each batch runs on a buffer at its own place, 16-byte aligned as openssl
// speed's malloc() leaves it, anywhere in a page: where a buffer falls
// against its context's state (4 KiB aliasing, presumably) moved a cell by
// up to 15% on either side, so a run at one place would measure that place.
//
//   update_bench [--algs aes-128-ecb,aes-128-cbc-decrypt,...]
//                [--sizes 16,64,256,1024,8192,16384] [--batches 101]
//                [--kernels NAME]
// Prints one row per cell: algorithm, bytes, median ns per update of
// each side, and aesmux / default as a speed ratio (above 1: aesmux
// faster): the median of the ratios of neighbouring batches, with a 95%
// confidence interval for it. A cell whose interval holds 1.00 is a tie
// at this run's resolution.
// The default provider runs on the CPU libcrypto sees: with --kernels
// below the CPU's best, set OPENSSL_ia32cap as bench/speed.sh does
// (bench_match_tier) to compare the two on that tier's CPU; the header
// says which.
#include <openssl/evp.h>
#include <openssl/rand.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "bench/support/bench_util.h"
#include "tests/support/provider_env.h"

namespace aesmux::test {

const char kBenchName[] = "update_bench";

namespace {

struct Options {
  std::vector<std::string> algs = {"aes-128-ecb", "aes-128-cbc",
                                   "aes-128-cbc-decrypt", "aes-128-ctr",
                                   "aes-128-xts"};
  std::vector<int> sizes = {16, 64, 256, 1024, 8192, 16384};
  int batches = 101;
  std::string kernels;  // empty: aesmux's own choice
};

Options ParseOptions(int argc, char **argv) {
  Options opt;
  ArgReader args(argc, argv);
  while (args.Next()) {
    const std::string &arg = args.arg();
    if (arg == "--algs") {
      opt.algs = SplitList(args.Value());
    } else if (arg == "--sizes") {
      opt.sizes = ParseList(args.Value());
    } else if (arg == "--batches") {
      opt.batches = args.Int(1);
    } else if (arg == "--kernels") {
      opt.kernels = args.Value();
    } else {
      Die("usage: update_bench [--algs LIST] [--sizes LIST] [--batches N] "
          "[--kernels NAME]");
    }
  }
  for (int size : opt.sizes) {
    if (size < 16 || size % 16 != 0) Die("sizes are whole blocks");
  }
  return opt;
}

constexpr size_t kPage = 4096;

// One provider's side of a cell: its context, keyed, and its buffer.
struct Side {
  CipherCtxPtr ctx;
  std::unique_ptr<uint8_t, decltype(&std::free)> buffer{nullptr, &std::free};
  uint8_t *data = nullptr;  // the batch's place in `buffer`
  bool decrypt = false;
  int bytes = 0;

  // Moves the data to a 16-byte boundary of the first page, chosen by rng.
  void Place(std::mt19937 &rng) {
    data = buffer.get() + 16 * (rng() % (kPage / 16));
  }
  void Update() {
    int outl = 0;
    const int ok = decrypt
                       ? EVP_DecryptUpdate(ctx.get(), data, &outl, data, bytes)
                       : EVP_EncryptUpdate(ctx.get(), data, &outl, data, bytes);
    if (ok != 1) Die("update failed: " + TakeErrors());
  }
};

Side MakeSide(const EVP_CIPHER *cipher, bool decrypt, int bytes) {
  Side side;
  side.decrypt = decrypt;
  side.bytes = bytes;
  side.ctx = NewCipherCtx();
  std::vector<uint8_t> key(
      static_cast<size_t>(EVP_CIPHER_get_key_length(cipher)));
  std::vector<uint8_t> iv(16, 0);
  const size_t size = kPage + static_cast<size_t>(bytes);
  side.buffer.reset(static_cast<uint8_t *>(
      std::aligned_alloc(kPage, (size + kPage - 1) / kPage * kPage)));
  side.data = side.buffer.get();
  if (side.ctx == nullptr || side.buffer == nullptr ||
      RAND_bytes(key.data(), static_cast<int>(key.size())) != 1 ||
      EVP_CipherInit_ex2(side.ctx.get(), cipher, key.data(), iv.data(),
                         decrypt ? 0 : 1, nullptr) != 1 ||
      EVP_CIPHER_CTX_set_padding(side.ctx.get(), 0) != 1) {
    Die("set-up failed: " + TakeErrors());
  }
  std::memset(side.buffer.get(), 0x5a, size);
  return side;
}

// Median ns per update of each side, batches alternating (which side goes
// first alternates too), each pair of batches at new places.
void RunCell(const ProviderEnv &env, const std::string &spec, int bytes,
             int batches) {
  const bool decrypt =
      spec.size() > 8 && spec.compare(spec.size() - 8, 8, "-decrypt") == 0;
  const std::string alg = decrypt ? spec.substr(0, spec.size() - 8) : spec;
  const CipherPtr ciphers[2] = {env.Default(alg), env.Aesmux(alg)};
  if (ciphers[0] == nullptr || ciphers[1] == nullptr) {
    Die("cannot fetch " + alg);
  }
  Side sides[2] = {MakeSide(ciphers[0].get(), decrypt, bytes),
                   MakeSide(ciphers[1].get(), decrypt, bytes)};
  const long calls = Calibrate([&] { sides[0].Update(); }, 1e-3);
  std::mt19937 rng(static_cast<unsigned>(bytes));
  std::vector<double> ns[2];
  for (int b = 0; b < batches; ++b) {
    sides[0].Place(rng);
    sides[1].Place(rng);
    for (int k = 0; k < 2; ++k) {
      const int s = (b % 2 == 0) ? k : 1 - k;
      ns[s].push_back(Time([&] { sides[s].Update(); }, calls) * 1e9 /
                      static_cast<double>(calls));
    }
  }
  // Each pair of neighbouring batches gives one ratio: whatever the host
  // does to the machine over the run's seconds, it does to both batches of
  // a pair alike.
  std::vector<double> ratios;
  for (int b = 0; b < batches; ++b) ratios.push_back(ns[0][b] / ns[1][b]);
  const Interval interval = MedianInterval(ratios);
  std::printf("| %s | %d | %.1f | %.1f | %.2f | %.2f-%.2f |\n", spec.c_str(),
              bytes, Median(ns[0]), Median(ns[1]), Median(ratios), interval.low,
              interval.high);
  std::fflush(stdout);
}

}  // namespace

int Main(int argc, char **argv) {
  const Options opt = ParseOptions(argc, argv);
  std::vector<std::string> settings;
  if (!opt.kernels.empty()) settings.push_back("kernels = " + opt.kernels);
  ProviderEnv env(settings);
  if (!env.loaded()) Die("aesmux did not load: " + env.error());
  const char *cpu_mask = std::getenv("OPENSSL_ia32cap");
  std::printf(
      "# %s; %s; libcrypto's CPU: %s%s; %d alternating "
      "batches of about 1 ms a side\n",
      CpuModelName().c_str(), OpenSSL_version(OPENSSL_VERSION),
      cpu_mask != nullptr ? "OPENSSL_ia32cap=" : "as found",
      cpu_mask != nullptr ? cpu_mask : "", opt.batches);
  std::printf(
      "| algorithm | bytes | default ns | aesmux ns | ratio | 95%% "
      "interval |\n");
  std::printf("|---|---:|---:|---:|---:|---:|\n");
  for (const std::string &alg : opt.algs) {
    for (int bytes : opt.sizes) RunCell(env, alg, bytes, opt.batches);
  }
  return 0;
}

}  // namespace aesmux::test

int main(int argc, char **argv) { return aesmux::test::Main(argc, argv); }
