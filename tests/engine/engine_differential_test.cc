// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
// Differential tests of the ENGINE aesmux against OpenSSL's default
// provider: all 14 algorithms through ENGINE_by_id("aesmux") (that is,
// EVP_CipherInit_ex with the ENGINE, libcrypto's legacy EVP path and the
// ENGINE's ciphers), on random streams under every kernel configuration:
// both directions, inputs cut anywhere, EVP_CipherUpdate and EVP_Cipher, in
// place and not, padding on and off, corrupted inputs, contexts copied
// mid-stream and initialised again for the next message, GCM AAD, tags of
// every length, IVs of every length.
//
// Compared after every call: success or failure, the bytes written, and
// after data calls what a caller reads back: the IV (EVP_CIPHER_CTX_iv: an
// ENGINE context's ctx->iv, a provider context's running IV) and CTR's
// `num`; after final the GCM tag. Not compared:
// - error codes: libcrypto's legacy EVP layer raises its own EVP_R_*
//   reasons where providers raise PROV_R_*;
// - EVP_Cipher's return value for the non-AEAD modes: 1 for a legacy
//   cipher, the length for a provider (libssl and `openssl speed` read it
//   by the cipher's kind); its output is compared;
// - calls the legacy EVP layer answers without the cipher, which the streams
//   do not make: an empty XTS update (the legacy layer succeeds, the
//   provider refuses an empty data unit);
// - the CBC IV between the updates of a padded decryption: the legacy EVP
//   layer decrypts at once the block it holds back for the padding check,
//   the default provider holds it still encrypted, so the chaining values a
//   caller reads differ by that block (as with OpenSSL's own legacy
//   AES-CBC); they are compared after final.
#include <gtest/gtest.h>
#include <openssl/engine.h>
#include <openssl/err.h>
#include <openssl/evp.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <iostream>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "provider/core/algorithm.h"
#include "tests/engine/engine_env.h"
#include "tests/provider/aligned_buffer.h"
#include "tests/provider/kernel_configs.h"
#include "tests/support/bytes.h"
#include "tests/support/evp_twin.h"
#include "tests/support/provider_env.h"

namespace aesmux::test {
namespace {

using core::Family;

constexpr size_t kBlock = 16;

bool IsBlockMode(Family family) {
  return family == Family::kEcb || family == Family::kCbc;
}

// A twin of the ENGINE's legacy cipher against the default provider's,
// compared in success and bytes (tests/support/evp_twin.h).
Twin EngineTwin(ENGINE *e, const EVP_CIPHER *legacy,
                const EVP_CIPHER *reference, const Bytes &input,
                bool in_place, size_t in_misalign, size_t out_misalign,
                std::string scenario) {
  const TwinSpec spec{"the ENGINE", Compare::kOutcomeAndBytes, e,
                      {legacy, reference}};
  return MakeTwin(spec, {}, input, in_place, in_misalign, out_misalign,
                  std::move(scenario));
}

// The IV a caller reads back, where the default provider has one to give
// (a GCM context before its first IV has none, nor one of more than
// EVP_MAX_IV_LENGTH bytes), and CTR's num.
bool CheckState(Twin &t, Family family, bool iv = true) {
  const EVP_CIPHER_CTX *reference = t.side(1).ctx.get();
  const int iv_len = EVP_CIPHER_CTX_get_iv_length(reference);
  if (iv && EVP_CIPHER_CTX_iv(reference) != nullptr && iv_len > 0 &&
      iv_len <= EVP_MAX_IV_LENGTH &&
      !t.Check("the IV (EVP_CIPHER_CTX_iv)", [&](Side &s) {
        Observed o;
        const unsigned char *bytes = EVP_CIPHER_CTX_iv(s.ctx.get());
        o.ok = bytes != nullptr;
        if (o.ok) o.bytes.assign(bytes, bytes + iv_len);
        return o;
      })) {
    return false;
  }
  return family != Family::kCtr || t.Check("num", Num);
}

// Cuts `len` into 1..max_pieces pieces (some empty unless `min_piece`),
// each a multiple of `unit`.
std::vector<size_t> Splits(std::mt19937_64 &rng, size_t len, size_t max_pieces,
                           size_t unit = 1, size_t min_piece = 0) {
  const size_t units = len / unit;
  const size_t count = std::min<size_t>(
      1 + rng() % max_pieces,
      min_piece == 0 ? units + 1 : std::max<size_t>(1, len / min_piece));
  std::vector<size_t> cuts;
  for (size_t i = 1; i < count; ++i) cuts.push_back(rng() % (units + 1));
  std::sort(cuts.begin(), cuts.end());
  std::vector<size_t> pieces;
  size_t previous = 0;
  for (size_t cut : cuts) {
    pieces.push_back((cut - previous) * unit);
    previous = cut;
  }
  pieces.push_back((units - previous) * unit + len % unit);
  if (min_piece == 0) return pieces;
  // XTS data units of at least `min_piece`: merge the short ones.
  std::vector<size_t> units_out;
  for (size_t piece : pieces) {
    if (!units_out.empty() && (piece < min_piece || units_out.back() < min_piece)) {
      units_out.back() += piece;
    } else {
      units_out.push_back(piece);
    }
  }
  return units_out;
}

// One random message through both sides.
struct Message {
  bool encrypt = true;
  Bytes key, iv, plaintext, aad;
  std::optional<bool> padding;  // ECB/CBC: set after init
  bool via_cipher = false;      // EVP_Cipher for the data
  bool mixed = false;           // CTR/XTS/GCM: EVP_Cipher or update, by call
  size_t tag_len = 16;
  bool tag_late = false;
  bool corrupt = false;
  int init_style = 0;  // 0: one call; 1: cipher, then key and IV; 2: cipher,
                       // key, IV in three calls
  bool in_place = false;
  size_t in_misalign = 0, out_misalign = 0;
  bool copy = false;
  bool next_message = false;  // then a second message on a new IV only

