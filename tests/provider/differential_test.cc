// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
// Differential tests: aesmux against OpenSSL's default provider, through
// EVP, on random inputs, for all 14 algorithms in both directions.
//
// Every EVP call is made twice with the same arguments, on an aesmux context
// and on a default-provider context, each with its own copy of the buffers,
// and everything a caller can observe is compared: the return value, the
// output length and bytes, and the last error on the queue (library and
// reason; none after a success). After every data call the updated IV and
// `num` are compared as well, after final the GCM tag. Inputs to decrypt are
// made by the default provider from random plaintext, and sometimes
// corrupted.
//
// Randomness is seeded and deterministic: each test prints its seed, and
// AESMUX_TEST_SEED replaces the base seed. A test draws the same cases under
// every kernel configuration. A difference is reported with the scenario
// (algorithm, direction, key, IV, lengths, buffer layout) and every call
// made so far with the default provider's results.
//
// Not compared: a direction-only re-init of ECB/CBC
// (EVP_CipherInit_ex(ctx, NULL, NULL, NULL, iv, enc) with no key), after
// which the default provider keeps its old key schedule and is wrong where
// aesmux is right. Every init here that changes direction also sets a key.
#include <openssl/core_names.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/proverr.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "tests/provider/aligned_buffer.h"
#include "tests/provider/kernel_configs.h"
#include "tests/support/evp_twin.h"
#include "tests/support/provider_env.h"

namespace aesmux::test {
namespace {

enum class Family { kEcb, kCbc, kCtr, kXts, kGcm };

struct Algorithm {
  const char *name;
  Family family;
  size_t key_len;  // bytes; XTS: both halves
};

constexpr Algorithm kAlgorithms[] = {
    {"AES-128-ECB", Family::kEcb, 16}, {"AES-192-ECB", Family::kEcb, 24},
    {"AES-256-ECB", Family::kEcb, 32}, {"AES-128-CBC", Family::kCbc, 16},
    {"AES-192-CBC", Family::kCbc, 24}, {"AES-256-CBC", Family::kCbc, 32},
    {"AES-128-CTR", Family::kCtr, 16}, {"AES-192-CTR", Family::kCtr, 24},
    {"AES-256-CTR", Family::kCtr, 32}, {"AES-128-XTS", Family::kXts, 32},
    {"AES-256-XTS", Family::kXts, 64}, {"AES-128-GCM", Family::kGcm, 16},
    {"AES-192-GCM", Family::kGcm, 24}, {"AES-256-GCM", Family::kGcm, 32},
};

void PrintTo(const Algorithm &alg, std::ostream *os) { *os << alg.name; }

bool IsBlockMode(Family family) {
  return family == Family::kEcb || family == Family::kCbc;
}

constexpr size_t kBlock = 16;
constexpr size_t kXtsMaxDataUnit = size_t{1} << 24;  // 2^20 blocks

// ---------------------------------------------------------------------------
// Seeds and randomness.

constexpr uint64_t kBaseSeed = 0x61657326d7578ull;

uint64_t BaseSeed() {
  static const uint64_t seed = [] {
    const char *text = std::getenv("AESMUX_TEST_SEED");
    return text != nullptr ? std::strtoull(text, nullptr, 0) : kBaseSeed;
  }();
  return seed;
}

// The seed of one test case: the base seed mixed with the case's name
// (FNV-1a), which leaves out the kernel configuration.
uint64_t CaseSeed(std::string_view case_name) {
  uint64_t hash = 0xcbf29ce484222325ull;
  for (char c : case_name) {
    hash = (hash ^ static_cast<uint8_t>(c)) * 0x100000001b3ull;
  }
  return hash ^ BaseSeed();
}

class Rng {
 public:
  explicit Rng(uint64_t seed) : engine_(seed) {}

  size_t Uniform(size_t lo, size_t hi) {  // inclusive
    return std::uniform_int_distribution<size_t>(lo, hi)(engine_);
  }
  bool Chance(double p) { return std::bernoulli_distribution(p)(engine_); }
  std::vector<uint8_t> Bytes(size_t n) {
    std::vector<uint8_t> bytes(n);
    for (size_t i = 0; i < n; i += 8) {
      const uint64_t word = engine_();
      std::memcpy(bytes.data() + i, &word, std::min<size_t>(8, n - i));
    }
    return bytes;
  }
  void FlipBit(std::vector<uint8_t> *bytes, size_t from, size_t to) {
    const size_t bit = Uniform(from * 8, to * 8 - 1);
    (*bytes)[bit / 8] ^= static_cast<uint8_t>(1u << (bit % 8));
  }

 private:
  std::mt19937_64 engine_;
};

std::string Hex(const uint8_t *data, size_t len, size_t max = 48) {
  static const char kDigits[] = "0123456789abcdef";
  std::string text;
  for (size_t i = 0; i < std::min(len, max); ++i) {
    text += kDigits[data[i] >> 4];
    text += kDigits[data[i] & 15];
  }
  if (len > max) text += "…";
  return text;
}

std::string Hex(const std::vector<uint8_t> &bytes, size_t max = 48) {
  return Hex(bytes.data(), bytes.size(), max);
}

// A twin of aesmux's cipher against the default provider's, compared in
// everything (tests/support/evp_twin.h).
Twin AesmuxTwin(const EVP_CIPHER *aesmux, const EVP_CIPHER *reference,
                std::array<CipherCtxPtr, 2> contexts, const Bytes &input,
                bool in_place, size_t in_misalign, size_t out_misalign,
                std::string description) {
  const TwinSpec spec{"aesmux", Compare::kEverything, nullptr,
                      {aesmux, reference}};
  return MakeTwin(spec, std::move(contexts), input, in_place, in_misalign,
                  out_misalign, std::move(description));
}

// ---------------------------------------------------------------------------
// Scenarios: one message through both providers.

enum class Api {
  kUpdate,  // EVP_CipherUpdate / EVP_CipherFinal_ex
  kCipher,  // EVP_Cipher only (ECB/CBC: whole blocks, no final)
  kMixed,   // either, call by call (CTR, XTS, GCM)
};

enum class InitStyle {
  kOneCall,    // init(cipher, key, iv, enc)
  kKeyWithIv,  // init(cipher, -, -, enc); [ivlen, tag]; init(-, key, iv, -1)
  kKeyThenIv,  // … init(-, key, -, -1); init(-, -, iv, -1)
};

enum class Corruption { kNone, kLastBlock, kTruncate, kTag, kAad, kData };

struct Scenario {
  const Algorithm *alg = nullptr;
  bool encrypt = true;
  std::vector<uint8_t> key;
  std::vector<uint8_t> iv;
  // ECB/CBC: set_padding(padding) after init; nullopt leaves the context's.
  std::optional<bool> padding;
  std::vector<uint8_t> plaintext;
  // Decrypt: the input, instead of the default provider's encryption of
  // `plaintext` with `seal_padding` (default: the padding in effect).
  std::optional<std::vector<uint8_t>> ciphertext;
  std::optional<bool> seal_padding;
  std::vector<uint8_t> aad;  // GCM
  size_t tag_len = 16;       // GCM: tag bytes got (encrypt) or set (decrypt)
  bool tag_late = false;     // GCM decrypt: set the tag after the data
  Corruption corruption = Corruption::kNone;
  size_t max_pieces = 8;  // data and AAD go in 1..max_pieces calls
  Api api = Api::kUpdate;
  InitStyle init = InitStyle::kKeyWithIv;
  bool reuse = false;  // init the contexts of the previous scenario again
  bool in_place = false;
  size_t in_misalign = 0;
  size_t out_misalign = 0;
  bool copy = false;  // copy the contexts at a random point, finish both

