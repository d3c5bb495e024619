// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
// ipsecmb_bench: aesmux's kernels against Intel's IPsec Multi-Buffer library
// (intel-ipsec-mb) on the same buffers. Not a test.
//
// For AES-CTR, AES-CBC decryption and AES-GCM encryption at 1 KiB and
// 16 KiB, both sides run in alternating batches of about --ms milliseconds,
// --runs times each, on the same 64-byte aligned input and output buffers,
// with keys expanded once outside the timing; the table shows the median
// MB/s (10^6 bytes per second) of each side and the ratio aesmux /
// intel-ipsec-mb. Each side is driven through its own API for one message:
//   CTR, CBC decryption: aesmux's ctr_crypt / cbc_decrypt kernel;
//     intel-ipsec-mb's job API (get_next_job, submit_job), which completes
//     these single-buffer ciphers inside submit;
//   GCM: a whole message (12-byte IV, 16 bytes of AAD, the payload, the
//     16-byte tag) through aesmux's SimdGcm and through IMB_AES*_GCM_ENC.
// intel-ipsec-mb chooses its own code path (init_mb_mgr_auto: AVX-512 with
// VAES on this machine); aesmux runs the best tier of this CPU unless
// --tier says otherwise.
//
//   ipsecmb_bench [--tier NAME] [--runs N] [--ms M]
#include <intel-ipsec-mb.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "kernels/kernels.h"
#include "kernels/simd_gcm.h"
#include "kernels/simd_key.h"
#include "kernels/tiers.h"
#include "bench/support/bench_util.h"

const char aesmux::test::kBenchName[] = "ipsecmb_bench";

namespace aesmux::kernels {
namespace {

using test::ArgReader;
using test::Buffer;
using test::Calibrate;
using test::Die;
using test::Median;
using test::Op;
using test::Time;

struct Options {
  std::string tier;
  int runs = 11;
  double batch_ms = 5;
};

struct Result {
  double ours;
  double theirs;
};

// Alternating batches of both sides; median MB/s of each.
Result Compare(const Op &ours, const Op &theirs, size_t bytes,
               const Options &opt) {
  const double batch = opt.batch_ms / 1000;
  ours();
  theirs();
  const long n_ours = Calibrate(ours, batch);
  const long n_theirs = Calibrate(theirs, batch);
  std::vector<double> a, b;
  for (int r = 0; r < opt.runs; ++r) {
    a.push_back(bytes * n_ours / Time(ours, n_ours) / 1e6);
    b.push_back(bytes * n_theirs / Time(theirs, n_theirs) / 1e6);
  }
  return {Median(a), Median(b)};
}

class Bench {
 public:
  Bench(const Tier &tier, const Options &opt) : tier_(tier), opt_(opt) {
    mgr_ = alloc_mb_mgr(0);
    if (mgr_ == nullptr) Die("alloc_mb_mgr failed");
    IMB_ARCH arch = IMB_ARCH_NONE;
    init_mb_mgr_auto(mgr_, &arch);
    if (imb_get_errno(mgr_) != 0) Die("init_mb_mgr_auto failed");
    arch_ = arch;
  }
  ~Bench() { free_mb_mgr(mgr_); }

  const char *ArchName() const {
    switch (arch_) {
      case IMB_ARCH_SSE: return "SSE";
      case IMB_ARCH_AVX: return "AVX";
      case IMB_ARCH_AVX2: return "AVX2";
      case IMB_ARCH_AVX512: return "AVX512";
      default: return "?";
    }
  }

  void Run() {
    std::printf("%-12s %4s %7s %14s %14s %7s\n", "operation", "key", "bytes",
                "aesmux MB/s", "ipsec-mb MB/s", "ratio");
    for (const char *name : {"ctr", "cbc-dec", "gcm-enc"}) {
      for (int bits : {128, 256}) {
        for (size_t size : {1024, 16384}) {
          const Result r = RunOne(name, bits, size);
          std::printf("%-12s %4d %7zu %14.0f %14.0f %7.2f\n", name, bits, size,
                      r.ours, r.theirs, r.ours / r.theirs);
          std::fflush(stdout);
        }
      }
    }
  }

