// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
// kernel_bench: each kernel of a tier against OpenSSL's default provider
// (EVP, private library context) on the same buffers. Not a test.
//
// For every operation, key size and message size the two sides run in
// alternating batches of about --ms milliseconds, --runs times each; the
// table shows the median MB/s (10^6 bytes per second) of each side and the
// ratio ours / OpenSSL. EVP is driven the way a long-lived context is used
// (one EVP_CipherUpdate per message, key set once), so the OpenSSL column
// includes EVP's per-call overhead, which dominates at 16 bytes.
//
// --cycles prints core clock cycles per byte at every size next to the
// lower bound of the tier on this class of CPU (see Bound()): the fastest
// batch of 50 calls out of --calls, timed with RDTSC (the minimum, because
// on a shared machine a call can only be slowed down, never sped up, by
// its neighbours). The TSC does not count core cycles: tests/support/
// cycle_clock.h converts.
//
//   kernel_bench [--tier NAME] [--filter SUBSTRING] [--runs N] [--ms M]
//                [--key-bits 128,192,256] [--cycles] [--calls N]
//                [--in-place] [--sizes 16,256,1024,16384]
#include <openssl/core_names.h>
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
#include "kernels/tiers.h"
#include "bench/support/bench_util.h"
#include "bench/support/cycle_clock.h"

const char aesmux::test::kBenchName[] = "kernel_bench";

namespace aesmux::kernels {
namespace {

using test::ArgReader;
using test::Buffer;
using test::Calibrate;
using test::CoreCyclesPerTick;
using test::Die;
using test::Median;
using test::Op;
using test::ParseList;
using test::Time;

struct Options {
  std::string tier;  // empty: the best tier of this CPU
  std::string filter;
  int runs = 11;
  double batch_ms = 4;
  std::vector<int> key_bits = {128, 256};
  bool cycles = false;
  bool in_place = false;
  std::vector<int> sizes = {16, 256, 1024, 16384};
  int calls = 3000;
};

struct CtxDeleter {
  void operator()(EVP_CIPHER_CTX *ctx) const { EVP_CIPHER_CTX_free(ctx); }
};
using CipherCtx = std::unique_ptr<EVP_CIPHER_CTX, CtxDeleter>;

struct Result {
  double ours;
  double openssl;
};

// Minimum TSC ticks of one call of `op`: the fastest of batches of
// kBatch calls, over `calls` calls in all. Batches, not single calls:
// under KVM the TSC can advance in steps (26 ticks, 37 core cycles, on the
// Zen 4 test machine), as coarse as a whole short call.
double MinTicks(const Op &op, int calls) {
  constexpr int kBatch = 50;
  for (int i = 0; i < 100; ++i) op();
  uint64_t best = ~uint64_t{0};
  for (int done = 0; done < calls; done += kBatch) {
    best = std::min<uint64_t>(best, test::BatchTicks(op, kBatch));
  }
  return static_cast<double>(best) / kBatch;
}

// Alternating batches; `reset` runs before each OpenSSL batch (untimed).
// In --cycles mode: TSC ticks per byte of each side (minimum of single
// calls).
Result Compare(const Op &ours, const Op &openssl, const Op &reset,
               size_t bytes_per_call, const Options &opt) {
  if (opt.cycles) {
    const double a = MinTicks(ours, opt.calls) / bytes_per_call;
    reset();
    return {a, MinTicks(openssl, opt.calls) / bytes_per_call};
  }
  const double batch = opt.batch_ms / 1000;
  reset();
  ours();
  openssl();
  const long n_ours = Calibrate(ours, batch);
  reset();
  const long n_openssl = Calibrate(openssl, batch);
  std::vector<double> a, b;
  for (int r = 0; r < opt.runs; ++r) {
    a.push_back(bytes_per_call * n_ours / Time(ours, n_ours) / 1e6);
    reset();
    b.push_back(bytes_per_call * n_openssl / Time(openssl, n_openssl) / 1e6);
  }
  return {Median(a), Median(b)};
}


// Lower bound in core cycles per byte for `op` on `tier`, on a core that
// issues 4 AES block-rounds per cycle with VAES (one zmm or two ymm VAESENC
// per cycle, latency 3: Intel Golden Cove / Sapphire Rapids, measured with
// a microbenchmark on the test machine) or 2 with AES-NI, and one
// VPCLMULQDQ per cycle on a port AES does not use. Parallel modes and GCM:
// AES rounds / block-rounds per cycle / 16. CBC encryption: one chain,
// rounds x latency 3 per block. GHASH: VPCLMULQDQ per block (schoolbook 4
// per vector plus 2 per group for the reduction; aesni: Karatsuba 3 per
// block plus 2 per 8 blocks).
double Bound(const std::string &tier, const std::string &op, int bits) {
  const double rounds = bits / 32 + 6;
  const bool vaes = tier.rfind("vaes", 0) == 0;
  if (op == "cbc-enc") return rounds * 3 / 16;
  if (op == "ghash") {
    if (tier == "vaes_avx512") return 18.0 / 256;
    if (tier == "vaes_avx2") return 18.0 / 128;
    return 26.0 / 128;
  }
  return rounds / (vaes ? 4 : 2) / 16;
}

class Bench {
 public:
  Bench(const Tier &tier, const Options &opt)
      : ops_(tier.ops), tier_name_(tier.name), opt_(opt) {
    libctx_ = OSSL_LIB_CTX_new();
    if (libctx_ == nullptr ||
        OSSL_PROVIDER_load(libctx_, "default") == nullptr) {
      Die("cannot load OpenSSL's default provider");
    }
  }
  ~Bench() { OSSL_LIB_CTX_free(libctx_); }

