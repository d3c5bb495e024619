// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
// Known-answer tests: every stanza of OpenSSL 3.0.22's evpciph_aes_common.txt
// (tests/vectors/README.md) whose cipher aesmux serves, replayed through EVP
// the way OpenSSL's test/evp_test.c drives a cipher stanza: encrypt and/or
// decrypt as `Operation` says, in place and out of place with aligned and
// misaligned buffers, data and AAD whole and in 1 / n-2 / 1 byte fragments
// (not for XTS), the context copied after the key is set (and, when
// fragmented, again after the first fragment), the IV read back after init
// and `NextIV` after final, GCM tags of any stated length, and the stanza's
// expected failure (`Result`).
//
// Each stanza runs through aesmux and through the default provider: both
// must give the file's answer (the default provider's passing proves the
// harness), and where a step fails both must leave the same error reason.
#include <openssl/core_names.h>
#include <openssl/err.h>
#include <openssl/evp.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <iostream>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "tests/provider/aligned_buffer.h"
#include "tests/provider/kernel_configs.h"
#include "tests/provider/vector_file.h"
#include "tests/support/provider_env.h"

namespace aesmux::test {
namespace {

constexpr char kVectorFile[] =
    AESMUX_TEST_VECTOR_DIR "/openssl-3.0/evpciph_aes_common.txt";

// Every attribute evp_test knows for a cipher stanza that this file uses;
// anything else in the file is an error (vector_file.h).
const VectorFileSpec kSpec = {
    {"Availablein", "Cipher", "Key", "IV", "Plaintext", "Ciphertext", "AAD",
     "Tag", "SetTagLate", "Operation", "NextIV", "Result"},
    {"AAD"}};

// Stanzas per served mode in evpciph_aes_common.txt of OpenSSL 3.0.22, so
// that a parsing or filtering mistake cannot shrink the suite unnoticed.
const std::map<std::string, size_t> kExpectedStanzas = {
    {"ECB", 16}, {"CBC", 13}, {"CTR", 11}, {"GCM", 43}, {"XTS", 43}};

struct CipherVector {
  int line = 0;
  std::string cipher;        // as written, any letter case
  std::string mode;          // upper case: "CBC", "CFB8", …
  std::string available_in;  // empty: any provider
  std::vector<uint8_t> key, plaintext, ciphertext, tag;
  std::optional<std::vector<uint8_t>> iv, next_iv;
  std::vector<std::vector<uint8_t>> aad;  // one entry per AAD line
  bool encrypt = true;
  bool decrypt = true;
  bool tag_late = false;
  std::string result;  // the step expected to fail; empty: success
};

// "aes-128-cbc" → "CBC", "AES-256-CFB8" → "CFB8".
std::string ModeOf(std::string_view cipher) {
  std::string upper(cipher);
  for (char &c : upper) c = static_cast<char>(std::toupper(c));
  const size_t second_dash = upper.find('-', upper.find('-') + 1);
  if (!upper.starts_with("AES-") || second_dash == std::string::npos) {
    return "";
  }
  return upper.substr(second_dash + 1);
}

bool Hex(const Stanza &stanza, std::string_view name,
         std::optional<std::vector<uint8_t>> *out, std::string *error) {
  const Attribute *attribute = stanza.Find(name);
  if (attribute == nullptr) return true;
  *out = DecodeHex(attribute->value);
  if (!*out) {
    *error = "line " + std::to_string(attribute->line) + ": " +
             std::string(name) + " is not hex";
  }
  return out->has_value();
}

bool Hex(const Stanza &stanza, std::string_view name, std::vector<uint8_t> *out,
         std::string *error) {
  std::optional<std::vector<uint8_t>> value;
  if (!Hex(stanza, name, &value, error)) return false;
  *out = value.value_or(std::vector<uint8_t>{});
  return true;
}

std::optional<CipherVector> ToCipherVector(const Stanza &stanza,
                                           std::string *error) {
  CipherVector v;
  v.line = stanza.line;
  const std::string where = "line " + std::to_string(stanza.line) + ": ";
  const Attribute *cipher = stanza.Find("Cipher");
  if (cipher == nullptr || stanza.Find("Key") == nullptr) {
    *error = where + "a cipher stanza needs Cipher and Key";
    return std::nullopt;
  }
  v.cipher = cipher->value;
  v.mode = ModeOf(v.cipher);
  if (const Attribute *a = stanza.Find("Availablein")) {
    v.available_in = a->value;
  }
  if (const Attribute *a = stanza.Find("Result")) v.result = a->value;
  if (const Attribute *a = stanza.Find("Operation")) {
    if (a->value != "ENCRYPT" && a->value != "DECRYPT") {
      *error = where + "Operation must be ENCRYPT or DECRYPT";
      return std::nullopt;
    }
    v.encrypt = a->value == "ENCRYPT";
    v.decrypt = !v.encrypt;
  }
  if (const Attribute *a = stanza.Find("SetTagLate")) {
    if (a->value != "TRUE" && a->value != "FALSE") {
      *error = where + "SetTagLate must be TRUE or FALSE";
      return std::nullopt;
    }
    v.tag_late = a->value == "TRUE";
  }
  if (!Hex(stanza, "Key", &v.key, error) ||
      !Hex(stanza, "Plaintext", &v.plaintext, error) ||
      !Hex(stanza, "Ciphertext", &v.ciphertext, error) ||
      !Hex(stanza, "Tag", &v.tag, error) || !Hex(stanza, "IV", &v.iv, error) ||
      !Hex(stanza, "NextIV", &v.next_iv, error)) {
    return std::nullopt;
  }
  for (const Attribute *a : stanza.FindAll("AAD")) {
    auto aad = DecodeHex(a->value);
    if (!aad) {
      *error = "line " + std::to_string(a->line) + ": AAD is not hex";
      return std::nullopt;
    }
    v.aad.push_back(std::move(*aad));
  }
  return v;
}

// The vector file, read once. Null (with `error`) if it does not parse.
const std::vector<CipherVector> *Vectors(std::string *error) {
  static std::string load_error;
  static const std::optional<std::vector<CipherVector>> vectors =
      []() -> std::optional<std::vector<CipherVector>> {
    const auto stanzas = ReadVectorFile(kVectorFile, kSpec, &load_error);
    if (!stanzas) return std::nullopt;
    std::vector<CipherVector> out;
    for (const Stanza &stanza : *stanzas) {
      auto v = ToCipherVector(stanza, &load_error);
      if (!v) {
        load_error = std::string(kVectorFile) + ": " + load_error;
        return std::nullopt;
      }
      out.push_back(std::move(*v));
    }
    return out;
  }();
  *error = load_error;
  return vectors ? &*vectors : nullptr;
}

enum class Input { kInPlace, kAligned, kMisaligned };

// One way of running a stanza (evp_test's loops).
struct Variant {
  bool encrypt;
  size_t out_misalign;  // 0 or 1
  Input input;
  bool fragmented;

