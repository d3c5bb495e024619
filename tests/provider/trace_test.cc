// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
// AESMUX_TRACE (provider/core/trace.h): each routing decision on stderr.
// ctest runs this suite with AESMUX_TRACE=1 in its environment.
#include <gtest/gtest.h>
#include <openssl/evp.h>

#include <chrono>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "tests/support/provider_env.h"

namespace aesmux::test {
namespace {

// Encrypts `len` bytes of `alg` `times` times through aesmux; returns what
// the provider printed on stderr meanwhile.
std::string EncryptAndCapture(const ProviderEnv &env, const char *alg,
                              size_t len, int times = 1) {
  CipherPtr cipher = env.Aesmux(alg);
  EXPECT_NE(cipher, nullptr) << alg;
  if (cipher == nullptr) return "";
  const std::vector<unsigned char> key(64, 7), iv(16, 9), in(len, 1);
  std::vector<unsigned char> out(len + 16);
  CipherCtxPtr ctx = NewCipherCtx();
  EXPECT_EQ(EVP_EncryptInit_ex2(ctx.get(), cipher.get(), key.data(),
                                iv.data(), nullptr), 1);
  EVP_CIPHER_CTX_set_padding(ctx.get(), 0);
  int out_len = 0;
  testing::internal::CaptureStderr();
  for (int i = 0; i < times; ++i) {
    EXPECT_EQ(EVP_EncryptUpdate(ctx.get(), out.data(), &out_len, in.data(),
                                static_cast<int>(len)), 1);
  }
  return testing::internal::GetCapturedStderr();
}

class TraceTest : public testing::Test {
 protected:
  void SetUp() override {
    const char *trace = std::getenv("AESMUX_TRACE");
    ASSERT_TRUE(trace != nullptr && std::string(trace) == "1")
        << "run through ctest, which sets AESMUX_TRACE=1";
  }
};

TEST_F(TraceTest, FallbackDecisionIsPrinted) {
  ProviderEnv env({"kernels = none"});
  ASSERT_TRUE(env.loaded()) << env.error();
  EXPECT_EQ(EncryptAndCapture(env, "AES-128-CBC", 16),
            "aesmux: AES-128-CBC 16 B -> fallback\n");
}

TEST_F(TraceTest, SimdDecisionIsPrinted) {
  ProviderEnv env;
  ASSERT_TRUE(env.loaded()) << env.error();
  if (env.ProviderParam("tier") == "none") {
    GTEST_SKIP() << "no kernel tier on this CPU: nothing runs on simd";
  }
  EXPECT_EQ(EncryptAndCapture(env, "AES-256-CTR", 4096),
            "aesmux: AES-256-CTR 4096 B -> simd\n");
}

TEST_F(TraceTest, LinesAreRateLimitedAndTheDroppedOnesCounted) {
  ProviderEnv env({"kernels = none"});
  ASSERT_TRUE(env.loaded()) << env.error();
  // 3000 requests take milliseconds: they fall into one second, or two,
  // of at most 1000 lines each.
  const std::string burst = EncryptAndCapture(env, "AES-128-ECB", 16, 3000);
  size_t lines = 0;
  for (char c : burst) lines += c == '\n';
  EXPECT_GE(lines, 1000u);
  EXPECT_LE(lines, 2001u);
  // The next second's first line says how many were dropped.
  std::this_thread::sleep_for(std::chrono::milliseconds(1100));
  const std::string after = EncryptAndCapture(env, "AES-128-ECB", 16);
  EXPECT_NE((burst + after).find("routing decisions not printed"),
            std::string::npos);
  EXPECT_NE(after.find("aesmux: AES-128-ECB 16 B -> fallback\n"),
            std::string::npos)
      << after;
}

}  // namespace
}  // namespace aesmux::test
