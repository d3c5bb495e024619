// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
// OpenSSL 3.5's cipher pipeline API, through aesmux's dispatch table.
//
// Debian 12's libcrypto (3.0) never calls the pipeline functions, so these
// tests call them the way a 3.5 libcrypto does (EVP_CipherPipeline*Init,
// Update, Final are thin wrappers over them): the functions are found by
// their ids in the AES-*-CBC dispatch tables of the aesmux.so built here,
// loaded as a provider. Every pipe must equal the default provider's
// encryption of that pipe alone, for 1..32 pipes of mixed lengths, one or
// several updates, with and without padding, under every kernel
// configuration.
#include <gtest/gtest.h>
#include <openssl/core_dispatch.h>
#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/params.h>
#include <openssl/provider.h>

#include <cstring>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "provider/openssl/dispatch.h"
#include "tests/provider/kernel_configs.h"
#include "tests/support/bytes.h"
#include "tests/support/provider_env.h"

namespace aesmux::test {
namespace {

// The pipeline functions' signatures (OpenSSL 3.5's core_dispatch.h).
using PipelineInitFn = int(void *ctx, const unsigned char *key, size_t keylen,
                           size_t numpipes, const unsigned char **iv,
                           size_t ivlen, const OSSL_PARAM params[]);
using PipelineUpdateFn = int(void *ctx, size_t numpipes, unsigned char **out,
                             size_t *outl, const size_t *outsize,
                             const unsigned char **in, const size_t *inl);
using PipelineFinalFn = int(void *ctx, size_t numpipes, unsigned char **out,
                            size_t *outl, const size_t *outsize);

constexpr size_t kMaxPipes = 32;  // EVP_MAX_PIPES
constexpr size_t kBlock = 16;

// One algorithm's functions from aesmux's dispatch table.
struct Pipeline {
  void *provctx = nullptr;
  OSSL_FUNC_cipher_newctx_fn *newctx = nullptr;
  OSSL_FUNC_cipher_freectx_fn *freectx = nullptr;
  PipelineInitFn *init = nullptr;
  PipelineUpdateFn *update = nullptr;
  PipelineFinalFn *final = nullptr;
  bool has_decrypt = false;

  bool complete() const {
    return newctx && freectx && init && update && final;
  }
};

Pipeline FindPipeline(const ProviderEnv &env, std::string_view algorithm) {
  Pipeline p;
  p.provctx = OSSL_PROVIDER_get0_provider_ctx(env.aesmux());
  int no_cache = 0;
  const OSSL_ALGORITHM *algorithms =
      OSSL_PROVIDER_query_operation(env.aesmux(), OSSL_OP_CIPHER, &no_cache);
  for (const OSSL_ALGORITHM *a = algorithms; a && a->algorithm_names; ++a) {
    const std::string_view names(a->algorithm_names);
    if (!names.starts_with(algorithm) || names[algorithm.size()] != ':') {
      continue;
    }
    for (const OSSL_DISPATCH *f = a->implementation; f->function_id; ++f) {
      switch (f->function_id) {
        case OSSL_FUNC_CIPHER_NEWCTX:
          p.newctx = OSSL_FUNC_cipher_newctx(f);
          break;
        case OSSL_FUNC_CIPHER_FREECTX:
          p.freectx = OSSL_FUNC_cipher_freectx(f);
          break;
        case OSSL_FUNC_CIPHER_PIPELINE_ENCRYPT_INIT:
          p.init = reinterpret_cast<PipelineInitFn *>(f->function);
          break;
        case OSSL_FUNC_CIPHER_PIPELINE_DECRYPT_INIT:
          p.has_decrypt = true;
          break;
        case OSSL_FUNC_CIPHER_PIPELINE_UPDATE:
          p.update = reinterpret_cast<PipelineUpdateFn *>(f->function);
          break;
        case OSSL_FUNC_CIPHER_PIPELINE_FINAL:
          p.final = reinterpret_cast<PipelineFinalFn *>(f->function);
          break;
      }
    }
  }
  OSSL_PROVIDER_unquery_operation(env.aesmux(), OSSL_OP_CIPHER, algorithms);
  return p;
}

// A provider cipher context, freed with its table's freectx.
class AlgCtx {
 public:
  explicit AlgCtx(const Pipeline &p) : p_(p), ctx_(p.newctx(p.provctx)) {}
  ~AlgCtx() {
    if (ctx_ != nullptr) p_.freectx(ctx_);
  }
  AlgCtx(const AlgCtx &) = delete;
  AlgCtx &operator=(const AlgCtx &) = delete;
  void *get() const { return ctx_; }

