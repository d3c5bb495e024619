// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
// Running out of memory (tests/support/alloc_sweep.h): every allocation of
// each sequence fails in turn, the C library's included, and nothing
// aborts, leaks (LeakSanitizer, in the sanitizer build) or fails without a
// reason.
//
// The sequences cover what allocates on the way: loading the provider
// (and the afalg probe its first GCM context makes), every algorithm's
// init, update, final, copy and re-key, GCM messages whose AAD is buffered
// (length-dependent routing), TLS 1.2 GCM records, the statistics of a new
// thread and the statistics file written while serving, multi-buffer
// batching in ASYNC jobs.
#include <gtest/gtest.h>
#include <openssl/async.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "provider/core/algorithm.h"
#include "tests/support/alloc_hooks.h"
#include "tests/support/alloc_sweep.h"
#include "tests/support/provider_env.h"

namespace aesmux::test {
namespace {

std::vector<std::string> Configuration(const std::string &extra) {
  // The afalg path is off: this runs anywhere, and its sockets are tested
  // in tests/afalg.
  std::vector<std::string> lines = {"afalg = off"};
  if (!extra.empty()) lines.push_back(extra);
  return lines;
}

class AllocFailureTest : public ::testing::TestWithParam<const char *> {};

TEST_P(AllocFailureTest, EveryAlgorithmFailsCleanly) {
  if (std::string_view(GetParam()) == "kernels = none" &&
      ProviderEnv(Configuration("")).ProviderParam("tier") == "none") {
    GTEST_SKIP() << "no kernel tier on this CPU: the defaults ran without "
                    "kernels already";
  }
  ProviderEnv env(Configuration(GetParam()));
  ASSERT_TRUE(env.loaded()) << env.error();
  const Buffers buffers;
  for (const core::AlgInfo &alg : core::kAlgs) {
    SCOPED_TRACE(std::string(alg.name));
    CipherPtr cipher = env.Aesmux(std::string(alg.name));
    ASSERT_NE(cipher, nullptr);
    FailEachAllocation([&](Checker &check) {
      Sequence(cipher.get(), alg.family, buffers, 4096, check);
    });
  }
}

std::string SettingName(const testing::TestParamInfo<const char *> &info) {
  static const char *const kNames[] = {"defaults", "kernels_none",
                                       "gcm_routed", "cbc_routed"};
  return kNames[info.index];
}

// Length-dependent routing makes GCM buffer AAD.
INSTANTIATE_TEST_SUITE_P(Settings, AllocFailureTest,
                         ::testing::Values("", "kernels = none",
                                           "gcm.fallback_max_len = 64",
                                           "cbc.fallback_max_len = 64"),
                         SettingName);

// One GCM message with a 40-byte IV (kept on the heap: IVs of more than
// 16 bytes are) on `ctx`, keyed with a 40-byte IV length: its ciphertext
// and tag, or empty if a call failed.
std::vector<uint8_t> LongIvMessage(EVP_CIPHER_CTX *ctx, const Buffers &b,
                                   const std::vector<uint8_t> &iv) {
  std::vector<uint8_t> out(64 + 16);
  int len = 0;
  if (EVP_EncryptInit_ex2(ctx, nullptr, nullptr, iv.data(), nullptr) != 1 ||
      EVP_EncryptUpdate(ctx, nullptr, &len, b.in.data(), 13) != 1 ||
      EVP_EncryptUpdate(ctx, out.data(), &len, b.in.data(), 64) != 1 ||
      EVP_EncryptFinal_ex(ctx, out.data() + 64, &len) != 1 ||
      EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_GET_TAG, 16, out.data() + 64) !=
          1) {
    return {};
  }
  return out;
}

// The IV's heap block not allocated, when the IV length grows beyond 16
// bytes or when a context holding such an IV is copied: the call fails
// with an error on the queue and changes nothing (the context goes on as
// if the call had not been made); with memory back, the same calls
// succeed, and every message agrees with the default provider's.
TEST(AllocFailure, GcmLongIvChangesNothingWhenItFails) {
  ProviderEnv env(Configuration(""));
  ASSERT_TRUE(env.loaded()) << env.error();
  const Buffers b;
  const std::vector<uint8_t> iv(40, 0x5c);
  CipherPtr cipher = env.Aesmux("AES-128-GCM");
  CipherPtr reference_cipher = env.Default("AES-128-GCM");
  ASSERT_NE(cipher, nullptr);
  ASSERT_NE(reference_cipher, nullptr);
  auto new_ctx = [&](const EVP_CIPHER *with, size_t iv_len) {
    EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
    if (ctx != nullptr &&
        (EVP_EncryptInit_ex2(ctx, with, b.key.data(), nullptr, nullptr) != 1 ||
         (iv_len != 0 && EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_SET_IVLEN,
                                             static_cast<int>(iv_len),
                                             nullptr) != 1))) {
      EVP_CIPHER_CTX_free(ctx);
      ctx = nullptr;
    }
    return ctx;
  };
  std::vector<uint8_t> expected;
  {
    EVP_CIPHER_CTX *ctx = new_ctx(reference_cipher.get(), iv.size());
    ASSERT_NE(ctx, nullptr);
    expected = LongIvMessage(ctx, b, iv);
    EVP_CIPHER_CTX_free(ctx);
    ASSERT_FALSE(expected.empty());
  }
  // The error queue made before memory runs out.
  ERR_raise(ERR_LIB_PROV, ERR_R_INTERNAL_ERROR);
  ERR_clear_error();