  std::string Describe() const {
    std::ostringstream text;
    text << alg->name << (encrypt ? " encrypt" : " decrypt") << ", key "
         << Hex(key, 64) << ", iv (" << iv.size() << ") " << Hex(iv, 128)
         << ", plaintext " << plaintext.size() << " bytes";
    if (ciphertext) text << ", ciphertext given (" << ciphertext->size() << ")";
    if (padding) text << ", padding " << *padding;
    if (seal_padding) text << ", sealed with padding " << *seal_padding;
    if (alg->family == Family::kGcm) {
      text << ", aad " << aad.size() << " bytes, tag " << tag_len
           << (tag_late ? " (set late)" : "");
    }
    static const char *kCorruptions[] = {"",
                                         ", corrupt last block",
                                         ", truncated",
                                         ", corrupt tag",
                                         ", corrupt aad",
                                         ", corrupt data"};
    static const char *kApis[] = {"update", "EVP_Cipher", "mixed"};
    static const char *kInits[] = {"one call", "key with iv", "key then iv"};
    text << kCorruptions[static_cast<int>(corruption)] << ", api "
         << kApis[static_cast<int>(api)] << ", init "
         << kInits[static_cast<int>(init)] << (reuse ? " (reused)" : "")
         << (in_place ? ", in place +" : ", out of place in +")
         << (in_place ? out_misalign : in_misalign);
    if (!in_place) text << " out +" << out_misalign;
    if (copy) text << ", copied mid-way";
    return text.str();
  }
};

struct StreamResult {
  bool diverged = false;        // a difference (already reported)
  bool completed = false;       // every call succeeded, on both providers
  std::string failed_call;      // else: the call that failed on both
  Observed failure;             // and what the default provider returned
  std::vector<uint8_t> output;  // the default provider's output
};

// Cuts `len` bytes into 1..max_pieces pieces at random (some empty); with
// unit 16 every piece is whole blocks. Short inputs are sometimes cut into
// many small pieces, to cross block boundaries in every way.
std::vector<size_t> RandomSplits(Rng &rng, size_t len, size_t max_pieces,
                                 size_t unit = 1) {
  std::vector<size_t> pieces;
  if (max_pieces > 1 && len <= 512 && rng.Chance(0.3)) {
    size_t left = len;
    while (left > 0 && pieces.size() < 200) {
      const size_t piece = std::min(left, rng.Uniform(0, 33) / unit * unit);
      pieces.push_back(piece);
      left -= piece;
    }
    if (left > 0) pieces.push_back(left);
    return pieces;
  }
  const size_t units = len / unit;
  std::vector<size_t> cuts;
  const size_t count = rng.Uniform(1, std::max<size_t>(max_pieces, 1));
  for (size_t i = 1; i < count; ++i) cuts.push_back(rng.Uniform(0, units));
  std::sort(cuts.begin(), cuts.end());
  size_t previous = 0;
  for (size_t cut : cuts) {
    pieces.push_back((cut - previous) * unit);
    previous = cut;
  }
  pieces.push_back((units - previous) * unit + len % unit);
  return pieces;
}

// XTS data units (one per call): at least 16 bytes each; with several
// pieces allowed, sometimes an empty unit, which both providers refuse.
std::vector<size_t> XtsUnits(Rng &rng, size_t len, size_t max_pieces) {
  if (len < kBlock) return {len};
  const size_t count =
      std::min(rng.Uniform(1, std::max<size_t>(max_pieces, 1)), len / kBlock);
  const size_t slack = len - count * kBlock;
  std::vector<size_t> cuts;
  for (size_t i = 1; i < count; ++i) cuts.push_back(rng.Uniform(0, slack));
  std::sort(cuts.begin(), cuts.end());
  std::vector<size_t> units;
  size_t previous = 0;
  for (size_t cut : cuts) {
    units.push_back(cut - previous + kBlock);
    previous = cut;
  }
  units.push_back(slack - previous + kBlock);
  if (max_pieces > 1 && rng.Chance(0.05)) {
    units.insert(units.begin() + rng.Uniform(0, units.size()), 0);
  }
  return units;
}

// CTR IVs whose counter is about to carry: across the low 64 bits (into the
// high half), and across all 128 bits (wrapping to zero).
std::vector<uint8_t> NearWrapCtrIv(Rng &rng) {
  std::vector<uint8_t> iv = rng.Bytes(16);
  const size_t kind = rng.Uniform(0, 2);
  const size_t from = kind == 1 ? 0 : 8;  // 128-bit wrap: all of it
  for (size_t i = from; i < 16; ++i) iv[i] = 0xff;
  if (kind == 2) iv[8] = 0x7f;  // carry into bit 63 only: …7fffffffffffffff
  iv[15] = static_cast<uint8_t>(0xff - rng.Uniform(0, 15));
  return iv;
}

struct Tally {
  size_t streams = 0, encrypt = 0, decrypt = 0;
  size_t bytes = 0;
  size_t failed_alike = 0;  // calls that failed on both, the same way
  size_t copies = 0, via_cipher = 0, reused = 0, in_place = 0;

  std::string Describe() const {
    std::ostringstream text;
    text << streams << " streams (" << encrypt << " encrypt, " << decrypt
         << " decrypt), " << bytes / 1024 << " KiB, " << failed_alike
         << " ended in the same failure on both, " << copies
         << " copied mid-way, " << via_cipher << " using EVP_Cipher, " << reused
         << " on reused contexts, " << in_place << " in place";
    return text.str();
  }
};

// Runs scenarios of one algorithm through both providers.
class StreamRunner {
 public:
  StreamRunner(const ProviderEnv &env, const Algorithm &alg, uint64_t seed)
      : alg_(alg),
        rng_(seed),
        aesmux_(env.Aesmux(alg.name)),
        reference_(env.Default(alg.name)) {}

  bool ready() const { return aesmux_ && reference_; }
  const Algorithm &alg() const { return alg_; }
  Rng &rng() { return rng_; }
  const Tally &tally() const { return tally_; }
  const EVP_CIPHER *aesmux() const { return aesmux_.get(); }
  const EVP_CIPHER *reference() const { return reference_.get(); }

  Scenario RandomScenario(bool encrypt, size_t length);
  Scenario RandomScenario(bool encrypt) {
    const size_t r = rng_.Uniform(0, 99);
    const size_t max = r < 45 ? 256 : r < 75 ? 4096 : 65536;
    return RandomScenario(encrypt, rng_.Uniform(0, max));
  }
  StreamResult Run(const Scenario &scenario);

 private:
  struct Call {
    enum Kind { kAad, kData, kSetTag, kFinal } kind;
    size_t len = 0;
    bool via_cipher = false;
  };

  bool Seal(const Scenario &s, bool padding, const std::vector<size_t> &units,
            std::vector<uint8_t> *ciphertext, std::vector<uint8_t> *tag);
  bool InitTwin(Twin &twin, const Scenario &s, bool fresh,
                const std::vector<uint8_t> &tag);
  bool RunCalls(Twin &twin, const Scenario &s, const std::vector<Call> &calls,
                size_t from, size_t to, const std::vector<uint8_t> &aad,
                const std::vector<uint8_t> &tag);
  bool AfterFinal(Twin &twin, const Scenario &s);