  std::string Describe() const {
    std::string text = encrypt ? "encrypt, " : "decrypt, ";
    text += out_misalign ? "misaligned " : "aligned ";
    text += input == Input::kInPlace   ? "in place"
            : input == Input::kAligned ? "output, aligned input"
                                       : "output, misaligned input";
    text += fragmented ? ", fragmented" : ", whole";
    return text;
  }
};

std::vector<Variant> VariantsOf(const CipherVector &v) {
  std::vector<Variant> variants;
  for (bool fragmented : {false, true}) {
    // Data units of XTS cannot be cut, as evp_test knows.
    if (fragmented && v.mode == "XTS") continue;
    for (size_t out_misalign : {0, 1}) {
      for (Input input :
           {Input::kInPlace, Input::kAligned, Input::kMisaligned}) {
        if (v.encrypt) {
          variants.push_back({true, out_misalign, input, fragmented});
        }
        if (v.decrypt) {
          variants.push_back({false, out_misalign, input, fragmented});
        }
      }
    }
  }
  return variants;
}

// evp_test's fragments: 1, n-2, 1 bytes (fewer when n < 3).
std::vector<size_t> Fragments(size_t n) {
  if (n == 0) return {};
  if (n == 1) return {1};
  if (n == 2) return {1, 1};
  return {1, n - 2, 1};
}

// What one run of a stanza ended with: the evp_test name of the step that
// failed (empty: none) and the reason of the error then on the queue.
struct Outcome {
  std::string failed_step;
  int reason = 0;
};

class StanzaRun {
 public:
  StanzaRun(const EVP_CIPHER *cipher, const CipherVector &v,
            const Variant &variant)
      : cipher_(cipher), v_(v), variant_(variant) {}

  Outcome Run() {
    ERR_clear_error();
    outcome_ = {};
    Steps();
    ERR_clear_error();
    return outcome_;
  }

