// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
// AES-GCM on the afalg path (the kernel's AEAD interface): whole messages
// with AAD, tags made and checked by the kernel, a bad tag making final
// fail, and the messages the kernel cannot take going elsewhere without a
// wrong byte.
#include <gtest/gtest.h>
#include <openssl/core_names.h>

#include <random>

#include "tests/afalg/afalg_support.h"

namespace aesmux::test {
namespace {

struct Message {
  Bytes key, iv, aad, plain, cipher, tag;
};

// Seals with the default provider (the reference).
Message Seal(const ProviderEnv &env, const char *name, std::mt19937_64 &rng,
             size_t key_len, size_t aad_len, size_t len, size_t iv_len = 12) {
  Message m{RandomBytes(rng, key_len), RandomBytes(rng, iv_len),
            RandomBytes(rng, aad_len), RandomBytes(rng, len), {}, Bytes(16)};
  CipherPtr cipher = env.Default(name);
  auto ctx = NewCipherCtx();
  int out_len = 0;
  m.cipher.resize(len);
  EXPECT_TRUE(EVP_EncryptInit_ex2(ctx.get(), cipher.get(), nullptr, nullptr,
                                  nullptr));
  EXPECT_TRUE(EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_GCM_SET_IVLEN,
                                  static_cast<int>(iv_len), nullptr));
  EXPECT_TRUE(EVP_EncryptInit_ex2(ctx.get(), nullptr, m.key.data(), m.iv.data(),
                                  nullptr));
  if (aad_len != 0) {
    EXPECT_TRUE(EVP_EncryptUpdate(ctx.get(), nullptr, &out_len, m.aad.data(),
                                  static_cast<int>(aad_len)));
  }
  if (len != 0) {
    EXPECT_TRUE(EVP_EncryptUpdate(ctx.get(), m.cipher.data(), &out_len,
                                  m.plain.data(), static_cast<int>(len)));
  }
  EXPECT_TRUE(EVP_EncryptFinal_ex(ctx.get(), nullptr, &out_len));
  EXPECT_TRUE(EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_GCM_GET_TAG, 16,
                                  m.tag.data()));
  return m;
}

class AfalgGcmTest : public ::testing::Test {
 protected:
  void SetUp() override {
    SKIP_WITHOUT_AFALG();
    env_ = LoadAfalgEnv();
    ASSERT_TRUE(env_->loaded()) << env_->error();
    ASSERT_TRUE(env_->ProviderParam("afalg.gcm").starts_with("on (force)"))
        << env_->ProviderParam("afalg.gcm");
  }
  uint64_t Stat(const char *alg, const std::string &path) {
    return env_->Stat(alg, path, "requests");
  }

  // aesmux: seal `m` (tag out) or open it with the tag set before the
  // payload (`tag_first`) or after; payload in `parts` updates. Returns
  // whether final succeeded; `out` gets the output.
  bool Run(const char *name, const Message &m, bool encrypt, bool tag_first,
           int parts, Bytes *out, Bytes *tag_out = nullptr,
           const Bytes *tag_in = nullptr) {
    CipherPtr cipher = env_->Aesmux(name);
    auto ctx = NewCipherCtx();
    int out_len = 0;
    const Bytes &in = encrypt ? m.plain : m.cipher;
    const Bytes &tag = tag_in != nullptr ? *tag_in : m.tag;
    out->assign(in.size(), 0);
    if (!EVP_CipherInit_ex2(ctx.get(), cipher.get(), nullptr, nullptr, encrypt,
                            nullptr) ||
        !EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_GCM_SET_IVLEN,
                             static_cast<int>(m.iv.size()), nullptr) ||
        !EVP_CipherInit_ex2(ctx.get(), nullptr, m.key.data(), m.iv.data(),
                            encrypt, nullptr)) {
      ADD_FAILURE() << "init";
      return false;
    }
    if (!encrypt && tag_first) {
      EXPECT_TRUE(EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_GCM_SET_TAG, 16,
                                      const_cast<uint8_t *>(tag.data())));
    }
    if (!m.aad.empty()) {
      EXPECT_TRUE(EVP_CipherUpdate(ctx.get(), nullptr, &out_len, m.aad.data(),
                                   static_cast<int>(m.aad.size())));
    }
    size_t done = 0;
    for (int p = 0; p < parts && done < in.size(); ++p) {
      const size_t len = p + 1 == parts ? in.size() - done : in.size() / parts;
      EXPECT_TRUE(EVP_CipherUpdate(ctx.get(), out->data() + done, &out_len,
                                   in.data() + done, static_cast<int>(len)));
      EXPECT_EQ(static_cast<size_t>(out_len), len);
      done += len;
    }
    if (!encrypt && !tag_first) {
      EXPECT_TRUE(EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_GCM_SET_TAG, 16,
                                      const_cast<uint8_t *>(tag.data())));
    }
    const bool ok = EVP_CipherFinal_ex(ctx.get(), nullptr, &out_len) == 1;
    if (encrypt && tag_out != nullptr) {
      tag_out->assign(16, 0);
      EXPECT_TRUE(EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_GCM_GET_TAG, 16,
                                      tag_out->data()));
    }
    return ok;
  }

  std::unique_ptr<ProviderEnv> env_;
};