 private:
  Result RunOne(const std::string &name, int bits, size_t size) {
    const size_t key_len = bits / 8;
    uint8_t key[32], iv[16] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
    uint8_t aad[16] = {7};
    for (int i = 0; i < 32; ++i) key[i] = static_cast<uint8_t>(i * 11 + 5);
    Buffer in(size), out(size);

    // aesmux.
    SimdKey ours;
    ours.Set(tier_, {key, key_len});
    uint8_t chain[16];
    std::memcpy(chain, iv, 16);

    // intel-ipsec-mb.
    alignas(16) uint8_t enc_keys[16 * 15], dec_keys[16 * 15];
    if (bits == 128) {
      IMB_AES_KEYEXP_128(mgr_, key, enc_keys, dec_keys);
    } else {
      IMB_AES_KEYEXP_256(mgr_, key, enc_keys, dec_keys);
    }
    auto submit = [&](IMB_CIPHER_MODE mode, IMB_CIPHER_DIRECTION direction) {
      IMB_JOB *job = IMB_GET_NEXT_JOB(mgr_);
      job->cipher_mode = mode;
      job->cipher_direction = direction;
      job->chain_order = IMB_ORDER_CIPHER_HASH;
      job->hash_alg = IMB_AUTH_NULL;
      job->key_len_in_bytes = key_len;
      job->enc_keys = enc_keys;
      job->dec_keys = dec_keys;
      job->src = in.data;
      job->dst = out.data;
      job->cipher_start_src_offset_in_bytes = 0;
      job->msg_len_to_cipher_in_bytes = size;
      job->iv = iv;
      job->iv_len_in_bytes = 16;
      job = IMB_SUBMIT_JOB(mgr_);
      while (job == nullptr) job = IMB_FLUSH_JOB(mgr_);
      if (job->status != IMB_STATUS_COMPLETED) Die("ipsec-mb job failed");
    };

    if (name == "ctr") {
      return Compare([&] { ours.Ctr(chain, out.data, in.data, size); },
                     [&] { submit(IMB_CIPHER_CNTR, IMB_DIR_ENCRYPT); }, size,
                     opt_);
    }
    if (name == "cbc-dec") {
      return Compare([&] { ours.CbcDecrypt(chain, out.data, in.data, size); },
                     [&] { submit(IMB_CIPHER_CBC, IMB_DIR_DECRYPT); }, size,
                     opt_);
    }
    // GCM: one whole message per call on both sides.
    SimdGcm gcm;
    if (!gcm.SetKey(tier_, {key, key_len})) Die("SimdGcm::SetKey");
    struct gcm_key_data gcm_key;
    struct gcm_context_data gcm_ctx;
    if (bits == 128) {
      IMB_AES128_GCM_PRE(mgr_, key, &gcm_key);
    } else {
      IMB_AES256_GCM_PRE(mgr_, key, &gcm_key);
    }
    uint8_t tag[16];
    return Compare(
        [&] {
          gcm.Start({iv, 12});
          gcm.Aad({aad, sizeof(aad)});
          gcm.Encrypt(out.data, in.data, size);
          gcm.Finish(tag);
        },
        [&] {
          if (bits == 128) {
            IMB_AES128_GCM_ENC(mgr_, &gcm_key, &gcm_ctx, out.data, in.data,
                               size, iv, aad, sizeof(aad), tag, 16);
          } else {
            IMB_AES256_GCM_ENC(mgr_, &gcm_key, &gcm_ctx, out.data, in.data,
                               size, iv, aad, sizeof(aad), tag, 16);
          }
        },
        size, opt_);
  }

  const Tier &tier_;
  const Options &opt_;
  IMB_MGR *mgr_ = nullptr;
  IMB_ARCH arch_ = IMB_ARCH_NONE;
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
    } else {
      Die("usage: ipsecmb_bench [--tier NAME] [--runs N] [--ms M]");
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
  const Tier *tier =
      opt.tier.empty() ? BestTier(cpu) : TierByName(opt.tier);
  if (tier == nullptr) Die("no usable tier");
  if (!Supported(*tier, cpu)) {
    Die("CPU lacks " + DescribeCpuFeatures(tier->required & ~cpu) +
        " needed by tier " + std::string(tier->name));
  }
  Bench bench(*tier, opt);
  std::printf(
      "aesmux tier %s vs intel-ipsec-mb %s (%s); median of %d alternating "
      "batches of ~%.1f ms\n",
      std::string(tier->name).c_str(), imb_get_version_str(), bench.ArchName(),
      opt.runs, opt.batch_ms);
  bench.Run();
  return 0;
}