  std::string Describe(const char *algorithm) const {
    return std::string(algorithm) + (encrypt ? " encrypt" : " decrypt") +
           ", key " + ToHex(key) + ", iv (" + std::to_string(iv.size()) +
           ") " + ToHex(iv) + ", " + std::to_string(plaintext.size()) +
           " bytes, aad " + std::to_string(aad.size()) + ", tag " +
           std::to_string(tag_len) + (tag_late ? " late" : "") +
           (padding ? (*padding ? ", padding on" : ", padding off") : "") +
           (via_cipher ? ", EVP_Cipher" : mixed ? ", mixed" : ", update") +
           ", init style " + std::to_string(init_style) +
           (corrupt ? ", corrupted" : "") + (in_place ? ", in place" : "") +
           (copy ? ", copied" : "") + (next_message ? ", next message" : "");
  }
};

class StreamRunner {
 public:
  StreamRunner(ENGINE *e, const core::AlgInfo &alg, uint64_t seed)
      : e_(e),
        alg_(alg),
        rng_(seed),
        legacy_(EVP_get_cipherbyname(std::string(alg.name).c_str())),
        reference_(env_.Default(alg.name)) {}

  bool ready() const { return legacy_ != nullptr && reference_ != nullptr; }
  std::mt19937_64 &rng() { return rng_; }

  Message Random(bool encrypt, size_t length);
  Message Random(bool encrypt) {
    const size_t r = rng_() % 100;
    return Random(encrypt, rng_() % (r < 50 ? 257 : r < 95 ? 4097 : 70000));
  }
  // False if the sides differed (reported).
  bool Run(const Message &m, bool *completed = nullptr);

 private:
  bool Seal(const Message &m, bool padding, const std::vector<size_t> &units,
            Bytes *ciphertext, Bytes *tag);
  bool InitTwin(Twin &t, const Message &m, const Bytes &tag);
  bool Data(Twin &t, const Message &m, const std::vector<size_t> &pieces,
            const std::vector<bool> &via, size_t from, size_t to);
  bool Finish(Twin &t, const Message &m, const Bytes &tag, bool final_via);

  Family family() const { return alg_.family; }
  bool gcm() const { return alg_.family == Family::kGcm; }