TEST_F(AfalgGcmTest, EveryKeySizeSealsAndOpensOnTheKernel) {
  std::mt19937_64 rng(7);
  for (const auto &[name, key_len] :
       {std::pair{"AES-128-GCM", 16}, std::pair{"AES-192-GCM", 24},
        std::pair{"AES-256-GCM", 32}}) {
    const uint64_t before = Stat(name, "afalg");
    for (int round = 0; round < 12; ++round) {
      const size_t aad_len = rng() % 3 == 0 ? 0 : rng() % 300;
      const size_t len = 1 + rng() % 20000;
      SCOPED_TRACE(testing::Message() << name << " aad " << aad_len << " len "
                                      << len);
      const Message m = Seal(*env_, name, rng, key_len, aad_len, len);
      Bytes out, tag;
      ASSERT_TRUE(Run(name, m, true, false, 1, &out, &tag));
      EXPECT_EQ(ToHex(out), ToHex(m.cipher));
      EXPECT_EQ(ToHex(tag), ToHex(m.tag));
      ASSERT_TRUE(Run(name, m, false, true, 1, &out));
      EXPECT_EQ(ToHex(out), ToHex(m.plain));
    }
    EXPECT_EQ(Stat(name, "afalg"), before + 24) << name;
  }
}

TEST_F(AfalgGcmTest, ABadTagMakesFinalFailAndIsCounted) {
  std::mt19937_64 rng(8);
  const Message m = Seal(*env_, "AES-128-GCM", rng, 16, 13, 1000);
  Bytes bad = m.tag;
  bad[5] ^= 0x40;
  const uint64_t bad_tags = Stat("AES-128-GCM", "afalg-fallback:bad_tag");
  Bytes out;
  EXPECT_FALSE(Run("AES-128-GCM", m, false, true, 1, &out, nullptr, &bad));
  // As with the default provider, the plaintext was handed out by update.
  EXPECT_EQ(ToHex(out), ToHex(m.plain));
  EXPECT_EQ(Stat("AES-128-GCM", "afalg-fallback:bad_tag"), bad_tags + 1);
  // A tampered ciphertext fails the same way.
  Message tampered = m;
  tampered.cipher[17] ^= 1;
  EXPECT_FALSE(Run("AES-128-GCM", tampered, false, true, 1, &out));
}

TEST_F(AfalgGcmTest, ATagSetAfterThePayloadIsCheckedElsewhere) {
  std::mt19937_64 rng(9);
  const Message m = Seal(*env_, "AES-256-GCM", rng, 32, 20, 5000);
  const uint64_t unsupported =
      Stat("AES-256-GCM", "afalg-fallback:unsupported");
  Bytes out;
  EXPECT_TRUE(Run("AES-256-GCM", m, false, false, 1, &out));
  EXPECT_EQ(ToHex(out), ToHex(m.plain));
  Bytes bad = m.tag;
  bad[0] ^= 1;
  EXPECT_FALSE(Run("AES-256-GCM", m, false, false, 1, &out, nullptr, &bad));
  EXPECT_EQ(Stat("AES-256-GCM", "afalg-fallback:unsupported"),
            unsupported + 2);
}

