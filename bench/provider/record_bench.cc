// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
// record_bench: AES-GCM records of the shape TLS sends, one EVP call
// sequence per record, for counting instructions per record under
// callgrind (bench/record_cost.py). Not a test, and not a timing
// benchmark (bench/peer/peer_bench times the same sequence).
//
// The key is set once; then each record is
//   EVP_CipherInit_ex2(IV), EVP_CipherUpdate(13 bytes of AAD),
//   EVP_CipherUpdate(payload), [decrypting: EVP_CTRL_AEAD_SET_TAG],
//   EVP_CipherFinal_ex, [encrypting: EVP_CTRL_AEAD_GET_TAG]
// with the IV set anew per record (the same IV each time, so that decrypted
// records all authenticate with one tag). With --tls, each record is a
// TLS 1.2 one as libssl sends it: EVP_CTRL_AEAD_TLS1_AAD with the 13-byte
// header, then one EVP_Cipher over explicit IV, payload and tag in place
// (the fixed part of the IV set once, EVP_CTRL_GCM_SET_IV_FIXED; decrypting,
// the sealed record is copied back into place before each). The records
// run inside RecordLoop, which bench/record_cost.py hands to callgrind's
// --toggle-collect, so set-up and exit are not counted.
//
//   record_bench [--provider aesmux|default] [--alg AES-128-GCM]
//                [--bytes 16] [--decrypt] [--tls] [--records 1000]
//                [--kernels NAME]
#include <openssl/evp.h>

#include <array>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "bench/support/bench_util.h"
#include "tests/support/provider_env.h"

namespace aesmux::test {

const char kBenchName[] = "record_bench";

namespace {

constexpr size_t kAadLen = 13;
constexpr size_t kTagLen = 16;
constexpr size_t kExplicitIvLen = 8;

struct Options {
  std::string provider = "aesmux";
  std::string alg = "AES-128-GCM";
  int bytes = 16;
  bool decrypt = false;
  bool tls = false;
  int records = 1000;
  std::string kernels;  // empty: aesmux's own choice
};

Options ParseOptions(int argc, char **argv) {
  Options opt;
  ArgReader args(argc, argv);
  while (args.Next()) {
    const std::string &arg = args.arg();
    if (arg == "--provider") {
      opt.provider = args.Value();
    } else if (arg == "--alg") {
      opt.alg = args.Value();
    } else if (arg == "--bytes") {
      opt.bytes = args.Int(0);
    } else if (arg == "--decrypt") {
      opt.decrypt = true;
    } else if (arg == "--tls") {
      opt.tls = true;
    } else if (arg == "--records") {
      opt.records = args.Int(1);
    } else if (arg == "--kernels") {
      opt.kernels = args.Value();
    } else {
      Die("usage: record_bench [--provider aesmux|default] [--alg NAME] "
          "[--bytes N] [--decrypt] [--tls] [--records N] "
          "[--kernels NAME]");
    }
  }
  if (opt.provider != "aesmux" && opt.provider != "default") {
    Die("--provider is aesmux or default");
  }
  return opt;
}

struct Record {
  std::array<uint8_t, 12> iv{};
  std::array<uint8_t, kAadLen> aad{};
  std::vector<uint8_t> in, out;
  std::array<uint8_t, kTagLen> tag{};
  // --tls: explicit IV ‖ payload ‖ tag, and (decrypting) a sealed copy.
  std::vector<uint8_t> tls_record, tls_sealed;
  bool tls = false;
};

// One TLS 1.2 record in place; dies on any failure.
void OneTlsRecord(EVP_CIPHER_CTX *ctx, Record *r, bool decrypt) {
  std::vector<uint8_t> &record = r->tls_record;
  if (decrypt) {
    std::memcpy(record.data(), r->tls_sealed.data(), record.size());
  }
  // The header's length is the record's less the tag when sealing (libssl
  // gives the length to come), all of it when opening.
  const size_t declared = record.size() - (decrypt ? 0 : kTagLen);
  r->aad[11] = static_cast<uint8_t>(declared >> 8);
  r->aad[12] = static_cast<uint8_t>(declared);
  if (EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_TLS1_AAD, kAadLen,
                          r->aad.data()) != kTagLen ||
      EVP_Cipher(ctx, record.data(), record.data(),
                 static_cast<unsigned>(record.size())) <= 0) {
    Die("record failed: " + TakeErrors());
  }
}

// One record; dies on any failure, so that a count never hides an error.
void OneRecord(EVP_CIPHER_CTX *ctx, Record *r, bool decrypt) {
  if (r->tls) return OneTlsRecord(ctx, r, decrypt);
  int len = 0;
  int final_len = 0;
  if (EVP_CipherInit_ex2(ctx, nullptr, nullptr, r->iv.data(), decrypt ? 0 : 1,
                         nullptr) != 1 ||
      EVP_CipherUpdate(ctx, nullptr, &len, r->aad.data(), kAadLen) != 1 ||
      EVP_CipherUpdate(ctx, r->out.data(), &len, r->in.data(),
                       static_cast<int>(r->in.size())) != 1 ||
      (decrypt && EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_SET_TAG, kTagLen,
                                      r->tag.data()) != 1) ||
      EVP_CipherFinal_ex(ctx, r->out.data() + len, &final_len) != 1 ||
      (!decrypt && EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_GET_TAG, kTagLen,
                                       r->tag.data()) != 1)) {
    Die("record failed: " + TakeErrors());
  }
}

}  // namespace