  const Algorithm &alg_;
  Rng rng_;
  CipherPtr aesmux_;
  CipherPtr reference_;
  // The contexts of the previous scenario, for `reuse`, and their padding.
  std::array<CipherCtxPtr, 2> pool_;
  bool pool_padding_ = true;
  Tally tally_;
};

Scenario StreamRunner::RandomScenario(bool encrypt, size_t length) {
  const Family family = alg_.family;
  Scenario s;
  s.alg = &alg_;
  s.encrypt = encrypt;
  s.key = rng_.Bytes(alg_.key_len);
  switch (family) {
    case Family::kEcb:
      break;
    case Family::kCbc:
    case Family::kXts:
      s.iv = rng_.Bytes(16);
      break;
    case Family::kCtr:
      s.iv = rng_.Chance(0.3) ? NearWrapCtrIv(rng_) : rng_.Bytes(16);
      break;
    case Family::kGcm:
      s.iv = rng_.Bytes(rng_.Chance(0.6) ? 12 : rng_.Uniform(1, 128));
      break;
  }
  const size_t api = rng_.Uniform(0, 3);
  if (IsBlockMode(family)) {
    s.api = api == 0 ? Api::kCipher : Api::kUpdate;
    if (s.api == Api::kCipher) length -= length % kBlock;
    const size_t padding = rng_.Uniform(0, 2);
    if (padding != 0) s.padding = padding == 2;
  } else {
    s.api = api == 0 ? Api::kCipher : api == 1 ? Api::kMixed : Api::kUpdate;
  }
  s.plaintext = rng_.Bytes(length);
  if (family == Family::kGcm) {
    const size_t r = rng_.Uniform(0, 99);
    s.aad = rng_.Bytes(rng_.Uniform(0, r < 70 ? 64 : r < 95 ? 2048 : 65536));
    s.tag_len = rng_.Chance(0.5) ? 16 : rng_.Uniform(1, 16);
    s.tag_late = rng_.Chance(0.5);
  }
  if (!encrypt) {
    const size_t r = rng_.Uniform(0, 99);
    if (IsBlockMode(family) && s.api == Api::kUpdate) {
      s.corruption = r < 15   ? Corruption::kLastBlock
                     : r < 20 ? Corruption::kTruncate
                              : Corruption::kNone;
    } else if (family == Family::kGcm) {
      s.corruption = r < 8    ? Corruption::kTag
                     : r < 12 ? Corruption::kAad
                     : r < 16 ? Corruption::kData
                              : Corruption::kNone;
    }
  }
  s.max_pieces = rng_.Uniform(1, 8);
  s.init = static_cast<InitStyle>(rng_.Uniform(0, 2));
  s.reuse = rng_.Chance(0.3);
  s.in_place = rng_.Chance(0.5);
  s.in_misalign = rng_.Uniform(0, 15);
  s.out_misalign = rng_.Uniform(0, 15);
  s.copy = rng_.Chance(0.3);
  return s;
}

// The default provider's encryption, made outside any twin: the input of a
// decryption scenario. XTS encrypts unit by unit (a unit it refuses is
// passed through as is); ECB/CBC without padding leave a partial last block
// unencrypted, so that decryption sees that length.
bool StreamRunner::Seal(const Scenario &s, bool padding,
                        const std::vector<size_t> &units,
                        std::vector<uint8_t> *ciphertext,
                        std::vector<uint8_t> *tag) {
  const std::vector<uint8_t> &plain = s.plaintext;
  CipherCtxPtr ctx = NewCipherCtx();
  const Family family = alg_.family;
  bool ok = EVP_CipherInit_ex(ctx.get(), reference_.get(), nullptr, nullptr,
                              nullptr, 1) == 1;
  if (ok && family == Family::kGcm) {
    ok = EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_AEAD_SET_IVLEN,
                             static_cast<int>(s.iv.size()), nullptr) > 0;
  }
  ok = ok && EVP_CipherInit_ex(ctx.get(), nullptr, nullptr, s.key.data(),
                               s.iv.empty() ? nullptr : s.iv.data(), 1) == 1;
  ok = ok && EVP_CIPHER_CTX_set_padding(ctx.get(), padding ? 1 : 0) == 1;
  ciphertext->assign(plain.size() + kBlock, 0);
  int len = 0;
  size_t done = 0;
  if (ok && family == Family::kGcm && !s.aad.empty()) {
    ok = EVP_CipherUpdate(ctx.get(), nullptr, &len, s.aad.data(),
                          static_cast<int>(s.aad.size())) == 1;
  }
  if (ok && family == Family::kXts) {
    for (size_t unit : units) {
      if (unit < kBlock) {
        std::copy_n(plain.data() + done, unit, ciphertext->data() + done);
      } else {
        ok = ok &&
             EVP_CipherUpdate(ctx.get(), ciphertext->data() + done, &len,
                              plain.data() + done, static_cast<int>(unit)) == 1;
      }
      done += unit;
    }
  } else if (ok) {
    size_t sealed = plain.size();
    if (IsBlockMode(family) && !padding) sealed -= sealed % kBlock;
    ok = EVP_CipherUpdate(ctx.get(), ciphertext->data(), &len, plain.data(),
                          static_cast<int>(sealed)) == 1;
    done = static_cast<size_t>(len);
    ok = ok &&
         EVP_CipherFinal_ex(ctx.get(), ciphertext->data() + done, &len) == 1;
    done += static_cast<size_t>(len);
    if (sealed != plain.size()) {
      std::copy(plain.begin() + sealed, plain.end(),
                ciphertext->begin() + done);
      done += plain.size() - sealed;
    }
  }
  ciphertext->resize(done);
  if (ok && family == Family::kGcm) {
    tag->assign(16, 0);
    ok = EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_AEAD_GET_TAG, 16,
                             tag->data()) > 0;
  }
  if (!ok) {
    ADD_FAILURE() << "the default provider could not make the input of "
                  << s.Describe() << ": " << TakeErrors();
  }
  return ok;
}

bool StreamRunner::InitTwin(Twin &twin, const Scenario &s, bool fresh,
                            const std::vector<uint8_t> &tag) {
  const bool gcm = alg_.family == Family::kGcm;
  const int enc = s.encrypt ? 1 : 0;
  const uint8_t *iv = s.iv.empty() ? nullptr : s.iv.data();
  const uint8_t *key = s.key.data();
  auto set_tag = [&] {
    return twin.Step(
        "set tag (" + std::to_string(tag.size()) + ")", [&](Side &side) {
          return Ctrl(side, EVP_CTRL_AEAD_SET_TAG, tag.size(), tag.data());
        });
  };
  const bool early_tag = gcm && !s.encrypt && !s.tag_late;
  InitStyle style = s.init;
  // A GCM IV other than the context's current length needs ivlen first.
  if (gcm && style == InitStyle::kOneCall && !(fresh && s.iv.size() == 12)) {
    style = InitStyle::kKeyWithIv;
  }
  if (style == InitStyle::kOneCall) {
    if (!twin.Step("init(cipher, key, iv, enc)", [&](Side &side) {
          return Init(side, fresh, key, iv, enc);
        })) {
      return false;
    }
    if (early_tag && !set_tag()) return false;
  } else {
    if (!twin.Step("init(cipher, -, -, enc)", [&](Side &side) {
          return Init(side, fresh, nullptr, nullptr, enc);
        })) {
      return false;
    }
    if (gcm &&
        !twin.Step("set ivlen " + std::to_string(s.iv.size()), [&](Side &side) {
          return Ctrl(side, EVP_CTRL_AEAD_SET_IVLEN, s.iv.size(), nullptr);
        })) {
      return false;
    }
    if (early_tag && !set_tag()) return false;
    if (style == InitStyle::kKeyWithIv) {
      if (!twin.Step("init(-, key, iv, -1)", [&](Side &side) {
            return Init(side, false, key, iv, -1);
          })) {
        return false;
      }
    } else if (!twin.Step("init(-, key, -, -1)",
                          [&](Side &side) {
                            return Init(side, false, key, nullptr, -1);
                          }) ||
               !twin.Step("init(-, -, iv, -1)", [&](Side &side) {
                 return Init(side, false, nullptr, iv, -1);
               })) {
      return false;
    }
  }
  if (s.padding &&
      !twin.Step("set padding " + std::to_string(*s.padding),
                 [&](Side &side) { return SetPadding(side, *s.padding); })) {
    return false;
  }
  return twin.Check("updated iv", UpdatedIv) && twin.Check("num", Num);
}

bool StreamRunner::RunCalls(Twin &twin, const Scenario &s,
                            const std::vector<Call> &calls, size_t from,
                            size_t to, const std::vector<uint8_t> &aad,
                            const std::vector<uint8_t> &tag) {
  for (size_t i = from; i < to; ++i) {
    const Call &call = calls[i];
    const std::string n = std::to_string(call.len);
    bool ok = false;
    switch (call.kind) {
      case Call::kAad:
        ok = call.via_cipher
                 ? twin.Step("EVP_Cipher(aad, " + n + ")",
                             [&](Side &side) {
                               return CipherAad(side, aad, call.len);
                             })
                 : twin.Step("update(aad, " + n + ")", [&](Side &side) {
                     return UpdateAad(side, aad, call.len);
                   });
        break;
      case Call::kData:
        ok = call.via_cipher
                 ? twin.Step("EVP_Cipher(" + n + ")",
                             [&](Side &side) { return Cipher(side, call.len); })
                 : twin.Step("update(" + n + ")", [&](Side &side) {
                     return Update(side, call.len);
                   });
        ok =
            ok && twin.Check("updated iv", UpdatedIv) && twin.Check("num", Num);
        break;
      case Call::kSetTag:
        ok = twin.Step("set tag (" + std::to_string(tag.size()) + ", late)",
                       [&](Side &side) {
                         return Ctrl(side, EVP_CTRL_AEAD_SET_TAG, tag.size(),
                                     tag.data());
                       });
        break;
      case Call::kFinal:
        ok = call.via_cipher ? twin.Step("EVP_Cipher(final)", CipherFinal)
                             : twin.Step("final", Final);
        break;
    }
    if (!ok) return false;
  }
  return true;
}

