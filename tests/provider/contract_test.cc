// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
// The EVP contract details of the default provider that aesmux reproduces:
// algorithm constants and names, multi-step init, IV parameters, num,
// padding, EVP_Cipher(), dupctx, GCM's IV state machine and XTS limits.
// Every check runs under each kernel configuration.
#define OPENSSL_SUPPRESS_DEPRECATED  // EVP_CIPHER_CTX_iv() & co. are tested
#include <gtest/gtest.h>
#include <openssl/core_names.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/objects.h>
#include <openssl/proverr.h>

#include <algorithm>
#include <cstring>
#include <random>
#include <vector>

#include "tests/support/bytes.h"
#include "tests/provider/kernel_configs.h"
#include "tests/support/provider_env.h"

namespace aesmux::test {
namespace {

constexpr const char *kAllAlgorithms[] = {
    "AES-128-ECB", "AES-192-ECB", "AES-256-ECB", "AES-128-CBC", "AES-192-CBC",
    "AES-256-CBC", "AES-128-CTR", "AES-192-CTR", "AES-256-CTR", "AES-128-XTS",
    "AES-256-XTS", "AES-128-GCM", "AES-192-GCM", "AES-256-GCM"};

class ContractTest : public KernelConfigTest {
 protected:
  CipherPtr Fetch(const char *name) {
    CipherPtr cipher = env_->Aesmux(name);
    EXPECT_NE(cipher, nullptr) << name;
    return cipher;
  }

