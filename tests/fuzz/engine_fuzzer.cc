// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
// libFuzzer target: the ENGINE aesmux's legacy ciphers (engine_compat/,
// through libcrypto's legacy EVP path) against the default provider, one
// EVP context on each side driven by the same decoded operations: init
// with key and IV (GCM: any IV length from 1 to 64), updates of any
// length, final (GCM: its tag, or a tag to check), an IV-only or a new-key
// re-init, a copy mid-stream that replaces the context, CTR's
// EVP_CIPHER_CTX_set_num, GCM AAD. After every call both must agree in
// success, output length and bytes; CTR in `num` too. The ENGINE runs with
// every family's fallback_max_len at 64 bytes, so a stream mixes the
// kernels and the fallback path.
//
// Left out, as docs/engine.md says the ENGINE's legacy cipher and the default
// provider legitimately part there: error codes, EVP_Cipher's return
// value, the CBC IV between a padded decryption's updates, a direction
// changed without a new key, a GCM key set mid-message without an IV, XTS
// updates below 16 bytes and keys with equal halves; CTR's num where the
// default provider refuses it (OpenSSL 3.0.20 and later: all but 0); an
// ECB or CBC context used after a failed final (the default provider
// decrypts its held block again).
//
// Input: algorithm, flags (direction, padding), GCM IV length, key, IV,
// then operations until the input ends (fuzz_input.h).
#include <openssl/engine.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/provider.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "provider/core/algorithm.h"
#include "tests/fuzz/fuzz_input.h"

