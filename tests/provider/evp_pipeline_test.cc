// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
// OpenSSL 3.5's cipher pipeline through libcrypto's own
// EVP_CipherPipelineEncryptInit / Update / Final (pipeline_test.cc calls
// aesmux's dispatch table directly, as those functions do, on any
// libcrypto): every pipe equals the default provider's encryption of that
// pipe alone; the default provider, which has no pipeline, is refused by
// EVP; re-initialising with new IVs keeps the key. Built against older
// headers, the suite says why it has nothing to run.
#include <gtest/gtest.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/opensslv.h>

#include <random>
#include <string>
#include <vector>

#include "tests/provider/kernel_configs.h"
#include "tests/support/bytes.h"
#include "tests/support/provider_env.h"

namespace aesmux::test {
namespace {

#if OPENSSL_VERSION_NUMBER >= 0x30500000L

constexpr size_t kBlock = 16;

class EvpPipelineTest : public KernelConfigTest {
 protected:
  std::mt19937_64 rng_{0x65767070};
};

TEST_P(EvpPipelineTest, OnlyAesmuxCbcEncryptionCanPipeline) {
  for (const char *name :
       {"AES-128-ECB", "AES-192-CBC", "AES-256-CTR", "AES-128-XTS",
        "AES-256-GCM"}) {
    SCOPED_TRACE(name);
    const bool cbc = std::string(name).find("CBC") != std::string::npos;
    EXPECT_EQ(EVP_CIPHER_can_pipeline(env_->Aesmux(name).get(), 1), cbc ? 1 : 0);
    EXPECT_EQ(EVP_CIPHER_can_pipeline(env_->Aesmux(name).get(), 0), 0);
    EXPECT_EQ(EVP_CIPHER_can_pipeline(env_->Default(name).get(), 1), 0);
  }
}

// 1..32 pipes of random whole-block lengths, in one to three updates, with
// and without padding, then a second message on the same context with new
// IVs and no key: each pipe as the default provider encrypts it alone.
TEST_P(EvpPipelineTest, EveryPipeEqualsTheDefaultProvidersMessage) {
  for (const char *algorithm : {"AES-128-CBC", "AES-192-CBC", "AES-256-CBC"}) {
    SCOPED_TRACE(algorithm);
    CipherPtr cipher = env_->Aesmux(algorithm);
    ASSERT_NE(cipher, nullptr);
    const uint64_t mb_before = env_->Stat(algorithm, "mb", "requests");
    const uint64_t fallback_before = env_->Stat(algorithm, "fallback", "requests");
    const Bytes key = RandomBytes(
        rng_, static_cast<size_t>(EVP_CIPHER_get_key_length(cipher.get())));
    for (size_t numpipes = 1; numpipes <= EVP_MAX_PIPES; ++numpipes) {
      for (bool padding : {true, false}) {
        SCOPED_TRACE(testing::Message() << numpipes << " pipes, padding " << padding);
        CipherCtxPtr ctx = NewCipherCtx();
        for (int message = 0; message < 2; ++message) {
          SCOPED_TRACE(message == 0 ? "first message" : "second message, no key");
          const size_t updates = 1 + rng_() % 3;
          std::vector<Bytes> ivs(numpipes), wanted(numpipes), got(numpipes);
          std::vector<std::vector<Bytes>> pieces(numpipes);
          std::vector<const unsigned char *> iv_ptrs(numpipes);
          for (size_t i = 0; i < numpipes; ++i) {
            ivs[i] = RandomBytes(rng_, kBlock);
            iv_ptrs[i] = ivs[i].data();
            Bytes all;
            for (size_t u = 0; u < updates; ++u) {
              pieces[i].push_back(RandomBytes(rng_, kBlock * (rng_() % 70)));
              all.insert(all.end(), pieces[i].back().begin(), pieces[i].back().end());
            }
            wanted[i] = DefaultEncrypt(*env_, algorithm, key, ivs[i], all, padding);
          }
          ASSERT_EQ(EVP_CipherPipelineEncryptInit(
                        ctx.get(), message == 0 ? cipher.get() : nullptr,
                        message == 0 ? key.data() : nullptr, key.size(),
                        numpipes, iv_ptrs.data(), kBlock),
                    1)
              << TakeErrors();
          ASSERT_EQ(EVP_CIPHER_CTX_set_padding(ctx.get(), padding), 1);
          for (size_t u = 0; u < updates; ++u) {
            std::vector<Bytes> buffers(numpipes);
            std::vector<unsigned char *> out(numpipes);
            std::vector<const unsigned char *> in(numpipes);
            std::vector<size_t> outl(numpipes), outsize(numpipes), inl(numpipes);
            for (size_t i = 0; i < numpipes; ++i) {
              buffers[i].assign(pieces[i][u].size() + 1, 0);
              out[i] = buffers[i].data();
              outsize[i] = pieces[i][u].size();
              in[i] = pieces[i][u].data();
              inl[i] = pieces[i][u].size();
            }
            ASSERT_EQ(EVP_CipherPipelineUpdate(ctx.get(), out.data(), outl.data(),
                                               outsize.data(), in.data(),
                                               inl.data()),
                      1)
                << TakeErrors();
            for (size_t i = 0; i < numpipes; ++i) {
              got[i].insert(got[i].end(), out[i], out[i] + outl[i]);
            }
          }
          std::vector<Bytes> finals(numpipes, Bytes(kBlock));
          std::vector<unsigned char *> out(numpipes);
          std::vector<size_t> outl(numpipes), outsize(numpipes, kBlock);
          for (size_t i = 0; i < numpipes; ++i) out[i] = finals[i].data();
          ASSERT_EQ(EVP_CipherPipelineFinal(ctx.get(), out.data(), outl.data(),
                                            outsize.data()),
                    1)
              << TakeErrors();
          for (size_t i = 0; i < numpipes; ++i) {
            got[i].insert(got[i].end(), out[i], out[i] + outl[i]);
            ASSERT_EQ(ToHex(got[i]), ToHex(wanted[i])) << "pipe " << i;
          }
        }
      }
    }
    if (GetParam().kernels == "none") {
      EXPECT_GT(env_->Stat(algorithm, "fallback", "requests"), fallback_before);
      EXPECT_EQ(env_->Stat(algorithm, "mb", "requests"), mb_before);
    } else {
      EXPECT_GT(env_->Stat(algorithm, "mb", "requests"), mb_before);
    }
  }
}

// What EVP refuses before aesmux is asked (more than 32 pipes, decryption,
// a provider without the pipeline), and what aesmux refuses (no pipes, an
// IV of another length, a pipe that is not whole blocks), as errors.
TEST_P(EvpPipelineTest, RefusalsAreErrors) {
  const Bytes key(16, 0x42), iv(kBlock, 0x24);
  std::vector<const unsigned char *> ivs(EVP_MAX_PIPES + 1, iv.data());
  CipherPtr ours = env_->Aesmux("AES-128-CBC"), theirs = env_->Default("AES-128-CBC");
  auto init = [&](const EVP_CIPHER *cipher, size_t numpipes, size_t ivlen,
                  bool encrypt) {
    CipherCtxPtr ctx = NewCipherCtx();
    const int result =
        encrypt ? EVP_CipherPipelineEncryptInit(ctx.get(), cipher, key.data(),
                                                16, numpipes, ivs.data(), ivlen)
                : EVP_CipherPipelineDecryptInit(ctx.get(), cipher, key.data(),
                                                16, numpipes, ivs.data(), ivlen);
    const unsigned long error = ERR_peek_last_error();
    ERR_clear_error();
    return std::pair(result, error);
  };
  EXPECT_EQ(init(ours.get(), 4, kBlock, true).first, 1);
  for (auto [what, result] :
       {std::pair("33 pipes", init(ours.get(), EVP_MAX_PIPES + 1, kBlock, true)),
        std::pair("decryption", init(ours.get(), 4, kBlock, false)),
        std::pair("the default provider", init(theirs.get(), 4, kBlock, true)),
        std::pair("no pipes", init(ours.get(), 0, kBlock, true)),
        std::pair("a 12-byte IV", init(ours.get(), 4, 12, true))}) {
    SCOPED_TRACE(what);
    EXPECT_EQ(result.first, 0);
    EXPECT_NE(result.second, 0u) << "no error raised";
  }

  CipherCtxPtr ctx = NewCipherCtx();
  ASSERT_EQ(EVP_CipherPipelineEncryptInit(ctx.get(), ours.get(), key.data(), 16,
                                          2, ivs.data(), kBlock),
            1);
  Bytes a(32, 1), b(32, 2), sink_a(48), sink_b(48);
  unsigned char *out[] = {sink_a.data(), sink_b.data()};
  const unsigned char *in[] = {a.data(), b.data()};
  size_t outl[2], outsize[] = {48, 48}, ragged[] = {32, 17};
  EXPECT_EQ(EVP_CipherPipelineUpdate(ctx.get(), out, outl, outsize, in, ragged), 0);
  EXPECT_NE(ERR_peek_last_error(), 0u);
  ERR_clear_error();
}

INSTANTIATE_TEST_SUITE_P(Kernels, EvpPipelineTest,
                         testing::ValuesIn(AllKernelConfigs()),
                         KernelConfigName);

#else

TEST(EvpPipelineTest, NeedsOpenSsl35Headers) {
  GTEST_SKIP() << "built against OpenSSL " OPENSSL_VERSION_STR
                  " headers: EVP_CipherPipeline* came with 3.5 "
                  "(pipeline_test calls the same dispatch functions)";
}

#endif

}  // namespace
}  // namespace aesmux::test