  bool set_failed = false;
  for (uint64_t n = 1;; ++n) {  // the IV length set
    EVP_CIPHER_CTX *ctx = new_ctx(cipher.get(), 0);
    ASSERT_NE(ctx, nullptr);
    alloc::FailFrom(n);
    const int ok = EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_SET_IVLEN,
                                       static_cast<int>(iv.size()), nullptr);
    alloc::StopFailing();
    const bool injected = alloc::InjectedFailure();
    if (ok != 1) {
      set_failed = true;
      EXPECT_TRUE(injected);
      EXPECT_NE(ERR_peek_error(), 0u) << "failed without an error";
      ERR_clear_error();
      EXPECT_EQ(EVP_CIPHER_CTX_get_iv_length(ctx), 12);
      EXPECT_EQ(EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_SET_IVLEN,
                                    static_cast<int>(iv.size()), nullptr),
                1);
    }
    EXPECT_EQ(LongIvMessage(ctx, b, iv), expected) << "failing from " << n;
    EVP_CIPHER_CTX_free(ctx);
    if (!injected || n > 50) break;
  }
  EXPECT_TRUE(set_failed) << "setting the IV length allocated nothing";

  bool copy_failed = false;
  for (uint64_t n = 1;; ++n) {  // a copy mid-message
    EVP_CIPHER_CTX *ctx = new_ctx(cipher.get(), iv.size());
    EVP_CIPHER_CTX *copy = EVP_CIPHER_CTX_new();
    ASSERT_NE(ctx, nullptr);
    ASSERT_NE(copy, nullptr);
    int len = 0;
    ASSERT_EQ(EVP_EncryptInit_ex2(ctx, nullptr, nullptr, iv.data(), nullptr),
              1);
    alloc::FailFrom(n);
    const int ok = EVP_CIPHER_CTX_copy(copy, ctx);
    alloc::StopFailing();
    const bool injected = alloc::InjectedFailure();
    if (ok != 1) {
      copy_failed = true;
      EXPECT_NE(ERR_peek_error(), 0u) << "failed without an error";
      ERR_clear_error();
      ASSERT_EQ(EVP_CIPHER_CTX_copy(copy, ctx), 1) << TakeErrors();
    }
    // Both go on from the IV: the same message as the default provider's.
    for (EVP_CIPHER_CTX *each : {ctx, copy}) {
      std::vector<uint8_t> out(80);
      ASSERT_EQ(EVP_EncryptUpdate(each, nullptr, &len, b.in.data(), 13), 1);
      ASSERT_EQ(EVP_EncryptUpdate(each, out.data(), &len, b.in.data(), 64),
                1);
      ASSERT_EQ(EVP_EncryptFinal_ex(each, out.data() + 64, &len), 1);
      ASSERT_EQ(EVP_CIPHER_CTX_ctrl(each, EVP_CTRL_AEAD_GET_TAG, 16,
                                    out.data() + 64),
                1);
      EXPECT_EQ(out, expected) << "failing from " << n;
      // And the IV length and IV survive for the next message.
      EXPECT_EQ(LongIvMessage(each, b, iv), expected) << "failing from " << n;
    }
    EVP_CIPHER_CTX_free(copy);
    EVP_CIPHER_CTX_free(ctx);
    if (!injected || n > 50) break;
  }
  EXPECT_TRUE(copy_failed) << "the copy allocated nothing";
}