  std::mt19937_64 rng_{20261130};
};

TEST_P(ContractTest, AlgorithmConstantsMatchTheDefaultProvider) {
  for (const char *name : kAllAlgorithms) {
    SCOPED_TRACE(name);
    CipherPtr ours = Fetch(name);
    CipherPtr theirs = env_->Default(name);
    ASSERT_NE(theirs, nullptr);
    EXPECT_STREQ(OSSL_PROVIDER_get0_name(EVP_CIPHER_get0_provider(ours.get())),
                 "aesmux");
    EXPECT_EQ(EVP_CIPHER_get_mode(ours.get()),
              EVP_CIPHER_get_mode(theirs.get()));
    EXPECT_EQ(EVP_CIPHER_get_flags(ours.get()),
              EVP_CIPHER_get_flags(theirs.get()));
    EXPECT_EQ(EVP_CIPHER_get_key_length(ours.get()),
              EVP_CIPHER_get_key_length(theirs.get()));
    EXPECT_EQ(EVP_CIPHER_get_iv_length(ours.get()),
              EVP_CIPHER_get_iv_length(theirs.get()));
    EXPECT_EQ(EVP_CIPHER_get_block_size(ours.get()),
              EVP_CIPHER_get_block_size(theirs.get()));
    EXPECT_EQ(EVP_CIPHER_get_nid(ours.get()), EVP_CIPHER_get_nid(theirs.get()));
  }
}

TEST_P(ContractTest, EveryAliasAndOidFindsAesmux) {
  const char *aliases[] = {"AES128",
                           "AES192",
                           "AES256",
                           "id-aes128-GCM",
                           "id-aes192-GCM",
                           "id-aes256-GCM",
                           "aes-128-cbc",
                           "AeS-256-gCm",
                           "2.16.840.1.101.3.4.1.1",
                           "2.16.840.1.101.3.4.1.42",
                           "2.16.840.1.101.3.4.1.6",
                           "1.3.111.2.1619.0.1.1",
                           "1.3.111.2.1619.0.1.2"};
  for (const char *alias : aliases) {
    SCOPED_TRACE(alias);
    CipherPtr ours = env_->Aesmux(alias);
    CipherPtr theirs = env_->Default(alias);
    ASSERT_NE(ours, nullptr);
    ASSERT_NE(theirs, nullptr);
    EXPECT_EQ(EVP_CIPHER_get_nid(ours.get()), EVP_CIPHER_get_nid(theirs.get()));
  }
  // libssl and EVP_aes_*() fetch by the short name of the legacy NID.
  for (int nid : {NID_aes_128_gcm, NID_aes_256_cbc, NID_aes_128_ctr,
                  NID_aes_256_xts, NID_aes_192_ecb}) {
    SCOPED_TRACE(OBJ_nid2sn(nid));
    EXPECT_NE(env_->Aesmux(OBJ_nid2sn(nid)), nullptr);
  }
}

// Cipher and direction first, key later, IV last: the OpenSSH pattern, and
// libssl's TLS 1.3 IV-only re-init per record; then the direction given
// once more, or (CTR, GCM) switched last. Each step and the result as the
// default provider's, and the result as one-step init's. (ECB, CBC and XTS
// switched after the key are a deliberate difference (docs/differences.md): the default
// provider keeps the old direction's schedule; see
// DirectionOnlyReinitDecryptsWithTheSameKey and reinit_test.)
TEST_P(ContractTest, MultiStepInitMatchesTheDefaultProvider) {
  for (const auto &[name, first_enc] :
       std::vector<std::pair<const char *, int>>{
           {"AES-128-CBC", 1}, {"AES-128-ECB", 1}, {"AES-256-XTS", 1},
           {"AES-256-CTR", 1}, {"AES-256-CTR", 0}, {"AES-192-GCM", 1},
           {"AES-192-GCM", 0}}) {
    SCOPED_TRACE(testing::Message() << name << " first direction "
                                    << first_enc);
    CipherPtr ciphers[2] = {Fetch(name), env_->Default(name)};
    const Bytes key =
        RandomBytes(rng_, EVP_CIPHER_get_key_length(ciphers[0].get()));
    const Bytes iv = RandomBytes(rng_, 16);
    const Bytes plain = RandomBytes(rng_, 64);
    std::string steps[2];
    Bytes outputs[2], one_step(plain.size() + 16);
    int len = 0;
    for (int side = 0; side < 2; ++side) {
      auto ctx = NewCipherCtx();
      std::string &log = steps[side];
      log += std::to_string(EVP_CipherInit_ex2(ctx.get(), ciphers[side].get(),
                                               nullptr, nullptr, first_enc,
                                               nullptr));
      log += std::to_string(EVP_CipherInit_ex2(ctx.get(), nullptr, key.data(),
                                               nullptr, -1, nullptr));
      log += std::to_string(EVP_CipherInit_ex2(ctx.get(), nullptr, nullptr,
                                               iv.data(), -1, nullptr));
      log += std::to_string(EVP_CipherInit_ex2(ctx.get(), nullptr, nullptr,
                                               nullptr, 1, nullptr));
      outputs[side].assign(plain.size() + 16, 0);
      log += std::to_string(EVP_CipherUpdate(ctx.get(), outputs[side].data(),
                                             &len, plain.data(), plain.size()));
      log += " " + std::to_string(len);
      ERR_clear_error();
    }
    EXPECT_EQ(steps[0], steps[1]);
    EXPECT_EQ(ToHex(outputs[0]), ToHex(outputs[1]));
    auto ctx = NewCipherCtx();
    ASSERT_TRUE(EVP_EncryptInit_ex2(ctx.get(), ciphers[1].get(), key.data(),
                                    iv.data(), nullptr));
    ASSERT_TRUE(EVP_EncryptUpdate(ctx.get(), one_step.data(), &len,
                                  plain.data(), plain.size()));
    EXPECT_EQ(ToHex(outputs[0]), ToHex(one_step));
  }
}

// Switching direction without a key must rebuild the decryption schedule.
// (The default provider keeps the encryption schedule and returns garbage
// here; aesmux decrypts correctly.)
TEST_P(ContractTest, DirectionOnlyReinitDecryptsWithTheSameKey) {
  for (const char *name : {"AES-128-ECB", "AES-256-CBC", "AES-128-CTR"}) {
    SCOPED_TRACE(name);
    CipherPtr cipher = Fetch(name);
    const Bytes key = RandomBytes(rng_, EVP_CIPHER_get_key_length(cipher.get()));
    const Bytes iv(16, 7);
    const Bytes plain = RandomBytes(rng_, 64);
    auto ctx = NewCipherCtx();
    Bytes cipher_text(64), round_trip(64);
    int len = 0;
    ASSERT_TRUE(EVP_CipherInit_ex2(ctx.get(), cipher.get(), key.data(),
                                   iv.data(), 1, nullptr));
    EVP_CIPHER_CTX_set_padding(ctx.get(), 0);
    ASSERT_TRUE(EVP_CipherUpdate(ctx.get(), cipher_text.data(), &len,
                                 plain.data(), 64));
    ASSERT_TRUE(EVP_CipherInit_ex2(ctx.get(), nullptr, nullptr, iv.data(), 0,
                                   nullptr));
    ASSERT_TRUE(EVP_CipherUpdate(ctx.get(), round_trip.data(), &len,
                                 cipher_text.data(), 64));
    EXPECT_EQ(round_trip, plain);
  }
}

// A CBC re-init without an IV starts again from the original IV (the
// default provider's 1.1.1 compatibility); the updated IV is the last
// ciphertext block. Every output and IV as the default provider's.
TEST_P(ContractTest, CbcReinitWithoutIvRestartsFromTheOriginalIv) {
  CipherPtr ciphers[2] = {Fetch("AES-128-CBC"), env_->Default("AES-128-CBC")};
  const Bytes key = RandomBytes(rng_, 16), iv = RandomBytes(rng_, 16);
  const Bytes plain = RandomBytes(rng_, 48);
  for (int enc : {1, 0}) {
    SCOPED_TRACE(enc);
    std::string log[2];
    for (int side = 0; side < 2; ++side) {
      auto ctx = NewCipherCtx();
      Bytes first(64), second(64), updated(16), original(16);
      int len = 0;
      ASSERT_TRUE(EVP_CipherInit_ex2(ctx.get(), ciphers[side].get(),
                                     key.data(), iv.data(), enc, nullptr));
      EVP_CIPHER_CTX_set_padding(ctx.get(), 0);
      ASSERT_TRUE(EVP_CipherUpdate(ctx.get(), first.data(), &len,
                                   plain.data(), 48));
      ASSERT_TRUE(EVP_CIPHER_CTX_get_updated_iv(ctx.get(), updated.data(), 16));
      ASSERT_TRUE(
          EVP_CIPHER_CTX_get_original_iv(ctx.get(), original.data(), 16));
      EXPECT_EQ(original, iv);
      log[side] = ToHex(first) + " " + ToHex(updated);
      for (bool with_key : {false, true}) {
        ASSERT_TRUE(EVP_CipherInit_ex2(ctx.get(), nullptr,
                                       with_key ? key.data() : nullptr,
                                       nullptr, -1, nullptr));
        ASSERT_TRUE(EVP_CipherUpdate(ctx.get(), second.data(), &len,
                                     plain.data(), 48));
        EXPECT_EQ(ToHex(second), ToHex(first));
        ASSERT_TRUE(
            EVP_CIPHER_CTX_get_updated_iv(ctx.get(), updated.data(), 16));
        log[side] += " " + ToHex(second) + " " + ToHex(updated);
      }
    }
    EXPECT_EQ(log[0], log[1]);
  }
}

// OpenSSH (through EVP_CIPHER_CTX_iv_noconst) writes the IV in place.
TEST_P(ContractTest, IvPointerParametersPointIntoTheContext) {
  CipherPtr cipher = Fetch("AES-128-CTR");
  const Bytes key = RandomBytes(rng_, 16);
  Bytes iv(16, 0);
  iv[15] = 1;
  auto ctx = NewCipherCtx();
  ASSERT_TRUE(EVP_EncryptInit_ex2(ctx.get(), cipher.get(), key.data(),
                                  iv.data(), nullptr));
  const unsigned char *running = EVP_CIPHER_CTX_iv(ctx.get());
  const unsigned char *original = EVP_CIPHER_CTX_original_iv(ctx.get());
  ASSERT_NE(running, nullptr);
  ASSERT_NE(original, nullptr);
  EXPECT_EQ(ToHex(running, 16), ToHex(iv));

  // CTR: 36 bytes from counter ...01 consume blocks 01, 02 and 4 bytes of
  // 03, so num is 4 and the running counter already reads ...04.
  Bytes out(36), in(36, 0);
  int len = 0;
  ASSERT_TRUE(EVP_EncryptUpdate(ctx.get(), out.data(), &len, in.data(), 36));
  EXPECT_EQ(EVP_CIPHER_CTX_get_num(ctx.get()), 4);
  EXPECT_EQ(running[15], 4);
  EXPECT_EQ(ToHex(original, 16), ToHex(iv));

  // Writing the counter through the pointer takes effect.
  unsigned char *writable = EVP_CIPHER_CTX_iv_noconst(ctx.get());
  ASSERT_EQ(writable, running);
  ASSERT_TRUE(EVP_CIPHER_CTX_set_num(ctx.get(), 0));
  std::memcpy(writable, iv.data(), 16);
  Bytes again(16);
  ASSERT_TRUE(EVP_EncryptUpdate(ctx.get(), again.data(), &len, in.data(), 16));
  EXPECT_EQ(ToHex(again), ToHex(out.data(), 16));
}

// CTR's num is the offset into the keystream block of the last partial
// block: EVP_CIPHER_CTX_set_num(ctx, n) for n in 0..15 makes the next 16 - n
// bytes use the rest of that block, then the counter goes on. OpenSSL 3.0.19
// accepts these (and, reading past its 16-byte block, larger values too);
// 3.0.20 and later refuse every n but 0, taking CTR's block size of 1 as
// the bound. Where the installed default provider refuses, the expected
// stream is made from its keystream.
TEST_P(ContractTest, CtrNumIsAnOffsetIntoTheKeystreamBlock) {
  CipherPtr ours = Fetch("AES-128-CTR");
  CipherPtr theirs = env_->Default("AES-128-CTR");
  const Bytes key = RandomBytes(rng_, 16), iv = RandomBytes(rng_, 16);
  const Bytes plain = RandomBytes(rng_, 40), zeros(20 + 64, 0);
  // The keystream, from the default provider: blocks 0 to 5.
  Bytes keystream(zeros.size());
  int len = 0;
  auto reference = NewCipherCtx();
  ASSERT_TRUE(EVP_EncryptInit_ex2(reference.get(), theirs.get(), key.data(),
                                  iv.data(), nullptr));
  ASSERT_TRUE(EVP_EncryptUpdate(reference.get(), keystream.data(), &len,
                                zeros.data(), zeros.size()));
  for (int num = 0; num < 16; ++num) {
    SCOPED_TRACE(num);
    // 20 bytes: block 1's keystream is held, 4 bytes of it used.
    Bytes out[2] = {Bytes(40), Bytes(40)};
    int accepted[2];
    CipherPtr *ciphers[2] = {&ours, &theirs};
    for (int side = 0; side < 2; ++side) {
      auto ctx = NewCipherCtx();
      ASSERT_TRUE(EVP_EncryptInit_ex2(ctx.get(), ciphers[side]->get(),
                                      key.data(), iv.data(), nullptr));
      Bytes head(20);
      ASSERT_TRUE(EVP_EncryptUpdate(ctx.get(), head.data(), &len,
                                    zeros.data(), 20));
      accepted[side] = EVP_CIPHER_CTX_set_num(ctx.get(), num);
      ERR_clear_error();
      if (!accepted[side]) continue;
      EXPECT_EQ(EVP_CIPHER_CTX_get_num(ctx.get()), num);
      ASSERT_TRUE(EVP_EncryptUpdate(ctx.get(), out[side].data(), &len,
                                    plain.data(), 40));
    }
    ASSERT_EQ(accepted[0], 1) << "aesmux refuses num " << num;
    Bytes expected(40);
    for (size_t i = 0; i < 40; ++i) {
      // From block 1 at offset num (none for num 0), then blocks 2, 3, ...
      const size_t from_block1 = num == 0 ? 0 : 16 - num;
      const size_t k = i < from_block1 ? 16 + num + i : 32 + (i - from_block1);
      expected[i] = plain[i] ^ keystream[k];
    }
    EXPECT_EQ(ToHex(out[0]), ToHex(expected));
    if (accepted[1]) {
      EXPECT_EQ(ToHex(out[0]), ToHex(out[1]));
    }
  }
  // Beyond the block: refused.
  auto ctx = NewCipherCtx();
  ASSERT_TRUE(EVP_EncryptInit_ex2(ctx.get(), ours.get(), key.data(),
                                  iv.data(), nullptr));
  for (int num : {16, 17, 255, 1 << 20, -1}) {
    EXPECT_FALSE(EVP_CIPHER_CTX_set_num(ctx.get(), num)) << num;
    EXPECT_EQ(LastErrorReason(), PROV_R_FAILED_TO_GET_PARAMETER);
    ERR_clear_error();
  }
  EXPECT_EQ(EVP_CIPHER_CTX_get_num(ctx.get()), 0);
}

// ECB and CBC do not use num, but keep what is set in 0..15 and give it
// back, as every OpenSSL 3 default provider does. 16 and more is refused,
// as OpenSSL 3.0.20 and later refuse it (the block size is the bound);
// 3.0.19 takes any value. Either way the data is unchanged.
TEST_P(ContractTest, EcbAndCbcNumIsKeptBelowTheBlockSize) {
  for (const char *name : {"AES-128-ECB", "AES-256-CBC"}) {
    SCOPED_TRACE(name);
    CipherPtr ciphers[2] = {Fetch(name), env_->Default(name)};
    const Bytes key = RandomBytes(rng_, 32), iv = RandomBytes(rng_, 16);
    const Bytes plain = RandomBytes(rng_, 64);
    Bytes out[2] = {Bytes(64), Bytes(64)};
    for (int side = 0; side < 2; ++side) {
      auto ctx = NewCipherCtx();
      ASSERT_TRUE(EVP_EncryptInit_ex2(ctx.get(), ciphers[side].get(),
                                      key.data(), iv.data(), nullptr));
      int len = 0;
      ASSERT_TRUE(EVP_EncryptUpdate(ctx.get(), out[side].data(), &len,
                                    plain.data(), 16));
      for (int num : {0, 1, 15}) {
        ASSERT_TRUE(EVP_CIPHER_CTX_set_num(ctx.get(), num)) << side << num;
        EXPECT_EQ(EVP_CIPHER_CTX_get_num(ctx.get()), num) << side;
      }
      for (int num : {16, 17, 255, 1 << 20, -1}) {
        const int accepted = EVP_CIPHER_CTX_set_num(ctx.get(), num);
        if (side == 0) {
          EXPECT_FALSE(accepted) << "aesmux took num " << num;
          EXPECT_EQ(LastErrorReason(), PROV_R_FAILED_TO_GET_PARAMETER);
          EXPECT_EQ(EVP_CIPHER_CTX_get_num(ctx.get()), 15);
        } else if (!accepted) {  // OpenSSL 3.0.20 and later
          EXPECT_EQ(LastErrorReason(), PROV_R_FAILED_TO_GET_PARAMETER);
        }
        ERR_clear_error();
      }
      ASSERT_TRUE(EVP_EncryptUpdate(ctx.get(), out[side].data() + 16, &len,
                                    plain.data() + 16, 48));
    }
    EXPECT_EQ(ToHex(out[0]), ToHex(out[1]));
  }
}

// The reason codes on the error queue, oldest first; the queue is emptied.
std::vector<int> TakeReasons() {
  std::vector<int> reasons;
  while (unsigned long code = ERR_get_error()) {
    reasons.push_back(ERR_GET_REASON(code));
  }
  return reasons;
}

// AAD after the payload fails, and leaves one error on the queue where the
// default provider leaves one. Through EVP_Cipher even empty AAD reaches
// the provider and fails. (Found by the sequence fuzzer: on the fallback
// path aesmux left the fallback's own error as well, and accepted the
// empty AAD.)
TEST_P(ContractTest, GcmAadAfterThePayloadFailsLikeTheDefaultProvider) {
  CipherPtr ciphers[2] = {Fetch("AES-128-GCM"), env_->Default("AES-128-GCM")};
  const Bytes key = RandomBytes(rng_, 16), iv = RandomBytes(rng_, 12);
  const Bytes data = RandomBytes(rng_, 32);
  for (int via_cipher : {0, 1}) {
    for (int enc : {1, 0}) {
      SCOPED_TRACE(testing::Message() << (via_cipher ? "EVP_Cipher" : "update")
                                      << " enc " << enc);
      int ret[2];
      std::vector<int> reasons[2];
      for (int side = 0; side < 2; ++side) {
        auto ctx = NewCipherCtx();
        Bytes out(32);
        int len = 0;
        ASSERT_TRUE(EVP_CipherInit_ex2(ctx.get(), ciphers[side].get(),
                                       key.data(), iv.data(), enc, nullptr));
        ASSERT_TRUE(EVP_CipherUpdate(ctx.get(), out.data(), &len, data.data(),
                                     16));
        ERR_clear_error();
        ret[side] = via_cipher
                        ? EVP_Cipher(ctx.get(), nullptr, data.data(), 0)
                        : EVP_CipherUpdate(ctx.get(), nullptr, &len,
                                           data.data(), 5);
        reasons[side] = TakeReasons();
      }
      EXPECT_EQ(ret[0], ret[1]);
      EXPECT_EQ(ret[0], via_cipher ? -1 : 0);
      EXPECT_EQ(testing::PrintToString(reasons[0]),
                testing::PrintToString(reasons[1]));
    }
  }
}

// An empty update may come without input (EVP_DecryptUpdate(ctx, out, &n,
// NULL, 0)) while a partial block is held: nothing happens, as in the
// default provider. (Found by the sequence fuzzer: UBSan reported
// aesmux's memcpy from the null input.)
TEST_P(ContractTest, EmptyUpdateWithoutInputKeepsTheHeldBytes) {
  for (const char *name : {"AES-128-ECB", "AES-256-CBC"}) {
    SCOPED_TRACE(name);
    CipherPtr ciphers[2] = {Fetch(name), env_->Default(name)};
    const Bytes key = RandomBytes(rng_, EVP_CIPHER_get_key_length(
                                            ciphers[0].get()));
    const Bytes iv = RandomBytes(rng_, 16), data = RandomBytes(rng_, 40);
    for (int enc : {1, 0}) {
      Bytes out[2];
      int lens[2][3];
      for (int side = 0; side < 2; ++side) {
        auto ctx = NewCipherCtx();
        out[side].assign(80, 0);
        ASSERT_TRUE(EVP_CipherInit_ex2(ctx.get(), ciphers[side].get(),
                                       key.data(), iv.data(), enc, nullptr));
        EVP_CIPHER_CTX_set_padding(ctx.get(), 0);
        ASSERT_TRUE(EVP_CipherUpdate(ctx.get(), out[side].data(),
                                     &lens[side][0], data.data(), 8));
        ASSERT_TRUE(EVP_CipherUpdate(ctx.get(), out[side].data(),
                                     &lens[side][1], nullptr, 0));
        ASSERT_TRUE(EVP_CipherUpdate(ctx.get(), out[side].data(),
                                     &lens[side][2], data.data() + 8, 24));
      }
      EXPECT_EQ(testing::PrintToString(lens[0]),
                testing::PrintToString(lens[1]));
      EXPECT_EQ(ToHex(out[0]), ToHex(out[1]));
    }
  }
}

// The default provider keeps a GCM tag and the TLS record header of tlsaad
// in one buffer, so a tag read after tlsaad begins with the header (its
// length corrected); a TLS record sets the tag length, and reading the tag
// afterwards gives that buffer too. (Found by the parameter fuzzer.)
TEST_P(ContractTest, GcmTagAndTlsAadShareOneBuffer) {
  CipherPtr ciphers[2] = {Fetch("AES-128-GCM"), env_->Default("AES-128-GCM")};
  const Bytes key = RandomBytes(rng_, 16), iv = RandomBytes(rng_, 12);
  const Bytes tag = RandomBytes(rng_, 16);
  Bytes header = RandomBytes(rng_, 13);
  header[11] = 0;
  header[12] = 40;
  std::string log[2];
  for (int side = 0; side < 2; ++side) {
    auto ctx = NewCipherCtx();
    Bytes got(16);
    ASSERT_TRUE(EVP_CipherInit_ex2(ctx.get(), ciphers[side].get(), key.data(),
                                   nullptr, 0, nullptr));
    ASSERT_TRUE(EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_AEAD_SET_TAG, 16,
                                    const_cast<uint8_t *>(tag.data())));
    log[side] += std::to_string(EVP_CIPHER_CTX_ctrl(
        ctx.get(), EVP_CTRL_AEAD_TLS1_AAD, 13, header.data()));
    ASSERT_TRUE(EVP_CipherInit_ex2(ctx.get(), nullptr, nullptr, nullptr, 1,
                                   nullptr));
    log[side] += " " + std::to_string(EVP_CIPHER_CTX_ctrl(
                           ctx.get(), EVP_CTRL_AEAD_GET_TAG, 16, got.data()));
    log[side] += " " + ToHex(got);
    // A TLS record on a fresh context, then its tag buffer.
    auto record = NewCipherCtx();
    Bytes body(40, 7);
    int len = 0;
    ASSERT_TRUE(EVP_CipherInit_ex2(record.get(), ciphers[side].get(),
                                   key.data(), nullptr, 1, nullptr));
    ASSERT_TRUE(EVP_CIPHER_CTX_ctrl(record.get(), EVP_CTRL_GCM_SET_IV_FIXED, -1,
                                    const_cast<uint8_t *>(iv.data())));
    header[12] = 24;
    EVP_CIPHER_CTX_ctrl(record.get(), EVP_CTRL_AEAD_TLS1_AAD, 13,
                        header.data());
    header[12] = 40;
    log[side] += " " + std::to_string(EVP_CipherUpdate(
                           record.get(), body.data(), &len, body.data(), 40));
    log[side] += " " + std::to_string(EVP_CIPHER_CTX_ctrl(
                           record.get(), EVP_CTRL_AEAD_GET_TAG, 16, got.data()));
    log[side] += " " + ToHex(got);
    ERR_clear_error();
  }
  EXPECT_EQ(log[0], log[1]);
}

// ECB and CBC updates in place after a partial block (or, decrypting with
// padding, a held-back block): the output runs ahead of the input, which
// the default provider overwrites before it reads it (its output is
// garbage; the sequence fuzzer found aesmux's was too). aesmux gives what
// the default provider gives out of place.
TEST_P(ContractTest, InPlaceUpdatesAfterAPartialBlockMatchOutOfPlace) {
  for (const char *name : {"AES-128-ECB", "AES-256-CBC"}) {
    CipherPtr ours = Fetch(name), theirs = env_->Default(name);
    const Bytes key =
        RandomBytes(rng_, EVP_CIPHER_get_key_length(ours.get()));
    const Bytes iv = RandomBytes(rng_, 16), data = RandomBytes(rng_, 600);
    for (int enc : {1, 0}) {
      for (int pad : {1, 0}) {
        for (size_t first : {size_t{1}, size_t{8}, size_t{15}, size_t{16},
                             size_t{32}}) {
          for (size_t second : {size_t{1}, size_t{16}, size_t{17}, size_t{31},
                                size_t{48}, size_t{257}, size_t{512}}) {
            SCOPED_TRACE(testing::Message()
                         << name << " enc " << enc << " pad " << pad << " "
                         << first << " then " << second << " in place");
            Bytes expected(first + second + 32), ours_out(first + second + 32);
            int lens[2][3] = {};
            auto reference = NewCipherCtx();
            ASSERT_TRUE(EVP_CipherInit_ex2(reference.get(), theirs.get(),
                                           key.data(), iv.data(), enc,
                                           nullptr));
            EVP_CIPHER_CTX_set_padding(reference.get(), pad);
            ASSERT_TRUE(EVP_CipherUpdate(reference.get(), expected.data(),
                                         &lens[1][0], data.data(), first));
            ASSERT_TRUE(EVP_CipherUpdate(
                reference.get(), expected.data() + lens[1][0], &lens[1][1],
                data.data() + first, second));
            auto ctx = NewCipherCtx();
            ASSERT_TRUE(EVP_CipherInit_ex2(ctx.get(), ours.get(), key.data(),
                                           iv.data(), enc, nullptr));
            EVP_CIPHER_CTX_set_padding(ctx.get(), pad);
            ASSERT_TRUE(EVP_CipherUpdate(ctx.get(), ours_out.data(),
                                         &lens[0][0], data.data(), first));
            // The second update in place, where its output goes.
            Bytes buf(data.begin() + first, data.begin() + first + second);
            buf.resize(second + 32);
            ASSERT_TRUE(EVP_CipherUpdate(ctx.get(), buf.data(), &lens[0][1],
                                         buf.data(), second));
            std::memcpy(ours_out.data() + lens[0][0], buf.data(), lens[0][1]);
            // What stays held comes out at final, the same.
            ASSERT_EQ(
                EVP_CipherFinal_ex(reference.get(),
                                   expected.data() + lens[1][0] + lens[1][1],
                                   &lens[1][2]),
                EVP_CipherFinal_ex(ctx.get(),
                                   ours_out.data() + lens[0][0] + lens[0][1],
                                   &lens[0][2]));
            ERR_clear_error();
            EXPECT_EQ(testing::PrintToString(lens[0]),
                      testing::PrintToString(lens[1]));
            EXPECT_EQ(ToHex(ours_out), ToHex(expected));
          }
        }
      }
    }
  }
}

TEST_P(ContractTest, PaddingIsOnByDefaultAndReported) {
  CipherPtr cipher = Fetch("AES-192-ECB");
  const Bytes key = RandomBytes(rng_, 24);
  auto ctx = NewCipherCtx();
  ASSERT_TRUE(EVP_EncryptInit_ex2(ctx.get(), cipher.get(), key.data(), nullptr,
                                  nullptr));
  unsigned int padding = 7;
  OSSL_PARAM get[] = {OSSL_PARAM_uint(OSSL_CIPHER_PARAM_PADDING, &padding),
                      OSSL_PARAM_END};
  ASSERT_TRUE(EVP_CIPHER_CTX_get_params(ctx.get(), get));
  EXPECT_EQ(padding, 1u);
  // 5 bytes become one padded block in final.
  Bytes out(32);
  int len = 0, final_len = 0;
  const Bytes plain = RandomBytes(rng_, 5);
  ASSERT_TRUE(EVP_EncryptUpdate(ctx.get(), out.data(), &len, plain.data(), 5));
  EXPECT_EQ(len, 0);
  ASSERT_TRUE(EVP_EncryptFinal_ex(ctx.get(), out.data(), &final_len));
  EXPECT_EQ(final_len, 16);

  EVP_CIPHER_CTX_set_padding(ctx.get(), 0);
  ASSERT_TRUE(EVP_CIPHER_CTX_get_params(ctx.get(), get));
  EXPECT_EQ(padding, 0u);
  ASSERT_TRUE(EVP_EncryptUpdate(ctx.get(), out.data(), &len, plain.data(), 5));
  EXPECT_FALSE(EVP_EncryptFinal_ex(ctx.get(), out.data(), &final_len));
  EXPECT_EQ(LastErrorReason(), PROV_R_WRONG_FINAL_BLOCK_LENGTH);
}

TEST_P(ContractTest, EvpCipherReturnsTheLength) {
  for (const char *name : {"AES-128-ECB", "AES-128-CBC", "AES-128-CTR",
                           "AES-128-XTS", "AES-128-GCM"}) {
    SCOPED_TRACE(name);
    CipherPtr ours = Fetch(name);
    CipherPtr theirs = env_->Default(name);
    const Bytes key = RandomBytes(rng_, EVP_CIPHER_get_key_length(ours.get()));
    const Bytes iv = RandomBytes(rng_, EVP_CIPHER_get_iv_length(ours.get()));
    const Bytes plain = RandomBytes(rng_, 48);
    Bytes a(64), b(64);
    auto ctx_a = NewCipherCtx(), ctx_b = NewCipherCtx();
    ASSERT_TRUE(EVP_EncryptInit_ex2(ctx_a.get(), ours.get(), key.data(),
                                    iv.data(), nullptr));
    ASSERT_TRUE(EVP_EncryptInit_ex2(ctx_b.get(), theirs.get(), key.data(),
                                    iv.data(), nullptr));
    EXPECT_EQ(EVP_Cipher(ctx_a.get(), a.data(), plain.data(), 48), 48);
    EXPECT_EQ(EVP_Cipher(ctx_b.get(), b.data(), plain.data(), 48), 48);
    EXPECT_EQ(ToHex(a), ToHex(b));
  }
}

// Whether the default provider's EVP_Cipher() encrypts a partial CBC block
// zero-padded, as its x86-64 AES-NI code does: what it does with a tail is
// its platform code's choice (AArch64's ignores the tail when encrypting and
// returns a wrong first block when decrypting). Empty if it does, else what
// it does instead.
std::string DefaultPartialCbcBehaviour(const EVP_CIPHER *theirs,
                                       const Bytes &key, const Bytes &iv) {
  Bytes in(32, 0), padded(32), partial(32, 0xee);
  for (size_t i = 0; i < 20; ++i) in[i] = static_cast<uint8_t>(i + 1);
  auto whole = NewCipherCtx(), cipher = NewCipherCtx();
  int len = 0;
  if (!EVP_EncryptInit_ex2(whole.get(), theirs, key.data(), iv.data(),
                           nullptr) ||
      !EVP_CIPHER_CTX_set_padding(whole.get(), 0) ||
      !EVP_EncryptUpdate(whole.get(), padded.data(), &len, in.data(), 32) ||
      !EVP_EncryptInit_ex2(cipher.get(), theirs, key.data(), iv.data(),
                           nullptr) ||
      EVP_Cipher(cipher.get(), partial.data(), in.data(), 20) != 20) {
    return "EVP calls on the default provider failed";
  }
  if (partial == padded) return {};
  return "EVP_Cipher on 20 bytes wrote " + ToHex(partial) +
         ", not the zero-padded encryption " + ToHex(padded);
}

// EVP_Cipher() on a partial CBC block does what the default provider's
// AES-NI code does when encrypting: the tail is encrypted zero-padded and a
// whole block is written. When decrypting, OpenSSL reads a whole block past
// the input and writes 16 - tail bytes; aesmux reads only the input (as if
// zero-extended) and writes only the tail's bytes, which agree with
// OpenSSL's first bytes when the bytes past the input are zero.
// EVP_Cipher on CBC input that ends in a partial block: aesmux handles the
// tail as if it were zero-extended, writing a whole block when encrypting
// and only the tail's bytes when decrypting; the next IV is the
// zero-extended block's ciphertext. The reference is the default
// provider's CBC on the zero-extended input: its own EVP_Cipher reads past
// the input, and its AES-NI code writes 16 - n bytes of an n-byte tail and
// gets some lengths wrong altogether (docs/differences.md).
TEST_P(ContractTest, EvpCipherPartialCbcBlockMatchesTheDefaultProvider) {
  CipherPtr ours = Fetch("AES-128-CBC");
  CipherPtr theirs = env_->Default("AES-128-CBC");
  const Bytes key = RandomBytes(rng_, 16), iv = RandomBytes(rng_, 16);
  if (const std::string other =
          DefaultPartialCbcBehaviour(theirs.get(), key, iv);
      !other.empty()) {
    GTEST_SKIP() << "the default provider's CBC code on this CPU handles a "
                    "partial block otherwise, so there is no behaviour to "
                    "agree with (docs/differences.md): "
                 << other;
  }
  for (int enc : {1, 0}) {
    for (size_t len : {size_t{1}, size_t{15}, size_t{20}, size_t{31},
                       size_t{209}, size_t{215}, size_t{223}, size_t{1116}}) {
      SCOPED_TRACE(testing::Message() << "enc " << enc << " len " << len);
      const size_t whole = len & ~size_t{15};
      Bytes in = RandomBytes(rng_, len);
      in.resize(whole + 16, 0);
      Bytes expected(whole + 16), iv_expected(16);
      int out_len = 0;
      auto reference = NewCipherCtx();
      ASSERT_TRUE(EVP_CipherInit_ex2(reference.get(), theirs.get(), key.data(),
                                     iv.data(), enc, nullptr));
      EVP_CIPHER_CTX_set_padding(reference.get(), 0);
      ASSERT_TRUE(EVP_CipherUpdate(reference.get(), expected.data(), &out_len,
                                   in.data(), whole + 16));
      EVP_CIPHER_CTX_get_updated_iv(reference.get(), iv_expected.data(), 16);

      Bytes out(whole + 32, 0xee);
      auto ctx = NewCipherCtx();
      ASSERT_TRUE(EVP_CipherInit_ex2(ctx.get(), ours.get(), key.data(),
                                     iv.data(), enc, nullptr));
      EXPECT_EQ(EVP_Cipher(ctx.get(), out.data(), in.data(), len),
                static_cast<int>(len));
      const size_t written = enc ? whole + 16 : len;
      EXPECT_EQ(ToHex(out.data(), written), ToHex(expected.data(), written));
      EXPECT_EQ(ToHex(out.data() + written, out.size() - written),
                std::string(2 * (out.size() - written), 'e'));
      Bytes iv_out(16);
      EVP_CIPHER_CTX_get_updated_iv(ctx.get(), iv_out.data(), 16);
      EXPECT_EQ(ToHex(iv_out), ToHex(iv_expected));
    }
  }
}

TEST_P(ContractTest, UnknownParametersAreIgnored) {
  for (const char *name : kAllAlgorithms) {
    SCOPED_TRACE(name);
    CipherPtr cipher = Fetch(name);
    auto ctx = NewCipherCtx();
    ASSERT_TRUE(EVP_CipherInit_ex2(ctx.get(), cipher.get(), nullptr, nullptr, 1,
                                   nullptr));
    unsigned int version = 0x0303;
    size_t mac_size = 0;
    int unknown = 1;
    OSSL_PARAM params[] = {
        OSSL_PARAM_int("no-such-parameter", &unknown),
        OSSL_PARAM_uint(OSSL_CIPHER_PARAM_TLS_VERSION, &version),
        OSSL_PARAM_size_t(OSSL_CIPHER_PARAM_TLS_MAC_SIZE, &mac_size),
        OSSL_PARAM_END};
    // Like libssl: tls-version/tls-mac-size reach GCM too.
    EXPECT_TRUE(EVP_CIPHER_CTX_set_params(ctx.get(), params));
    EXPECT_TRUE(EVP_CIPHER_CTX_set_params(ctx.get(), nullptr));
  }
}

// EVP_CIPHER_CTX_copy in the middle of a stream: the copy and the original
// go on independently, each as the default provider's copy and original do
// (outputs, updated IVs, num, and the GCM tag after final).
TEST_P(ContractTest, DupctxCopiesMidStream) {
  for (const char *name : {"AES-256-CBC", "AES-192-CTR", "AES-128-GCM",
                           "AES-128-ECB", "AES-256-XTS"}) {
    SCOPED_TRACE(name);
    CipherPtr ciphers[2] = {Fetch(name), env_->Default(name)};
    const Bytes key =
        RandomBytes(rng_, EVP_CIPHER_get_key_length(ciphers[0].get()));
    const Bytes iv = RandomBytes(rng_, EVP_CIPHER_get_iv_length(ciphers[0].get()));
    const Bytes plain = RandomBytes(rng_, 100);
    std::string log[2];
    for (int side = 0; side < 2; ++side) {
      auto ctx = NewCipherCtx();
      Bytes head(128);
      int len = 0;
      ASSERT_TRUE(EVP_EncryptInit_ex2(ctx.get(), ciphers[side].get(),
                                      key.data(), iv.data(), nullptr));
      ASSERT_TRUE(EVP_EncryptUpdate(ctx.get(), head.data(), &len, plain.data(),
                                    37));
      log[side] = ToHex(head.data(), len);
      auto copy = NewCipherCtx();
      ASSERT_TRUE(EVP_CIPHER_CTX_copy(copy.get(), ctx.get()));
      // Different data through each, so that a shared state would show.
      for (EVP_CIPHER_CTX *c : {ctx.get(), copy.get()}) {
        const size_t offset = c == ctx.get() ? 37 : 0;
        Bytes tail(128), last(32), updated(16);
        int tail_len = 0, last_len = 0;
        ASSERT_TRUE(EVP_EncryptUpdate(c, tail.data(), &tail_len,
                                      plain.data() + offset, 63));
        log[side] += " " + ToHex(tail.data(), tail_len);
        if (EVP_CIPHER_CTX_get_updated_iv(c, updated.data(), 16)) {
          log[side] += " iv " + ToHex(updated);
        }
        log[side] += " num " + std::to_string(EVP_CIPHER_CTX_get_num(c));
        ASSERT_TRUE(EVP_EncryptFinal_ex(c, last.data(), &last_len));
        log[side] += " final " + ToHex(last.data(), last_len);
        Bytes tag(16);
        if (EVP_CIPHER_get_mode(ciphers[side].get()) == EVP_CIPH_GCM_MODE &&
            EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_AEAD_GET_TAG, 16, tag.data())) {
          log[side] += " tag " + ToHex(tag);
        }
      }
      ERR_clear_error();
    }
    EXPECT_EQ(log[0], log[1]);
  }
}