TEST_F(AfalgGcmTest, AMessageInSeveralUpdatesIsReplayedElsewhere) {
  std::mt19937_64 rng(10);
  const Message m = Seal(*env_, "AES-128-GCM", rng, 16, 33, 9000);
  const uint64_t splits = Stat("AES-128-GCM", "afalg-fallback:gcm_split");
  Bytes out, tag;
  ASSERT_TRUE(Run("AES-128-GCM", m, true, false, 3, &out, &tag));
  EXPECT_EQ(ToHex(out), ToHex(m.cipher));
  EXPECT_EQ(ToHex(tag), ToHex(m.tag));
  EXPECT_EQ(Stat("AES-128-GCM", "afalg-fallback:gcm_split"), splits + 1);
  // Decrypting, the kernel checks the tag against the first part alone and
  // rejects it; the CPU's path, replaying, has the whole message.
  const uint64_t bad_tags = Stat("AES-128-GCM", "afalg-fallback:bad_tag");
  ASSERT_TRUE(Run("AES-128-GCM", m, false, true, 4, &out));
  EXPECT_EQ(ToHex(out), ToHex(m.plain));
  EXPECT_EQ(Stat("AES-128-GCM", "afalg-fallback:bad_tag"), bad_tags + 1);
}

TEST_F(AfalgGcmTest, IvsOtherThan12BytesGoElsewhere) {
  std::mt19937_64 rng(11);
  const Message m = Seal(*env_, "AES-192-GCM", rng, 24, 8, 4000, 16);
  const uint64_t unsupported =
      Stat("AES-192-GCM", "afalg-fallback:unsupported");
  Bytes out, tag;
  ASSERT_TRUE(Run("AES-192-GCM", m, true, false, 1, &out, &tag));
  EXPECT_EQ(ToHex(out), ToHex(m.cipher));
  EXPECT_EQ(ToHex(tag), ToHex(m.tag));
  EXPECT_EQ(Stat("AES-192-GCM", "afalg-fallback:unsupported"),
            unsupported + 1);
}

TEST_F(AfalgGcmTest, AadOnlyMessages) {
  std::mt19937_64 rng(12);
  const Message m = Seal(*env_, "AES-128-GCM", rng, 16, 100, 0);
  Bytes out, tag;
  ASSERT_TRUE(Run("AES-128-GCM", m, true, false, 1, &out, &tag));
  EXPECT_EQ(ToHex(tag), ToHex(m.tag));
  EXPECT_TRUE(Run("AES-128-GCM", m, false, true, 1, &out));
  Bytes bad = m.tag;
  bad[15] ^= 1;
  EXPECT_FALSE(Run("AES-128-GCM", m, false, true, 1, &out, nullptr, &bad));
}

// An empty payload call (EVP_Cipher with input, length 0) between two
// pieces of AAD neither routes the message nor ends its AAD, on the path
// that buffers a message until it knows where it goes as on the others:
// the tag is the GCM tag of the whole AAD (ContractTest.
// GcmEmptyPayloadBetweenAadPiecesChangesNothing, on the CPU paths).
TEST_F(AfalgGcmTest, AnEmptyPayloadCallBetweenAadPiecesChangesNothing) {
  std::mt19937_64 rng(13);
  const Message m = Seal(*env_, "AES-128-GCM", rng, 16, 10, 20);
  CipherPtr cipher = env_->Aesmux("AES-128-GCM");
  for (int encrypt : {1, 0}) {
    SCOPED_TRACE(encrypt ? "encrypt" : "decrypt");
    auto ctx = NewCipherCtx();
    Bytes buf = encrypt ? m.plain : m.cipher;
    ASSERT_TRUE(EVP_CipherInit_ex2(ctx.get(), cipher.get(), m.key.data(),
                                   m.iv.data(), encrypt, nullptr));
    if (!encrypt) {
      ASSERT_TRUE(EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_GCM_SET_TAG, 16,
                                      const_cast<uint8_t *>(m.tag.data())));
    }
    EXPECT_EQ(EVP_Cipher(ctx.get(), nullptr, m.aad.data(), 5), 5);
    EXPECT_EQ(EVP_Cipher(ctx.get(), buf.data(), buf.data(), 0), 0);
    EXPECT_EQ(EVP_Cipher(ctx.get(), nullptr, m.aad.data() + 5, 5), 5);
    EXPECT_EQ(EVP_Cipher(ctx.get(), buf.data(), buf.data(), buf.size()),
              static_cast<int>(buf.size()));
    EXPECT_EQ(EVP_Cipher(ctx.get(), nullptr, nullptr, 0), 0);
    EXPECT_EQ(ToHex(buf), ToHex(encrypt ? m.cipher : m.plain));
    if (encrypt) {
      Bytes tag(16);
      EXPECT_TRUE(EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_GCM_GET_TAG, 16,
                                      tag.data()));
      EXPECT_EQ(ToHex(tag), ToHex(m.tag));
    }
  }
}

