// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
// The afalg path against the default provider: every algorithm and key
// size, both directions, random lengths and update splits, in place and
// out of place, with the afalg path forced. Every request must be served
// by the kernel (or handed on for a counted reason) and agree byte for
// byte with OpenSSL's default provider.
#include <gtest/gtest.h>

#include <array>

#include <random>

#include "kernels/tiers.h"
#include "provider/core/algorithm.h"
#include "tests/afalg/afalg_support.h"

namespace aesmux::test {
namespace {

class AfalgPathTest : public ::testing::TestWithParam<core::AlgInfo> {
 protected:
  static void SetUpTestSuite() {
    if (!AfalgUnavailableReason().empty()) return;
    env_ = LoadAfalgEnv().release();
  }
  static void TearDownTestSuite() {
    delete env_;
    env_ = nullptr;
  }
  void SetUp() override {
    SKIP_WITHOUT_AFALG();
    ASSERT_NE(env_, nullptr);
    ASSERT_TRUE(env_->loaded()) << env_->error();
    const std::string family(core::FamilyName(GetParam().family));
    ASSERT_TRUE(env_->ProviderParam(("afalg." + family).c_str())
                    .starts_with("on (force)"))
        << env_->ProviderParam(("afalg." + family).c_str());
  }
  static ProviderEnv *env_;
};
ProviderEnv *AfalgPathTest::env_ = nullptr;

TEST_P(AfalgPathTest, AgreesWithTheDefaultProvider) {
  const core::AlgInfo &alg = GetParam();
  const std::string name(alg.name);
  CipherPtr ours = env_->Aesmux(name);
  CipherPtr theirs = env_->Default(name);
  ASSERT_NE(ours, nullptr);
  ASSERT_NE(theirs, nullptr);
  std::mt19937_64 rng(static_cast<uint64_t>(alg.alg) * 7919 + 1);
  const bool stream = alg.family == core::Family::kCtr;
  const bool xts = alg.family == core::Family::kXts;
  const size_t block = stream ? 1 : 16;
  // The statistics are the process's: earlier tests' hand-offs (a fork
  // under way refuses requests as if the ring were full) are not this one's.
  const auto handed_off = [&](core::Handoff handoff) {
    return env_->Stat(name,
                      "afalg-fallback:" + std::string(core::HandoffName(handoff)),
                      "requests");
  };
  std::array<uint64_t, core::kNumHandoffs> handed_off_before{};
  for (size_t h = 0; h < core::kNumHandoffs; ++h) {
    handed_off_before[h] = handed_off(static_cast<core::Handoff>(h));
  }
  const uint64_t served_before = env_->Stat(name, "afalg", "requests");
  for (int round = 0; round < 24; ++round) {
    size_t len = 1 + rng() % (round < 20 ? 4096 : 70000);
    if (!stream && !xts) len = (len + 15) & ~size_t{15};
    if (xts && len < 16) len = 16;
    Bytes key = RandomBytes(rng, alg.key_len);
    if (xts) key[0] ^= key[alg.key_len / 2] ^ 1;  // halves differ
    const Bytes iv = alg.family == core::Family::kEcb ? Bytes{}
                                                        : RandomBytes(rng, 16);
    const Bytes plain = RandomBytes(rng, len);
    const std::vector<size_t> splits =
        xts ? std::vector<size_t>{} : RandomSplits(rng, len, block);
    const bool in_place = round % 2 == 1;
    SCOPED_TRACE(testing::Message() << name << " len " << len << " splits "
                                    << splits.size() << (in_place ? " in place" : ""));
    const Bytes expected = EvpCrypt(theirs.get(), key, iv, plain, true, {}, false);
    ASSERT_EQ(expected.size(), len);
    EXPECT_EQ(ToHex(EvpCrypt(ours.get(), key, iv, plain, true, splits, in_place)),
              ToHex(expected));
    EXPECT_EQ(ToHex(EvpCrypt(ours.get(), key, iv, expected, false, splits,
                             in_place)),
              ToHex(plain));
  }
  EXPECT_GT(env_->Stat(name, "afalg", "requests"), served_before + 24);
  // Only XTS data units beyond one AF_ALG request are handed on.
  for (size_t h = 0; h < core::kNumHandoffs; ++h) {
    const auto handoff = static_cast<core::Handoff>(h);
    if (xts && handoff == core::Handoff::kTooLong) continue;
    EXPECT_EQ(handed_off(handoff), handed_off_before[h])
        << core::HandoffName(handoff);
  }
}

// EVP_Cipher (OpenSSH's call) on CBC and CTR, in place, packet by packet.
class AfalgPacketTest : public AfalgPathTest {};

TEST_P(AfalgPacketTest, EvpCipherPacketsInPlace) {
  const core::AlgInfo &alg = GetParam();
  const std::string name(alg.name);
  std::mt19937_64 rng(42);
  const Bytes key = RandomBytes(rng, alg.key_len), iv = RandomBytes(rng, 16);
  auto ours = NewCipherCtx(), theirs = NewCipherCtx();
  CipherPtr ours_cipher = env_->Aesmux(name), theirs_cipher = env_->Default(name);
  ASSERT_TRUE(EVP_CipherInit_ex2(ours.get(), ours_cipher.get(), key.data(),
                                 iv.data(), 1, nullptr));
  ASSERT_TRUE(EVP_CipherInit_ex2(theirs.get(), theirs_cipher.get(), key.data(),
                                 iv.data(), 1, nullptr));
  for (int packet = 0; packet < 16; ++packet) {
    Bytes data = RandomBytes(rng, 16 * (1 + rng() % 2048));
    Bytes reference(data.size());
    ASSERT_GT(EVP_Cipher(theirs.get(), reference.data(), data.data(),
                         static_cast<unsigned>(data.size())),
              0);
    ASSERT_GT(EVP_Cipher(ours.get(), data.data(), data.data(),
                         static_cast<unsigned>(data.size())),
              0);
    ASSERT_EQ(ToHex(data), ToHex(reference)) << "packet " << packet;
  }
}

std::string AlgName(const testing::TestParamInfo<core::AlgInfo> &info) {
  std::string name(info.param.name);
  for (char &c : name) {
    if (c == '-') c = '_';
  }
  return name;
}

INSTANTIATE_TEST_SUITE_P(Algorithms, AfalgPathTest,
                         ::testing::ValuesIn(core::kAlgs.begin(),
                                             core::kAlgs.end() - 3),
                         AlgName);

// CBC and CTR only: what OpenSSH sends through EVP_Cipher.
INSTANTIATE_TEST_SUITE_P(SshModes, AfalgPacketTest,
                         ::testing::ValuesIn(core::kAlgs.begin() + 3,
                                             core::kAlgs.begin() + 9),
                         AlgName);

// afalg_min_len at its boundary: requests (GCM: messages, AAD included)
// of T - 1, T and T + 1 bytes (ECB and CBC: whole blocks on both sides of
// thresholds on and one past a block boundary) go to the afalg path from T
// on, as the statistics count them; below T to the CPU's path: the kernels
// where this CPU has a tier, else the fallback (OpenSSL's default
// provider). Encryption only for GCM: a decryption reaches the kernel only
// with its tag set before the payload.
TEST(AfalgBoundaryTest, AfalgMinLenIsAtLeast) {
  SKIP_WITHOUT_AFALG();
  const char *const cpu_path =
      kernels::BestTier(kernels::DetectCpuFeatures()) != nullptr ? "simd"
                                                                 : "fallback";
  for (const core::AlgInfo &alg : core::kAlgs) {
    const bool blocks = alg.family == core::Family::kEcb ||
                        alg.family == core::Family::kCbc;
    const bool gcm = alg.family == core::Family::kGcm;
    const std::string family(core::FamilyName(alg.family));
    for (const uint64_t threshold :
         blocks ? std::vector<uint64_t>{4096, 4097}
                : std::vector<uint64_t>{4096}) {
      // The threshold is a family's key: a bare afalg_min_len is unknown.
      auto env = LoadAfalgEnv({"afalg = force",
                               family + ".afalg_min_len = " +
                                   std::to_string(threshold)});
      ASSERT_TRUE(env->loaded()) << env->error();
      const std::string state = env->ProviderParam(("afalg." + family).c_str());
      ASSERT_TRUE(state.starts_with("on (force) from " +
                                    std::to_string(threshold) + " bytes"))
          << state;
      CipherPtr cipher = env->Aesmux(std::string(alg.name));
      ASSERT_NE(cipher, nullptr);
      const std::vector<uint64_t> lengths =
          blocks ? std::vector<uint64_t>{4080, 4096, 4112}
                 : std::vector<uint64_t>{threshold - 1, threshold,
                                         threshold + 1};
      for (const uint64_t len : lengths) {
        for (const bool encrypt : {true, false}) {
          if (gcm && !encrypt) continue;
          SCOPED_TRACE(std::string(alg.name) + " " + std::to_string(len) +
                       " B, afalg_min_len " + std::to_string(threshold));
          const uint64_t afalg = env->Stat(alg.name, "afalg", "requests");
          const uint64_t cpu = env->Stat(alg.name, cpu_path, "requests");
          const uint64_t refused = env->Stat(
              alg.name, "afalg-fallback:key_refused", "requests");
          Bytes key(alg.key_len), iv(16, 2), in(len, 3), out(len + 16);
          for (size_t i = 0; i < key.size(); ++i) {
            key[i] = static_cast<uint8_t>(i + 1);
          }
          CipherCtxPtr ctx = NewCipherCtx();
          int out_len = 0;
          ASSERT_TRUE(EVP_CipherInit_ex2(ctx.get(), cipher.get(), key.data(),
                                         iv.data(), encrypt, nullptr));
          EVP_CIPHER_CTX_set_padding(ctx.get(), 0);
          const size_t aad = gcm ? 13 : 0;
          if (gcm) {
            ASSERT_TRUE(EVP_CipherUpdate(ctx.get(), nullptr, &out_len,
                                         in.data(), 13));
          }
          ASSERT_TRUE(EVP_CipherUpdate(ctx.get(), out.data(), &out_len,
                                       in.data(),
                                       static_cast<int>(len - aad)));
          if (gcm) {
            ASSERT_TRUE(EVP_CipherFinal_ex(ctx.get(), out.data(), &out_len));
          }
          // An offload device out of sessions refuses a key; its requests
          // run on the CPU (key_refused), as offload_test checks.
          const bool on_afalg =
              len >= threshold &&
              env->Stat(alg.name, "afalg-fallback:key_refused",
                        "requests") == refused;
          EXPECT_EQ(env->Stat(alg.name, "afalg", "requests"),
                    afalg + (on_afalg ? 1 : 0));
          EXPECT_EQ(env->Stat(alg.name, cpu_path, "requests"),
                    cpu + (on_afalg ? 0 : 1))
              << cpu_path;
        }
      }
    }
  }
}

}  // namespace
}  // namespace aesmux::test
