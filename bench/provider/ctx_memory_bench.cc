// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
// ctx_memory_bench: heap bytes per keyed cipher context, aesmux against
// OpenSSL's default provider, for every algorithm aesmux serves (a server
// holds two keyed contexts per TLS connection). Not a test.
//
// For each algorithm and side it creates --contexts contexts
// (EVP_CIPHER_CTX_new, then EVP_EncryptInit_ex2 or EVP_DecryptInit_ex2 with
// a key and IV of their own), reads glibc's count of bytes in use
// (mallinfo2().uordblks, chunk headers included) before and after, and
// divides the difference by the count: everything the contexts hold,
// EVP_CIPHER_CTX included, the way a server pays for them. With --record
// each context first also runs one message of 16 bytes (and 13 bytes of
// AAD for GCM, as a TLS record; encryption also its final), so that the
// state a path makes at its first message is counted too. What a side
// makes once (the fetched cipher, aesmux's router, per-thread statistics)
// is made by warm-up contexts beforehand and is not counted. Heap use is
// deterministic, so one run per cell suffices.
//
//   ctx_memory_bench [--contexts 50000] [--dir enc|dec|both] [--alg NAME]
//                    [--record] [--setting "kernels = none"]...
//
// A build with AddressSanitizer replaces malloc, and mallinfo2 then counts
// nothing: the benchmark refuses to run there.
#include <malloc.h>
#include <openssl/evp.h>

#include <cstdio>
#include <string>
#include <vector>

#include "provider/core/algorithm.h"
#include "bench/support/bench_util.h"
#include "tests/support/provider_env.h"