TEST_P(ContractTest, UpdateWithoutKeyFailsWithNoKeySet) {
  for (const char *name : {"AES-128-ECB", "AES-128-CBC", "AES-128-CTR"}) {
    SCOPED_TRACE(name);
    CipherPtr cipher = Fetch(name);
    auto ctx = NewCipherCtx();
    ASSERT_TRUE(EVP_EncryptInit_ex2(ctx.get(), cipher.get(), nullptr, nullptr,
                                    nullptr));
    Bytes out(32), in(16);
    int len = 0;
    EXPECT_FALSE(EVP_EncryptUpdate(ctx.get(), out.data(), &len, in.data(), 16));
    EXPECT_EQ(LastErrorReason(), PROV_R_NO_KEY_SET);
    ERR_clear_error();
  }
}

TEST_P(ContractTest, GcmEncryptsWithARandomIvWhenNoneIsGiven) {
  CipherPtr cipher = Fetch("AES-128-GCM");
  const Bytes key = RandomBytes(rng_, 16), plain = RandomBytes(rng_, 40);
  auto ctx = NewCipherCtx();
  ASSERT_TRUE(EVP_EncryptInit_ex2(ctx.get(), cipher.get(), key.data(), nullptr,
                                  nullptr));
  // No IV yet: nothing to report.
  Bytes iv(12);
  EXPECT_FALSE(EVP_CIPHER_CTX_get_original_iv(ctx.get(), iv.data(), 12));
  Bytes sealed(40), tag(16);
  int len = 0;
  ASSERT_TRUE(EVP_EncryptUpdate(ctx.get(), sealed.data(), &len, plain.data(),
                                40));
  ASSERT_TRUE(EVP_EncryptFinal_ex(ctx.get(), sealed.data(), &len));
  ASSERT_TRUE(EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_AEAD_GET_TAG, 16,
                                  tag.data()));
  ASSERT_TRUE(EVP_CIPHER_CTX_get_original_iv(ctx.get(), iv.data(), 12));
  EXPECT_NE(iv, Bytes(12, 0));

  // The default provider opens it with that IV.
  CipherPtr theirs = env_->Default("AES-128-GCM");
  auto open = NewCipherCtx();
  Bytes opened(40);
  ASSERT_TRUE(EVP_DecryptInit_ex2(open.get(), theirs.get(), key.data(),
                                  iv.data(), nullptr));
  ASSERT_TRUE(EVP_DecryptUpdate(open.get(), opened.data(), &len, sealed.data(),
                                40));
  ASSERT_TRUE(EVP_CIPHER_CTX_ctrl(open.get(), EVP_CTRL_AEAD_SET_TAG, 16,
                                  tag.data()));
  EXPECT_TRUE(EVP_DecryptFinal_ex(open.get(), opened.data(), &len));
  EXPECT_EQ(opened, plain);
}

