// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
#include "tests/provider/wycheproof_cases.h"

#include <gtest/gtest.h>
#include <openssl/err.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>

#include "tests/provider/vector_file.h"
#include "tests/support/provider_env.h"  // NewCipherCtx

namespace aesmux::test {
namespace {

// The flags each file uses (the "notes" of the file say what they mean).
const std::map<WycheproofMode, std::set<std::string>> kKnownFlags = {
    {WycheproofMode::kGcm,
     {"Ktv", "Pseudorandom", "SpecialCase", "ModifiedTag", "SmallIv",
      "CounterWrap", "LongIv", "ZeroLengthIv"}},
    {WycheproofMode::kCbcPkcs5, {"Pseudorandom", "NoPadding", "BadPadding"}},
    {WycheproofMode::kXts, {"Pseudorandom"}},
};

// 3.0's default provider takes GCM IVs of 1 to 128 bytes (its
// GCM_IV_MAX_SIZE, 1024 bits).
constexpr size_t kMaxGcmIvBytes = 128;

// XTS's tweak is a 16-byte block; Wycheproof gives its first 1 to 16
// bytes, zeros making up the rest (the default provider's answers, which
// the suites check against the file, confirm this reading).
constexpr size_t kXtsTweakBytes = 16;

std::string CipherName(WycheproofMode mode, size_t key_bytes) {
  switch (mode) {
    case WycheproofMode::kGcm:
      return "AES-" + std::to_string(key_bytes * 8) + "-GCM";
    case WycheproofMode::kCbcPkcs5:
      return "AES-" + std::to_string(key_bytes * 8) + "-CBC";
    case WycheproofMode::kXts:  // two keys of half the size each
      return "AES-" + std::to_string(key_bytes * 4) + "-XTS";
  }
  return "";
}

bool HexField(const nlohmann::json &test, const char *name, Bytes *out,
              std::string *error) {
  const auto decoded = DecodeHex(test.at(name).get<std::string>());
  if (!decoded) {
    *error = std::string(name) + " is not hex";
    return false;
  }
  *out = *decoded;
  return true;
}

std::optional<WycheproofCase> ToCase(WycheproofMode mode,
                                     const nlohmann::json &test,
                                     std::string *error) {
  WycheproofCase c;
  c.tc_id = test.at("tcId").get<int>();
  c.comment = test.at("comment").get<std::string>();
  for (const auto &flag : test.at("flags")) {
    c.flags.insert(flag.get<std::string>());
  }
  const std::string result = test.at("result").get<std::string>();
  if (result != "valid" && result != "invalid") {
    *error = "result \"" + result + "\" (the suites know valid and invalid)";
    return std::nullopt;
  }
  c.valid = result == "valid";
  for (const std::string &flag : c.flags) {
    if (!kKnownFlags.at(mode).contains(flag)) {
      *error = "flag " + flag + " is new to the suites: decide what it means";
      return std::nullopt;
    }
  }
  if (!HexField(test, "key", &c.key, error) ||
      !HexField(test, "iv", &c.iv, error) ||
      !HexField(test, "msg", &c.msg, error) ||
      !HexField(test, "ct", &c.ct, error)) {
    return std::nullopt;
  }
  if (mode == WycheproofMode::kGcm &&
      (!HexField(test, "aad", &c.aad, error) ||
       !HexField(test, "tag", &c.tag, error))) {
    return std::nullopt;
  }
  if (mode == WycheproofMode::kXts && c.iv.size() > kXtsTweakBytes) {
    *error = "an XTS tweak longer than 16 bytes";
    return std::nullopt;
  }
  c.cipher = CipherName(mode, c.key.size());
  return c;
}

std::string Hex(const Bytes &bytes) {
  return ToHex(bytes.data(), bytes.size());
}

}  // namespace

const WycheproofVectors kWycheproofGcm = {"aes_gcm_test.json",
                                          WycheproofMode::kGcm, 0};
const WycheproofVectors kWycheproofCbc = {"aes_cbc_pkcs5_test.json",
                                          WycheproofMode::kCbcPkcs5, 0};
// AES-192-XTS (Wycheproof's 384-bit XTS keys, 41 cases) is not an OpenSSL
// cipher: neither the default provider nor aesmux offers it, which the
// suites check case by case.
const WycheproofVectors kWycheproofXts = {"aes_xts_test.json",
                                          WycheproofMode::kXts, 41};

std::optional<WycheproofFile> LoadWycheproof(const WycheproofVectors &vectors,
                                             std::string *error) {
  const std::string path =
      std::string(AESMUX_TEST_VECTOR_DIR "/wycheproof/") + vectors.name;
  const WycheproofMode mode = vectors.mode;
  std::ifstream in(path);
  if (!in) {
    *error = path + ": cannot be opened";
    return std::nullopt;
  }
  WycheproofFile file{path, mode, 0, {}};
  int tc_id = 0;
  try {
    const nlohmann::json root = nlohmann::json::parse(in);
    file.number_of_tests = root.at("numberOfTests").get<size_t>();
    for (const auto &group : root.at("testGroups")) {
      for (const auto &test : group.at("tests")) {
        tc_id = test.at("tcId").get<int>();
        auto c = ToCase(mode, test, error);
        if (!c) {
          *error = path + ": tcId " + std::to_string(tc_id) + ": " + *error;
          return std::nullopt;
        }
        file.cases.push_back(std::move(*c));
      }
    }
  } catch (const nlohmann::json::exception &e) {
    *error = path + ": after tcId " + std::to_string(tc_id) + ": " + e.what();
    return std::nullopt;
  }
  if (file.cases.size() != file.number_of_tests) {
    *error = path + ": " + std::to_string(file.cases.size()) +
             " cases read, numberOfTests says " +
             std::to_string(file.number_of_tests);
    return std::nullopt;
  }
  return file;
}

void PrintTo(const WycheproofOutcome &outcome, std::ostream *os) {
  *os << (outcome.failed.empty() ? "completed" : "failed at " + outcome.failed)
      << " (return " << outcome.ret << ", error ";
  if (outcome.reason.empty()) {
    *os << "none";
  } else {
    *os << "\"" << outcome.reason << "\" of library " << outcome.library;
  }
  *os << "), out " << Hex(outcome.out);
  if (!outcome.tag.empty()) *os << ", tag " << Hex(outcome.tag);
}

WycheproofOutcome RunWycheproofCase(const EVP_CIPHER *cipher, ENGINE *engine,
                                    WycheproofMode mode,
                                    const WycheproofCase &c, bool encrypt) {
  ERR_clear_error();
  WycheproofOutcome outcome;
  auto fail = [&](const char *stage, int ret) {
    outcome.failed = stage;
    outcome.ret = ret;
    if (const unsigned long error = ERR_peek_last_error(); error != 0) {
      outcome.library = ERR_GET_LIB(error);
      const char *text = ERR_reason_error_string(error);
      outcome.reason = text != nullptr
                           ? text
                           : "reason " + std::to_string(ERR_GET_REASON(error));
    }
    ERR_clear_error();
    return outcome;
  };
  // A non-null pointer even for empty data, as programs pass.
  static const uint8_t kNothing = 0;
  auto data = [](const Bytes &b) { return b.empty() ? &kNothing : b.data(); };
  const Bytes &in = encrypt ? c.msg : c.ct;
  Bytes iv = c.iv;
  if (mode == WycheproofMode::kXts) iv.resize(kXtsTweakBytes, 0);

  CipherCtxPtr ctx = NewCipherCtx();
  int ret = EVP_CipherInit_ex(ctx.get(), cipher, engine, nullptr, nullptr,
                              encrypt ? 1 : 0);
  if (ret != 1) return fail("INIT", ret);
  if (mode == WycheproofMode::kGcm) {
    ret = EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_AEAD_SET_IVLEN,
                              static_cast<int>(iv.size()), nullptr);
    if (ret <= 0) return fail("SET_IVLEN", ret);
  }
  ret = EVP_CipherInit_ex(ctx.get(), nullptr, nullptr, c.key.data(), data(iv),
                          -1);
  if (ret != 1) return fail("KEY_IV", ret);
  int len = 0;
  if (!c.aad.empty()) {
    ret = EVP_CipherUpdate(ctx.get(), nullptr, &len, c.aad.data(),
                           static_cast<int>(c.aad.size()));
    if (ret != 1) return fail("AAD", ret);
  }
  outcome.out.resize(in.size() + 2 * EVP_MAX_BLOCK_LENGTH);
  int produced = 0;
  ret = EVP_CipherUpdate(ctx.get(), outcome.out.data(), &produced, data(in),
                         static_cast<int>(in.size()));
  if (ret != 1) {
    outcome.out.clear();
    return fail("UPDATE", ret);
  }
  outcome.out.resize(static_cast<size_t>(produced) + 2 * EVP_MAX_BLOCK_LENGTH);
  if (mode == WycheproofMode::kGcm && !encrypt) {
    ret = EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_AEAD_SET_TAG,
                              static_cast<int>(c.tag.size()),
                              const_cast<uint8_t *>(data(c.tag)));
    if (ret <= 0) {
      outcome.out.resize(static_cast<size_t>(produced));
      return fail("SET_TAG", ret);
    }
  }
  ret = EVP_CipherFinal_ex(ctx.get(), outcome.out.data() + produced, &len);
  outcome.out.resize(static_cast<size_t>(produced + (ret == 1 ? len : 0)));
  if (ret != 1) return fail("FINAL", ret);
  if (mode == WycheproofMode::kGcm && encrypt) {
    outcome.tag.resize(c.tag.size());
    ret = EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_AEAD_GET_TAG,
                              static_cast<int>(outcome.tag.size()),
                              outcome.tag.data());
    if (ret <= 0) {
      outcome.tag.clear();
      return fail("GET_TAG", ret);
    }
  }
  ERR_clear_error();
  return outcome;
}