bool StreamRunner::AfterFinal(Twin &twin, const Scenario &s) {
  if (!twin.Check("updated iv", UpdatedIv)) return false;
  if (alg_.family == Family::kGcm && s.encrypt) {
    return twin.Step("get tag (" + std::to_string(s.tag_len) + ")",
                     [&](Side &side) { return GetTag(side, s.tag_len); });
  }
  return true;
}

StreamResult StreamRunner::Run(const Scenario &s) {
  const Family family = alg_.family;
  const bool gcm = family == Family::kGcm;
  const bool fresh = !(s.reuse && pool_[0] && pool_[1]);
  const bool padding = s.padding.value_or(fresh ? true : pool_padding_);
  StreamResult result;

  // The input, the data units and the tag.
  std::vector<uint8_t> input = s.plaintext;
  std::vector<uint8_t> aad = s.aad;
  std::vector<uint8_t> tag;
  std::vector<size_t> units;
  if (family == Family::kXts) {
    units = XtsUnits(rng_, s.plaintext.size(), s.max_pieces);
  }
  if (!s.encrypt) {
    if (s.ciphertext) {
      input = *s.ciphertext;
      tag.assign(16, 0);
    } else {
      const bool seal_padding =
          s.seal_padding.value_or(s.api == Api::kCipher ? false : padding);
      if (!Seal(s, seal_padding, units, &input, &tag)) {
        result.diverged = true;
        return result;
      }
    }
    tag.resize(gcm ? s.tag_len : 0);
    switch (s.corruption) {
      case Corruption::kNone:
        break;
      case Corruption::kLastBlock:
        if (!input.empty()) {
          rng_.FlipBit(&input, input.size() - std::min(input.size(), kBlock),
                       input.size());
        }
        break;
      case Corruption::kTruncate:
        input.resize(input.size() -
                     std::min(input.size(), rng_.Uniform(1, 15)));
        break;
      case Corruption::kAad:
        if (!aad.empty()) {
          rng_.FlipBit(&aad, 0, aad.size());
          break;
        }
        [[fallthrough]];
      case Corruption::kData:
        if (!input.empty() && s.corruption == Corruption::kData) {
          rng_.FlipBit(&input, 0, input.size());
          break;
        }
        [[fallthrough]];
      case Corruption::kTag:
        if (!tag.empty()) rng_.FlipBit(&tag, 0, tag.size());
        break;
    }
  }
  if (family != Family::kXts) {
    const size_t unit =
        IsBlockMode(family) && s.api == Api::kCipher ? kBlock : 1;
    units = RandomSplits(rng_, input.size(), s.max_pieces, unit);
  }

  // The calls after init.
  auto via_cipher = [&] {
    return s.api == Api::kCipher || (s.api == Api::kMixed && rng_.Chance(0.5));
  };
  std::vector<Call> calls;
  if (gcm) {
    for (size_t piece : RandomSplits(rng_, aad.size(), s.max_pieces)) {
      calls.push_back({Call::kAad, piece, via_cipher()});
    }
  }
  for (size_t piece : units) {
    calls.push_back({Call::kData, piece, via_cipher()});
  }
  if (gcm && !s.encrypt && s.tag_late) calls.push_back({Call::kSetTag});
  // EVP_Cipher callers of the non-AEAD modes never finalise.
  const bool finalises = gcm || s.api != Api::kCipher;
  if (finalises) calls.push_back({Call::kFinal, 0, gcm && via_cipher()});

  std::array<CipherCtxPtr, 2> contexts;
  if (!fresh) contexts = std::move(pool_);
  Twin twin =
      AesmuxTwin(aesmux_.get(), reference_.get(), std::move(contexts), input,
               s.in_place, s.in_misalign, s.out_misalign, s.Describe());

  // Copy at a random point, then finish the original and the copy.
  const size_t copy_at =
      s.copy ? rng_.Uniform(0, calls.size()) : calls.size() + 1;
  bool ok =
      InitTwin(twin, s, fresh, tag) &&
      RunCalls(twin, s, calls, 0, std::min(copy_at, calls.size()), aad, tag);
  std::optional<Twin> copy;
  if (ok && s.copy) {
    copy = twin.Copy();
    ok = copy.has_value();
  }
  ok = ok &&
       RunCalls(twin, s, calls, std::min(copy_at, calls.size()), calls.size(),
                aad, tag) &&
       (!finalises || AfterFinal(twin, s));
  if (copy) {
    const bool copy_ok =
        RunCalls(*copy, s, calls, copy_at, calls.size(), aad, tag) &&
        (!finalises || AfterFinal(*copy, s));
    EXPECT_EQ(copy_ok, ok) << "the copy and the original ended differently: "
                           << s.Describe();
  }

  result.diverged = twin.diverged() || (copy && copy->diverged());
  result.completed = ok;
  if (!ok) {
    result.failed_call = twin.last_call();
    result.failure = twin.last();
  }
  result.output = twin.Output();
  // A stream that ran cleanly on an intact input gives back the plaintext:
  // the harness and the default provider agree with each other.
  if (ok && !s.encrypt && !s.ciphertext && s.corruption == Corruption::kNone &&
      !s.seal_padding) {
    EXPECT_TRUE(result.output == s.plaintext)
        << "decryption did not give the plaintext back: " << s.Describe()
        << "\n  got  " << Hex(result.output) << "\n  want " << Hex(s.plaintext);
  }

  ++tally_.streams;
  ++(s.encrypt ? tally_.encrypt : tally_.decrypt);
  tally_.bytes += input.size();
  tally_.failed_alike += !ok && !result.diverged;
  tally_.copies += s.copy;
  tally_.via_cipher += s.api != Api::kUpdate;
  tally_.reused += !fresh;
  tally_.in_place += s.in_place;

  // Keep the contexts for the next scenario, unless they went astray.
  pool_ = {};
  if (!result.diverged) {
    pool_ = {std::move(twin.side(0).ctx), std::move(twin.side(1).ctx)};
    pool_padding_ = padding;
  }
  return result;
}

// ---------------------------------------------------------------------------
// The suites.

// Loads aesmux under `config` for a test, or skips / fails it.
void LoadOrSkip(const KernelConfig &config, std::unique_ptr<ProviderEnv> *env) {
  if (const std::string reason = UnsupportedReason(config); !reason.empty()) {
    GTEST_SKIP() << reason;
  }
  std::string error;
  *env = LoadAesmux(config, &error);
  ASSERT_NE(*env, nullptr) << error;
}

// The seed of a case, printed with the base seed that reproduces it.
uint64_t PrintSeed(const std::string &case_name) {
  const uint64_t seed = CaseSeed(case_name);
  std::cout << "[ SEED     ] AESMUX_TEST_SEED=0x" << std::hex << BaseSeed()
            << " (" << case_name << ": 0x" << seed << ")" << std::dec << "\n";
  testing::Test::RecordProperty("seed", std::to_string(BaseSeed()));
  return seed;
}

void PrintTally(const std::string &what, const KernelConfig &config,
                const Tally &tally) {
  std::cout << "[ DIFF     ] " << what << " [" << config.name
            << "]: " << tally.Describe() << "\n";
}

// Random streams of every algorithm, both directions.
class DifferentialTest
    : public testing::TestWithParam<std::tuple<KernelConfig, Algorithm>> {
 protected:
  void SetUp() override { LoadOrSkip(config(), &env_); }
  const KernelConfig &config() const { return std::get<0>(GetParam()); }
  const Algorithm &alg() const { return std::get<1>(GetParam()); }

  std::unique_ptr<ProviderEnv> env_;
};

// Per direction. AddressSanitizer (with UBSan) runs the provider's C++ about
// eight times slower; the kernels it cannot see run as fast as ever. There,
// fewer streams still take every path of every algorithm (ServedAsConfigured
// checks), and the uninstrumented build runs them all.
#if defined(__SANITIZE_ADDRESS__)
constexpr size_t kRandomStreams = 600;
#else
constexpr size_t kRandomStreams = 3000;
#endif
constexpr size_t kLargeStreams = 2;      // per direction, of about 1 MiB