TEST_P(ContractTest, GcmRefusesToReuseAnIvAfterFinal) {
  CipherPtr cipher = Fetch("AES-256-GCM");
  const Bytes key = RandomBytes(rng_, 32), iv = RandomBytes(rng_, 12);
  auto ctx = NewCipherCtx();
  Bytes out(64), in(32, 1);
  int len = 0;
  ASSERT_TRUE(EVP_EncryptInit_ex2(ctx.get(), cipher.get(), key.data(),
                                  iv.data(), nullptr));
  ASSERT_TRUE(EVP_EncryptUpdate(ctx.get(), out.data(), &len, in.data(), 32));
  ASSERT_TRUE(EVP_EncryptFinal_ex(ctx.get(), out.data(), &len));
  EXPECT_FALSE(EVP_EncryptUpdate(ctx.get(), out.data(), &len, in.data(), 32));
  EXPECT_EQ(LastErrorReason(), PROV_R_CIPHER_OPERATION_FAILED);
  ERR_clear_error();
  // A key-only re-init does not make the old IV usable again.
  ASSERT_TRUE(EVP_EncryptInit_ex2(ctx.get(), nullptr, key.data(), nullptr,
                                  nullptr));
  EXPECT_FALSE(EVP_EncryptUpdate(ctx.get(), out.data(), &len, in.data(), 32));
  ERR_clear_error();
  // A new IV does.
  ASSERT_TRUE(EVP_EncryptInit_ex2(ctx.get(), nullptr, nullptr, iv.data(),
                                  nullptr));
  EXPECT_TRUE(EVP_EncryptUpdate(ctx.get(), out.data(), &len, in.data(), 32));
}