  void Run() {
    double per_tick = 0;
    if (opt_.cycles) {
      per_tick = CoreCyclesPerTick();
      std::printf(
          "%.3f core cycles per TSC tick (IMUL chain); minimum of %d calls\n",
          per_tick, opt_.calls);
      std::printf("%-12s %4s %7s %10s %10s %10s %8s\n", "operation", "key",
                  "bytes", "ours c/B", "OpenSSL", "bound", "of bound");
    } else {
      std::printf("%-12s %4s %7s %12s %12s %7s\n", "operation", "key",
                  "bytes", "ours MB/s", "OpenSSL MB/s", "ratio");
    }
    const char *names[] = {"ecb-enc", "ecb-dec", "cbc-enc", "cbc-dec", "ctr",
                           "xts-enc", "xts-dec", "gcm-enc", "gcm-dec", "ghash"};
    for (const char *name : names) {
      for (int bits : opt_.key_bits) {
        if (std::string(name).rfind("xts", 0) == 0 && bits == 192) continue;
        for (const int size : opt_.sizes) {
          const std::string label =
              std::string(name) + "/" + std::to_string(bits);
          if (!opt_.filter.empty() &&
              label.find(opt_.filter) == std::string::npos) {
            continue;
          }
          const Result r = RunOne(name, bits, size);
          if (opt_.cycles) {
            const double ours = r.ours * per_tick;
            const double bound = Bound(tier_name_, name, bits);
            std::printf("%-12s %4d %7d %10.3f %10.3f %10.3f %7.0f%%\n", name,
                        bits, size, ours, r.openssl * per_tick, bound,
                        100 * bound / ours);
          } else {
            std::printf("%-12s %4d %7d %12.0f %12.0f %7.2f\n", name, bits,
                        size, r.ours, r.openssl, r.ours / r.openssl);
          }
          std::fflush(stdout);
        }
      }
    }
    if (opt_.cycles) {
      std::printf("%.3f core cycles per TSC tick after the table\n",
                  CoreCyclesPerTick());
      return;
    }
    for (int bits : opt_.key_bits) KeySetup(bits);
  }

 private:
  CipherCtx NewCtx(const std::string &cipher_name, bool encrypt,
                   const uint8_t *key, const uint8_t *iv) {
    EVP_CIPHER *cipher =
        EVP_CIPHER_fetch(libctx_, cipher_name.c_str(), "provider=default");
    if (cipher == nullptr) Die("cannot fetch " + cipher_name);
    CipherCtx ctx(EVP_CIPHER_CTX_new());
    if (EVP_CipherInit_ex2(ctx.get(), cipher, key, iv, encrypt ? 1 : 0,
                           nullptr) != 1) {
      Die("EVP_CipherInit_ex2 " + cipher_name);
    }
    EVP_CIPHER_free(cipher);
    EVP_CIPHER_CTX_set_padding(ctx.get(), 0);
    return ctx;
  }

  static void Update(EVP_CIPHER_CTX *ctx, uint8_t *out, const uint8_t *in,
                     size_t len) {
    int out_len = 0;
    if (EVP_CipherUpdate(ctx, out, &out_len, in, static_cast<int>(len)) != 1) {
      Die("EVP_CipherUpdate");
    }
  }

