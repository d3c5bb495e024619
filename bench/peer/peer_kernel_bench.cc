// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
// peer_kernel_bench: aesmux's GCM kernels against BoringSSL's on the same
// buffers, in core cycles per byte. Not a test; built only when CMake is
// given a BoringSSL build (-DAESMUX_BORINGSSL_DIR, see bench/peer/
// CMakeLists.txt).
//
// BoringSSL's side is its bulk GCM functions called directly, so the tier
// is chosen here and not by BoringSSL's CPUID dispatch:
//   tier vaes_avx2:   aes_gcm_{enc,dec}_update_vaes_avx2, gcm_ghash_vpclmulqdq_avx2
//   tier vaes_avx512: aes_gcm_{enc,dec}_update_vaes_avx512, gcm_ghash_vpclmulqdq_avx512
// against aesmux_gcm_{encrypt,decrypt}_<tier> and aesmux_ghash_<tier>. Both
// sides take whole blocks, keep their GHASH accumulator in the byte order
// of the GCM specification and their counter as a big-endian block, and
// both are checked to produce the same output and accumulator before they
// are timed.
//
// --ops record adds whole TLS-shaped records: aesmux's SimdGcm (Start with
// a 12-byte IV, 13 bytes of AAD, the payload, Finish) against BoringSSL's
// EVP_AEAD_CTX_seal, the interface its TLS stack uses. EVP_AEAD picks its
// code by CPUID, so record rows need a single --tier; for vaes_avx2 this
// program masks AVX512BW in BoringSSL's OPENSSL_ia32cap before BoringSSL
// reads it, as peer_bench does.
//
// Each cell runs the two sides in alternating batches of about --us
// microseconds, --runs times each; a batch is timed with the TSC and
// converted to core cycles (bench/support/cycle_clock.h). The table shows
// the median cycles per byte of each side and the median of the per-run
// ratios BoringSSL / aesmux (above 1: aesmux is faster); --min shows each
// side's fastest batch and their ratio instead, which a loaded machine
// disturbs less (a batch can only be slowed down by its neighbours).
//
//   peer_kernel_bench [--tier vaes_avx2,vaes_avx512] [--ops enc,dec,ghash,record]
//                     [--key-bits 128,256] [--sizes 16,256,...] [--runs 21]
//                     [--us 200] [--in-place] [--min]
#include <openssl/aead.h>
#include <openssl/aes.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "kernels/kernels.h"
#include "kernels/simd_gcm.h"
#include "kernels/tiers.h"
#include "bench/support/bench_util.h"
#include "bench/support/cycle_clock.h"

// BoringSSL's GCM kernels, declared in its crypto/fipsmodule/aes/internal.h
// (not a public header). Htable is 16 pairs of 64-bit words; each tier's
// init fills it in its own layout.
extern "C" {
struct bssl_u128 {
  uint64_t hi, lo;
};
void gcm_init_vpclmulqdq_avx2(bssl_u128 htable[16], const uint64_t h[2]);
void gcm_ghash_vpclmulqdq_avx2(uint8_t xi[16], const bssl_u128 htable[16],
                               const uint8_t *in, size_t len);
void aes_gcm_enc_update_vaes_avx2(const uint8_t *in, uint8_t *out, size_t len,
                                  const AES_KEY *key, const uint8_t ivec[16],
                                  const bssl_u128 htable[16], uint8_t xi[16]);
void aes_gcm_dec_update_vaes_avx2(const uint8_t *in, uint8_t *out, size_t len,
                                  const AES_KEY *key, const uint8_t ivec[16],
                                  const bssl_u128 htable[16], uint8_t xi[16]);
void gcm_init_vpclmulqdq_avx512(bssl_u128 htable[16], const uint64_t h[2]);
void gcm_ghash_vpclmulqdq_avx512(uint8_t xi[16], const bssl_u128 htable[16],
                                 const uint8_t *in, size_t len);
void aes_gcm_enc_update_vaes_avx512(const uint8_t *in, uint8_t *out,
                                    size_t len, const AES_KEY *key,
                                    const uint8_t ivec[16],
                                    const bssl_u128 htable[16], uint8_t xi[16]);
void aes_gcm_dec_update_vaes_avx512(const uint8_t *in, uint8_t *out,
                                    size_t len, const AES_KEY *key,
                                    const uint8_t ivec[16],
                                    const bssl_u128 htable[16], uint8_t xi[16]);
}

const char aesmux::test::kBenchName[] = "peer_kernel_bench";