// An update with no input but a length finishes the message in the
// default provider (its gcm_cipher_internal takes a null input as final):
// it succeeds with no output, makes or checks the tag and retires the IV.
// aesmux does the same on every path, before or after payload, and never
// reads the null input.
TEST_P(ContractTest, GcmUpdateWithoutInputFinishesLikeTheDefaultProvider) {
  CipherPtr ciphers[2] = {Fetch("AES-128-GCM"), env_->Default("AES-128-GCM")};
  const Bytes key = RandomBytes(rng_, 16), iv = RandomBytes(rng_, 12);
  const Bytes data = RandomBytes(rng_, 16);
  // The default provider's encryption of payload_len bytes of `data`: the
  // ciphertext (which the decrypting side gets) and the tag.
  auto encrypt = [&](int payload_len, Bytes &ciphertext, Bytes &tag) {
    auto ctx = NewCipherCtx();
    int len = 0;
    ciphertext.assign(16, 0);
    tag.assign(16, 0);
    EXPECT_TRUE(EVP_EncryptInit_ex2(ctx.get(), ciphers[1].get(), key.data(),
                                    iv.data(), nullptr));
    if (payload_len != 0) {
      EXPECT_TRUE(EVP_EncryptUpdate(ctx.get(), ciphertext.data(), &len,
                                    data.data(), payload_len));
    }
    EXPECT_TRUE(EVP_EncryptFinal_ex(ctx.get(), ciphertext.data(), &len));
    EXPECT_TRUE(EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_AEAD_GET_TAG, 16,
                                    tag.data()));
  };
  for (int payload_len : {0, 16}) {
    for (int enc : {1, 0}) {
      for (int tag_set : {1, 0}) {
        if (enc && !tag_set) continue;
        SCOPED_TRACE(testing::Message() << "payload " << payload_len << " enc "
                                        << enc << " tag set " << tag_set);
        Bytes ciphertext, good_tag;
        encrypt(payload_len, ciphertext, good_tag);
        const Bytes &input = enc ? data : ciphertext;
        int ret[2], outl[2], after[2];
        Bytes tags[2];
        std::vector<int> reasons[2];
        for (int side = 0; side < 2; ++side) {
          auto ctx = NewCipherCtx();
          Bytes out(32);
          int len = 0;
          ASSERT_TRUE(EVP_CipherInit_ex2(ctx.get(), ciphers[side].get(),
                                         key.data(), iv.data(), enc, nullptr));
          if (payload_len != 0) {
            ASSERT_TRUE(EVP_CipherUpdate(ctx.get(), out.data(), &len,
                                         input.data(), payload_len));
          }
          if (!enc && tag_set) {
            Bytes tag = good_tag;
            ASSERT_TRUE(EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_AEAD_SET_TAG,
                                            16, tag.data()));
          }
          ERR_clear_error();
          outl[side] = -1;
          ret[side] =
              EVP_CipherUpdate(ctx.get(), out.data(), &outl[side], nullptr, 16);
          reasons[side] = TakeReasons();
          tags[side].assign(16, 0);
          if (enc) {
            EXPECT_TRUE(EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_AEAD_GET_TAG,
                                            16, tags[side].data()));
          }
          ERR_clear_error();
          // Finished: the IV is not used again.
          after[side] = EVP_CipherUpdate(ctx.get(), out.data(), &len,
                                         data.data(), 16);
          ERR_clear_error();
        }
        EXPECT_EQ(ret[0], ret[1]);
        EXPECT_EQ(ret[0], enc || tag_set ? 1 : 0);
        if (ret[1] == 1) {
          EXPECT_EQ(outl[0], outl[1]);
        }
        EXPECT_EQ(testing::PrintToString(reasons[0]),
                  testing::PrintToString(reasons[1]));
        EXPECT_EQ(tags[0], tags[1]);
        if (enc) {
          EXPECT_EQ(tags[0], good_tag);
        }
        EXPECT_EQ(after[0], after[1]);
      }
    }
  }
}