 private:
  bool Fail(const char *step) {
    outcome_.failed_step = step;
    outcome_.reason = LastErrorReason();
    return false;
  }

  // Replaces the context with a copy of itself, as evp_test does.
  bool CopyContext() {
    CipherCtxPtr copy = NewCipherCtx();
    if (!EVP_CIPHER_CTX_copy(copy.get(), ctx_.get())) return false;
    ctx_ = std::move(copy);
    return true;
  }

  bool Update(uint8_t *out, size_t *produced, const uint8_t *in, size_t len) {
    int out_len = 0;
    if (!EVP_CipherUpdate(ctx_.get(),
                          out == nullptr ? nullptr : out + *produced, &out_len,
                          in, static_cast<int>(len))) {
      return false;
    }
    *produced += static_cast<size_t>(out_len);
    return true;
  }

  bool CheckIv(const std::optional<std::vector<uint8_t>> &expected) {
    uint8_t iv[128];  // GCM IVs may exceed EVP_MAX_IV_LENGTH
    if (!EVP_CIPHER_CTX_get_updated_iv(ctx_.get(), iv, sizeof(iv))) {
      return false;
    }
    return custom_iv_ ||
           std::memcmp(iv, expected->data(), expected->size()) == 0;
  }

  bool Steps() {
    const bool enc = variant_.encrypt;
    const bool aead =
        (EVP_CIPHER_get_flags(cipher_) & EVP_CIPH_FLAG_AEAD_CIPHER) != 0;
    custom_iv_ = (EVP_CIPHER_get_flags(cipher_) & EVP_CIPH_CUSTOM_IV) != 0;
    const std::vector<uint8_t> &in = enc ? v_.plaintext : v_.ciphertext;
    const std::vector<uint8_t> &expected = enc ? v_.ciphertext : v_.plaintext;
    // A non-null pointer even for empty data, as evp_test passes.
    static const uint8_t kNothing = 0;
    auto data = [](const std::vector<uint8_t> &bytes) {
      return bytes.empty() ? &kNothing : bytes.data();
    };

    AlignedBuffer out_buffer(variant_.out_misalign + in.size() +
                             2 * EVP_MAX_BLOCK_LENGTH);
    uint8_t *out = out_buffer.data() + variant_.out_misalign;
    AlignedBuffer in_buffer(in.size() + 1);
    const uint8_t *input = out;
    if (variant_.input == Input::kInPlace) {
      std::copy(in.begin(), in.end(), out);
    } else {
      uint8_t *copy =
          in_buffer.data() + (variant_.input == Input::kMisaligned ? 1 : 0);
      std::copy(in.begin(), in.end(), copy);
      input = copy;
    }

    ctx_ = NewCipherCtx();
    if (!EVP_CipherInit_ex(ctx_.get(), cipher_, nullptr, nullptr, nullptr,
                           enc)) {
      return Fail("CIPHERINIT_ERROR");
    }
    if (v_.iv) {
      if (aead ? EVP_CIPHER_CTX_ctrl(ctx_.get(), EVP_CTRL_AEAD_SET_IVLEN,
                                     static_cast<int>(v_.iv->size()),
                                     nullptr) <= 0
               : v_.iv->size() !=
                     static_cast<size_t>(
                         EVP_CIPHER_CTX_get_iv_length(ctx_.get()))) {
        return Fail("INVALID_IV_LENGTH");
      }
    }
    auto set_tag = [&] {
      return EVP_CIPHER_CTX_ctrl(ctx_.get(), EVP_CTRL_AEAD_SET_TAG,
                                 static_cast<int>(v_.tag.size()),
                                 const_cast<uint8_t *>(data(v_.tag))) > 0;
    };
    if (aead && !enc && !v_.tag_late && !set_tag()) {
      return Fail("TAG_SET_ERROR");
    }
    if (!EVP_CIPHER_CTX_set_key_length(ctx_.get(),
                                       static_cast<int>(v_.key.size()))) {
      return Fail("INVALID_KEY_LENGTH");
    }
    if (!EVP_CipherInit_ex(ctx_.get(), nullptr, nullptr, v_.key.data(),
                           v_.iv ? data(*v_.iv) : nullptr, -1)) {
      return Fail("KEY_SET_ERROR");
    }
    if (v_.iv && !CheckIv(v_.iv)) return Fail("INVALID_IV");
    if (!CopyContext()) return Fail("COPY_ERROR");

    for (const std::vector<uint8_t> &aad : v_.aad) {
      size_t offset = 0;
      const std::vector<size_t> pieces = variant_.fragmented
                                             ? Fragments(aad.size())
                                             : std::vector<size_t>{aad.size()};
      for (size_t piece : pieces) {
        size_t ignored = 0;
        if (!Update(nullptr, &ignored, data(aad) + offset, piece)) {
          return Fail("AAD_SET_ERROR");
        }
        offset += piece;
      }
    }
    if (aead && !enc && v_.tag_late && !set_tag()) {
      return Fail("TAG_SET_ERROR");
    }
    EVP_CIPHER_CTX_set_padding(ctx_.get(), 0);

    size_t produced = 0;
    if (!variant_.fragmented) {
      if (!Update(out, &produced, input, in.size())) {
        return Fail("CIPHERUPDATE_ERROR");
      }
    } else {
      size_t consumed = 0;
      for (size_t piece : Fragments(in.size())) {
        if (!Update(out, &produced, input + consumed, piece)) {
          return Fail("CIPHERUPDATE_ERROR");
        }
        // A copy in the middle of the data, continuing with the copy.
        if (consumed == 0 && !CopyContext()) return Fail("COPY_ERROR");
        consumed += piece;
      }
    }
    int final_len = 0;
    if (!EVP_CipherFinal_ex(ctx_.get(), out + produced, &final_len)) {
      return Fail("CIPHERFINAL_ERROR");
    }
    produced += static_cast<size_t>(final_len);
    if (produced != expected.size() ||
        !std::equal(expected.begin(), expected.end(), out)) {
      return Fail("VALUE_MISMATCH");
    }
    if (enc && aead) {
      uint8_t tag[16];
      if (v_.tag.size() > sizeof(tag) ||
          EVP_CIPHER_CTX_ctrl(ctx_.get(), EVP_CTRL_AEAD_GET_TAG,
                              static_cast<int>(v_.tag.size()), tag) <= 0) {
        return Fail("TAG_RETRIEVE_ERROR");
      }
      if (!std::equal(v_.tag.begin(), v_.tag.end(), tag)) {
        return Fail("TAG_VALUE_MISMATCH");
      }
    }
    if (v_.next_iv && !CheckIv(v_.next_iv)) return Fail("INVALID_NEXT_IV");
    return true;
  }

