// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
// What aesmux defers from load to first use: the fallback
// path's private library context, made by the first request that needs it,
// by one thread while the others wait; the random IVs and TLS padding MACs
// drawn from that context. (Running out of memory while it is made:
// alloc_failure_test.cc.)
#include <gtest/gtest.h>
#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/params.h>

#include <array>
#include <latch>
#include <string>
#include <thread>
#include <vector>

#include "tests/support/bytes.h"
#include "tests/support/provider_env.h"

namespace aesmux::test {
namespace {

constexpr size_t kThreads = 8;

// Seals one AES-128-GCM message of `len` bytes with 13 bytes of AAD;
// returns ciphertext ‖ tag, or nothing if a call failed.
Bytes Seal(const EVP_CIPHER *cipher, const Bytes &key, const Bytes &iv,
           size_t len) {
  const Bytes aad(13, 7), in(len, 9);
  Bytes out(len + 16);
  int n = 0, final_len = 0;
  auto ctx = NewCipherCtx();
  if (ctx == nullptr ||
      EVP_EncryptInit_ex2(ctx.get(), cipher, key.data(), iv.data(),
                          nullptr) != 1 ||
      EVP_EncryptUpdate(ctx.get(), nullptr, &n, aad.data(), 13) != 1 ||
      EVP_EncryptUpdate(ctx.get(), out.data(), &n, in.data(),
                        static_cast<int>(len)) != 1 ||
      EVP_EncryptFinal_ex(ctx.get(), out.data() + n, &final_len) != 1 ||
      EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_AEAD_GET_TAG, 16,
                          out.data() + len) != 1) {
    return {};
  }
  return out;
}

// Every request on the fallback path: the first requests of eight threads
// at once all wait for one library and agree with the default provider.
TEST(LazyStart, FirstFallbackRequestsFromManyThreads) {
  ProviderEnv env({"kernels = none", "afalg = off"});
  ASSERT_TRUE(env.loaded()) << env.error();
  CipherPtr aesmux = env.Aesmux("AES-128-GCM");
  CipherPtr reference = env.Default("AES-128-GCM");
  ASSERT_NE(aesmux, nullptr);
  ASSERT_NE(reference, nullptr);
  const Bytes key(16, 1);
  std::array<Bytes, kThreads> sealed;
  std::latch start(kThreads);
  std::vector<std::thread> threads;
  for (size_t t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      const Bytes iv(12, static_cast<uint8_t>(t));
      start.arrive_and_wait();
      sealed[t] = Seal(aesmux.get(), key, iv, 100 + t);
    });
  }
  for (std::thread &thread : threads) thread.join();
  for (size_t t = 0; t < kThreads; ++t) {
    const Bytes iv(12, static_cast<uint8_t>(t));
    EXPECT_EQ(sealed[t], Seal(reference.get(), key, iv, 100 + t))
        << "thread " << t << ": " << TakeErrors();
  }
  EXPECT_EQ(env.Stat("AES-128-GCM", "fallback", "requests"), kThreads);
}

// Encrypting without an IV draws one from the fallback library's DRBG,
// which the first such request makes although the kernels serve it.
TEST(LazyStart, RandomIvAsTheFirstRequest) {
  ProviderEnv env({"afalg = off"});
  ASSERT_TRUE(env.loaded()) << env.error();
  CipherPtr aesmux = env.Aesmux("AES-128-GCM");
  CipherPtr reference = env.Default("AES-128-GCM");
  const Bytes key(16, 1), in(64, 9);
  Bytes out(64), iv(12);
  unsigned char tag[16];
  int n = 0;
  auto ctx = NewCipherCtx();
  ASSERT_EQ(EVP_EncryptInit_ex2(ctx.get(), aesmux.get(), key.data(), nullptr,
                                nullptr), 1);
  ASSERT_EQ(EVP_EncryptUpdate(ctx.get(), out.data(), &n, in.data(), 64), 1)
      << TakeErrors();
  ASSERT_EQ(EVP_EncryptFinal_ex(ctx.get(), out.data() + n, &n), 1);
  ASSERT_EQ(EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_AEAD_GET_TAG, 16, tag), 1);
  OSSL_PARAM params[] = {
      OSSL_PARAM_construct_octet_string(OSSL_CIPHER_PARAM_IV, iv.data(), 12),
      OSSL_PARAM_construct_end()};
  ASSERT_EQ(EVP_CIPHER_CTX_get_params(ctx.get(), params), 1);
  EXPECT_NE(iv, Bytes(12, 0));
  // The default provider, given that IV, opens the message.
  auto check = NewCipherCtx();
  Bytes plain(64);
  int m = 0;
  ASSERT_EQ(EVP_DecryptInit_ex2(check.get(), reference.get(), key.data(),
                                iv.data(), nullptr), 1);
  ASSERT_EQ(EVP_DecryptUpdate(check.get(), plain.data(), &m, out.data(), 64),
            1);
  ASSERT_EQ(EVP_CIPHER_CTX_ctrl(check.get(), EVP_CTRL_AEAD_SET_TAG, 16, tag),
            1);
  EXPECT_EQ(EVP_DecryptFinal_ex(check.get(), plain.data() + m, &m), 1);
  EXPECT_EQ(plain, in);
}

}  // namespace
}  // namespace aesmux::test