// An empty payload call (EVP_Cipher with input and length 0) between two
// pieces of AAD changes nothing in aesmux: the tag is the GCM tag of the
// AAD's two pieces together, the default provider's tag of the sequence
// without the empty call. The default provider's own tag for the sequence
// differs: its empty call pads the partial AAD block, and the second piece
// starts a new one (docs/differences.md).
TEST_P(ContractTest, GcmEmptyPayloadBetweenAadPiecesChangesNothing) {
  CipherPtr ours = Fetch("AES-128-GCM");
  CipherPtr theirs = env_->Default("AES-128-GCM");
  const Bytes key = RandomBytes(rng_, 16), iv = RandomBytes(rng_, 12);
  const Bytes aad = RandomBytes(rng_, 10), data = RandomBytes(rng_, 20);
  // Encrypts or decrypts `data` after the AAD in two pieces, with or
  // without an empty payload call between them; returns the tag (encrypt)
  // or whether `tag` was accepted (decrypt, as "ok"/"bad").
  auto run = [&](const EVP_CIPHER *cipher, bool empty_call, int enc,
                 const Bytes &input, Bytes *output, Bytes tag) {
    auto ctx = NewCipherCtx();
    Bytes buf = input;
    EXPECT_TRUE(EVP_CipherInit_ex2(ctx.get(), cipher, key.data(), iv.data(),
                                   enc, nullptr));
    if (!enc) {
      EXPECT_TRUE(EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_AEAD_SET_TAG, 16,
                                      tag.data()));
    }
    EXPECT_EQ(EVP_Cipher(ctx.get(), nullptr, aad.data(), 5), 5);
    if (empty_call) {
      EXPECT_EQ(EVP_Cipher(ctx.get(), buf.data(), buf.data(), 0), 0);
    }
    EXPECT_EQ(EVP_Cipher(ctx.get(), nullptr, aad.data() + 5, 5), 5);
    EXPECT_EQ(EVP_Cipher(ctx.get(), buf.data(), buf.data(), buf.size()),
              int(buf.size()));
    const int finished = EVP_Cipher(ctx.get(), nullptr, nullptr, 0);
    ERR_clear_error();
    *output = buf;
    if (!enc) return Bytes{uint8_t(finished == 0)};
    EXPECT_EQ(finished, 0);
    Bytes made(16);
    EXPECT_TRUE(EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_AEAD_GET_TAG, 16,
                                    made.data()));
    return made;
  };
  Bytes ciphertext, our_ciphertext, out;
  const Bytes gcm_tag = run(theirs.get(), false, 1, data, &ciphertext, {});
  EXPECT_EQ(run(ours.get(), true, 1, data, &our_ciphertext, {}), gcm_tag);
  EXPECT_EQ(our_ciphertext, ciphertext);
  EXPECT_NE(run(theirs.get(), true, 1, data, &out, {}), gcm_tag);
  // Decrypting with the same calls, aesmux accepts the GCM tag.
  EXPECT_EQ(run(ours.get(), true, 0, ciphertext, &out, gcm_tag), Bytes{1});
  EXPECT_EQ(out, data);
  EXPECT_EQ(run(theirs.get(), false, 0, ciphertext, &out, gcm_tag), Bytes{1});
}

// A TLS fixed IV field must leave at least 8 bytes of the IV for the
// invocation field: longer ones are refused as by the default provider,
// and so are those longer than the IV itself, which the default provider
// is not asked about (its check wraps around: docs/differences.md).
TEST_P(ContractTest, GcmTlsFixedIvFieldLeavesEightBytes) {
  CipherPtr ciphers[2] = {Fetch("AES-128-GCM"), env_->Default("AES-128-GCM")};
  const Bytes key = RandomBytes(rng_, 16), field = RandomBytes(rng_, 129);
  for (int enc : {1, 0}) {
    for (int len : {4, 5, 12, 13, 16, 128, 129}) {
      SCOPED_TRACE(testing::Message() << "enc " << enc << " len " << len);
      const bool ask_default = len <= 12;
      int ret[2] = {-2, -2};
      for (int side = 0; side < (ask_default ? 2 : 1); ++side) {
        auto ctx = NewCipherCtx();
        ASSERT_TRUE(EVP_CipherInit_ex2(ctx.get(), ciphers[side].get(),
                                       key.data(), nullptr, enc, nullptr));
        ret[side] = EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_GCM_SET_IV_FIXED,
                                        len, const_cast<uint8_t *>(field.data()));
        ERR_clear_error();
      }
      EXPECT_EQ(ret[0] > 0, len == 4);
      if (ask_default) {
        EXPECT_EQ(ret[0] > 0, ret[1] > 0);
      }
    }
  }
}

