// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
// Known answers through the ENGINE: every ECB, CBC, CTR, GCM and XTS
// stanza of OpenSSL 3.0.22's evpciph_aes_common.txt (tests/vectors/), run
// through ENGINE_by_id("aesmux") with EVP_CipherInit_ex(…, engine, …) under
// every kernel configuration: each direction the stanza allows, in place
// and out of place, data and AAD whole and in 1 / n-2 / 1 byte fragments
// (not XTS data units), the context copied after the key is set, GCM tags
// set before or after the data as the stanza says; the output and tag must
// be the file's, `NextIV` the IV read back (EVP_CIPHER_CTX_iv), and a
// stanza with `Result` must fail.
#include <gtest/gtest.h>
#include <openssl/engine.h>
#include <openssl/err.h>
#include <openssl/evp.h>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "tests/engine/engine_env.h"
#include "tests/provider/kernel_configs.h"
#include "tests/provider/vector_file.h"
#include "tests/support/bytes.h"
#include "tests/support/provider_env.h"

namespace aesmux::test {
namespace {

constexpr char kVectorFile[] =
    AESMUX_TEST_VECTOR_DIR "/openssl-3.0/evpciph_aes_common.txt";

const VectorFileSpec kSpec = {
    {"Availablein", "Cipher", "Key", "IV", "Plaintext", "Ciphertext", "AAD",
     "Tag", "SetTagLate", "Operation", "NextIV", "Result"},
    {"AAD"}};

// Stanzas per served mode in the file (as tests/provider/kat_test.cc).
const std::map<std::string, size_t> kExpectedStanzas = {
    {"ECB", 16}, {"CBC", 13}, {"CTR", 11}, {"GCM", 43}, {"XTS", 43}};

std::string Upper(std::string text) {
  for (char &c : text) c = static_cast<char>(std::toupper(c));
  return text;
}

// "aes-128-cbc" → "CBC".
std::string ModeOf(const std::string &cipher) {
  const std::string upper = Upper(cipher);
  const size_t dash = upper.find('-', upper.find('-') + 1);
  return dash == std::string::npos ? "" : upper.substr(dash + 1);
}

Bytes HexOf(const Stanza &s, const char *name) {
  const Attribute *a = s.Find(name);
  return a != nullptr ? DecodeHex(a->value).value_or(Bytes{}) : Bytes{};
}

std::string ValueOf(const Stanza &s, const char *name) {
  const Attribute *a = s.Find(name);
  return a != nullptr ? a->value : "";
}

// evp_test's fragments: 1, n-2, 1 bytes (fewer when n < 3).
std::vector<size_t> Fragments(size_t n, bool fragmented) {
  if (!fragmented) return {n};
  if (n < 3) return std::vector<size_t>(n, 1);
  return {1, n - 2, 1};
}

// One run of a stanza through the ENGINE; whether it matched the file.
// `failed` names the step that failed.
bool RunStanza(ENGINE *e, const Stanza &s, bool encrypt, bool in_place,
               bool fragmented, std::string *failed) {
  const std::string mode = ModeOf(ValueOf(s, "Cipher"));
  const EVP_CIPHER *legacy =
      EVP_get_cipherbyname(Upper(ValueOf(s, "Cipher")).c_str());
  const bool aead = mode == "GCM";
  const Bytes key = HexOf(s, "Key"), tag = HexOf(s, "Tag");
  const std::optional<Bytes> iv =
      s.Find("IV") ? std::optional<Bytes>(HexOf(s, "IV")) : std::nullopt;
  const Bytes in = HexOf(s, encrypt ? "Plaintext" : "Ciphertext");
  const Bytes expected = HexOf(s, encrypt ? "Ciphertext" : "Plaintext");
  const bool tag_late = ValueOf(s, "SetTagLate") == "TRUE";
  static const uint8_t kNothing = 0;
  auto data = [](const Bytes &b) { return b.empty() ? &kNothing : b.data(); };
  auto fail = [&](const char *step) {
    *failed = step;
    return false;
  };

  CipherCtxPtr ctx = NewCipherCtx();
  if (legacy == nullptr ||
      !EVP_CipherInit_ex(ctx.get(), legacy, e, nullptr, nullptr, encrypt)) {
    return fail("CIPHERINIT_ERROR");
  }
  if (EVP_CIPHER_CTX_get0_cipher(ctx.get()) !=
      ENGINE_get_cipher(e, EVP_CIPHER_get_nid(legacy))) {
    return fail("NOT_THE_ENGINE");
  }
  if (iv && aead &&
      EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_AEAD_SET_IVLEN,
                          static_cast<int>(iv->size()), nullptr) <= 0) {
    return fail("INVALID_IV_LENGTH");
  }
  auto set_tag = [&] {
    return EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_AEAD_SET_TAG,
                               static_cast<int>(tag.size()),
                               const_cast<uint8_t *>(data(tag))) > 0;
  };
  if (aead && !encrypt && !tag_late && !set_tag()) return fail("TAG_SET_ERROR");
  if (!EVP_CipherInit_ex(ctx.get(), nullptr, nullptr, key.data(),
                         iv ? data(*iv) : nullptr, -1)) {
    return fail("KEY_SET_ERROR");
  }
  CipherCtxPtr copy = NewCipherCtx();
  if (!EVP_CIPHER_CTX_copy(copy.get(), ctx.get())) return fail("COPY_ERROR");
  ctx = std::move(copy);
  int len = 0;
  for (const Attribute *a : s.FindAll("AAD")) {
    const Bytes aad = DecodeHex(a->value).value_or(Bytes{});
    size_t offset = 0;
    for (size_t piece : Fragments(aad.size(), fragmented)) {
      if (!EVP_CipherUpdate(ctx.get(), nullptr, &len, data(aad) + offset,
                            static_cast<int>(piece))) {
        return fail("AAD_SET_ERROR");
      }
      offset += piece;
    }
  }
  if (aead && !encrypt && tag_late && !set_tag()) return fail("TAG_SET_ERROR");
  EVP_CIPHER_CTX_set_padding(ctx.get(), 0);

