// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
// peer_bench: AES records through EVP_CIPHER on aesmux, OpenSSL's default
// provider and BoringSSL, the same calls on each. Not a test.
//
// This one source builds two programs (bench/peer/CMakeLists.txt):
// peer_bench against OpenSSL (aesmux and the default provider in a private
// library context) and peer_bench_boringssl against BoringSSL, whose
// headers and symbols clash with OpenSSL's. peer_bench starts
// peer_bench_boringssl as a child and drives it over a pipe (Serve), so
// that the three sides run in alternating batches, cell by cell, under the
// same machine load; with taskset the child inherits the CPU.
//
// The records are peer_records.h's. Time is the thread's CPU time
// (CLOCK_THREAD_CPUTIME_ID), so that other processes on a shared machine do
// not count; cycles per byte convert it with the core clock measured at
// start (TSC rate times bench/support/cycle_clock.h's cycles per tick).
// Before a cell is timed, every side's output is checked against the
// default provider's. BoringSSL keeps XTS in libdecrepit, unoptimised, so
// XTS runs on aesmux and the default provider only and is compared with the
// CPU's bound and with aesmux's CTR on the same sizes.
//
// Tiers: --tier NAME gives aesmux `kernels = NAME` and masks BoringSSL's
// CPUID bits through its OPENSSL_ia32cap variable in the child, so that
// BoringSSL runs the same class of code: vaes_avx2 clears AVX512BW (its
// GCM then takes aes_gcm_*_update_vaes_avx2), aesni also VAES and
// VPCLMULQDQ. Without --tier both pick their best.
//
//   peer_bench [--tier NAME] [--modes gcm,ctr,cbc,ecb,xts] [--key-bits 128,256]
//              [--sizes 16,256,1344,8192,16384] [--runs 7] [--ms 20]
//              [--peer PATH]
#include <openssl/evp.h>

#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "bench/peer/peer_records.h"
#include "bench/support/bench_util.h"

#ifndef OPENSSL_IS_BORINGSSL
#include <openssl/crypto.h>

#include <csignal>
#include <ctime>

#include "bench/peer/peer_driver.h"
#include "bench/support/cycle_clock.h"
#include "tests/support/provider_env.h"
#endif

namespace aesmux::test {

#ifdef OPENSSL_IS_BORINGSSL
const char kBenchName[] = "peer_bench_boringssl";
#else
const char kBenchName[] = "peer_bench";
#endif

namespace {

#ifdef OPENSSL_IS_BORINGSSL

const EVP_CIPHER *BoringCipher(const Case &c) {
  const bool k128 = c.bits == 128;
  if (c.bits != 128 && c.bits != 256) return nullptr;
  if (c.mode == "gcm") return k128 ? EVP_aes_128_gcm() : EVP_aes_256_gcm();
  if (c.mode == "ctr") return k128 ? EVP_aes_128_ctr() : EVP_aes_256_ctr();
  if (c.mode == "cbc") return k128 ? EVP_aes_128_cbc() : EVP_aes_256_cbc();
  if (c.mode == "ecb") return k128 ? EVP_aes_128_ecb() : EVP_aes_256_ecb();
  return nullptr;
}

// The child's side of the pipe, one command per line on stdin, one answer
// per line on stdout:
//   setup MODE BITS enc|dec BYTES -> "ok DIGEST" or "error WHAT"
//   time CALLS                    -> seconds of CPU time for CALLS records
void Serve() {
  std::unique_ptr<Records> records;
  char line[256];
  while (std::fgets(line, sizeof(line), stdin) != nullptr) {
    char mode[16], dir[8];
    int bits = 0;
    long bytes = 0, calls = 0;
    if (std::sscanf(line, "setup %15s %d %7s %ld", mode, &bits, dir, &bytes) ==
        4) {
      const Case c{mode, bits, std::strcmp(dir, "enc") == 0};
      const EVP_CIPHER *cipher = BoringCipher(c);
      if (cipher == nullptr) {
        records.reset();
        std::printf("error no %s in BoringSSL's EVP\n", c.CipherName().c_str());
      } else {
        records = std::make_unique<Records>(cipher, c, bytes);
        std::printf("ok %s\n", records->Digest().c_str());
      }
    } else if (std::sscanf(line, "time %ld", &calls) == 1 && records) {
      std::printf("%.9f\n", records->Seconds(calls));
    } else {
      std::printf("error bad command\n");
    }
    std::fflush(stdout);
  }
}

}  // namespace
}  // namespace aesmux::test