namespace aesmux::fuzz {
namespace {

using core::Family;

struct Setup {
  ENGINE *engine = nullptr;
  OSSL_LIB_CTX *libctx = nullptr;
  std::array<const EVP_CIPHER *, core::kNumAlgs> legacy{};
  std::array<EVP_CIPHER *, core::kNumAlgs> reference{};
};

[[noreturn]] void Fail(const std::string &what) {
  std::fprintf(stderr, "MISMATCH: %s\n", what.c_str());
  ERR_print_errors_fp(stderr);
  std::abort();
}

bool Trace() { return std::getenv("AESMUX_FUZZ_TRACE") != nullptr; }

// The ENGINE loaded from the build tree and initialised, once per process.
Setup &TheSetup() {
  static Setup *setup = [] {
    auto *s = new Setup;
    ENGINE_load_dynamic();
    s->engine = ENGINE_by_id("dynamic");
    const std::vector<std::pair<const char *, const char *>> commands = {
        {"SO_PATH", AESMUX_TEST_ENGINE_PATH}, {"ID", "aesmux"},
        {"LOAD", nullptr}};
    for (const auto &[name, value] : commands) {
      if (s->engine == nullptr ||
          !ENGINE_ctrl_cmd_string(s->engine, name, value, 0)) {
        Fail(std::string("cannot load the ENGINE: ") + name);
      }
    }
    for (const char *family : {"ECB", "CBC", "CTR", "XTS", "GCM"}) {
      const std::string key = std::string(family) + "_FALLBACK_MAX_LEN";
      ENGINE_ctrl_cmd_string(s->engine, key.c_str(), "64", 0);
    }
    ENGINE_ctrl_cmd_string(s->engine, "AFALG", "off", 0);
    if (!ENGINE_init(s->engine)) Fail("cannot initialise the ENGINE");
    s->libctx = OSSL_LIB_CTX_new();
    if (OSSL_PROVIDER_load(s->libctx, "default") == nullptr) {
      Fail("no default provider");
    }
    for (const core::AlgInfo &info : core::kAlgs) {
      const std::string name(info.name);
      const auto a = static_cast<size_t>(info.alg);
      s->legacy[a] = ENGINE_get_cipher(
          s->engine, EVP_CIPHER_get_nid(EVP_get_cipherbyname(name.c_str())));
      s->reference[a] =
          EVP_CIPHER_fetch(s->libctx, name.c_str(), "provider=default");
      if (s->legacy[a] == nullptr || s->reference[a] == nullptr) {
        Fail("no " + name);
      }
    }
    return s;
  }();
  return *setup;
}

// The same call on both contexts; [0] the ENGINE's, [1] the default's.
struct Pair {
  EVP_CIPHER_CTX *ctx[2] = {};
  ~Pair() {
    for (EVP_CIPHER_CTX *c : ctx) EVP_CIPHER_CTX_free(c);
  }
};

struct Outcome {
  int ok = 0;
  int outl = 0;
  std::vector<uint8_t> bytes;
};

void ExpectSame(const Outcome (&o)[2], const std::string &what) {
  if (Trace()) {
    std::fprintf(stderr, "op %s: %d/%d %d/%d\n", what.c_str(), o[0].ok,
                 o[1].ok, o[0].outl, o[1].outl);
  }
  if ((o[0].ok != 0) != (o[1].ok != 0)) {
    Fail(what + ": the ENGINE " + (o[0].ok ? "succeeded" : "failed") +
         ", the default provider " + (o[1].ok ? "succeeded" : "failed"));
  }
  if (o[0].ok && (o[0].outl != o[1].outl || o[0].bytes != o[1].bytes)) {
    Fail(what + ": different output (" + std::to_string(o[0].outl) +
         " and " + std::to_string(o[1].outl) + " bytes)");
  }
  ERR_clear_error();
}

template <typename Call>
void Both(Pair &pair, const std::string &what, Call call) {
  Outcome o[2];
  for (int side = 0; side < 2; ++side) o[side] = call(side, pair.ctx[side]);
  ExpectSame(o, what);
}

void Run(const uint8_t *data, size_t size) {
  Setup &setup = TheSetup();
  FuzzInput in(data, size);
  const core::AlgInfo &alg = core::kAlgs[in.Pick(core::kNumAlgs)];
  const auto a = static_cast<size_t>(alg.alg);
  const uint8_t flags = in.Byte();
  const int encrypt = flags & 1;
  const bool padding = (flags & 2) != 0;
  const bool gcm = alg.family == Family::kGcm;
  const bool xts = alg.family == Family::kXts;
  const bool ctr = alg.family == Family::kCtr;
  const int iv_len = gcm ? 1 + static_cast<int>(in.Pick(64)) : 16;
  std::vector<uint8_t> key(alg.key_len), iv(64);
  auto new_key = [&] {
    in.Bytes(key.data(), key.size());
    const size_t half = key.size() / 2;
    if (xts && std::memcmp(key.data(), key.data() + half, half) == 0) {
      key[0] ^= 1;
    }
  };
  new_key();
  in.Bytes(iv.data(), iv.size());

  Pair pair;
  Both(pair, "init", [&](int side, EVP_CIPHER_CTX *&ctx) {
    ctx = EVP_CIPHER_CTX_new();
    Outcome o;
    o.ok = ctx != nullptr &&
           EVP_CipherInit_ex(ctx,
                             side == 0 ? setup.legacy[a] : setup.reference[a],
                             side == 0 ? setup.engine : nullptr, nullptr,
                             nullptr, encrypt) &&
           (!gcm || EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_SET_IVLEN, iv_len,
                                        nullptr)) &&
           EVP_CipherInit_ex(ctx, nullptr, nullptr, key.data(), iv.data(),
                             encrypt) &&
           EVP_CIPHER_CTX_set_padding(ctx, padding ? 1 : 0);
    return o;
  });
  if (pair.ctx[0] == nullptr || pair.ctx[1] == nullptr) return;