  ProviderEnv env_;  // the default provider, for the reference
  ENGINE *e_;
  const core::AlgInfo &alg_;
  std::mt19937_64 rng_;
  const EVP_CIPHER *legacy_;
  CipherPtr reference_;
};

Message StreamRunner::Random(bool encrypt, size_t length) {
  Message m;
  m.encrypt = encrypt;
  m.key = RandomBytes(rng_, alg_.key_len);
  switch (family()) {
    case Family::kEcb: break;
    case Family::kCbc:
    case Family::kCtr:
    case Family::kXts: m.iv = RandomBytes(rng_, 16); break;
    case Family::kGcm: {
      const size_t r = rng_() % 10;
      m.iv = RandomBytes(rng_, r < 6 ? 12 : r < 9 ? 1 + rng_() % 16
                                                  : 17 + rng_() % 112);
      break;
    }
  }
  if (family() == Family::kCtr && rng_() % 3 == 0) {
    // A counter about to carry over 64 or 128 bits.
    std::fill(m.iv.begin() + (rng_() % 2 ? 0 : 8), m.iv.end(), 0xff);
    m.iv[15] = static_cast<uint8_t>(0xff - rng_() % 8);
  }
  if (family() == Family::kXts && length < kBlock) length = kBlock;
  if (IsBlockMode(family())) {
    m.via_cipher = rng_() % 4 == 0;
    if (m.via_cipher) length -= length % kBlock;
    const size_t padding = rng_() % 3;
    if (padding != 0 && !m.via_cipher) m.padding = padding == 2;
    // Without padding only whole blocks can be sealed for decryption.
    if (!encrypt && m.padding == false) length -= length % kBlock;
  } else {
    const size_t api = rng_() % 3;
    m.via_cipher = api == 0;
    m.mixed = api == 1;
  }
  m.plaintext = RandomBytes(rng_, length);
  if (gcm()) {
    m.aad = RandomBytes(rng_, rng_() % 4 == 0 ? rng_() % 2000 : rng_() % 40);
    m.tag_len = rng_() % 2 ? 16 : 1 + rng_() % 16;
    m.tag_late = rng_() % 2;
  }
  m.corrupt = !encrypt && rng_() % 8 == 0 &&
              (gcm() || (IsBlockMode(family()) && !m.via_cipher));
  m.init_style = static_cast<int>(rng_() % 3);
  m.in_place = rng_() % 2;
  m.in_misalign = rng_() % 16;
  m.out_misalign = rng_() % 16;
  m.copy = rng_() % 4 == 0;
  m.next_message = family() != Family::kEcb && rng_() % 4 == 0;
  return m;
}

// The default provider's encryption of the message (outside any twin).
bool StreamRunner::Seal(const Message &m, bool padding,
                        const std::vector<size_t> &units, Bytes *ciphertext,
                        Bytes *tag) {
  CipherCtxPtr ctx = NewCipherCtx();
  bool ok = EVP_CipherInit_ex(ctx.get(), reference_.get(), nullptr, nullptr,
                              nullptr, 1) == 1;
  if (ok && gcm()) {
    ok = EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_AEAD_SET_IVLEN,
                             static_cast<int>(m.iv.size()), nullptr) > 0;
  }
  ok = ok &&
       EVP_CipherInit_ex(ctx.get(), nullptr, nullptr, m.key.data(),
                         m.iv.empty() ? nullptr : m.iv.data(), 1) == 1 &&
       EVP_CIPHER_CTX_set_padding(ctx.get(), padding) == 1;
  int len = 0;
  if (ok && gcm() && !m.aad.empty()) {
    ok = EVP_CipherUpdate(ctx.get(), nullptr, &len, m.aad.data(),
                          static_cast<int>(m.aad.size())) == 1;
  }
  ciphertext->assign(m.plaintext.size() + kBlock, 0);
  size_t done = 0;
  for (size_t unit : units) {  // XTS: one data unit per call
    ok = ok && EVP_CipherUpdate(ctx.get(), ciphertext->data() + done, &len,
                                m.plaintext.data() + done,
                                static_cast<int>(unit)) == 1;
    done += static_cast<size_t>(len);
  }
  ok = ok && EVP_CipherFinal_ex(ctx.get(), ciphertext->data() + done, &len);
  done += static_cast<size_t>(len);
  ciphertext->resize(done);
  if (ok && gcm()) {
    tag->assign(16, 0);
    ok = EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_AEAD_GET_TAG, 16,
                             tag->data()) > 0;
  }
  if (!ok) ADD_FAILURE() << "the default provider failed: " << TakeErrors();
  return ok;
}