TEST_P(DifferentialTest, RandomStreams) {
  const uint64_t seed = PrintSeed(std::string("RandomStreams/") + alg().name);
  const PathCounts before = RequestsServed(*env_, alg().name);
  StreamRunner runner(*env_, alg(), seed);
  ASSERT_TRUE(runner.ready()) << TakeErrors();
  for (bool encrypt : {true, false}) {
    for (size_t i = 0; i < kRandomStreams + kLargeStreams; ++i) {
      SCOPED_TRACE(testing::Message()
                   << "stream " << i << ", seed 0x" << std::hex << seed);
      const Scenario s =
          i < kRandomStreams
              ? runner.RandomScenario(encrypt)
              : runner.RandomScenario(
                    encrypt, (size_t{1} << 20) + runner.rng().Uniform(0, 47));
      if (runner.Run(s).diverged) return;  // reported; spare the rest
    }
  }
  PrintTally(alg().name, config(), runner.tally());
  EXPECT_TRUE(ServedAsConfigured(config(), before,
                                 RequestsServed(*env_, alg().name),
                                 /*expect_both_paths=*/true));
}

std::string DifferentialTestName(
    const testing::TestParamInfo<DifferentialTest::ParamType> &info) {
  std::string name =
      std::get<0>(info.param).name + "_" + std::get<1>(info.param).name;
  std::replace(name.begin(), name.end(), '-', '_');
  return name;
}

INSTANTIATE_TEST_SUITE_P(Kernels, DifferentialTest,
                         testing::Combine(testing::ValuesIn(AllKernelConfigs()),
                                          testing::ValuesIn(kAlgorithms)),
                         DifferentialTestName);

// Which paths a case expects its requests on.
enum class Paths {
  kNone,        // no request is served at all
  kConfigured,  // as the configuration says (ServedAsConfigured)
  kBoth,        // and, when it routes, on both sides of the threshold
};

// Mode-specific cases, each over the algorithms of its mode.
class DifferentialModeTest : public testing::TestWithParam<KernelConfig> {
 protected:
  void SetUp() override { LoadOrSkip(GetParam(), &env_); }

  // Runs `body(runner)` for each algorithm of `family`, then checks the
  // paths used.
  template <typename Body>
  void ForEachAlgorithm(Family family, const std::string &case_name,
                        Paths paths, Body body) {
    for (const Algorithm &alg : kAlgorithms) {
      if (alg.family != family) continue;
      SCOPED_TRACE(alg.name);
      const uint64_t seed = PrintSeed(case_name + "/" + alg.name);
      const PathCounts before = RequestsServed(*env_, alg.name);
      StreamRunner runner(*env_, alg, seed);
      ASSERT_TRUE(runner.ready()) << TakeErrors();
      body(runner);
      if (HasFailure()) return;
      PrintTally(case_name + " " + alg.name, GetParam(), runner.tally());
      const PathCounts after = RequestsServed(*env_, alg.name);
      if (paths == Paths::kNone) {
        EXPECT_EQ(after.simd + after.fallback, before.simd + before.fallback)
            << "requests were served";
      } else {
        EXPECT_TRUE(ServedAsConfigured(GetParam(), before, after,
                                       paths == Paths::kBoth));
      }
    }
  }

  std::unique_ptr<ProviderEnv> env_;
};

// CTR counters about to carry over 64 and 128 bits, any cut of the stream:
// output, `num` and the updated IV after every call.
TEST_P(DifferentialModeTest, CtrCounterWrap) {
  ForEachAlgorithm(
      Family::kCtr, "CtrCounterWrap", Paths::kBoth, [](StreamRunner &r) {
        for (bool encrypt : {true, false}) {
          for (size_t i = 0; i < 120; ++i) {
            Scenario s =
                r.RandomScenario(encrypt, r.rng().Uniform(0, 40 * kBlock));
            s.iv = NearWrapCtrIv(r.rng());
            s.max_pieces = 12;
            const StreamResult result = r.Run(s);
            if (result.diverged) return;
            EXPECT_TRUE(result.completed) << s.Describe();
          }
        }
      });
}

// PKCS#7 padding checked on decryption: every value of the last byte, with
// the other padding bytes right or one of them wrong, a truncated input and
// an empty one. Both providers must fail in final with the same reason.
TEST_P(DifferentialModeTest, PaddingErrors) {
  for (Family family : {Family::kEcb, Family::kCbc}) {
    size_t bad = 0, good = 0;
    ForEachAlgorithm(
        family, "PaddingErrors", Paths::kConfigured, [&](StreamRunner &r) {
          auto decrypt = [&](std::vector<uint8_t> plaintext) {
            Scenario s = r.RandomScenario(false, 0);
            s.plaintext = std::move(plaintext);
            s.padding = true;
            s.seal_padding = false;  // the plaintext carries its padding
            s.api = Api::kUpdate;
            s.corruption = Corruption::kNone;
            return std::make_pair(r.Run(s), s.Describe());
          };
          for (size_t last = 0; last < 256; ++last) {
            for (bool one_wrong : {false, true}) {
              if (one_wrong && (last < 2 || last > kBlock)) continue;
              std::vector<uint8_t> plaintext =
                  r.rng().Bytes(kBlock * r.rng().Uniform(0, 3));
              std::vector<uint8_t> block = r.rng().Bytes(kBlock);
              for (size_t i = kBlock - std::min(last, kBlock); i < kBlock;
                   ++i) {
                block[i] = static_cast<uint8_t>(last);
              }
              if (one_wrong) {
                block[kBlock - r.rng().Uniform(2, last)] ^= 0x01;
              }
              plaintext.insert(plaintext.end(), block.begin(), block.end());
              const bool valid = last >= 1 && last <= kBlock && !one_wrong;
              const auto [result, what] = decrypt(std::move(plaintext));
              if (result.diverged) return;
              ++(valid ? good : bad);
              EXPECT_EQ(result.completed, valid) << what;
              if (!valid) {
                EXPECT_EQ(result.failed_call, "final") << what;
                EXPECT_EQ(ERR_GET_REASON(result.failure.error),
                          PROV_R_BAD_DECRYPT)
                    << what << ": " << ErrorText(result.failure.error);
              }
            }
          }
          // A length that is not whole blocks, and nothing at all.
          for (size_t len : {size_t{0}, size_t{1}, size_t{17}, size_t{47}}) {
            const auto [result, what] = decrypt(r.rng().Bytes(len));
            if (result.diverged) return;
            EXPECT_FALSE(result.completed) << what;
            EXPECT_EQ(result.failed_call, "final") << what;
            EXPECT_EQ(ERR_GET_REASON(result.failure.error),
                      PROV_R_WRONG_FINAL_BLOCK_LENGTH)
                << what << ": " << ErrorText(result.failure.error);
          }
        });
    EXPECT_GT(bad, 0u);
    EXPECT_GT(good, 0u);
  }
}

// Every GCM IV length from 1 to 128 bytes, both directions.
TEST_P(DifferentialModeTest, GcmIvLengths) {
  ForEachAlgorithm(
      Family::kGcm, "GcmIvLengths", Paths::kBoth, [](StreamRunner &r) {
        for (size_t iv_len = 1; iv_len <= 128; ++iv_len) {
          for (bool encrypt : {true, false}) {
            Scenario s = r.RandomScenario(encrypt, r.rng().Uniform(0, 300));
            s.iv = r.rng().Bytes(iv_len);
            s.corruption = Corruption::kNone;
            const StreamResult result = r.Run(s);
            if (result.diverged) return;
            EXPECT_TRUE(result.completed) << s.Describe();
          }
        }
      });
}