// Every MiB served rewrites the statistics file (provider/core/stats.h).
TEST(AllocFailure, StatisticsFileWrittenWhileServing) {
  const std::string prefix =
      "/tmp/aesmux-alloc-failure-" + std::to_string(getpid());
  {
    ProviderEnv env(Configuration("stats_file = " + prefix));
    ASSERT_TRUE(env.loaded()) << env.error();
    const Buffers buffers;
    CipherPtr cipher = env.Aesmux("AES-128-CTR");
    FailEachAllocation([&](Checker &check) {
      Sequence(cipher.get(), Family::kCtr, buffers, 3 << 20, check);
    });
  }  // (written again as the provider is unloaded)
  // prefix.<pid>.<id>, and a summary if a fold had anything to fold.
  const std::string stem = prefix.substr(5) + ".";
  for (const auto &entry : std::filesystem::directory_iterator("/tmp")) {
    if (entry.path().filename().string().starts_with(stem)) {
      std::filesystem::remove(entry.path());
    }
  }
}

// The fallback path's library context is made on the first request that
// needs it (provider/fallback/fallback.h), not at load: running out of
// memory while it is made fails that request with an error on the queue,
// and a later request, with memory back, makes it and is served. Making
// the library allocates a few thousand times and each try loads a provider
// anew: every fifth allocation fails in turn, which keeps this to seconds.
TEST(AllocFailure, FallbackLibraryMadeOnFirstRequest) {
  const Buffers buffers;
  uint64_t n = 1;
  for (; n < 20000; n += 5) {
    ProviderEnv env(Configuration("kernels = none"));
    ASSERT_TRUE(env.loaded()) << env.error();
    CipherPtr cipher = env.Aesmux("AES-128-GCM");
    ASSERT_NE(cipher, nullptr);
    const aesmux::test::Run run = RunFailingFrom(n, [&](Checker &check) {
      Sequence(cipher.get(), Family::kGcm, buffers, 64, check);
    });
    EXPECT_EQ(run.silent_failures, 0)
        << "allocation " << n << " failed: calls failed without an error";
    CipherCtxPtr ctx = NewCipherCtx();
    uint8_t *out = const_cast<uint8_t *>(buffers.out.data());
    int len = 0;
    EXPECT_TRUE(ctx != nullptr &&
                EVP_EncryptInit_ex2(ctx.get(), cipher.get(),
                                    buffers.key.data(), buffers.iv.data(),
                                    nullptr) == 1 &&
                EVP_EncryptUpdate(ctx.get(), out, &len, buffers.in.data(),
                                  64) == 1 &&
                EVP_EncryptFinal_ex(ctx.get(), out, &len) == 1)
        << "allocation " << n << " failed: the provider serves no more";
    ERR_clear_error();
    if (!run.reached_failure || HasFailure()) break;
  }
  EXPECT_LT(n, 20000u) << "the sequence never ran to its end";
}

TEST(AllocFailure, BatchingInAsyncJobs) {
  ProviderEnv env(Configuration(""));
  ASSERT_TRUE(env.loaded()) << env.error();
  if (env.ProviderParam("tier") == "none") {
    GTEST_SKIP() << "no kernel tier on this CPU: no batching";
  }
  const Buffers buffers;
  CipherPtr cipher = env.Aesmux("AES-128-CBC");
  const uint64_t batches = env.Stat("AES-128-CBC", "mb.batches");
  FailEachAllocation([&](Checker &check) {
    SequenceInJobs(cipher.get(), buffers, check);
  });
  EXPECT_GT(env.Stat("AES-128-CBC", "mb.batches"), batches)
      << "the jobs never batched";
}