  Result RunOne(const std::string &name, int bits, size_t size) {
    const size_t key_len = bits / 8;
    uint8_t key[64], iv[16] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
    for (int i = 0; i < 64; ++i) key[i] = static_cast<uint8_t>(i * 13 + 1);
    aesmux_aes_key enc{}, dec{}, tweak{};
    ops_.expand_key(&enc, key, key_len);
    ops_.decrypt_key(&dec, &enc);
    ops_.expand_key(&tweak, key + 32, key_len);
    aesmux_gcm_key gkey{};
    ops_.gcm_init(&gkey, &enc);
    Buffer source(size), out(size);
    // --in-place: each call reads what the one before wrote, as in openssl
    // speed, so what shows is a call's latency, not only its throughput.
    const Buffer &in = opt_.in_place ? out : source;
    uint8_t chain[16] = {}, xi[16] = {};
    const std::string aes = "AES-" + std::to_string(bits) + "-";
    const Op nothing = [] {};

    if (name == "ecb-enc" || name == "ecb-dec") {
      const bool e = name == "ecb-enc";
      CipherCtx ctx = NewCtx(aes + "ECB", e, key, nullptr);
      return Compare(
          [&] {
            (e ? ops_.ecb_encrypt : ops_.ecb_decrypt)(e ? &enc : &dec, out.data,
                                                      in.data, size);
          },
          [&] { Update(ctx.get(), out.data, in.data, size); }, nothing, size,
          opt_);
    }
    if (name == "cbc-enc" || name == "cbc-dec") {
      const bool e = name == "cbc-enc";
      CipherCtx ctx = NewCtx(aes + "CBC", e, key, iv);
      return Compare(
          [&] {
            (e ? ops_.cbc_encrypt : ops_.cbc_decrypt)(e ? &enc : &dec, chain,
                                                      out.data, in.data, size);
          },
          [&] { Update(ctx.get(), out.data, in.data, size); }, nothing, size,
          opt_);
    }
    if (name == "ctr") {
      CipherCtx ctx = NewCtx(aes + "CTR", true, key, iv);
      return Compare(
          [&] { ops_.ctr_crypt(&enc, chain, out.data, in.data, size); },
          [&] { Update(ctx.get(), out.data, in.data, size); }, nothing, size,
          opt_);
    }
    if (name == "xts-enc" || name == "xts-dec") {
      const bool e = name == "xts-enc";
      uint8_t both[64];
      std::memcpy(both, key, key_len);
      std::memcpy(both + key_len, key + 32, key_len);
      CipherCtx ctx = NewCtx(aes + "XTS", e, both, iv);
      // The first tweak is encrypted once per IV, as the provider keeps it
      // (kernels.h); OpenSSL encrypts it on every call.
      uint8_t first_tweak[16];
      ops_.ecb_encrypt(&tweak, first_tweak, iv, 16);
      return Compare(
          [&] {
            (e ? ops_.xts_encrypt : ops_.xts_decrypt)(
                e ? &enc : &dec, first_tweak, out.data, in.data, size);
          },
          [&] { Update(ctx.get(), out.data, in.data, size); }, nothing, size,
          opt_);
    }
    if (name == "gcm-enc" || name == "gcm-dec" || name == "ghash") {
      const bool e = name != "gcm-dec";
      CipherCtx ctx = NewCtx(aes + "GCM", e, key, iv);
      // GCM caps a message at 2^36 - 32 bytes: restart it before each batch.
      const Op reset = [&] {
        if (EVP_CipherInit_ex2(ctx.get(), nullptr, nullptr, iv, -1, nullptr) !=
            1) {
          Die("EVP_CipherInit_ex2 (iv)");
        }
      };
      if (name == "ghash") {
        // OpenSSL's GHASH alone: AAD-only updates.
        return Compare([&] { ops_.ghash(&gkey, xi, in.data, size); },
                       [&] { Update(ctx.get(), nullptr, in.data, size); },
                       reset, size, opt_);
      }
      return Compare(
          [&] {
            (e ? ops_.gcm_encrypt : ops_.gcm_decrypt)(&enc, &gkey, chain, xi,
                                                      out.data, in.data, size);
          },
          [&] { Update(ctx.get(), out.data, in.data, size); }, reset, size,
          opt_);
    }
    Die("unknown operation " + name);
  }