// IVs longer than 16 bytes (aesmux keeps them on the heap, 16 inline):
// the IV and the updated IV after IV length changes before and after a key
// (a longer length shows the bytes a longer IV left behind, as the default
// provider's 128-byte buffer does), copies at any point of a message, and
// TLS IV generation over a long IV.
TEST_P(DifferentialModeTest, GcmLongIvs) {
  ForEachAlgorithm(
      Family::kGcm, "GcmLongIvs", Paths::kConfigured, [](StreamRunner &r) {
        const std::vector<uint8_t> key = r.rng().Bytes(r.alg().key_len);
        const std::vector<uint8_t> data = r.rng().Bytes(48);
        const std::vector<uint8_t> aad = r.rng().Bytes(13);
        auto set_ivlen = [](size_t len) {
          return [len](Side &s) {
            return Ctrl(s, EVP_CTRL_AEAD_SET_IVLEN, len, nullptr);
          };
        };
        auto original_iv = [](Side &s) {
          Observed o;
          uint8_t iv[128];
          o.ret = EVP_CIPHER_CTX_get_original_iv(s.ctx.get(), iv, sizeof(iv));
          o.outl = EVP_CIPHER_CTX_get_iv_length(s.ctx.get());
          o.ok = o.ret == 1;
          if (o.ok) o.bytes.assign(iv, iv + o.outl);
          return o;
        };
        auto ivs = [&](Twin &t, const std::string &when) {
          t.Check("updated iv " + when, UpdatedIv);
          t.Check("iv " + when, original_iv);
        };
        auto add_aad = [&](Side &s) {
          s.aad_consumed = 0;
          return UpdateAad(s, aad, aad.size());
        };
        auto update = [](size_t len) {
          return [len](Side &s) { return Update(s, len); };
        };
        auto get_tag = [](Side &s) { return GetTag(s, 16); };
        // Finishes a message on `t` and on a copy made after its AAD.
        auto finish_with_copy = [&](Twin &t, int enc) {
          EXPECT_TRUE(t.Step("aad", add_aad));
          std::optional<Twin> copy = t.Copy();
          ASSERT_TRUE(copy.has_value());
          for (Twin *each : {&t, &*copy}) {
            ivs(*each, "mid-message");
            EXPECT_TRUE(each->Step("update", update(20)));
            if (enc == 1) {
              EXPECT_TRUE(each->Step("final", Final));
              EXPECT_TRUE(each->Step("get tag", get_tag));
            } else {
              each->Step("final (no tag set)", Final);
            }
            ivs(*each, "after final");
            EXPECT_FALSE(each->diverged());
          }
        };

        for (size_t len = 17; len <= 128; ++len) {
          const std::string at = " " + std::to_string(len);
          const std::vector<uint8_t> long_iv = r.rng().Bytes(len);
          const std::vector<uint8_t> short_iv = r.rng().Bytes(12);
          for (int enc : {1, 0}) {
            Twin t = AesmuxTwin(r.aesmux(), r.reference(), {}, data, false, 0,
                                0, "long iv" + at);
            // The length before the key, then key and IV.
            EXPECT_TRUE(t.Step("init cipher", [&](Side &s) {
              return Init(s, true, nullptr, nullptr, enc);
            }));
            EXPECT_TRUE(t.Step("set ivlen" + at, set_ivlen(len)));
            std::optional<Twin> unkeyed = t.Copy();  // a copy before a key
            ASSERT_TRUE(unkeyed.has_value());
            for (Twin *each : {&t, &*unkeyed}) {
              EXPECT_TRUE(each->Step("init key, iv" + at, [&](Side &s) {
                return Init(s, false, key.data(), long_iv.data(), enc);
              }));
              ivs(*each, "after init");
              finish_with_copy(*each, enc);
            }
            // Shorter and back: the IV is dropped, its bytes stay.
            EXPECT_TRUE(t.Step("set ivlen 12", set_ivlen(12)));
            ivs(t, "at 12");
            EXPECT_TRUE(t.Step("init iv 12", [&](Side &s) {
              s.consumed = s.produced = 0;
              return Init(s, false, nullptr, short_iv.data(), enc);
            }));
            ivs(t, "after a 12-byte iv");
            EXPECT_TRUE(t.Step("set ivlen" + at, set_ivlen(len)));
            ivs(t, "at" + at + " again");
            std::optional<Twin> copy = t.Copy();
            ASSERT_TRUE(copy.has_value());
            for (Twin *each : {&t, &*copy}) {
              EXPECT_FALSE(each->Step("update without an IV", update(16)));
              EXPECT_TRUE(each->Step("set ivlen 128", set_ivlen(128)));
              ivs(*each, "at 128");
              EXPECT_TRUE(each->Step("init iv 128 (new)", [&](Side &s) {
                s.consumed = s.produced = 0;
                std::vector<uint8_t> iv = long_iv;
                iv.resize(128, static_cast<uint8_t>(len));
                return Init(s, false, nullptr, iv.data(), enc);
              }));
              finish_with_copy(*each, enc);
            }
          }
          // TLS 1.2's IV generation on the long IV: the whole IV fixed,
          // then the invocation field (its last 8 bytes) counts records.
          Twin t = AesmuxTwin(r.aesmux(), r.reference(), {}, data, false, 0,
                              0, "tls iv gen" + at);
          EXPECT_TRUE(t.Step("init cipher", [&](Side &s) {
            return Init(s, true, nullptr, nullptr, 1);
          }));
          EXPECT_TRUE(t.Step("set ivlen" + at, set_ivlen(len)));
          EXPECT_TRUE(t.Step("init key", [&](Side &s) {
            return Init(s, false, key.data(), nullptr, 1);
          }));
          EXPECT_TRUE(t.Step("iv fixed (whole)", [&](Side &s) {
            return Ctrl(s, EVP_CTRL_GCM_SET_IV_FIXED, static_cast<size_t>(-1),
                        long_iv.data());
          }));
          for (int record = 0; record < 3; ++record) {
            EXPECT_TRUE(t.Step("iv gen", [&](Side &s) {
              Observed o;
              uint8_t out[128] = {};
              o.ret = EVP_CIPHER_CTX_ctrl(s.ctx.get(), EVP_CTRL_GCM_IV_GEN, 0,
                                          out);
              o.ok = o.ret > 0;
              o.bytes.assign(out, out + len);
              s.consumed = s.produced = 0;
              return o;
            }));
            if (record == 1) {
              std::optional<Twin> copy = t.Copy();
              ASSERT_TRUE(copy.has_value());
              EXPECT_TRUE(copy->Step("update", update(20)) &&
                          copy->Step("final", Final) &&
                          copy->Step("get tag", get_tag));
            }
            EXPECT_TRUE(t.Step("update", update(20)) &&
                        t.Step("final", Final) && t.Step("get tag", get_tag));
            ivs(t, "after record");
          }
          EXPECT_FALSE(t.diverged());
          if (testing::Test::HasFailure()) return;
        }
      });
}

// Tags of 1 to 16 bytes: got after final when encrypting, set before final
// when decrypting; a tampered tag, AAD or ciphertext makes final fail on
// both providers with nothing on the error queue.
TEST_P(DifferentialModeTest, GcmTags) {
  ForEachAlgorithm(Family::kGcm, "GcmTags", Paths::kBoth, [](StreamRunner &r) {
    for (size_t tag_len = 1; tag_len <= 16; ++tag_len) {
      for (Corruption corruption : {Corruption::kNone, Corruption::kTag,
                                    Corruption::kAad, Corruption::kData}) {
        for (bool encrypt : {true, false}) {
          if (encrypt && corruption != Corruption::kNone) continue;
          Scenario s = r.RandomScenario(encrypt, r.rng().Uniform(1, 200));
          if (s.aad.empty()) s.aad = r.rng().Bytes(r.rng().Uniform(1, 40));
          s.tag_len = tag_len;
          s.corruption = corruption;
          const StreamResult result = r.Run(s);
          if (result.diverged) return;
          if (corruption == Corruption::kNone) {
            EXPECT_TRUE(result.completed) << s.Describe();
            continue;
          }
          EXPECT_FALSE(result.completed) << s.Describe();
          EXPECT_TRUE(result.failed_call == "final" ||
                      result.failed_call == "EVP_Cipher(final)")
              << s.Describe() << ": failed at " << result.failed_call;
          EXPECT_EQ(result.failure.error, 0u)
              << s.Describe() << ": " << ErrorText(result.failure.error);
        }
      }
    }
  });
}