bool StreamRunner::InitTwin(Twin &t, const Message &m, const Bytes &tag) {
  const int enc = m.encrypt ? 1 : 0;
  const uint8_t *iv = m.iv.empty() ? nullptr : m.iv.data();
  const uint8_t *key = m.key.data();
  const bool early_tag = gcm() && !m.encrypt && !m.tag_late;
  auto set_tag = [&] {
    return t.Step("set tag", [&](Side &s) {
      return Ctrl(s, EVP_CTRL_AEAD_SET_TAG, tag.size(),
                  tag.data());
    });
  };
  // A GCM IV of another length than 12 needs the IV length set first.
  const int style = gcm() && m.iv.size() != 12 && m.init_style == 0
                        ? 1
                        : m.init_style;
  if (style == 0) {
    if (!t.Step("init(cipher, key, iv, enc)",
                [&](Side &s) { return Init(s, true, key, iv, enc); })) {
      return false;
    }
  } else {
    if (!t.Step("init(cipher, -, -, enc)",
                [&](Side &s) { return Init(s, true, nullptr, nullptr, enc); })) {
      return false;
    }
    if (gcm() && !t.Step("set ivlen", [&](Side &s) {
          return Ctrl(s, EVP_CTRL_AEAD_SET_IVLEN,
                      static_cast<int>(m.iv.size()), nullptr);
        })) {
      return false;
    }
    if (style == 1) {
      if (!t.Step("init(-, key, iv, -1)",
                  [&](Side &s) { return Init(s, false, key, iv, -1); })) {
        return false;
      }
    } else if (!t.Step("init(-, key, -, -1)",
                       [&](Side &s) {
                         return Init(s, false, key, nullptr, -1);
                       }) ||
               !t.Step("init(-, -, iv, -1)", [&](Side &s) {
                 return Init(s, false, nullptr, iv, -1);
               })) {
      return false;
    }
  }
  if (early_tag && !set_tag()) return false;
  if (m.padding && !t.Step("set padding", [&](Side &s) {
        Observed o;
        o.ok = EVP_CIPHER_CTX_set_padding(s.ctx.get(), *m.padding) == 1;
        return o;
      })) {
    return false;
  }
  return CheckState(t, family());
}

bool StreamRunner::Data(Twin &t, const Message &m,
                        const std::vector<size_t> &pieces,
                        const std::vector<bool> &via, size_t from, size_t to) {
  for (size_t i = from; i < to; ++i) {
    const size_t len = pieces[i];
    const std::string n = std::to_string(len);
    const bool ok =
        via[i] ? t.Step("EVP_Cipher(" + n + ")",
                        [&](Side &s) { return Cipher(s, len, gcm()); })
               : t.Step("update(" + n + ")",
                        [&](Side &s) { return Update(s, len); });
    const bool held_back = family() == Family::kCbc && !m.encrypt &&
                           m.padding.value_or(true) && !m.via_cipher;
    if (!ok || !CheckState(t, family(), !held_back)) return false;
  }
  return true;
}

bool StreamRunner::Finish(Twin &t, const Message &m, const Bytes &tag,
                          bool final_via) {
  if (gcm() && !m.encrypt && m.tag_late &&
      !t.Step("set tag (late)", [&](Side &s) {
        return Ctrl(s, EVP_CTRL_AEAD_SET_TAG, tag.size(),
                    tag.data());
      })) {
    return false;
  }
  // EVP_Cipher callers of the non-AEAD modes never finalise.
  if (!gcm() && m.via_cipher) return true;
  if (!t.Step(final_via ? "EVP_Cipher(final)" : "final",
              [&](Side &s) { return final_via ? CipherFinal(s) : Final(s); })) {
    return false;
  }
  if (!CheckState(t, family())) return false;
  if (gcm() && m.encrypt) {
    return t.Step("get tag", [&](Side &s) { return GetTag(s, m.tag_len); });
  }
  return true;
}