namespace aesmux::test {
namespace {

using kernels::Tier;

struct Options {
  std::vector<std::string> tiers;  // empty: every VAES tier of this CPU
  std::vector<std::string> ops = {"enc", "dec", "ghash"};
  std::vector<int> key_bits = {128, 256};
  std::vector<int> sizes = {16,   64,   256,  512,  1024,
                            1344, 2048, 4096, 8192, 16384};
  int runs = 21;
  double batch_us = 200;
  bool in_place = false;
  bool minimum = false;  // --min: minima instead of medians
};

// BoringSSL's entry points of one tier.
struct BoringTier {
  void (*init)(bssl_u128 htable[16], const uint64_t h[2]);
  void (*ghash)(uint8_t xi[16], const bssl_u128 htable[16], const uint8_t *in,
                size_t len);
  void (*enc)(const uint8_t *in, uint8_t *out, size_t len, const AES_KEY *key,
              const uint8_t ivec[16], const bssl_u128 htable[16],
              uint8_t xi[16]);
  void (*dec)(const uint8_t *in, uint8_t *out, size_t len, const AES_KEY *key,
              const uint8_t ivec[16], const bssl_u128 htable[16],
              uint8_t xi[16]);
  const char *enc_name;
};

const BoringTier *BoringTierFor(const std::string &tier) {
  static const BoringTier kAvx2 = {
      gcm_init_vpclmulqdq_avx2, gcm_ghash_vpclmulqdq_avx2,
      aes_gcm_enc_update_vaes_avx2, aes_gcm_dec_update_vaes_avx2,
      "aes_gcm_{enc,dec}_update_vaes_avx2"};
  static const BoringTier kAvx512 = {
      gcm_init_vpclmulqdq_avx512, gcm_ghash_vpclmulqdq_avx512,
      aes_gcm_enc_update_vaes_avx512, aes_gcm_dec_update_vaes_avx512,
      "aes_gcm_{enc,dec}_update_vaes_avx512"};
  if (tier == "vaes_avx2") return &kAvx2;
  if (tier == "vaes_avx512") return &kAvx512;
  return nullptr;
}

// One key on both sides.
struct Keys {
  Keys(const Tier &tier, const BoringTier &boring, int bits) {
    uint8_t key[32];
    for (int i = 0; i < 32; ++i) key[i] = static_cast<uint8_t>(i * 13 + 1);
    tier.ops.expand_key(&ours, key, bits / 8);
    tier.ops.gcm_init(&gkey, &ours);
    if (AES_set_encrypt_key(key, bits, &theirs) != 0) Die("AES_set_encrypt_key");
    // BoringSSL hands its init H = E(K, 0) as two big-endian words.
    uint8_t h[16] = {};
    AES_encrypt(h, h, &theirs);
    uint64_t h_words[2] = {0, 0};
    for (int i = 0; i < 8; ++i) {
      h_words[0] = h_words[0] << 8 | h[i];
      h_words[1] = h_words[1] << 8 | h[8 + i];
    }
    boring.init(htable, h_words);
  }
  aesmux_aes_key ours{};
  aesmux_gcm_key gkey{};
  AES_KEY theirs{};
  alignas(64) bssl_u128 htable[16]{};
};

struct Cell {
  double ours_cpb, theirs_cpb, ratio;
};

class Bench {
 public:
  Bench(const Tier &tier, const BoringTier &boring, const Options &opt,
        double cycles_per_tick)
      : tier_(tier),
        boring_(boring),
        opt_(opt),
        cycles_per_tick_(cycles_per_tick) {}

  Cell Run(const std::string &op, int bits, size_t size) {
    if (op == "record") return RunRecord(bits, size);
    Keys keys(tier_, boring_, bits);
    Buffer in(size), out(size);
    uint8_t *dst = opt_.in_place ? in.data : out.data;
    const uint8_t iv[16] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 0, 0, 0, 2};
    uint8_t ctr[16], xi_ours[16] = {}, xi_theirs[16] = {};
    std::memcpy(ctr, iv, 16);
    const auto &ops = tier_.ops;

    auto ours = [&] {
      if (op == "ghash") {
        ops.ghash(&keys.gkey, xi_ours, in.data, size);
      } else {
        (op == "enc" ? ops.gcm_encrypt : ops.gcm_decrypt)(
            &keys.ours, &keys.gkey, ctr, xi_ours, dst, in.data, size);
      }
    };
    auto theirs = [&] {
      if (op == "ghash") {
        boring_.ghash(xi_theirs, keys.htable, in.data, size);
      } else {
        (op == "enc" ? boring_.enc : boring_.dec)(
            in.data, dst, size, &keys.theirs, iv, keys.htable, xi_theirs);
      }
    };
    Check(op, size, keys, iv);
    return Time(ours, theirs, size);
  }