// Loading the provider with the default settings (the afalg path under
// `auto`: its probe, and /proc/crypto's lines, made for the first GCM
// context), then its first GCM and CBC messages, with every allocation
// failing in turn: a load that fails leaves nothing behind, one that
// succeeds serves. aesmux reports a refused load on stderr, which is
// silenced here. Every allocation of the few thousand a load makes fails
// in turn: this is the slowest sweep (seconds).
TEST(AllocFailure, ProviderLoadAndFirstMessages) {
  const std::string module = ModulePath();
  const Buffers buffers;
  const SilencedStderr silenced;
  int loads = 0;
  // The library context itself is made and freed with memory back:
  // OpenSSL 3.0's OSSL_LIB_CTX_new, failing half way, leaves a context
  // whose free crashes (inside libcrypto), which is not aesmux's to test.
  OSSL_LIB_CTX *libctx = OSSL_LIB_CTX_new();
  ASSERT_NE(libctx, nullptr);
  const auto load_and_serve = [&](Checker &check) {
        OSSL_PROVIDER *provider = OSSL_PROVIDER_load(libctx, module.c_str());
        if (provider != nullptr) {
          ++loads;
          for (const char *name : {"AES-128-GCM", "AES-256-CBC"}) {
            EVP_CIPHER *cipher =
                EVP_CIPHER_fetch(libctx, name, "provider=aesmux");
            if (cipher == nullptr) continue;
            Sequence(cipher, EVP_CIPHER_get_mode(cipher) == EVP_CIPH_GCM_MODE
                                 ? Family::kGcm
                                 : Family::kCbc,
                     buffers, 64, check);
            EVP_CIPHER_free(cipher);
          }
          OSSL_PROVIDER_unload(provider);
        }
        alloc::StopFailing();
        OSSL_LIB_CTX_free(libctx);
        libctx = OSSL_LIB_CTX_new();
  };
  // OpenSSL's own once-only set-up fails for good if memory runs out the
  // first time: done before the sweep.
  Checker warm_up;
  load_and_serve(warm_up);
  ASSERT_EQ(loads, 1) << "the provider does not load";
  FailEachAllocation(load_and_serve, 50000);
  OSSL_LIB_CTX_free(libctx);
  EXPECT_GT(loads, 1) << "the provider never loaded under the sweep";
}

// TLS 1.2 GCM records as libssl makes them (EVP_CTRL_GCM_SET_IV_FIXED,
// EVP_CTRL_AEAD_TLS1_AAD, EVP_Cipher in place), sealed and opened.
TEST(AllocFailure, TlsGcmRecords) {
  ProviderEnv env(Configuration(""));
  ASSERT_TRUE(env.loaded()) << env.error();
  CipherPtr cipher = env.Aesmux("AES-256-GCM");
  ASSERT_NE(cipher, nullptr);
  const Buffers b;
  FailEachAllocation([&](Checker &check) {
    uint8_t record[8 + 64 + 16] = {};
    uint8_t aad[13] = {0, 0, 0, 0, 0, 0, 0, 1, 23, 3, 3, 0, 64};
    // Sealed, then opened: a record sealed under failure may not open,
    // which (a wrong tag) fails without an error in the default provider
    // too, so only sealing and the set-up are checked.
    for (const int encrypt : {1, 0}) {
      EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
      if (ctx == nullptr) return;
      uint8_t fixed[4] = {1, 2, 3, 4};
      if (check(EVP_CipherInit_ex2(ctx, cipher.get(), b.key.data(), nullptr,
                                   encrypt, nullptr)) &&
          check(EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_SET_IV_FIXED, 4,
                                    fixed)) &&
          EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_TLS1_AAD, 13, aad) == 16) {
        const int sealed = EVP_Cipher(ctx, record, record, sizeof(record));
        if (encrypt) check(sealed > 0 ? 1 : 0);
      } else {
        ERR_clear_error();
      }
      EVP_CIPHER_CTX_free(ctx);
    }
  });
}

}  // namespace
}  // namespace aesmux::test