bool StreamRunner::Run(const Message &m, bool *completed) {
  // Data units (XTS) or cuts of the input; AAD cuts.
  std::vector<size_t> units;
  if (family() == Family::kXts) {
    units = Splits(rng_, m.plaintext.size(), 6, 1, kBlock);
  }
  Bytes input = m.plaintext, tag;
  const bool padding = m.padding.value_or(true) && !m.via_cipher;
  if (!m.encrypt) {
    if (!Seal(m, padding, units.empty() ? std::vector<size_t>{m.plaintext.size()}
                                        : units,
              &input, &tag)) {
      return false;
    }
    tag.resize(gcm() ? m.tag_len : 0);
    if (m.corrupt) {
      Bytes &victim = gcm() ? tag : input;
      if (!victim.empty()) victim[victim.size() - 1 - rng_() % std::min<size_t>(victim.size(), 16)] ^= 0x01;
    }
  }
  const size_t unit = IsBlockMode(family()) && m.via_cipher ? kBlock : 1;
  const std::vector<size_t> pieces =
      family() == Family::kXts ? units : Splits(rng_, input.size(), 8, unit);
  std::vector<bool> via(pieces.size());
  for (size_t i = 0; i < via.size(); ++i) {
    via[i] = m.via_cipher || (m.mixed && rng_() % 2);
  }
  const std::vector<size_t> aad_pieces =
      gcm() ? Splits(rng_, m.aad.size(), 4) : std::vector<size_t>{};
  const bool aad_via = m.via_cipher || (m.mixed && rng_() % 2);
  const bool final_via = gcm() && (m.via_cipher || (m.mixed && rng_() % 2));
  const size_t copy_at = m.copy ? rng_() % (pieces.size() + 1) : pieces.size() + 1;

  Twin t = EngineTwin(e_, legacy_, reference_.get(), input, m.in_place,
                      m.in_misalign, m.out_misalign,
                      m.Describe(alg_.name.data()));
  bool ok = InitTwin(t, m, tag);
  for (size_t i = 0; ok && i < aad_pieces.size(); ++i) {
    ok = t.Step("aad(" + std::to_string(aad_pieces[i]) + ")", [&](Side &s) {
      return aad_via ? CipherAad(s, m.aad, aad_pieces[i])
                     : UpdateAad(s, m.aad, aad_pieces[i]);
    });
  }
  ok = ok && Data(t, m, pieces, via, 0, std::min(copy_at, pieces.size()));
  std::optional<Twin> copy;
  if (ok && m.copy) {
    copy = t.Copy();
    ok = copy.has_value();
  }
  ok = ok && Data(t, m, pieces, via, std::min(copy_at, pieces.size()),
                  pieces.size()) &&
       Finish(t, m, tag, final_via);
  if (copy) {
    const bool copy_ok =
        Data(*copy, m, pieces, via, copy_at, pieces.size()) &&
        Finish(*copy, m, tag, final_via);
    EXPECT_EQ(copy_ok, ok) << m.Describe(alg_.name.data());
    if (copy->diverged()) return false;
  }
  if (t.diverged()) return false;
  if (completed != nullptr) *completed = ok;

  // The next message on the same contexts, on a new IV only (TLS 1.3's
  // per-record re-init; CBC and CTR restart their chaining).
  if (ok && m.next_message) {
    Bytes next_iv = m.iv;
    next_iv.back() ^= 0x5a;
    t.Rewind(input);
    ok = t.Step("init(-, -, new iv, -1)", [&](Side &s) {
      return Init(s, false, nullptr, next_iv.data(), -1);
    });
    if (gcm() && !m.encrypt) {
      // The tag no longer matches: both must fail in final.
      ok = ok && t.Step("set tag", [&](Side &s) {
        return Ctrl(s, EVP_CTRL_AEAD_SET_TAG, tag.size(),
                    tag.data());
      });
    }
    for (size_t i = 0; ok && i < aad_pieces.size(); ++i) {
      ok = t.Step("aad", [&](Side &s) {
        return aad_via ? CipherAad(s, m.aad, aad_pieces[i])
                       : UpdateAad(s, m.aad, aad_pieces[i]);
      });
    }
    Message again = m;
    again.tag_late = false;
    ok = ok && Data(t, again, pieces, via, 0, pieces.size());
    if (ok) Finish(t, again, tag, final_via);
    if (t.diverged()) return false;
  }
  return true;
}