  const EVP_CIPHER *cipher_;
  const CipherVector &v_;
  const Variant &variant_;
  CipherCtxPtr ctx_;
  bool custom_iv_ = false;
  Outcome outcome_;
};

std::string ReasonText(int reason) {
  if (reason == 0) return "no error";
  const char *text = ERR_reason_error_string(ERR_PACK(ERR_LIB_PROV, 0, reason));
  return std::to_string(reason) + " (" + (text ? text : "?") + ")";
}

// The file itself: it parses, and holds the stanzas this suite expects.
TEST(KatFileTest, StanzasPerMode) {
  std::string error;
  const std::vector<CipherVector> *vectors = Vectors(&error);
  ASSERT_NE(vectors, nullptr) << error;
  std::map<std::string, size_t> served, skipped;
  for (const CipherVector &v : *vectors) {
    (kExpectedStanzas.contains(v.mode) ? served : skipped)[v.mode]++;
  }
  EXPECT_EQ(served, kExpectedStanzas);
  size_t total_skipped = 0;
  std::string skipped_text;
  for (const auto &[mode, count] : skipped) {
    skipped_text += " " + mode + " " + std::to_string(count);
    total_skipped += count;
  }
  std::cout << "[ KAT      ] " << vectors->size() << " stanzas in "
            << kVectorFile
            << "; not served by aesmux, skipped: " << total_skipped << " ("
            << skipped_text.substr(1) << ")\n";
  EXPECT_GT(total_skipped, 0u);  // the file also holds CFB, OFB and CCM
}

class KatTest : public testing::TestWithParam<KernelConfig> {
 protected:
  void SetUp() override {
    if (const std::string reason = UnsupportedReason(GetParam());
        !reason.empty()) {
      GTEST_SKIP() << reason;
    }
    std::string error;
    vectors_ = Vectors(&error);
    ASSERT_NE(vectors_, nullptr) << error;
    env_ = LoadAesmux(GetParam(), &error);
    ASSERT_NE(env_, nullptr) << error;
  }

