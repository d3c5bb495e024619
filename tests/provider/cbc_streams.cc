// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
#include "tests/provider/cbc_streams.h"

#include <gtest/gtest.h>

#include "kernels/mb/lane_manager.h"
#include "provider/core/process.h"

namespace aesmux::test {

namespace {

// The default provider's ciphertext of the whole stream.
Bytes ReferenceCiphertext(const ProviderEnv &env, const Stream &stream) {
  CipherPtr reference = env.Default(stream.algorithm);
  auto ctx = NewCipherCtx();
  EXPECT_TRUE(EVP_EncryptInit_ex2(ctx.get(), reference.get(), stream.key.data(),
                                  stream.iv.data(), nullptr));
  EVP_CIPHER_CTX_set_padding(ctx.get(), 0);
  Bytes expected;
  for (const Bytes &message : stream.messages) {
    Bytes out(message.size());
    int len = 0;
    EXPECT_TRUE(EVP_EncryptUpdate(ctx.get(), out.data(), &len, message.data(),
                                  message.size()));
    expected.insert(expected.end(), out.begin(), out.end());
  }
  return expected;
}

}  // namespace

Stream MakeStream(const ProviderEnv &env, std::mt19937_64 &rng,
                  size_t max_blocks, int max_messages) {
  Stream stream;
  stream.algorithm = kCbcAlgorithms[rng() % 3];
  CipherPtr reference = env.Default(stream.algorithm);
  stream.key = RandomBytes(rng, EVP_CIPHER_get_key_length(reference.get()));
  stream.iv = RandomBytes(rng, 16);
  const int count = 1 + static_cast<int>(rng() % max_messages);
  for (int i = 0; i < count; ++i) {
    stream.messages.push_back(RandomBytes(rng, 16 * (rng() % (max_blocks + 1))));
  }
  stream.expected = ReferenceCiphertext(env, stream);
  return stream;
}

Stream OneMessageStream(const ProviderEnv &env, std::mt19937_64 &rng,
                        const char *algorithm, size_t blocks) {
  CipherPtr reference = env.Default(algorithm);
  Stream stream{algorithm,
                RandomBytes(rng, EVP_CIPHER_get_key_length(reference.get())),
                RandomBytes(rng, 16),
                {RandomBytes(rng, 16 * blocks)},
                {}};
  stream.expected = ReferenceCiphertext(env, stream);
  return stream;
}

Bytes EncryptThroughAesmux(const ProviderEnv &env, const Stream &stream) {
  return EncryptThrough(env.Aesmux(stream.algorithm).get(), stream);
}

Bytes EncryptThrough(const EVP_CIPHER *cipher, const Stream &stream) {
  auto ctx = NewCipherCtx();
  Bytes result;
  if (!EVP_EncryptInit_ex2(ctx.get(), cipher, stream.key.data(),
                           stream.iv.data(), nullptr)) {
    return result;
  }
  EVP_CIPHER_CTX_set_padding(ctx.get(), 0);
  for (const Bytes &message : stream.messages) {
    Bytes out(message.size());
    int len = 0;
    if (!EVP_EncryptUpdate(ctx.get(), out.data(), &len, message.data(),
                           message.size())) {
      return {};
    }
    result.insert(result.end(), out.begin(), out.end());
  }
  return result;
}

namespace {

// FNV-1a over `bytes`, continuing from `digest`.
uint64_t Fold(uint64_t digest, const uint8_t *bytes, size_t len) {
  for (size_t i = 0; i < len; ++i) {
    digest = (digest ^ bytes[i]) * 0x100000001b3ull;
  }
  return digest;
}

}  // namespace

uint64_t EncryptRecords(EVP_CIPHER *cipher, const Bytes &key, const Bytes &iv,
                        const Bytes &record, uint64_t &count,
                        const std::atomic<bool> *stop,
                        const std::function<void()> &between) {
  auto ctx = NewCipherCtx();
  uint64_t digest = 0xcbf29ce484222325ull;
  if (!EVP_EncryptInit_ex2(ctx.get(), cipher, key.data(), iv.data(),
                           nullptr)) {
    return 0;
  }
  EVP_CIPHER_CTX_set_padding(ctx.get(), 0);
  Bytes out(record.size());
  uint64_t done = 0;
  while (stop != nullptr ? !stop->load() || done == 0 : done < count) {
    if (between) between();
    int len = 0;
    if (!EVP_EncryptUpdate(ctx.get(), out.data(), &len, record.data(),
                           static_cast<int>(record.size()))) {
      return 0;
    }
    digest = Fold(digest, out.data(), out.size());
    ++done;
  }
  count = done;
  return digest;
}

BatchCounts Counts(const ProviderEnv &env) {
  BatchCounts counts;
  for (const char *alg : kCbcAlgorithms) {
    counts.mb_requests += env.Stat(alg, "mb", "requests");
    counts.simd_requests += env.Stat(alg, "simd", "requests");
    counts.batches += env.Stat(alg, "mb.batches");
    counts.lanes += env.Stat(alg, "mb.lanes");
  }
  return counts;
}

int UsableCpus() { return static_cast<int>(aesmux::core::UsableCpus()); }

std::vector<KernelConfig> MultiBufferConfigs() {
  std::vector<KernelConfig> configs;
  for (const KernelConfig &config : AllKernelConfigs()) {
    if (!config.routes() && config.kernels != "none") configs.push_back(config);
  }
  return configs;
}

void MultiBufferTest::SetUp() {
  const std::string unsupported = UnsupportedReason(GetParam());
  if (!unsupported.empty()) GTEST_SKIP() << unsupported;
  const kernels::Tier *tier = kernels::TierByName(GetParam().kernels);
  if (tier == nullptr || tier->mb.lanes == 0) {
    GTEST_SKIP() << "tier " << GetParam().kernels
                 << " has no multi-buffer kernels";
  }
  std::string error;
  env_ = LoadAesmux(GetParam(), &error,
                    {"cbc.mb_min_len = 0", "cbc.mb_threads_min_len = 0"});
  ASSERT_NE(env_, nullptr) << error;
}

}  // namespace aesmux::test