int main() {
  aesmux::test::Serve();
  return 0;
}

#else  // OpenSSL: the driver

struct Options : PeerOptions {
  std::vector<std::string> modes = {"gcm", "ctr", "cbc", "ecb", "xts"};
};

// The lower bound of a parallel mode on the VAES tiers: 4 AES block-rounds
// per core cycle (docs/kernel-notes.md), rounds / 64 cycles per byte.
double ParallelBound(int bits) { return (bits / 32 + 6) / 64.0; }

class Driver {
 public:
  explicit Driver(const Options &opt)
      : opt_(opt),
        env_(opt.tier.empty() ? std::vector<std::string>{}
                              : std::vector<std::string>{"kernels = " +
                                                         opt.tier}),
        peer_(opt.peer, BoringCpuMask(opt.tier)) {
    if (!env_.loaded()) Die("aesmux did not load: " + env_.error());
    ticks_per_second_ = TicksPerSecond();
    cycles_per_tick_ = CoreCyclesPerTick();
  }

  void Run() {
    std::time_t now = std::time(nullptr);
    char date[32];
    std::strftime(date, sizeof(date), "%Y-%m-%d", std::localtime(&now));
    std::printf("# %s · %s · core %.2f GHz (%.3f cycles per TSC tick)\n", date,
                CpuModelName().c_str(),
                ticks_per_second_ * cycles_per_tick_ / 1e9, cycles_per_tick_);
    std::printf("# %s; aesmux tier %s; BoringSSL OPENSSL_ia32cap=%s\n",
                OpenSSL_version(OPENSSL_VERSION),
                env_.ProviderParam("tier").c_str(),
                BoringCpuMask(opt_.tier).empty()
                    ? "(unset: its own choice)"
                    : BoringCpuMask(opt_.tier).c_str());
    std::printf("# median of %d alternating batches of ~%.0f ms per side; "
                "ratios are medians of the per-run ratios\n\n",
                opt_.runs, opt_.batch_ms);
    bool peer_table = false, xts_table = false;
    for (const std::string &mode : opt_.modes) {
      (mode == "xts" ? xts_table : peer_table) = true;
    }
    if (peer_table) {
      std::printf("| algorithm | bytes | BoringSSL MB/s | default MB/s | "
                  "aesmux MB/s | aesmux / BoringSSL | aesmux / default |\n");
      std::printf("|---|---:|---:|---:|---:|---:|---:|\n");
      for (const std::string &mode : opt_.modes) {
        if (mode == "xts") continue;
        for (const Case &c : Cases(mode)) {
          for (int size : opt_.sizes) PeerRow(c, size);
        }
      }
    }
    if (xts_table) {
      std::printf("\n| algorithm | bytes | default MB/s | aesmux MB/s | "
                  "aesmux / default | aesmux c/B | bound c/B | "
                  "aesmux XTS / CTR |\n");
      std::printf("|---|---:|---:|---:|---:|---:|---:|---:|\n");
      for (const Case &c : Cases("xts")) {
        for (int size : opt_.sizes) XtsRow(c, size);
      }
    }
  }

 private:
  std::vector<Case> Cases(const std::string &mode) const {
    std::vector<Case> cases;
    for (int bits : opt_.key_bits) {
      cases.push_back({mode, bits, true});
      // ECB and CTR decrypt as they encrypt (CTR) or at the same speed
      // (ECB on these kernels): the encrypting direction stands for both.
      if (mode == "gcm" || mode == "cbc" || mode == "xts") {
        cases.push_back({mode, bits, false});
      }
    }
    return cases;
  }

  static std::string Label(const Case &c) {
    std::string label = "aes-" + std::to_string(c.bits) + "-" + c.mode;
    if (!c.encrypt) label += " decrypt";
    return label;
  }