 private:
  const Pipeline &p_;
  void *ctx_;
};

// One pipe: its IV, the plaintext of each update, and the default
// provider's encryption of all of it in one record.
struct Pipe {
  Bytes iv;
  std::vector<Bytes> pieces;
  Bytes expected;
};


// Lengths of every kind: empty, one block, a few, around the multi-buffer
// threshold's typical record sizes, and now and then large.
size_t RandomLength(std::mt19937_64 &rng) {
  const size_t r = rng() % 100;
  const size_t blocks = r < 10   ? 0
                        : r < 40 ? 1 + rng() % 4
                        : r < 85 ? rng() % 128
                        : r < 97 ? rng() % 1100
                                 : 4096 + rng() % 512;
  return blocks * kBlock;
}

class PipelineTest : public testing::TestWithParam<KernelConfig> {
 protected:
  void SetUp() override {
    if (const std::string reason = UnsupportedReason(GetParam());
        !reason.empty()) {
      GTEST_SKIP() << reason;
    }
    std::string error;
    env_ = LoadAesmux(GetParam(), &error);
    ASSERT_NE(env_, nullptr) << error;
  }

  uint64_t Counter(const char *algorithm, const char *path) const {
    return env_->Stat(algorithm, path, "requests");
  }

  std::unique_ptr<ProviderEnv> env_;
};

const char *const kCbcAlgorithms[] = {"AES-128-CBC", "AES-192-CBC",
                                      "AES-256-CBC"};

TEST_P(PipelineTest, CbcTablesOfferEncryptionPipelines) {
  for (const char *algorithm : kCbcAlgorithms) {
    const Pipeline p = FindPipeline(*env_, algorithm);
    EXPECT_TRUE(p.complete()) << algorithm;
    // OpenSSL 3.5 accepts pipeline init, update and final without the
    // decrypt init, and offers the pipeline for encryption only then.
    EXPECT_FALSE(p.has_decrypt) << algorithm;
  }
  EXPECT_FALSE(FindPipeline(*env_, "AES-128-GCM").complete());
}

// 1..32 pipes of mixed lengths, each pipe in 1..3 updates (whole blocks per
// update, as the pipeline requires), with and without padding: every pipe
// equals the default provider's encryption of it alone.
TEST_P(PipelineTest, EveryPipeEqualsTheDefaultProvidersSingleRecord) {
  std::mt19937_64 rng(0x70697065);
  for (const char *algorithm : kCbcAlgorithms) {
    SCOPED_TRACE(algorithm);
    const Pipeline p = FindPipeline(*env_, algorithm);
    ASSERT_TRUE(p.complete());
    const uint64_t mb_before = Counter(algorithm, "mb");
    const uint64_t fallback_before = Counter(algorithm, "fallback");
    const size_t key_len = static_cast<size_t>(
        EVP_CIPHER_get_key_length(env_->Default(algorithm).get()));
    for (size_t numpipes = 1; numpipes <= kMaxPipes; ++numpipes) {
      for (bool padding : {true, false}) {
        SCOPED_TRACE(testing::Message() << numpipes << " pipes, padding "
                                        << padding);
        const Bytes key = RandomBytes(rng, key_len);
        const size_t updates = 1 + rng() % 3;
        std::vector<Pipe> pipes(numpipes);
        for (Pipe &pipe : pipes) {
          pipe.iv = RandomBytes(rng, kBlock);
          Bytes all;
          for (size_t u = 0; u < updates; ++u) {
            pipe.pieces.push_back(RandomBytes(rng, RandomLength(rng)));
            all.insert(all.end(), pipe.pieces.back().begin(),
                       pipe.pieces.back().end());
          }
          pipe.expected =
              DefaultEncrypt(*env_, algorithm, key, pipe.iv, all, padding);
        }

        AlgCtx ctx(p);
        ASSERT_NE(ctx.get(), nullptr);
        const unsigned char *ivs[kMaxPipes];
        for (size_t i = 0; i < numpipes; ++i) ivs[i] = pipes[i].iv.data();
        unsigned int pad = padding ? 1 : 0;
        const OSSL_PARAM params[] = {
            OSSL_PARAM_construct_uint(OSSL_CIPHER_PARAM_PADDING, &pad),
            OSSL_PARAM_END};
        ASSERT_EQ(p.init(ctx.get(), key.data(), key.size(), numpipes, ivs,
                         kBlock, params),
                  1)
            << TakeErrors();

        std::vector<Bytes> outputs(numpipes);
        for (size_t u = 0; u < updates; ++u) {
          unsigned char *out[kMaxPipes];
          const unsigned char *in[kMaxPipes];
          size_t outl[kMaxPipes], outsize[kMaxPipes], inl[kMaxPipes];
          std::vector<Bytes> buffers(numpipes);
          for (size_t i = 0; i < numpipes; ++i) {
            const Bytes &piece = pipes[i].pieces[u];
            buffers[i].assign(piece.size() + 1, 0);  // never a null pointer
            out[i] = buffers[i].data();
            outsize[i] = piece.size();
            in[i] = piece.data();
            inl[i] = piece.size();
          }
          ASSERT_EQ(p.update(ctx.get(), numpipes, out, outl, outsize, in, inl),
                    1)
              << "update " << u << ": " << TakeErrors();
          for (size_t i = 0; i < numpipes; ++i) {
            ASSERT_EQ(outl[i], inl[i]) << "pipe " << i;
            outputs[i].insert(outputs[i].end(), out[i], out[i] + outl[i]);
          }
        }
        unsigned char *out[kMaxPipes];
        size_t outl[kMaxPipes], outsize[kMaxPipes];
        std::vector<Bytes> finals(numpipes, Bytes(kBlock));
        for (size_t i = 0; i < numpipes; ++i) {
          out[i] = finals[i].data();
          outsize[i] = kBlock;
        }
        ASSERT_EQ(p.final(ctx.get(), numpipes, out, outl, outsize), 1)
            << TakeErrors();
        for (size_t i = 0; i < numpipes; ++i) {
          ASSERT_EQ(outl[i], padding ? kBlock : 0u) << "pipe " << i;
          outputs[i].insert(outputs[i].end(), out[i], out[i] + outl[i]);
          ASSERT_EQ(ToHex(outputs[i].data(), outputs[i].size()),
                    ToHex(pipes[i].expected.data(), pipes[i].expected.size()))
              << "pipe " << i;
        }
      }
    }
    // Multi-buffer lanes where there is a tier, the fallback path without.
    if (GetParam().kernels == "none") {
      EXPECT_GT(Counter(algorithm, "fallback"), fallback_before);
      EXPECT_EQ(Counter(algorithm, "mb"), mb_before);
    } else {
      EXPECT_GT(Counter(algorithm, "mb"), mb_before);
    }
  }
}

// What the pipeline refuses: no pipes, more than 32, an update or final
// with another pipe count, before a key, a pipe that is not whole blocks,
// an output buffer too small, an IV of another length.
TEST_P(PipelineTest, RefusesWhatItCannotDo) {
  const Pipeline p = FindPipeline(*env_, "AES-128-CBC");
  ASSERT_TRUE(p.complete());
  const Bytes key(16, 0x11);
  const Bytes iv(kBlock, 0x22);
  const unsigned char *ivs[kMaxPipes + 1];
  for (auto &v : ivs) v = iv.data();
  Bytes data(64, 0x33), sink(80, 0);
  unsigned char *out[2] = {sink.data(), sink.data()};
  const unsigned char *in[2] = {data.data(), data.data()};
  size_t outl[2], outsize[2] = {64, 64}, inl[2] = {32, 32};

  {
    AlgCtx ctx(p);
    EXPECT_EQ(p.update(ctx.get(), 2, out, outl, outsize, in, inl), 0)
        << "update before init";
    EXPECT_EQ(p.init(ctx.get(), key.data(), 16, 0, ivs, kBlock, nullptr), 0);
    EXPECT_EQ(p.init(ctx.get(), key.data(), 16, kMaxPipes + 1, ivs, kBlock,
                     nullptr),
              0);
    EXPECT_EQ(p.init(ctx.get(), key.data(), 16, 2, ivs, 12, nullptr), 0);
    EXPECT_EQ(p.init(ctx.get(), key.data(), 15, 2, ivs, kBlock, nullptr), 0);
    TakeErrors();
  }
  AlgCtx ctx(p);
  ASSERT_EQ(p.init(ctx.get(), key.data(), 16, 2, ivs, kBlock, nullptr), 1);
  EXPECT_EQ(p.update(ctx.get(), 1, out, outl, outsize, in, inl), 0)
      << "another pipe count";
  size_t ragged[2] = {32, 17};
  EXPECT_EQ(p.update(ctx.get(), 2, out, outl, outsize, in, ragged), 0)
      << "not whole blocks";
  size_t small[2] = {64, 16};
  EXPECT_EQ(p.update(ctx.get(), 2, out, outl, small, in, inl), 0)
      << "output too small";
  size_t final_small[2] = {16, 15};
  EXPECT_EQ(p.final(ctx.get(), 2, out, outl, final_small), 0)
      << "final output too small";
  EXPECT_EQ(p.update(ctx.get(), 2, out, outl, outsize, in, inl), 1)
      << TakeErrors();
  TakeErrors();
}

INSTANTIATE_TEST_SUITE_P(Kernels, PipelineTest,
                         testing::ValuesIn(AllKernelConfigs()),
                         KernelConfigName);

}  // namespace
}  // namespace aesmux::test