  Bytes buffer(in.size() + 32), input = in;
  std::copy(in.begin(), in.end(), buffer.begin());
  const uint8_t *source = in_place ? buffer.data() : data(input);
  size_t produced = 0, consumed = 0;
  const bool cut = fragmented && mode != "XTS";
  for (size_t piece : Fragments(in.size(), cut)) {
    if (!EVP_CipherUpdate(ctx.get(), buffer.data() + produced, &len,
                          source + consumed, static_cast<int>(piece))) {
      return fail("CIPHERUPDATE_ERROR");
    }
    produced += static_cast<size_t>(len);
    consumed += piece;
  }
  if (!EVP_CipherFinal_ex(ctx.get(), buffer.data() + produced, &len)) {
    return fail("CIPHERFINAL_ERROR");
  }
  produced += static_cast<size_t>(len);
  if (produced != expected.size() ||
      !std::equal(expected.begin(), expected.end(), buffer.begin())) {
    return fail("VALUE_MISMATCH");
  }
  if (aead && encrypt) {
    uint8_t got[16];
    if (tag.size() > sizeof(got) ||
        EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_AEAD_GET_TAG,
                            static_cast<int>(tag.size()), got) <= 0 ||
        !std::equal(tag.begin(), tag.end(), got)) {
      return fail("TAG_VALUE_MISMATCH");
    }
  }
  if (s.Find("NextIV") != nullptr) {
    const Bytes next = HexOf(s, "NextIV");
    const unsigned char *now = EVP_CIPHER_CTX_iv(ctx.get());
    if (now == nullptr || !std::equal(next.begin(), next.end(), now)) {
      return fail("INVALID_NEXT_IV");
    }
  }
  return true;
}

class EngineKatTest : public EngineFixture<KernelConfig> {
 protected:
  const KernelConfig &config() const override { return GetParam(); }
};

TEST_P(EngineKatTest, EveryServedStanza) {
  std::string error;
  const auto stanzas = ReadVectorFile(kVectorFile, kSpec, &error);
  ASSERT_TRUE(stanzas) << error;
  const EngineStats before = ReadEngineStats(engine_.get());
  std::map<std::string, size_t> per_mode;
  size_t runs = 0;
  for (const Stanza &s : *stanzas) {
    const std::string mode = ModeOf(ValueOf(s, "Cipher"));
    if (!kExpectedStanzas.contains(mode)) continue;
    ++per_mode[mode];
    const std::string available = ValueOf(s, "Availablein");
    if (!available.empty() && available != "default") continue;
    SCOPED_TRACE(testing::Message() << kVectorFile << ":" << s.line << " ("
                                    << ValueOf(s, "Cipher") << ")");
    const std::string operation = ValueOf(s, "Operation");
    const std::string result = ValueOf(s, "Result");
    for (bool encrypt : {true, false}) {
      if ((encrypt && operation == "DECRYPT") ||
          (!encrypt && operation == "ENCRYPT")) {
        continue;
      }
      for (bool in_place : {false, true}) {
        for (bool fragmented : {false, true}) {
          std::string failed;
          const bool ok = RunStanza(engine_.get(), s, encrypt, in_place,
                                    fragmented, &failed);
          ERR_clear_error();
          ++runs;
          EXPECT_EQ(ok ? "success" : failed,
                    result.empty() ? "success" : result)
              << (encrypt ? "encrypt" : "decrypt")
              << (in_place ? ", in place" : ", out of place")
              << (fragmented ? ", fragmented" : ", whole");
        }
      }
    }
  }
  EXPECT_EQ(per_mode, kExpectedStanzas);
  std::cout << "[ KAT      ] " << runs << " runs through the ENGINE ["
            << GetParam().name << "]\n";
  const EngineStats after = ReadEngineStats(engine_.get());
  for (const char *algorithm : {"AES-128-ECB", "AES-256-CBC", "AES-128-CTR",
                                "AES-128-GCM", "AES-256-XTS"}) {
    EXPECT_GT(EngineRequests(before, after, algorithm), 0u) << algorithm;
  }
}

INSTANTIATE_TEST_SUITE_P(Kernels, EngineKatTest,
                         testing::ValuesIn(AllKernelConfigs()),
                         KernelConfigName);

}  // namespace
}  // namespace aesmux::test