namespace aesmux::test {

const char kBenchName[] = "ctx_memory_bench";

namespace {

struct Options {
  int contexts = 50000;
  bool encrypt = true;
  bool decrypt = true;
  std::string alg;  // empty: all
  bool record = false;
  std::vector<std::string> settings;
};

size_t HeapInUse() { return mallinfo2().uordblks; }

// One message of 16 bytes through `ctx` (see the header).
void RunRecord(EVP_CIPHER_CTX *ctx, const EVP_CIPHER *cipher, bool encrypt) {
  unsigned char aad[13] = {}, in[16] = {}, out[32];
  int len = 0;
  const bool aead =
      (EVP_CIPHER_get_flags(cipher) & EVP_CIPH_FLAG_AEAD_CIPHER) != 0;
  const int ok =
      (!aead || EVP_CipherUpdate(ctx, nullptr, &len, aad, sizeof(aad))) &&
      EVP_CipherUpdate(ctx, out, &len, in, sizeof(in)) &&
      (!encrypt || EVP_EncryptFinal_ex(ctx, out + len, &len));
  if (!ok) Die(std::string("record failed: ") + TakeErrors());
}

// Bytes per context of `count` contexts of `cipher` keyed for `encrypt`
// (with --record: each having run one message).
double BytesPerContext(const EVP_CIPHER *cipher, bool encrypt, int count,
                       bool record) {
  const int key_len = EVP_CIPHER_get_key_length(cipher);
  const int iv_len = EVP_CIPHER_get_iv_length(cipher);
  std::vector<unsigned char> key(static_cast<size_t>(key_len));
  std::vector<unsigned char> iv(static_cast<size_t>(iv_len > 0 ? iv_len : 1));
  std::vector<EVP_CIPHER_CTX *> ctxs(static_cast<size_t>(count));
  const size_t before = HeapInUse();
  for (int i = 0; i < count; ++i) {
    // A key of its own (XTS refuses equal halves): no context can share
    // another's schedule.
    for (size_t b = 0; b < key.size(); ++b) {
      key[b] = static_cast<unsigned char>((i >> (8 * (b % 3))) + b * 29);
    }
    iv[0] = static_cast<unsigned char>(i);
    EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
    const int ok =
        ctx != nullptr &&
        (encrypt ? EVP_EncryptInit_ex2(ctx, cipher, key.data(),
                                       iv_len > 0 ? iv.data() : nullptr,
                                       nullptr)
                 : EVP_DecryptInit_ex2(ctx, cipher, key.data(),
                                       iv_len > 0 ? iv.data() : nullptr,
                                       nullptr));
    if (!ok) Die(std::string("init failed: ") + TakeErrors());
    if (record) RunRecord(ctx, cipher, encrypt);
    ctxs[static_cast<size_t>(i)] = ctx;
  }
  const size_t after = HeapInUse();
  for (EVP_CIPHER_CTX *ctx : ctxs) EVP_CIPHER_CTX_free(ctx);
  return static_cast<double>(after - before) / count;
}

Options ParseOptions(int argc, char **argv) {
  Options opt;
  ArgReader args(argc, argv);
  while (args.Next()) {
    if (args.arg() == "--contexts") {
      opt.contexts = args.Int(1);
    } else if (args.arg() == "--dir") {
      const std::string dir = args.Value();
      opt.encrypt = dir == "enc" || dir == "both";
      opt.decrypt = dir == "dec" || dir == "both";
      if (!opt.encrypt && !opt.decrypt) Die("--dir is enc, dec or both");
    } else if (args.arg() == "--alg") {
      opt.alg = args.Value();
    } else if (args.arg() == "--record") {
      opt.record = true;
    } else if (args.arg() == "--setting") {
      opt.settings.push_back(args.Value());
    } else {
      Die("usage: ctx_memory_bench [--contexts N] [--dir enc|dec|both] "
          "[--alg NAME] [--record] [--setting LINE]...");
    }
  }
  return opt;
}

}  // namespace

int Main(int argc, char **argv) {
  const Options opt = ParseOptions(argc, argv);
  // Under AddressSanitizer mallinfo2 reports nothing in use.
  if (HeapInUse() == 0) Die("mallinfo2 counts nothing (a sanitizer build?)");
  ProviderEnv env(opt.settings);
  if (!env.loaded()) Die("aesmux did not load: " + env.error());
  std::printf("# %s; %d keyed contexts per cell%s; aesmux tier %s\n",
              CpuModelName().c_str(), opt.contexts,
              opt.record ? ", each after one message" : "",
              env.ProviderParam("tier").c_str());
  std::printf("%-12s %-4s %10s %10s %7s\n", "algorithm", "dir", "default",
              "aesmux", "ratio");
  bool over = false;
  for (const core::AlgInfo &info : core::kAlgs) {
    const std::string name(info.name);
    if (!opt.alg.empty() && opt.alg != name) continue;
    const CipherPtr aesmux = env.Aesmux(name);
    const CipherPtr reference = env.Default(name);
    if (aesmux == nullptr || reference == nullptr) Die("no " + name);
    for (const bool encrypt : {true, false}) {
      if (encrypt ? !opt.encrypt : !opt.decrypt) continue;
      // Warm-up: what each side makes once per process or per cipher.
      BytesPerContext(reference.get(), encrypt, 16, opt.record);
      BytesPerContext(aesmux.get(), encrypt, 16, opt.record);
      const double ref = BytesPerContext(reference.get(), encrypt,
                                         opt.contexts, opt.record);
      const double own =
          BytesPerContext(aesmux.get(), encrypt, opt.contexts, opt.record);
      over |= own > ref;
      std::printf("%-12s %-4s %10.0f %10.0f %7.2f\n", name.c_str(),
                  encrypt ? "enc" : "dec", ref, own, own / ref);
    }
  }
  std::printf("# bytes per keyed context (heap in use, mallinfo2); ratio "
              "aesmux/default%s\n",
              over ? "; some aesmux contexts cost more" : "");
  return 0;
}

}  // namespace aesmux::test

int main(int argc, char **argv) { return aesmux::test::Main(argc, argv); }