  // Replays every stanza of `mode` through both providers.
  void ReplayMode(const std::string &mode);

  const std::vector<CipherVector> *vectors_ = nullptr;
  std::unique_ptr<ProviderEnv> env_;
};

void KatTest::ReplayMode(const std::string &mode) {
  std::vector<const CipherVector *> stanzas;
  size_t unavailable = 0;
  std::set<std::string> algorithms;  // canonical names, for the statistics
  for (const CipherVector &v : *vectors_) {
    if (v.mode != mode) continue;
    // evp_test skips a stanza meant for a provider it has not loaded; this
    // suite loads the default provider next to aesmux.
    if (!v.available_in.empty() && v.available_in != "default") {
      ++unavailable;
      continue;
    }
    stanzas.push_back(&v);
    if (CipherPtr cipher = env_->Aesmux(v.cipher)) {
      algorithms.insert(EVP_CIPHER_get0_name(cipher.get()));
    }
  }
  std::map<std::string, PathCounts> before;
  for (const std::string &name : algorithms) {
    before[name] = RequestsServed(*env_, name);
  }

  size_t runs = 0;
  for (const CipherVector *v : stanzas) {
    SCOPED_TRACE(testing::Message()
                 << kVectorFile << ":" << v->line << " (" << v->cipher << ")");
    CipherPtr aesmux = env_->Aesmux(v->cipher);
    ASSERT_NE(aesmux, nullptr)
        << "aesmux does not serve '" << v->cipher << "': " << TakeErrors();
    CipherPtr reference = env_->Default(v->cipher);
    ASSERT_NE(reference, nullptr) << TakeErrors();
    const std::string expected = v->result.empty() ? "success" : v->result;
    for (const Variant &variant : VariantsOf(*v)) {
      const Outcome mux = StanzaRun(aesmux.get(), *v, variant).Run();
      const Outcome ref = StanzaRun(reference.get(), *v, variant).Run();
      ++runs;
      const std::string mux_result =
          mux.failed_step.empty() ? "success" : mux.failed_step;
      const std::string ref_result =
          ref.failed_step.empty() ? "success" : ref.failed_step;
      EXPECT_EQ(ref_result, expected)
          << variant.Describe()
          << ": the default provider disagrees with the file (harness bug?), "
          << ReasonText(ref.reason);
      EXPECT_EQ(mux_result, expected)
          << variant.Describe() << ": aesmux, " << ReasonText(mux.reason);
      EXPECT_EQ(ReasonText(mux.reason), ReasonText(ref.reason))
          << variant.Describe() << ": error reasons differ (aesmux, default)";
    }
  }

  const auto expected_count = kExpectedStanzas.find(mode);
  ASSERT_NE(expected_count, kExpectedStanzas.end());
  EXPECT_EQ(stanzas.size() + unavailable, expected_count->second);
  EXPECT_GT(stanzas.size(), 0u);
  std::cout << "[ KAT      ] " << mode << ": " << stanzas.size()
            << " stanzas run (" << runs << " runs per provider)";
  if (unavailable != 0) {
    std::cout << ", " << unavailable
              << " skipped as Availablein a provider not loaded";
  }
  std::cout << " [" << GetParam().name << "]\n";
  RecordProperty("stanzas", static_cast<int>(stanzas.size()));
  RecordProperty("runs", static_cast<int>(runs));

  PathCounts before_total, after_total;
  for (const std::string &name : algorithms) {
    const PathCounts after = RequestsServed(*env_, name);
    before_total.simd += before[name].simd;
    before_total.fallback += before[name].fallback;
    after_total.simd += after.simd;
    after_total.fallback += after.fallback;
  }
  EXPECT_TRUE(ServedAsConfigured(GetParam(), before_total, after_total,
                                 /*expect_both_paths=*/false));
}

TEST_P(KatTest, Ecb) { ReplayMode("ECB"); }
TEST_P(KatTest, Cbc) { ReplayMode("CBC"); }
TEST_P(KatTest, Ctr) { ReplayMode("CTR"); }
TEST_P(KatTest, Gcm) { ReplayMode("GCM"); }
TEST_P(KatTest, Xts) { ReplayMode("XTS"); }

INSTANTIATE_TEST_SUITE_P(Kernels, KatTest,
                         testing::ValuesIn(AllKernelConfigs()),
                         KernelConfigName);

}  // namespace
}  // namespace aesmux::test