TEST_P(ContractTest, GcmTagRulesMatchTheDefaultProvider) {
  CipherPtr cipher = Fetch("AES-128-GCM");
  const Bytes key = RandomBytes(rng_, 16), iv = RandomBytes(rng_, 12);
  auto ctx = NewCipherCtx();
  Bytes tag(16);
  ASSERT_TRUE(EVP_EncryptInit_ex2(ctx.get(), cipher.get(), key.data(),
                                  iv.data(), nullptr));
  // Before final there is no tag to get; an encryptor takes no tag.
  EXPECT_FALSE(EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_AEAD_GET_TAG, 16,
                                   tag.data()));
  EXPECT_EQ(LastErrorReason(), PROV_R_INVALID_TAG);
  ERR_clear_error();
  EXPECT_FALSE(EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_AEAD_SET_TAG, 16,
                                   tag.data()));
  EXPECT_EQ(LastErrorReason(), PROV_R_INVALID_TAG);
  ERR_clear_error();
  // A decryptor needs its tag before final.
  auto dec = NewCipherCtx();
  int len = 0;
  ASSERT_TRUE(EVP_DecryptInit_ex2(dec.get(), cipher.get(), key.data(),
                                  iv.data(), nullptr));
  EXPECT_FALSE(EVP_DecryptFinal_ex(dec.get(), tag.data(), &len));
  // Tags of 1..16 bytes are accepted, 17 is not.
  EXPECT_TRUE(EVP_CIPHER_CTX_ctrl(dec.get(), EVP_CTRL_AEAD_SET_TAG, 1,
                                  tag.data()));
  Bytes long_tag(17);
  EXPECT_FALSE(EVP_CIPHER_CTX_ctrl(dec.get(), EVP_CTRL_AEAD_SET_TAG, 17,
                                   long_tag.data()));
  ERR_clear_error();
}

TEST_P(ContractTest, GcmIvLengthsFrom1To128Bytes) {
  CipherPtr cipher = Fetch("AES-128-GCM");
  const Bytes key = RandomBytes(rng_, 16);
  auto ctx = NewCipherCtx();
  ASSERT_TRUE(EVP_EncryptInit_ex2(ctx.get(), cipher.get(), key.data(), nullptr,
                                  nullptr));
  for (int iv_len : {0, 129}) {
    EXPECT_FALSE(EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_AEAD_SET_IVLEN,
                                     iv_len, nullptr));
    EXPECT_EQ(LastErrorReason(), PROV_R_INVALID_IV_LENGTH);
    ERR_clear_error();
  }
  for (int iv_len : {1, 12, 16, 128}) {
    EXPECT_TRUE(EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_AEAD_SET_IVLEN, iv_len,
                                    nullptr));
    EXPECT_EQ(EVP_CIPHER_CTX_get_iv_length(ctx.get()), iv_len);
  }
}

// Changing the IV length after an IV was set invalidates that IV.
TEST_P(ContractTest, GcmIvLengthChangeRequiresANewIv) {
  CipherPtr cipher = Fetch("AES-128-GCM");
  const Bytes key = RandomBytes(rng_, 16), iv = RandomBytes(rng_, 16);
  auto ctx = NewCipherCtx();
  Bytes out(32), in(16);
  int len = 0;
  ASSERT_TRUE(EVP_EncryptInit_ex2(ctx.get(), cipher.get(), key.data(),
                                  iv.data(), nullptr));
  ASSERT_TRUE(EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_AEAD_SET_IVLEN, 16,
                                  nullptr));
  EXPECT_FALSE(EVP_EncryptUpdate(ctx.get(), out.data(), &len, in.data(), 16));
  ERR_clear_error();
  ASSERT_TRUE(EVP_EncryptInit_ex2(ctx.get(), nullptr, nullptr, iv.data(),
                                  nullptr));
  EXPECT_TRUE(EVP_EncryptUpdate(ctx.get(), out.data(), &len, in.data(), 16));
}

// The IV buffer keeps its bytes when the IV length grows past the 16
// bytes held inline (provider/openssl/iv_buffer.h): after a 12-byte IV
// and an IV length of 20, 40 or 128, the default provider's `iv` still
// begins with the 12 bytes (and then its zeroed buffer).
TEST_P(ContractTest, GcmIvLengthGrowthKeepsTheIvBytes) {
  CipherPtr cipher = Fetch("AES-128-GCM");
  CipherPtr theirs = env_->Default("AES-128-GCM");
  const Bytes key = RandomBytes(rng_, 16), iv = RandomBytes(rng_, 12);
  for (int iv_len : {16, 17, 20, 40, 128}) {
    SCOPED_TRACE(iv_len);
    std::vector<Bytes> got;
    for (const EVP_CIPHER *each : {cipher.get(), theirs.get()}) {
      auto ctx = NewCipherCtx();
      ASSERT_TRUE(EVP_EncryptInit_ex2(ctx.get(), each, key.data(), iv.data(),
                                      nullptr));
      ASSERT_TRUE(EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_AEAD_SET_IVLEN,
                                      iv_len, nullptr));
      Bytes value(128, 0xa5);
      OSSL_PARAM params[] = {
          OSSL_PARAM_construct_octet_string(OSSL_CIPHER_PARAM_IV,
                                            value.data(), value.size()),
          OSSL_PARAM_construct_end()};
      ASSERT_EQ(EVP_CIPHER_CTX_get_params(ctx.get(), params), 1);
      value.resize(params[0].return_size);
      got.push_back(value);
    }
    EXPECT_EQ(got[0], got[1]);
    ASSERT_EQ(got[0].size(), static_cast<size_t>(iv_len));
    EXPECT_TRUE(std::equal(iv.begin(), iv.end(), got[0].begin()));
  }
}

TEST_P(ContractTest, XtsRefusesDuplicateKeyHalvesOnlyWhenEncrypting) {
  for (const char *name : {"AES-128-XTS", "AES-256-XTS"}) {
    SCOPED_TRACE(name);
    CipherPtr cipher = Fetch(name);
    const int key_len = EVP_CIPHER_get_key_length(cipher.get());
    Bytes key = RandomBytes(rng_, key_len / 2);
    key.insert(key.end(), key.begin(), key.end());
    const Bytes iv = RandomBytes(rng_, 16);
    auto ctx = NewCipherCtx();
    EXPECT_FALSE(EVP_EncryptInit_ex2(ctx.get(), cipher.get(), key.data(),
                                     iv.data(), nullptr));
    EXPECT_EQ(LastErrorReason(), PROV_R_XTS_DUPLICATED_KEYS);
    ERR_clear_error();
    auto dec = NewCipherCtx();
    EXPECT_TRUE(EVP_DecryptInit_ex2(dec.get(), cipher.get(), key.data(),
                                    iv.data(), nullptr));
  }
}

// Every way a context keyed with equal halves could come to encrypt: a
// key-less init in the encrypting direction (EVP_CipherInit_ex2 and
// EVP_CipherInit_ex), on the context or on a copy of it, and a key given
// to decrypt after an encrypting init without one. The default provider
// accepts each init and goes on decrypting with its old schedule (it
// never encrypts under equal halves); aesmux accepts the init too (the
// program may give a new key next) and refuses every update until a key
// with distinct halves is set, writing nothing.
TEST_P(ContractTest, XtsNeverEncryptsUnderDuplicateKeyHalves) {
  for (const char *name : {"AES-128-XTS", "AES-256-XTS"}) {
    SCOPED_TRACE(name);
    CipherPtr cipher = Fetch(name);
    CipherPtr theirs = env_->Default(name);
    const int key_len = EVP_CIPHER_get_key_length(cipher.get());
    Bytes key = RandomBytes(rng_, key_len / 2);
    key.insert(key.end(), key.begin(), key.end());
    const Bytes good_key = RandomBytes(rng_, key_len);
    const Bytes iv = RandomBytes(rng_, 16), in = RandomBytes(rng_, 48);
    auto expect_refused = [&](EVP_CIPHER_CTX *ctx, int init_ok) {
      EXPECT_EQ(init_ok, 1);
      Bytes out(48, 0xa5);
      int len = 0;
      EXPECT_EQ(EVP_EncryptUpdate(ctx, out.data(), &len, in.data(), 48), 0);
      EXPECT_EQ(LastErrorReason(), PROV_R_XTS_DUPLICATED_KEYS);
      ERR_clear_error();
      EXPECT_EQ(EVP_Cipher(ctx, out.data(), in.data(), 48), -1);
      EXPECT_EQ(out, Bytes(48, 0xa5)) << "written under equal halves";
      ERR_clear_error();
    };
    // A decrypting context, turned to encrypting without a key.
    auto dec = NewCipherCtx();
    ASSERT_TRUE(EVP_DecryptInit_ex2(dec.get(), cipher.get(), key.data(),
                                    iv.data(), nullptr));
    auto copy = NewCipherCtx();
    ASSERT_TRUE(EVP_CIPHER_CTX_copy(copy.get(), dec.get()));
    expect_refused(dec.get(), EVP_CipherInit_ex2(dec.get(), nullptr, nullptr,
                                                 nullptr, 1, nullptr));
    expect_refused(dec.get(), EVP_CipherInit_ex(dec.get(), nullptr, nullptr,
                                                nullptr, iv.data(), 1));
    expect_refused(copy.get(), EVP_CipherInit_ex2(copy.get(), nullptr,
                                                  nullptr, iv.data(), 1,
                                                  nullptr));
    // An encrypting init without a key, then the key to decrypt, then
    // encrypting again.
    auto late = NewCipherCtx();
    ASSERT_TRUE(EVP_EncryptInit_ex2(late.get(), cipher.get(), nullptr,
                                    iv.data(), nullptr));
    ASSERT_TRUE(EVP_DecryptInit_ex2(late.get(), nullptr, key.data(), nullptr,
                                    nullptr));
    expect_refused(late.get(), EVP_EncryptInit_ex2(late.get(), nullptr,
                                                   nullptr, nullptr, nullptr));
    // Decrypting stays possible; a key with distinct halves encrypts again,
    // as the default provider does.
    ASSERT_TRUE(EVP_DecryptInit_ex2(dec.get(), nullptr, nullptr, iv.data(),
                                    nullptr));
    Bytes out(48), expected(48);
    int len = 0;
    EXPECT_TRUE(EVP_DecryptUpdate(dec.get(), out.data(), &len, in.data(), 48));
    auto ref = NewCipherCtx();
    ASSERT_TRUE(EVP_DecryptInit_ex2(ref.get(), theirs.get(), key.data(),
                                    iv.data(), nullptr));
    ASSERT_TRUE(EVP_DecryptUpdate(ref.get(), expected.data(), &len, in.data(),
                                  48));
    EXPECT_EQ(out, expected);
    ASSERT_TRUE(EVP_EncryptInit_ex2(dec.get(), nullptr, good_key.data(),
                                    iv.data(), nullptr));
    ASSERT_TRUE(EVP_EncryptInit_ex2(ref.get(), nullptr, good_key.data(),
                                    iv.data(), nullptr));
    ASSERT_TRUE(EVP_EncryptUpdate(dec.get(), out.data(), &len, in.data(), 48));
    ASSERT_TRUE(EVP_EncryptUpdate(ref.get(), expected.data(), &len, in.data(),
                                  48));
    EXPECT_EQ(out, expected);
  }
}

