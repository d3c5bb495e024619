// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
// Wycheproof's AES-GCM, AES-CBC-PKCS5 and AES-XTS vectors
// (tests/vectors/wycheproof/), every case encrypted and decrypted through
// aesmux and through the default provider under every kernel
// configuration (wycheproof_cases.h for how a case runs and is checked).
//
// aesmux's run must equal the default provider's: the stage that failed,
// its return value and error, the output and the tag. The default
// provider's run must be Wycheproof's answer, or fail where
// wycheproof_cases.cc documents, per flag, that OpenSSL 3.0 answers
// differently. Each file's cases are counted, so that a parsing mistake
// cannot shrink the suite unnoticed.
#include <gtest/gtest.h>

#include <iostream>
#include <set>
#include <string>

#include "tests/provider/kernel_configs.h"
#include "tests/provider/wycheproof_cases.h"
#include "tests/support/provider_env.h"

namespace aesmux::test {
namespace {

class WycheproofTest : public KernelConfigTest {
 protected:
  void RunFile(const WycheproofVectors &vectors);
  PathCounts Served(const std::set<std::string> &algorithms) const;
};

PathCounts WycheproofTest::Served(
    const std::set<std::string> &algorithms) const {
  PathCounts total;
  for (const std::string &name : algorithms) {
    const PathCounts counts = RequestsServed(*env_, name);
    total.simd += counts.simd;
    total.fallback += counts.fallback;
  }
  return total;
}

void WycheproofTest::RunFile(const WycheproofVectors &vectors) {
  std::string error;
  const auto file = LoadWycheproof(vectors, &error);
  ASSERT_TRUE(file.has_value()) << error;

  std::set<std::string> algorithms;  // canonical names, for the statistics
  for (const WycheproofCase &c : file->cases) {
    if (CipherPtr cipher = env_->Aesmux(c.cipher)) {
      algorithms.insert(EVP_CIPHER_get0_name(cipher.get()));
    }
  }
  TakeErrors();
  const PathCounts before = Served(algorithms);

  size_t run = 0, not_offered = 0, refused = 0;
  for (const WycheproofCase &c : file->cases) {
    SCOPED_TRACE(testing::Message()
                 << vectors.name << " tcId " << c.tc_id << " (" << c.cipher
                 << (c.valid ? ", valid" : ", invalid") << ", " << c.comment
                 << ")");
    CipherPtr reference = env_->Default(c.cipher);
    CipherPtr aesmux = env_->Aesmux(c.cipher);
    TakeErrors();
    if (reference == nullptr) {
      EXPECT_EQ(aesmux, nullptr)
          << "aesmux offers a cipher the default provider does not";
      ++not_offered;
      continue;
    }
    ASSERT_NE(aesmux, nullptr) << "aesmux does not serve " << c.cipher;
    ++run;
    for (const bool encrypt : {true, false}) {
      const WycheproofOutcome ref = RunWycheproofCase(
          reference.get(), nullptr, vectors.mode, c, encrypt);
      const WycheproofOutcome mux =
          RunWycheproofCase(aesmux.get(), nullptr, vectors.mode, c, encrypt);
      ExpectWycheproofRun(vectors.mode, c, encrypt, mux, ref, "aesmux");
      if (!ref.failed.empty()) ++refused;
    }
  }

  EXPECT_EQ(not_offered, vectors.not_offered)
      << "cases whose cipher the default provider does not offer";
  EXPECT_EQ(run, file->number_of_tests - vectors.not_offered);
  std::cout << "[ WYCHEPRF ] " << vectors.name << ": " << run << " of "
            << file->number_of_tests << " cases run both ways ("
            << not_offered << " not offered by OpenSSL), " << refused
            << " runs refused by the default provider [" << GetParam().name
            << "]\n";
  RecordProperty("cases", static_cast<int>(run));
  EXPECT_TRUE(ServedAsConfigured(GetParam(), before, Served(algorithms),
                                 /*expect_both_paths=*/false));
}

TEST_P(WycheproofTest, AesGcm) { RunFile(kWycheproofGcm); }
TEST_P(WycheproofTest, AesCbcPkcs5) { RunFile(kWycheproofCbc); }
TEST_P(WycheproofTest, AesXts) { RunFile(kWycheproofXts); }

INSTANTIATE_TEST_SUITE_P(Kernels, WycheproofTest,
                         testing::ValuesIn(AllKernelConfigs()),
                         KernelConfigName);

}  // namespace
}  // namespace aesmux::test