 private:
  // One record of `size` bytes per call on each side, the tags compared.
  Cell RunRecord(int bits, size_t size) {
    uint8_t key[32], nonce[12], aad[13];
    for (int i = 0; i < 32; ++i) key[i] = static_cast<uint8_t>(i * 13 + 1);
    for (int i = 0; i < 12; ++i) nonce[i] = static_cast<uint8_t>(i + 100);
    for (int i = 0; i < 13; ++i) aad[i] = static_cast<uint8_t>(i);
    Buffer in(size), out(size + 16), their_out(size + 16);
    kernels::SimdGcm gcm;
    if (!gcm.SetKey(tier_, std::span<const uint8_t>(key, bits / 8))) {
      Die("SimdGcm::SetKey");
    }
    bssl::ScopedEVP_AEAD_CTX aead;
    if (!EVP_AEAD_CTX_init(aead.get(),
                           bits == 128 ? EVP_aead_aes_128_gcm()
                                       : EVP_aead_aes_256_gcm(),
                           key, bits / 8, 16, nullptr)) {
      Die("EVP_AEAD_CTX_init");
    }
    auto ours = [&] {
      gcm.Start(std::span<const uint8_t>(nonce, 12));
      gcm.Aad(std::span<const uint8_t>(aad, 13));
      gcm.Encrypt(out.data, in.data, size);
      gcm.Finish(out.data + size);
    };
    auto theirs = [&] {
      size_t out_len = 0;
      if (!EVP_AEAD_CTX_seal(aead.get(), their_out.data, &out_len, size + 16,
                             nonce, 12, in.data, size, aad, 13)) {
        Die("EVP_AEAD_CTX_seal");
      }
    };
    ours();
    theirs();
    if (std::memcmp(out.data, their_out.data, size + 16) != 0) {
      Die("record: aesmux and BoringSSL disagree at " + std::to_string(size) +
          " bytes");
    }
    return Time(ours, theirs, size);
  }

  // Alternating batches of the same number of calls (calibrated on ours).
  template <typename Ours, typename Theirs>
  Cell Time(const Ours &ours, const Theirs &theirs, size_t size) {
    ours();
    theirs();
    long calls = 1;
    const double batch_ticks = opt_.batch_us * 1e-6 * TicksPerSecond();
    while (BatchTicks(ours, calls) < batch_ticks / 4 && calls < (1L << 24)) {
      calls *= 4;
    }
    calls = std::max(1L, static_cast<long>(calls * batch_ticks /
                                           BatchTicks(ours, calls)));
    std::vector<double> a, b, ratio;
    for (int r = 0; r < opt_.runs; ++r) {
      const double ta = static_cast<double>(BatchTicks(ours, calls));
      const double tb = static_cast<double>(BatchTicks(theirs, calls));
      a.push_back(ta);
      b.push_back(tb);
      ratio.push_back(tb / ta);
    }
    const double per_byte = cycles_per_tick_ / (static_cast<double>(calls) * size);
    if (opt_.minimum) {
      const double ma = *std::min_element(a.begin(), a.end());
      const double mb = *std::min_element(b.begin(), b.end());
      return {ma * per_byte, mb * per_byte, mb / ma};
    }
    return {Median(a) * per_byte, Median(b) * per_byte, Median(ratio)};
  }

  // Both sides from the same state on the same input must agree, or the
  // comparison is not of the same work.
  void Check(const std::string &op, size_t size, Keys &keys,
             const uint8_t iv[16]) {
    Buffer in(size), out_a(size), out_b(size);
    uint8_t ctr[16], xi_a[16] = {7}, xi_b[16] = {7};
    std::memcpy(ctr, iv, 16);
    if (op == "ghash") {
      tier_.ops.ghash(&keys.gkey, xi_a, in.data, size);
      boring_.ghash(xi_b, keys.htable, in.data, size);
    } else {
      const bool enc = op == "enc";
      (enc ? tier_.ops.gcm_encrypt : tier_.ops.gcm_decrypt)(
          &keys.ours, &keys.gkey, ctr, xi_a, out_a.data, in.data, size);
      (enc ? boring_.enc : boring_.dec)(in.data, out_b.data, size,
                                        &keys.theirs, iv, keys.htable, xi_b);
      if (std::memcmp(out_a.data, out_b.data, size) != 0) {
        Die(op + ": aesmux and BoringSSL disagree on the output at " +
            std::to_string(size) + " bytes");
      }
    }
    if (std::memcmp(xi_a, xi_b, 16) != 0) {
      Die(op + ": aesmux and BoringSSL disagree on GHASH at " +
          std::to_string(size) + " bytes");
    }
  }

  double TicksPerSecond() {
    if (ticks_per_second_ == 0) {
      const auto start = std::chrono::steady_clock::now();
      const uint64_t t0 = __rdtsc();
      while (std::chrono::steady_clock::now() - start <
             std::chrono::milliseconds(20)) {
      }
      const uint64_t t1 = __rdtsc();
      ticks_per_second_ =
          (t1 - t0) / std::chrono::duration<double>(
                          std::chrono::steady_clock::now() - start)
                          .count();
    }
    return ticks_per_second_;
  }