namespace {

// The stage at which OpenSSL 3.0's default provider stops `c` (empty: it
// completes), with why, per flag: where it answers as Wycheproof does and
// where it differs.
std::string DefaultProviderFailure(WycheproofMode mode, const WycheproofCase &c,
                                   bool encrypt) {
  switch (mode) {
    case WycheproofMode::kGcm:
      // ZeroLengthIv (invalid): refused when the IV length is set, before a
      // key is used, in both directions; Wycheproof and OpenSSL agree.
      if (c.iv.empty()) return "SET_IVLEN";
      // LongIv (valid): Wycheproof's 2056-bit IVs are beyond the 1024 bits
      // OpenSSL 3.0 takes; it refuses them when the IV length is set. A
      // disagreement with Wycheproof that aesmux must share, since
      // programs see the default provider's answer. (LongIv's 256- to
      // 1024-bit IVs, SmallIv's 8- to 80-bit ones and CounterWrap are
      // taken and must give Wycheproof's answer.)
      if (c.iv.size() > kMaxGcmIvBytes) return "SET_IVLEN";
      // ModifiedTag (invalid): decryption fails at final, when the tag is
      // checked; encryption makes the unmodified tag.
      if (!c.valid && !encrypt) return "FINAL";
      return "";
    case WycheproofMode::kCbcPkcs5:
      // BadPadding and NoPadding (invalid): decryption fails at final,
      // where the padding is checked (BadPadding) or the missing last
      // block found (NoPadding, an empty ciphertext). Encrypting their
      // msg completes (see CheckAgainstWycheproof).
      if (!c.valid && !encrypt) return "FINAL";
      return "";
    case WycheproofMode::kXts: {
      // Every case is valid. Equal key halves (none in this version of the
      // file) are refused by 3.0's default provider, outside FIPS mode too,
      // when encrypting ("xts duplicated keys"), not when decrypting.
      const size_t half = c.key.size() / 2;
      const bool equal_halves = std::equal(
          c.key.begin(), c.key.begin() + half, c.key.begin() + half);
      return equal_halves && encrypt ? "KEY_IV" : "";
    }
  }
  return "?";
}

// What Wycheproof says about a completed run: empty if it agrees, else what
// differs. (A run that failed where DefaultProviderFailure says it fails
// has nothing more to check.)
std::string CheckAgainstWycheproof(WycheproofMode mode, const WycheproofCase &c,
                                   bool encrypt,
                                   const WycheproofOutcome &outcome) {
  if (!outcome.failed.empty()) return "";
  if (!encrypt) {
    if (!c.valid) return "decrypted a case Wycheproof marks invalid";
    return outcome.out == c.msg
               ? ""
               : "decrypted msg differs from Wycheproof's " + Hex(c.msg);
  }
  // BadPadding / NoPadding: Wycheproof's ct is not msg encrypted with
  // PKCS#7 padding, so the encryption of msg has no answer to check here
  // (it is still compared with the default provider's).
  if (mode == WycheproofMode::kCbcPkcs5 && !c.valid) return "";
  if (outcome.out != c.ct) {
    return "ciphertext differs from Wycheproof's " + Hex(c.ct);
  }
  if (mode != WycheproofMode::kGcm) return "";
  // ModifiedTag: the ciphertext is Wycheproof's, the tag the true one,
  // which therefore differs from the modified tag in the file.
  if (!c.valid) {
    return outcome.tag != c.tag ? ""
                                : "made the modified tag of an invalid case";
  }
  return outcome.tag == c.tag ? ""
                              : "tag differs from Wycheproof's " + Hex(c.tag);
}

}  // namespace

void ExpectWycheproofRun(WycheproofMode mode, const WycheproofCase &c,
                         bool encrypt, const WycheproofOutcome &tested,
                         const WycheproofOutcome &reference, const char *who) {
  const char *direction = encrypt ? "encrypt" : "decrypt";
  EXPECT_EQ(tested, reference)
      << direction << ": " << who
      << " (first) differs from the default provider (second)";
  EXPECT_EQ(reference.failed, DefaultProviderFailure(mode, c, encrypt))
      << direction << ": the default provider, "
      << testing::PrintToString(reference)
      << " (harness bug, or a documented difference that no longer holds)";
  EXPECT_EQ(CheckAgainstWycheproof(mode, c, encrypt, reference), "")
      << direction << ": the default provider against Wycheproof, "
      << testing::PrintToString(reference);
  EXPECT_EQ(CheckAgainstWycheproof(mode, c, encrypt, tested), "")
      << direction << ": " << who << " against Wycheproof, "
      << testing::PrintToString(tested);
}

}  // namespace aesmux::test