// GCM calls out of order or out of range fail alike on both providers, and
// a context starts a new message on a new IV without a new key.
TEST_P(DifferentialModeTest, GcmMisuse) {
  ForEachAlgorithm(
      Family::kGcm, "GcmMisuse", Paths::kConfigured, [](StreamRunner &r) {
        const std::vector<uint8_t> key = r.rng().Bytes(r.alg().key_len);
        const std::vector<uint8_t> iv = r.rng().Bytes(12);
        const std::vector<uint8_t> data = r.rng().Bytes(40);
        const std::vector<uint8_t> aad = r.rng().Bytes(20);
        const std::vector<uint8_t> tag(16, 0x5a);
        auto twin = [&](const char *what) {
          return AesmuxTwin(r.aesmux(), r.reference(), {}, data, false, 0, 0,
                          what);
        };
        auto init = [&](Twin &t, int enc, const uint8_t *with_iv) {
          return t.Step("init", [&](Side &s) {
            return Init(s, true, key.data(), with_iv, enc);
          });
        };
        auto update = [&](Side &s) { return Update(s, 20); };
        auto add_aad = [&](Side &s) {
          s.aad_consumed = 0;
          return UpdateAad(s, aad, aad.size());
        };
        auto set_tag = [&](size_t len) {
          return [&, len](Side &s) {
            return Ctrl(s, EVP_CTRL_AEAD_SET_TAG, len, tag.data());
          };
        };
        auto get_tag = [](Side &s) { return GetTag(s, 16); };

        {  // Decrypting without a tag.
          Twin t = twin("decrypt without a tag");
          EXPECT_TRUE(init(t, 0, iv.data()) && t.Step("update", update));
          EXPECT_FALSE(t.Step("final", Final));
          EXPECT_FALSE(t.diverged());
        }
        {  // The tag before final, and setting one while encrypting.
          Twin t = twin("encrypt, tag too early / set");
          EXPECT_TRUE(init(t, 1, iv.data()));
          EXPECT_FALSE(t.Step("get tag before final", get_tag));
          EXPECT_FALSE(t.Step("set tag while encrypting", set_tag(16)));
          EXPECT_FALSE(t.diverged());
        }
        for (int enc : {1, 0}) {  // AAD after data.
          Twin t = twin("aad after data");
          EXPECT_TRUE(init(t, enc, iv.data()));
          EXPECT_TRUE(t.Step("update", update));
          EXPECT_FALSE(t.Step("aad after data", add_aad));
          EXPECT_FALSE(t.diverged());
        }
        // After a final that succeeded, data fails until a new IV is set.
        std::vector<uint8_t> sealed;
        std::vector<uint8_t> sealed_tag;
        {
          Twin t = twin("encrypt, data after final");
          EXPECT_TRUE(init(t, 1, iv.data()) && t.Step("aad", add_aad) &&
                      t.Step("update", update) && t.Step("final", Final) &&
                      t.Step("get tag", get_tag));
          sealed_tag = t.last().bytes;
          sealed = t.Output();
          EXPECT_FALSE(t.Step("update after final", update));
          EXPECT_FALSE(t.diverged());
        }
        {
          sealed.resize(data.size());  // room for the update after final
          Twin t = AesmuxTwin(r.aesmux(), r.reference(), {}, sealed, false, 0, 0,
                            "decrypt, data after final");
          EXPECT_TRUE(init(t, 0, iv.data()) &&
                      t.Step("set tag",
                             [&](Side &s) {
                               return Ctrl(s, EVP_CTRL_AEAD_SET_TAG,
                                           sealed_tag.size(),
                                           sealed_tag.data());
                             }) &&
                      t.Step("aad", add_aad) && t.Step("update", update) &&
                      t.Step("final", Final));
          EXPECT_FALSE(t.Step("update after final", update));
          EXPECT_FALSE(t.diverged());
        }
        {  // A decryption whose tag failed is not finished: in the default
           // provider more data continues the message, and final fails again.
          Twin t = twin("decrypt, data after a failed final");
          EXPECT_TRUE(init(t, 0, iv.data()) && t.Step("set tag", set_tag(16)) &&
                      t.Step("update", update));
          EXPECT_FALSE(t.Step("final, wrong tag", Final));
          t.Step("update after the failed final", update);
          EXPECT_FALSE(t.Step("final again", Final));
          EXPECT_FALSE(t.diverged());
        }
        {  // Tag and IV lengths out of range.
          Twin t = twin("lengths out of range");
          EXPECT_TRUE(init(t, 0, iv.data()));
          for (size_t len : {size_t{0}, size_t{17}}) {
            EXPECT_FALSE(
                t.Step("set tag " + std::to_string(len), set_tag(len)));
          }
          for (size_t len : {size_t{0}, size_t{129}}) {
            EXPECT_FALSE(
                t.Step("set ivlen " + std::to_string(len), [&](Side &s) {
                  return Ctrl(s, EVP_CTRL_AEAD_SET_IVLEN, len, nullptr);
                }));
          }
          EXPECT_FALSE(t.diverged());
        }
        {  // Changing the IV length drops the IV; decrypting needs one.
          Twin t = twin("iv dropped");
          EXPECT_TRUE(init(t, 0, iv.data()));
          EXPECT_TRUE(t.Step("set ivlen 16", [&](Side &s) {
            return Ctrl(s, EVP_CTRL_AEAD_SET_IVLEN, 16, nullptr);
          }));
          EXPECT_FALSE(t.Step("update without an IV", update));
          EXPECT_FALSE(t.diverged());
          Twin u = twin("no iv");
          EXPECT_TRUE(init(u, 0, nullptr));
          EXPECT_FALSE(u.Step("decrypt without an IV", update));
          EXPECT_FALSE(u.diverged());
        }
        {  // TLS 1.3 style: one key, a new IV per message.
          Twin t = twin("new iv per message");
          EXPECT_TRUE(init(t, 1, iv.data()));
          for (uint8_t message = 0; message < 3; ++message) {
            std::vector<uint8_t> next_iv = iv;
            next_iv[11] ^= message;
            EXPECT_TRUE(t.Step("init(-, -, iv, -1)", [&](Side &s) {
              return Init(s, false, nullptr, next_iv.data(), -1);
            }));
            EXPECT_TRUE(t.Step("aad", add_aad));
            EXPECT_TRUE(t.Step("update", [&](Side &s) {
              s.consumed = s.produced = 0;
              return Update(s, data.size());
            }));
            EXPECT_TRUE(t.Step("final", Final));
            EXPECT_TRUE(t.Step("get tag", get_tag));
          }
          EXPECT_FALSE(t.diverged());
        }
      });
}

// Calls before any key is set fail alike, for every algorithm.
TEST_P(DifferentialModeTest, WithoutKey) {
  for (Family family :
       {Family::kEcb, Family::kCbc, Family::kCtr, Family::kXts, Family::kGcm}) {
    ForEachAlgorithm(family, "WithoutKey", Paths::kNone, [](StreamRunner &r) {
      const std::vector<uint8_t> data = r.rng().Bytes(64);
      const std::vector<uint8_t> iv = r.rng().Bytes(16);
      for (int enc : {1, 0}) {
        Twin t = AesmuxTwin(r.aesmux(), r.reference(), {}, data, false, 0, 0,
                          std::string(r.alg().name) + " without a key");
        EXPECT_TRUE(t.Step("init(cipher, -, iv, enc)", [&](Side &s) {
          return Init(s, true, nullptr,
                      r.alg().family == Family::kEcb ? nullptr : iv.data(),
                      enc);
        }));
        EXPECT_FALSE(
            t.Step("update(16)", [](Side &s) { return Update(s, 16); }));
        t.Step("update(0)", [](Side &s) { return Update(s, 0); });
        EXPECT_FALSE(
            t.Step("EVP_Cipher(16)", [](Side &s) { return Cipher(s, 16); }));
        t.Step("final", Final);
        EXPECT_FALSE(t.diverged());
      }
    });
  }
}

// XTS data units of every length from 0 to 4096 bytes (every tail of 1 to
// 15 bytes; under 16 bytes both refuse), through update or EVP_Cipher.
TEST_P(DifferentialModeTest, XtsLengths) {
  ForEachAlgorithm(
      Family::kXts, "XtsLengths", Paths::kBoth, [](StreamRunner &r) {
        for (size_t len = 0; len <= 4096; ++len) {
          for (bool encrypt : {true, false}) {
            Scenario s = r.RandomScenario(encrypt, len);
            s.max_pieces = 1;
            s.copy = false;
            const StreamResult result = r.Run(s);
            if (result.diverged) return;
            EXPECT_EQ(result.completed, len >= kBlock) << s.Describe();
          }
        }
      });
}