TEST_P(ContractTest, XtsDataUnitsFrom16BytesTo16MiB) {
  CipherPtr cipher = Fetch("AES-128-XTS");
  CipherPtr theirs = env_->Default("AES-128-XTS");
  const Bytes key = RandomBytes(rng_, 32), iv = RandomBytes(rng_, 16);
  auto ctx = NewCipherCtx();
  auto ref = NewCipherCtx();
  ASSERT_TRUE(EVP_EncryptInit_ex2(ctx.get(), cipher.get(), key.data(),
                                  iv.data(), nullptr));
  ASSERT_TRUE(EVP_EncryptInit_ex2(ref.get(), theirs.get(), key.data(),
                                  iv.data(), nullptr));
  constexpr size_t kMax = size_t{1} << 24;
  Bytes in = RandomBytes(rng_, kMax + 16), out(kMax + 16), expected(kMax + 16);
  int len = 0;
  EXPECT_FALSE(EVP_EncryptUpdate(ctx.get(), out.data(), &len, in.data(), 15));
  EXPECT_EQ(LastErrorReason(), PROV_R_CIPHER_OPERATION_FAILED);
  ERR_clear_error();
  EXPECT_FALSE(EVP_EncryptUpdate(ctx.get(), out.data(), &len, in.data(),
                                 kMax + 1));
  EXPECT_TRUE(ERR_GET_REASON(ERR_get_error()) ==
              PROV_R_XTS_DATA_UNIT_IS_TOO_LARGE);
  ERR_clear_error();
  ASSERT_TRUE(EVP_EncryptUpdate(ctx.get(), out.data(), &len, in.data(), kMax));
  ASSERT_TRUE(EVP_EncryptUpdate(ref.get(), expected.data(), &len, in.data(),
                                kMax));
  EXPECT_TRUE(std::equal(out.begin(), out.begin() + kMax, expected.begin()));
  // The tweak is not advanced between calls: the same unit twice gives the
  // default provider's output for it twice.
  Bytes again(64), first(64), reference(64);
  ASSERT_TRUE(EVP_EncryptUpdate(ctx.get(), first.data(), &len, in.data(), 64));
  ASSERT_TRUE(EVP_EncryptUpdate(ctx.get(), again.data(), &len, in.data(), 64));
  ASSERT_TRUE(EVP_EncryptUpdate(ref.get(), reference.data(), &len, in.data(),
                                64));
  EXPECT_EQ(ToHex(first), ToHex(reference));
  EXPECT_EQ(ToHex(again), ToHex(reference));
}

// libssl's TLS 1.3 records: key once, then an IV-only re-init per record
// (5-byte header as AAD, payload, tag). The key schedule and the powers of
// H are built once, and every record matches the default provider.
TEST_P(ContractTest, Tls13IvOnlyReinitKeepsTheKeySchedule) {
  for (const char *name : {"AES-128-GCM", "AES-256-GCM"}) {
    SCOPED_TRACE(name);
    CipherPtr ciphers[2] = {Fetch(name), env_->Default(name)};
    const Bytes key = RandomBytes(rng_, EVP_CIPHER_get_key_length(ciphers[0].get()));
    const Bytes static_iv = RandomBytes(rng_, 12);
    CipherCtxPtr ctx[2] = {NewCipherCtx(), NewCipherCtx()};
    for (int i = 0; i < 2; ++i) {
      ASSERT_TRUE(EVP_CipherInit_ex(ctx[i].get(), ciphers[i].get(), nullptr,
                                    nullptr, nullptr, 1));
      ASSERT_TRUE(EVP_CIPHER_CTX_ctrl(ctx[i].get(), EVP_CTRL_AEAD_SET_IVLEN, 12,
                                      nullptr));
      ASSERT_TRUE(EVP_CipherInit_ex(ctx[i].get(), nullptr, nullptr, key.data(),
                                    nullptr, -1));
    }
    const uint64_t setups = env_->Stat(name, "key_setups");
    for (uint64_t sequence = 0; sequence < 50; ++sequence) {
      Bytes nonce = static_iv;
      for (int b = 0; b < 8; ++b) nonce[11 - b] ^= uint8_t(sequence >> (8 * b));
      const Bytes header = RandomBytes(rng_, 5);
      const Bytes record = RandomBytes(rng_, 1 + rng_() % 2000);
      Bytes out[2], tag[2];
      for (int i = 0; i < 2; ++i) {
        int len = 0;
        out[i].resize(record.size());
        tag[i].resize(16);
        ASSERT_TRUE(EVP_CipherInit_ex(ctx[i].get(), nullptr, nullptr, nullptr,
                                      nonce.data(), 1));
        ASSERT_TRUE(EVP_CipherUpdate(ctx[i].get(), nullptr, &len, header.data(),
                                     5));
        ASSERT_TRUE(EVP_CipherUpdate(ctx[i].get(), out[i].data(), &len,
                                     record.data(), record.size()));
        ASSERT_TRUE(EVP_CipherFinal_ex(ctx[i].get(), out[i].data(), &len));
        ASSERT_TRUE(EVP_CIPHER_CTX_ctrl(ctx[i].get(), EVP_CTRL_AEAD_GET_TAG, 16,
                                        tag[i].data()));
      }
      EXPECT_EQ(out[0], out[1]);
      EXPECT_EQ(tag[0], tag[1]);
    }
    EXPECT_EQ(env_->Stat(name, "key_setups"), setups);
  }
}

// openssl speed -evp re-keys every operation with the same key: only a new
// key builds a new schedule.
TEST_P(ContractTest, TheSameKeyAgainIsNotExpandedAgain) {
  for (const char *name : {"AES-128-GCM", "AES-256-CBC", "AES-128-XTS"}) {
    SCOPED_TRACE(name);
    CipherPtr cipher = Fetch(name);
    Bytes key = RandomBytes(rng_, EVP_CIPHER_get_key_length(cipher.get()));
    const Bytes iv = RandomBytes(rng_, EVP_CIPHER_get_iv_length(cipher.get()));
    auto ctx = NewCipherCtx();
    ASSERT_TRUE(EVP_EncryptInit_ex2(ctx.get(), cipher.get(), nullptr, nullptr,
                                    nullptr));
    const uint64_t setups = env_->Stat(name, "key_setups");
    for (int i = 0; i < 20; ++i) {
      ASSERT_TRUE(EVP_EncryptInit_ex2(ctx.get(), nullptr, key.data(), iv.data(),
                                      nullptr));
    }
    EXPECT_EQ(env_->Stat(name, "key_setups"), setups + 1);
    key[3] ^= 1;
    ASSERT_TRUE(EVP_EncryptInit_ex2(ctx.get(), nullptr, key.data(), iv.data(),
                                    nullptr));
    EXPECT_EQ(env_->Stat(name, "key_setups"), setups + 2);
  }
}

INSTANTIATE_TEST_SUITE_P(Kernels, ContractTest,
                         ::testing::ValuesIn(AllKernelConfigs()),
                         KernelConfigName);

}  // namespace
}  // namespace aesmux::test