  std::unique_ptr<Records> Local(const Case &c, size_t bytes,
                                 bool aesmux) const {
    const CipherPtr cipher = aesmux ? env_.Aesmux(c.CipherName())
                                    : env_.Default(c.CipherName());
    if (cipher == nullptr) Die("cannot fetch " + c.CipherName());
    return std::make_unique<Records>(cipher.get(), c, bytes);
  }

  void PeerRow(const Case &c, int size) {
    const char *dir = c.encrypt ? "enc" : "dec";
    auto aesmux = Local(c, size, true);
    auto fallback = Local(c, size, false);
    const std::string expect = fallback->Digest();
    if (aesmux->Digest() != expect) Die(Label(c) + ": aesmux disagrees");
    const std::string answer =
        peer_.Ask("setup " + c.mode + " " + std::to_string(c.bits) + " " +
                  dir + " " + std::to_string(size));
    if (answer != "ok " + expect) {
      Die(Label(c) + " " + std::to_string(size) + ": BoringSSL: " + answer);
    }
    Side a(aesmux.get()), d(fallback.get()), b(&peer_);
    const Medians m = Measure({&a, &d, &b}, size, opt_.runs, opt_.batch_ms);
    std::printf("| %s | %d | %.0f | %.0f | %.0f | %.2f | %.2f |\n",
                Label(c).c_str(), size, m.mbps[2], m.mbps[1], m.mbps[0],
                m.ratio[2], m.ratio[1]);
    std::fflush(stdout);
  }

  void XtsRow(const Case &c, int size) {
    auto aesmux = Local(c, size, true);
    auto fallback = Local(c, size, false);
    if (aesmux->Digest() != fallback->Digest()) {
      Die(Label(c) + ": aesmux disagrees");
    }
    auto ctr_records = Local({"ctr", c.bits, true}, size, true);
    Side a(aesmux.get()), d(fallback.get()), ctr(ctr_records.get());
    const Medians m = Measure({&a, &d, &ctr}, size, opt_.runs, opt_.batch_ms);
    const double cpb = ticks_per_second_ * cycles_per_tick_ / (m.mbps[0] * 1e6);
    std::printf("| %s | %d | %.0f | %.0f | %.2f | %.3f | %.3f | %.2f |\n",
                Label(c).c_str(), size, m.mbps[1], m.mbps[0], m.ratio[1], cpb,
                ParallelBound(c.bits), m.ratio[2]);
    std::fflush(stdout);
  }

  const Options &opt_;
  ProviderEnv env_;
  Peer peer_;
  double ticks_per_second_ = 0;
  double cycles_per_tick_ = 0;
};

Options ParseOptions(int argc, char **argv) {
  Options opt;
  ArgReader args(argc, argv);
  while (args.Next()) {
    if (opt.Read(args)) continue;
    if (args.arg() == "--modes") {
      opt.modes = SplitList(args.Value());
    } else {
      Die("usage: peer_bench [--tier NAME] [--modes gcm,ctr,cbc,ecb,xts] "
          "[--key-bits 128,256] [--sizes 16,256,1344,8192,16384] [--runs 7] "
          "[--ms 20] [--peer PATH]");
    }
  }
  opt.Check();
  for (const std::string &mode : opt.modes) {
    if (mode != "gcm" && mode != "ctr" && mode != "cbc" && mode != "ecb" &&
        mode != "xts") {
      Die("unknown mode " + mode);
    }
  }
  for (int size : opt.sizes) {
    // Whole blocks: with padding off, CBC and ECB refuse a partial one.
    if (size % 16 != 0) Die("sizes must be whole blocks");
  }
  return opt;
}

}  // namespace
}  // namespace aesmux::test

int main(int argc, char **argv) {
  // A peer that dies must not kill the driver with SIGPIPE before it can
  // say so.
  std::signal(SIGPIPE, SIG_IGN);
  const aesmux::test::Options opt = aesmux::test::ParseOptions(argc, argv);
  aesmux::test::Driver(opt).Run();
  return 0;
}

#endif  // OPENSSL_IS_BORINGSSL