// ---------------------------------------------------------------------------

class EngineDifferentialTest
    : public EngineFixture<std::tuple<KernelConfig, core::AlgInfo>> {
 protected:
  const KernelConfig &config() const override {
    return std::get<0>(GetParam());
  }
};

// Per direction. AddressSanitizer runs the ENGINE's and provider's C++
// several times slower (as in tests/provider/differential_test.cc): there a
// fifth of the streams, and the uninstrumented build runs them all.
#if defined(__SANITIZE_ADDRESS__)
constexpr size_t kStreams = 200;
#else
constexpr size_t kStreams = 1000;
#endif

TEST_P(EngineDifferentialTest, RandomStreams) {
  const core::AlgInfo &alg = std::get<1>(GetParam());
  const uint64_t seed = std::hash<std::string_view>{}(alg.name) ^ 0x656e67696e65;
  std::cout << "[ SEED     ] " << alg.name << ": 0x" << std::hex << seed
            << std::dec << "\n";
  const EngineStats before = ReadEngineStats(engine_.get());
  StreamRunner runner(engine_.get(), alg, seed);
  ASSERT_TRUE(runner.ready()) << TakeErrors();
  size_t completed = 0;
  for (bool encrypt : {true, false}) {
    for (size_t i = 0; i < kStreams; ++i) {
      const Message m = runner.Random(encrypt);
      bool done = false;
      ASSERT_TRUE(runner.Run(m, &done)) << "stream " << i;
      completed += done;
    }
  }
  EXPECT_GT(completed, kStreams);  // most streams run to the end
  // The ENGINE served them (the default provider cannot have: it runs in
  // this process, not in the ENGINE's module).
  EXPECT_GT(EngineRequests(before, ReadEngineStats(engine_.get()), alg.name),
            kStreams);
}

std::string TestName(
    const testing::TestParamInfo<EngineDifferentialTest::ParamType> &info) {
  std::string name = std::get<0>(info.param).name + "_" +
                     std::string(std::get<1>(info.param).name);
  std::replace(name.begin(), name.end(), '-', '_');
  return name;
}

INSTANTIATE_TEST_SUITE_P(Kernels, EngineDifferentialTest,
                         testing::Combine(testing::ValuesIn(AllKernelConfigs()),
                                          testing::ValuesIn(core::kAlgs)),
                         TestName);

class EngineGcmTest : public EngineFixture<KernelConfig> {
 protected:
  const KernelConfig &config() const override { return GetParam(); }
};