// The largest XTS data unit, 2^24 bytes, and just over it.
TEST_P(DifferentialModeTest, XtsDataUnitLimit) {
  ForEachAlgorithm(Family::kXts, "XtsDataUnitLimit", Paths::kConfigured,
                   [](StreamRunner &r) {
                     const std::vector<uint8_t> data =
                         r.rng().Bytes(kXtsMaxDataUnit + kBlock);
                     for (size_t len : {kXtsMaxDataUnit, kXtsMaxDataUnit + 1,
                                        kXtsMaxDataUnit + kBlock}) {
                       for (bool encrypt : {true, false}) {
                         for (Api api : {Api::kUpdate, Api::kCipher}) {
                           Scenario s = r.RandomScenario(encrypt, 0);
                           s.plaintext.assign(data.begin(), data.begin() + len);
                           if (!encrypt) s.ciphertext = s.plaintext;
                           s.max_pieces = 1;
                           s.api = api;
                           s.copy = false;
                           s.in_place = true;
                           const StreamResult result = r.Run(s);
                           if (result.diverged) return;
                           EXPECT_EQ(result.completed, len <= kXtsMaxDataUnit)
                               << s.Describe();
                         }
                       }
                     }
                   });
}

// Key1 == Key2: refused for encryption (at init), accepted for decryption,
// as by the default provider (only the FIPS provider refuses both).
TEST_P(DifferentialModeTest, XtsDuplicateKeys) {
  ForEachAlgorithm(
      Family::kXts, "XtsDuplicateKeys", Paths::kConfigured,
      [](StreamRunner &r) {
        for (size_t i = 0; i < 20; ++i) {
          for (bool encrypt : {true, false}) {
            Scenario s = r.RandomScenario(encrypt, r.rng().Uniform(16, 600));
            const size_t half = s.key.size() / 2;
            std::copy_n(s.key.begin(), half, s.key.begin() + half);
            s.max_pieces = 1;
            if (!encrypt) s.ciphertext = s.plaintext;
            const StreamResult result = r.Run(s);
            if (result.diverged) return;
            EXPECT_EQ(result.completed, !encrypt) << s.Describe();
            if (encrypt) {
              EXPECT_TRUE(result.failed_call.starts_with("init"))
                  << s.Describe();
              EXPECT_EQ(ERR_GET_REASON(result.failure.error),
                        PROV_R_XTS_DUPLICATED_KEYS)
                  << s.Describe() << ": " << ErrorText(result.failure.error);
            }
          }
        }
      });
}

// Sequences of XTS data units on one context while its key and IV change:
// every data unit runs under the IV of the last init that gave one, and
// aesmux encrypts that IV into the first tweak once per IV and key, so
// each change must be seen. Many units under one IV; a new IV with the
// same key (EVP_CipherInit_ex2 with no key), back to an earlier IV; a new
// key with the same IV; a key-only init (no IV), which keeps the IV, with
// the same key and with another; a copy mid-stream, the copy and the
// original then going on under different IVs; a key-setting init that
// turns the direction. Lengths 16 to 600 bytes, with and without stealing,
// by update and by EVP_Cipher.
TEST_P(DifferentialModeTest, XtsIvSequences) {
  ForEachAlgorithm(
      Family::kXts, "XtsIvSequences", Paths::kBoth, [](StreamRunner &r) {
        Rng &rng = r.rng();
        const size_t key_len = r.alg().key_len;
        // Random halves: equal ones are refused for encryption.
        auto new_key = [&] { return rng.Bytes(key_len); };
        auto init2 = [](const std::vector<uint8_t> *key,
                        const std::vector<uint8_t> *iv, int enc) {
          return [=](Side &s) {
            Observed o;
            o.ret = EVP_CipherInit_ex2(s.ctx.get(), nullptr,
                                       key ? key->data() : nullptr,
                                       iv ? iv->data() : nullptr, enc,
                                       nullptr);
            o.ok = o.ret == 1;
            return o;
          };
        };
        for (size_t round = 0; round < 12; ++round) {
          const int enc = round % 2 == 0 ? 1 : 0;
          const Bytes input = rng.Bytes(64 * 1024);
          Twin t = AesmuxTwin(r.aesmux(), r.reference(), {}, input,
                              rng.Chance(0.5), rng.Uniform(0, 15),
                              rng.Uniform(0, 15),
                              std::string(r.alg().name) + " IV sequence");
          // `count` data units of 16 to 600 bytes on `twin`.
          auto units = [&](Twin &twin, size_t count) {
            for (size_t i = 0; i < count; ++i) {
              const size_t len = rng.Chance(0.2)
                                     ? kBlock * rng.Uniform(1, 37)
                                     : rng.Uniform(kBlock, 600);
              if (twin.side(1).consumed + len > input.size()) {
                twin.Rewind(input);
              }
              const bool ok =
                  rng.Chance(0.5)
                      ? twin.Step("update(" + std::to_string(len) + ")",
                                  [&](Side &s) { return Update(s, len); })
                      : twin.Step("EVP_Cipher(" + std::to_string(len) + ")",
                                  [&](Side &s) { return Cipher(s, len); });
              if (!ok) return false;
            }
            return true;
          };
          const std::vector<uint8_t> key1 = new_key(), key2 = new_key();
          const std::vector<uint8_t> iv1 = rng.Bytes(16), iv2 = rng.Bytes(16);
          const std::vector<uint8_t> iv3 = rng.Bytes(16);
          ASSERT_TRUE(t.Step("init(cipher, key1, iv1)", [&](Side &s) {
            return Init(s, true, key1.data(), iv1.data(), enc);
          }));
          ASSERT_TRUE(units(t, 8));
          ASSERT_TRUE(t.Step("init2(-, -, iv2)", init2(nullptr, &iv2, enc)));
          ASSERT_TRUE(units(t, 4));
          ASSERT_TRUE(t.Step("init2(-, -, iv1)", init2(nullptr, &iv1, enc)));
          ASSERT_TRUE(units(t, 3));
          ASSERT_TRUE(t.Step("init2(-, key2, iv1)", init2(&key2, &iv1, enc)));
          ASSERT_TRUE(units(t, 3));
          ASSERT_TRUE(t.Step("init2(-, key2, -)", init2(&key2, nullptr, enc)));
          ASSERT_TRUE(units(t, 2));
          ASSERT_TRUE(t.Step("init2(-, key1, -)", init2(&key1, nullptr, enc)));
          ASSERT_TRUE(units(t, 3));
          ASSERT_TRUE(t.Step("init2(-, -, iv1)", init2(nullptr, &iv1, enc)));
          ASSERT_TRUE(units(t, 2));
          std::optional<Twin> copy = t.Copy();
          ASSERT_TRUE(copy.has_value());
          ASSERT_TRUE(units(*copy, 2));  // the copy, under the original's IV
          ASSERT_TRUE(t.Step("init2(-, -, iv2)", init2(nullptr, &iv2, enc)));
          ASSERT_TRUE(
              copy->Step("init2(-, -, iv3)", init2(nullptr, &iv3, enc)));
          for (int i = 0; i < 3; ++i) {
            ASSERT_TRUE(units(t, 2));
            ASSERT_TRUE(units(*copy, 2));
          }
          ASSERT_TRUE(
              copy->Step("init2(-, key2, -)", init2(&key2, nullptr, enc)));
          ASSERT_TRUE(units(*copy, 2));
          ASSERT_TRUE(units(t, 2));
          ASSERT_TRUE(t.Step("init2(-, key1, -, other direction)",
                             init2(&key1, nullptr, 1 - enc)));
          ASSERT_TRUE(units(t, 3));
          ASSERT_TRUE(t.Step("init2(-, -, iv3, other direction)",
                             init2(nullptr, &iv3, 1 - enc)));
          ASSERT_TRUE(units(t, 3));
          EXPECT_FALSE(t.diverged());
          EXPECT_FALSE(copy->diverged());
        }
      });
}

INSTANTIATE_TEST_SUITE_P(Kernels, DifferentialModeTest,
                         testing::ValuesIn(AllKernelConfigs()),
                         KernelConfigName);

}  // namespace
}  // namespace aesmux::test