  // Never empty, so that no update passes a null input: a legacy GCM
  // cipher (OpenSSL's own as the ENGINE's) takes a null input as final.
  std::vector<uint8_t> input(1);
  // An update of `len` bytes of the input (`out` false: GCM AAD).
  const auto update = [&](const std::string &what, size_t len, bool out) {
    input.resize(len + 1);
    in.Bytes(input.data(), len);
    Both(pair, what + " " + std::to_string(len),
         [&](int, EVP_CIPHER_CTX *ctx) {
           Outcome o;
           o.bytes.resize(len + 32);
           o.ok = EVP_CipherUpdate(ctx, out ? o.bytes.data() : nullptr,
                                   &o.outl, input.data(),
                                   static_cast<int>(len));
           o.bytes.resize(o.ok && out ? static_cast<size_t>(o.outl) : 0);
           return o;
         });
  };
  for (int step = 0; step < 48 && !in.empty(); ++step) {
    switch (in.Pick(8)) {
      case 0:  // update
      case 1: {
        size_t len = in.U16() % 300;
        if (xts && len < 16) len += 16;
        update("update", len, true);
        break;
      }
      case 2: {  // final (GCM: with the tag to check when decrypting)
        uint8_t tag[16];
        in.Bytes(tag, sizeof(tag));
        bool failed = false;
        Both(pair, std::string("final of ") + alg.name.data(),
             [&](int, EVP_CIPHER_CTX *ctx) {
          Outcome o;
          o.bytes.resize(32);
          if (gcm && !encrypt) {
            EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_SET_TAG, 16, tag);
          }
          o.ok = EVP_CipherFinal_ex(ctx, o.bytes.data(), &o.outl);
          o.bytes.resize(o.ok ? static_cast<size_t>(o.outl) : 0);
          if (o.ok && gcm && encrypt) {
            o.bytes.resize(16);
            o.ok = EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_GET_TAG, 16,
                                       o.bytes.data());
          }
          failed = o.ok == 0;
          return o;
        });
        // After an ECB or CBC final that failed (bad padding), the default
        // provider decrypts the block it held a second time on the next
        // update, where libcrypto's legacy layer hands it out as it is.
        if (failed && !gcm && !xts && !ctr) return;
        // A stream goes on only after an init (libcrypto's legacy layer
        // keeps its partial block's length across an encrypting final);
        // GCM's IV state refuses updates on both sides by itself.
        if (!gcm) {
          Both(pair, "init after final", [&](int, EVP_CIPHER_CTX *ctx) {
            Outcome o;
            o.ok = EVP_CipherInit_ex(ctx, nullptr, nullptr, nullptr, iv.data(),
                                     encrypt);
            return o;
          });
        }
        break;
      }
      case 3:  // a new IV, the same key and direction
        in.Bytes(iv.data(), iv.size());
        Both(pair, "iv", [&](int, EVP_CIPHER_CTX *ctx) {
          Outcome o;
          o.ok = EVP_CipherInit_ex(ctx, nullptr, nullptr, nullptr, iv.data(),
                                   encrypt);
          return o;
        });
        break;
      case 4:  // a new key (GCM: with a new IV)
        new_key();
        if (gcm) in.Bytes(iv.data(), iv.size());
        Both(pair, "key", [&](int, EVP_CIPHER_CTX *ctx) {
          Outcome o;
          o.ok = EVP_CipherInit_ex(ctx, nullptr, nullptr, key.data(),
                                   gcm ? iv.data() : nullptr, encrypt);
          return o;
        });
        break;
      case 5:  // a copy goes on in the original's place
        Both(pair, "copy", [&](int, EVP_CIPHER_CTX *&ctx) {
          Outcome o;
          EVP_CIPHER_CTX *copy = EVP_CIPHER_CTX_new();
          o.ok = copy != nullptr && EVP_CIPHER_CTX_copy(copy, ctx);
          if (o.ok) {
            EVP_CIPHER_CTX_free(ctx);
            ctx = copy;
          } else {
            EVP_CIPHER_CTX_free(copy);
          }
          return o;
        });
        break;
      case 6: {  // CTR: num; GCM: AAD; the others: an update of whole blocks
        if (ctr) {
          // OpenSSL 3.0.20 and later refuse every num but 0 on the default
          // provider (docs/differences.md); the ENGINE takes 0..15 as
          // OpenSSL's legacy AES-CTR does. Where the default refuses, the
          // streams part.
          const int num = static_cast<int>(in.Pick(16));
          if (!EVP_CIPHER_CTX_set_num(pair.ctx[1], num)) return;
          Both(pair, "set_num " + std::to_string(num),
               [&](int, EVP_CIPHER_CTX *ctx) {
                 Outcome o;
                 o.ok = EVP_CIPHER_CTX_set_num(ctx, num);
                 return o;
               });
        } else if (gcm) {
          update("aad", in.Pick(100), false);
        } else {
          update("blocks", 16 * (1 + in.Pick(16)), true);
        }
        break;
      }
      default:  // CTR's num and the IV length, as a caller reads them back
        Both(pair, "state", [&](int, EVP_CIPHER_CTX *ctx) {
          Outcome o;
          o.ok = 1;
          o.outl = EVP_CIPHER_CTX_get_iv_length(ctx);
          if (ctr) o.bytes = {static_cast<uint8_t>(EVP_CIPHER_CTX_get_num(ctx))};
          return o;
        });
        break;
    }
  }
}

}  // namespace
}  // namespace aesmux::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  aesmux::fuzz::Run(data, size);
  return 0;
}