// The counted part: `count` records. Not inlined, and with C linkage, so
// that callgrind's --toggle-collect=RecordLoop finds it.
extern "C" __attribute__((noinline)) void RecordLoop(EVP_CIPHER_CTX *ctx,
                                                     Record *r, bool decrypt,
                                                     int count) {
  for (int i = 0; i < count; ++i) OneRecord(ctx, r, decrypt);
}

int Main(int argc, char **argv) {
  const Options opt = ParseOptions(argc, argv);
  std::vector<std::string> settings;
  if (!opt.kernels.empty()) settings.push_back("kernels = " + opt.kernels);
  ProviderEnv env(settings);
  if (!env.loaded()) Die("aesmux did not load: " + env.error());
  const CipherPtr cipher =
      opt.provider == "aesmux" ? env.Aesmux(opt.alg) : env.Default(opt.alg);
  if (cipher == nullptr) Die("cannot fetch " + opt.alg);

  std::array<uint8_t, 32> key{};
  for (size_t i = 0; i < key.size(); ++i) key[i] = static_cast<uint8_t>(i);
  Record r;
  r.in.assign(static_cast<size_t>(opt.bytes), 0x5a);
  r.out.assign(r.in.size() + 16, 0);
  for (size_t i = 0; i < kAadLen; ++i) r.aad[i] = static_cast<uint8_t>(i);
  r.tls = opt.tls;
  r.tls_record.assign(kExplicitIvLen + r.in.size() + kTagLen, 0x5a);
  std::array<uint8_t, 4> fixed_iv{1, 2, 3, 4};

  CipherCtxPtr ctx = NewCipherCtx();
  if (ctx == nullptr ||
      EVP_CipherInit_ex2(ctx.get(), cipher.get(), key.data(), nullptr,
                         opt.decrypt ? 0 : 1, nullptr) != 1) {
    Die("key set-up failed: " + TakeErrors());
  }
  if (opt.tls && EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_GCM_SET_IV_FIXED, 4,
                                     fixed_iv.data()) != 1) {
    Die("fixed IV set-up failed: " + TakeErrors());
  }
  if (opt.decrypt) {
    // A record that authenticates, sealed on another context.
    CipherCtxPtr seal = NewCipherCtx();
    if (seal == nullptr ||
        EVP_CipherInit_ex2(seal.get(), cipher.get(), key.data(), nullptr, 1,
                           nullptr) != 1) {
      Die("key set-up failed: " + TakeErrors());
    }
    if (opt.tls && EVP_CIPHER_CTX_ctrl(seal.get(), EVP_CTRL_GCM_SET_IV_FIXED,
                                       4, fixed_iv.data()) != 1) {
      Die("fixed IV set-up failed: " + TakeErrors());
    }
    Record sealed = r;
    OneRecord(seal.get(), &sealed, false);
    r.tls_sealed = sealed.tls_record;
    r.in.assign(sealed.out.begin(), sealed.out.begin() + opt.bytes);
    r.tag = sealed.tag;
  }
  OneRecord(ctx.get(), &r, opt.decrypt);  // first use: not per record
  RecordLoop(ctx.get(), &r, opt.decrypt, opt.records);
  std::printf("%d records of %d bytes\n", opt.records, opt.bytes);
  return 0;
}
}  // namespace aesmux::test

int main(int argc, char **argv) { return aesmux::test::Main(argc, argv); }