  const Tier &tier_;
  const BoringTier &boring_;
  const Options &opt_;
  double cycles_per_tick_;
  double ticks_per_second_ = 0;
};

Options ParseOptions(int argc, char **argv) {
  Options opt;
  ArgReader args(argc, argv);
  while (args.Next()) {
    const std::string &arg = args.arg();
    if (arg == "--tier") {
      opt.tiers = SplitList(args.Value());
    } else if (arg == "--ops") {
      opt.ops = SplitList(args.Value());
    } else if (arg == "--key-bits") {
      opt.key_bits = ParseList(args.Value());
    } else if (arg == "--sizes") {
      opt.sizes = ParseList(args.Value());
    } else if (arg == "--runs") {
      opt.runs = args.Int(1);
    } else if (arg == "--us") {
      opt.batch_us = args.Double(10);
    } else if (arg == "--in-place") {
      opt.in_place = true;
    } else if (arg == "--min") {
      opt.minimum = true;
    } else {
      Die("usage: peer_kernel_bench [--tier vaes_avx2,vaes_avx512] "
          "[--ops enc,dec,ghash,record] [--key-bits 128,256] [--sizes 16,256,...] "
          "[--runs 21] [--us 200] [--in-place] [--min]");
    }
  }
  for (int size : opt.sizes) {
    if (size <= 0 || size % 16 != 0) Die("sizes must be whole blocks");
  }
  for (const std::string &op : opt.ops) {
    if (op != "enc" && op != "dec" && op != "ghash" && op != "record") {
      Die("unknown op " + op);
    }
  }
  for (int bits : opt.key_bits) {
    if (bits != 128 && bits != 192 && bits != 256) Die("bad --key-bits");
  }
  return opt;
}

void Main(int argc, char **argv) {
  Options opt = ParseOptions(argc, argv);
  const kernels::CpuFeatures cpu = kernels::DetectCpuFeatures();
  if (opt.tiers.empty()) {
    for (const Tier &tier : kernels::kTiers) {
      if (BoringTierFor(std::string(tier.name)) != nullptr &&
          kernels::Supported(tier, cpu)) {
        opt.tiers.emplace_back(tier.name);
      }
    }
    if (opt.tiers.empty()) Die("this CPU has no VAES tier");
  }
  if (std::find(opt.ops.begin(), opt.ops.end(), "record") != opt.ops.end()) {
    if (opt.tiers.size() != 1) Die("--ops record needs a single --tier");
    // Before BoringSSL's first use, which reads it.
    if (opt.tiers[0] == "vaes_avx2") setenv("OPENSSL_ia32cap", "~0:~0x40000000", 1);
  }
  const double cycles_per_tick = CoreCyclesPerTick();
  std::printf("# %s, %.3f core cycles per TSC tick\n", CpuModelName().c_str(),
              cycles_per_tick);
  std::printf("# %s of %d alternating batches of ~%.0f us, %s\n",
              opt.minimum ? "minimum" : "median", opt.runs, opt.batch_us,
              opt.in_place ? "in place" : "out of place, 64-byte aligned");
  for (const std::string &name : opt.tiers) {
    const Tier *tier = kernels::TierByName(name);
    const BoringTier *boring = BoringTierFor(name);
    if (tier == nullptr || boring == nullptr) Die("no VAES tier " + name);
    if (!kernels::Supported(*tier, cpu)) Die("this CPU lacks tier " + name);
    std::printf("\n# tier %s: aesmux_gcm_*_%s against BoringSSL's %s; "
                "records: SimdGcm against EVP_AEAD_CTX_seal\n",
                name.c_str(), name.c_str(), boring->enc_name);
    std::printf("%-6s %4s %6s %11s %14s %15s\n", "op", "key", "bytes",
                "aesmux c/B", "BoringSSL c/B", "BoringSSL/aesmux");
    Bench bench(*tier, *boring, opt, cycles_per_tick);
    for (const std::string &op : opt.ops) {
      for (int bits : opt.key_bits) {
        if (op == "ghash" && bits != opt.key_bits.front()) continue;
        for (int size : opt.sizes) {
          const Cell c = bench.Run(op, bits, size);
          std::printf("%-6s %4s %6d %11.3f %14.3f %15.2f\n", op.c_str(),
                      op == "ghash" ? "-" : std::to_string(bits).c_str(),
                      size, c.ours_cpb, c.theirs_cpb, c.ratio);
          std::fflush(stdout);
        }
      }
    }
  }
}

}  // namespace
}  // namespace aesmux::test

int main(int argc, char **argv) {
  aesmux::test::Main(argc, argv);
  return 0;
}