  // Key setup, which runs on every re-key: ours is expand_key (and, for
  // GCM, gcm_init); OpenSSL's is EVP_CipherInit_ex2 with a new key on an
  // existing context (its key schedule plus EVP's bookkeeping).
  void KeySetup(int bits) {
    uint8_t key[32] = {9, 8, 7};
    const size_t key_len = bits / 8;
    aesmux_aes_key enc{}, dec{};
    aesmux_gcm_key gkey{};
    const std::string aes = "AES-" + std::to_string(bits) + "-";
    CipherCtx ecb = NewCtx(aes + "ECB", true, key, nullptr);
    CipherCtx gcm = NewCtx(aes + "GCM", true, key, nullptr);
    struct Case {
      const char *name;
      Op ours, openssl;
    } cases[] = {
        {"expand-key", [&] { ops_.expand_key(&enc, key, key_len); },
         [&] {
           EVP_CipherInit_ex2(ecb.get(), nullptr, key, nullptr, 1, nullptr);
         }},
        {"decrypt-key",
         [&] {
           ops_.expand_key(&enc, key, key_len);
           ops_.decrypt_key(&dec, &enc);
         },
         [&] {
           EVP_CipherInit_ex2(ecb.get(), nullptr, key, nullptr, 0, nullptr);
         }},
        {"gcm-key",
         [&] {
           ops_.expand_key(&enc, key, key_len);
           ops_.gcm_init(&gkey, &enc);
         },
         [&] {
           EVP_CipherInit_ex2(gcm.get(), nullptr, key, nullptr, 1, nullptr);
         }},
    };
    for (const Case &c : cases) {
      if (!opt_.filter.empty() &&
          (std::string(c.name) + "/" + std::to_string(bits))
                  .find(opt_.filter) == std::string::npos) {
        continue;
      }
      // Reported as nanoseconds per key setup (Compare's "bytes" = 1).
      const Result r = Compare(
          c.ours, c.openssl, [] {}, 1, opt_);
      std::printf("%-12s %4d %7s %9.1f ns %9.1f ns %7.2f\n", c.name, bits, "-",
                  1e3 / r.ours, 1e3 / r.openssl, r.ours / r.openssl);
    }
  }

  const TierOps &ops_;
  std::string tier_name_;
  const Options &opt_;
  OSSL_LIB_CTX *libctx_ = nullptr;
};

Options ParseOptions(int argc, char **argv) {
  Options opt;
  ArgReader args(argc, argv);
  while (args.Next()) {
    const std::string &arg = args.arg();
    if (arg == "--tier") {
      opt.tier = args.Value();
    } else if (arg == "--filter") {
      opt.filter = args.Value();
    } else if (arg == "--runs") {
      opt.runs = args.Int(1);
    } else if (arg == "--ms") {
      opt.batch_ms = args.Double(0.1);
    } else if (arg == "--cycles") {
      opt.cycles = true;
    } else if (arg == "--in-place") {
      opt.in_place = true;
    } else if (arg == "--sizes") {
      opt.sizes = ParseList(args.Value());
    } else if (arg == "--calls") {
      opt.calls = args.Int(1);
    } else if (arg == "--key-bits") {
      opt.key_bits = ParseList(args.Value());
    } else {
      Die("usage: kernel_bench [--tier NAME] [--filter SUBSTRING] [--runs N] "
          "[--ms M] [--key-bits 128,192,256] [--cycles] [--calls N] "
          "[--in-place] [--sizes 16,256,...]");
    }
  }
  return opt;
}

}  // namespace
}  // namespace aesmux::kernels

int main(int argc, char **argv) {
  using namespace aesmux::kernels;
  const Options opt = ParseOptions(argc, argv);
  const CpuFeatures cpu = DetectCpuFeatures();
  const Tier *tier = opt.tier.empty() ? BestTier(cpu) : TierByName(opt.tier);
  if (tier == nullptr) Die("no tier named '" + opt.tier + "'");
  if (!Supported(*tier, cpu)) {
    Die("CPU lacks " + DescribeCpuFeatures(tier->required & ~cpu) +
        " needed by tier " + std::string(tier->name));
  }
  std::printf(
      "tier %s vs %s (default provider); median of %d alternating "
      "batches of ~%.1f ms\n",
      std::string(tier->name).c_str(), OpenSSL_version(OPENSSL_VERSION),
      opt.runs, opt.batch_ms);
  Bench(*tier, opt).Run();
  return 0;
}