// Every GCM IV length from 1 to 128 bytes and every tag length, both
// directions, tags right and wrong.
TEST_P(EngineGcmTest, IvAndTagLengths) {
  for (const core::AlgInfo &alg : core::kAlgs) {
    if (alg.family != Family::kGcm) continue;
    SCOPED_TRACE(alg.name);
    StreamRunner runner(engine_.get(), alg, 0x6976);
    ASSERT_TRUE(runner.ready());
    for (size_t iv_len = 1; iv_len <= 128; ++iv_len) {
      for (bool encrypt : {true, false}) {
        Message m = runner.Random(encrypt, runner.rng()() % 100);
        m.iv = RandomBytes(runner.rng(), iv_len);
        m.tag_len = 1 + iv_len % 16;
        m.corrupt = !encrypt && iv_len % 3 == 0;
        m.next_message = false;
        bool done = false;
        ASSERT_TRUE(runner.Run(m, &done)) << iv_len;
        EXPECT_EQ(done, !m.corrupt) << m.Describe(alg.name.data());
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Kernels, EngineGcmTest,
                         testing::ValuesIn(AllKernelConfigs()),
                         KernelConfigName);

// CTR's `num` set by the caller (EVP_CIPHER_CTX_set_num) between updates:
// the offset into the keystream block of the counter before the running
// IV, as in OpenSSL's legacy AES-CTR and the default provider (after 5
// bytes, num 0 starts block 1; num 3 goes back into block 0). Every value
// 0..15 after updates that leave each offset, compared in output and in
// the num read back; a value the provider cannot take fails the update.
// OpenSSL 3.0.20 and later refuse every num but 0 on the default
// provider's CTR (docs/differences.md): there only the values it takes are compared.
class EngineCtrNumTest : public EngineFixture<KernelConfig> {
 protected:
  const KernelConfig &config() const override { return GetParam(); }
};

TEST_P(EngineCtrNumTest, SetNumMatchesTheDefaultProvider) {
  ProviderEnv env;
  std::mt19937_64 rng(0x6e756d);
  for (const core::AlgInfo &alg : core::kAlgs) {
    if (alg.family != Family::kCtr) continue;
    SCOPED_TRACE(alg.name);
    const std::string name(alg.name);
    const EVP_CIPHER *legacy = ENGINE_get_cipher(
        engine_.get(), EVP_CIPHER_get_nid(EVP_get_cipherbyname(name.c_str())));
    CipherPtr reference = env.Default(name);
    ASSERT_NE(legacy, nullptr);
    const Bytes key = RandomBytes(rng, alg.key_len), iv = RandomBytes(rng, 16);
    const Bytes data = RandomBytes(rng, 200);
    for (size_t first : {0, 5, 15, 16, 21}) {
      for (unsigned int num = 0; num < 16; ++num) {
        SCOPED_TRACE("first " + std::to_string(first) + ", num " +
                     std::to_string(num));
        Bytes out[2];
        int nums[2][3] = {};
        bool refused = false;  // by the default provider (3.0.20+)
        for (int side = 1; side >= 0 && !refused; --side) {
          CipherCtxPtr ctx = NewCipherCtx();
          ASSERT_TRUE(EVP_EncryptInit_ex(
              ctx.get(), side == 0 ? legacy : reference.get(),
              side == 0 ? engine_.get() : nullptr, key.data(), iv.data()));
          Bytes buffer(64);
          int len = 0;
          const size_t lengths[3] = {first, 16, 37};
          size_t at = 0;
          for (int step = 0; step < 3 && !refused; ++step) {
            const int set = step == 1   ? static_cast<int>(num)
                            : step == 2 ? static_cast<int>((num * 7) % 16)
                                        : -1;
            if (set >= 0 && !EVP_CIPHER_CTX_set_num(ctx.get(), set)) {
              ASSERT_EQ(side, 1) << "the ENGINE refused num " << set;
              ERR_clear_error();
              refused = true;
              break;
            }
            ASSERT_TRUE(EVP_EncryptUpdate(ctx.get(), buffer.data(), &len,
                                          data.data() + at,
                                          static_cast<int>(lengths[step])))
                << TakeErrors();
            at += lengths[step];
            out[side].insert(out[side].end(), buffer.begin(),
                             buffer.begin() + len);
            nums[side][step] = EVP_CIPHER_CTX_get_num(ctx.get());
          }
        }
        if (refused) continue;
        ASSERT_EQ(ToHex(out[0]), ToHex(out[1]));
        for (int step = 0; step < 3; ++step) {
          EXPECT_EQ(nums[0][step], nums[1][step]) << "after update " << step;
        }
      }
    }
    // 16 indexes no keystream byte: the ENGINE refuses the update.
    CipherCtxPtr ctx = NewCipherCtx();
    ASSERT_TRUE(EVP_EncryptInit_ex(ctx.get(), legacy, engine_.get(),
                                   key.data(), iv.data()));
    Bytes buffer(16);
    int len = 0;
    ASSERT_TRUE(EVP_EncryptUpdate(ctx.get(), buffer.data(), &len, data.data(),
                                  5));
    EVP_CIPHER_CTX_set_num(ctx.get(), 16);
    EXPECT_FALSE(EVP_EncryptUpdate(ctx.get(), buffer.data(), &len,
                                   data.data(), 16));
    ERR_clear_error();
  }
}

INSTANTIATE_TEST_SUITE_P(Kernels, EngineCtrNumTest,
                         testing::ValuesIn(AllKernelConfigs()),
                         KernelConfigName);

}  // namespace
}  // namespace aesmux::test