// TLS 1.2 record mode: one in-place call carries explicit IV, payload and
// tag, so the kernel gets whole records in both directions. Records sealed
// by aesmux open with the default provider and records the default
// provider seals open with aesmux, byte for byte.
TEST_F(AfalgGcmTest, TlsRecordsInPlace) {
  std::mt19937_64 rng(13);
  CipherPtr ours = env_->Aesmux("AES-256-GCM");
  CipherPtr theirs = env_->Default("AES-256-GCM");
  const Bytes key = RandomBytes(rng, 32), fixed = RandomBytes(rng, 4);
  // [0]: aesmux seals, the default provider opens; [1]: the other way.
  CipherCtxPtr seal[2] = {NewCipherCtx(), NewCipherCtx()};
  CipherCtxPtr open[2] = {NewCipherCtx(), NewCipherCtx()};
  for (int way = 0; way < 2; ++way) {
    const EVP_CIPHER *sealer = way == 0 ? ours.get() : theirs.get();
    const EVP_CIPHER *opener = way == 0 ? theirs.get() : ours.get();
    ASSERT_TRUE(EVP_EncryptInit_ex2(seal[way].get(), sealer, key.data(),
                                    nullptr, nullptr));
    ASSERT_TRUE(EVP_DecryptInit_ex2(open[way].get(), opener, key.data(),
                                    nullptr, nullptr));
    ASSERT_TRUE(EVP_CIPHER_CTX_ctrl(seal[way].get(), EVP_CTRL_GCM_SET_IV_FIXED,
                                    4, const_cast<uint8_t *>(fixed.data())));
    ASSERT_TRUE(EVP_CIPHER_CTX_ctrl(open[way].get(), EVP_CTRL_GCM_SET_IV_FIXED,
                                    4, const_cast<uint8_t *>(fixed.data())));
  }
  const uint64_t before = Stat("AES-256-GCM", "afalg");
  for (int record = 0; record < 8; ++record) {
    const size_t payload = 1 + rng() % 16000;
    const Bytes plain = RandomBytes(rng, payload);
    for (int way = 0; way < 2; ++way) {
      SCOPED_TRACE(::testing::Message()
                   << "record " << record << ", sealed by "
                   << (way == 0 ? "aesmux" : "the default provider"));
      Bytes buf(8 + payload + 16);
      std::copy(plain.begin(), plain.end(), buf.begin() + 8);
      // The record length in the AAD: explicit IV and payload when sealing,
      // and the tag too when opening (as libssl passes them).
      uint8_t aad[13] = {0, 0, 0, 0, 0, 0, 0, static_cast<uint8_t>(record),
                         23, 3, 3};
      aad[11] = static_cast<uint8_t>((payload + 8) >> 8);
      aad[12] = static_cast<uint8_t>(payload + 8);
      ASSERT_EQ(EVP_CIPHER_CTX_ctrl(seal[way].get(), EVP_CTRL_AEAD_TLS1_AAD,
                                    13, aad),
                16);
      aad[11] = static_cast<uint8_t>((payload + 24) >> 8);
      aad[12] = static_cast<uint8_t>(payload + 24);
      ASSERT_EQ(EVP_Cipher(seal[way].get(), buf.data(), buf.data(),
                           static_cast<unsigned>(buf.size())),
                static_cast<int>(buf.size()));
      ASSERT_EQ(EVP_CIPHER_CTX_ctrl(open[way].get(), EVP_CTRL_AEAD_TLS1_AAD,
                                    13, aad),
                16);
      // (The default provider's cipher function reports the whole record.)
      ASSERT_GT(EVP_Cipher(open[way].get(), buf.data(), buf.data(),
                           static_cast<unsigned>(buf.size())),
                0);
      EXPECT_EQ(ToHex(buf.data() + 8, payload), ToHex(plain));
    }
  }
  EXPECT_EQ(Stat("AES-256-GCM", "afalg"), before + 16);
}

}  // namespace
}  // namespace aesmux::test
