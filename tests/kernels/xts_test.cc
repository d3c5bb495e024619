// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
// XTS with ciphertext stealing. Two references: OpenSSL's AES-128-XTS and
// AES-256-XTS, and (for every key size, including 192-bit keys, which OpenSSL
// does not offer in XTS) IEEE 1619 written out here on top of OpenSSL's ECB.
#include <algorithm>
#include <cstring>

#include "tests/kernels/test_support.h"

namespace aesmux::kernels::testing {
namespace {

using Block = std::array<uint8_t, 16>;

// Multiplication by x in GF(2^128), IEEE 1619 little-endian convention.
void Double(Block &t) {
  uint8_t carry = 0;
  for (int i = 0; i < 16; ++i) {
    const uint8_t next = t[i] >> 7;
    t[i] = static_cast<uint8_t>(t[i] << 1 | carry);
    carry = next;
  }
  if (carry) t[0] ^= 0x87;
}

// T_0 = E(key2, iv), the first tweak the kernels take (kernels.h), from
// OpenSSL's ECB.
Block FirstTweak(std::span<const uint8_t> key2, std::span<const uint8_t> iv) {
  return Reference::Get().EncryptBlock(
      key2, std::span<const uint8_t, 16>(iv.data(), 16));
}

// IEEE 1619-2007 §5.3 (encryption) and §5.4 (decryption). The regular blocks
// are whitened with their tweaks and go through one ECB call.
Bytes ModelXts(bool encrypt, std::span<const uint8_t> key1,
               std::span<const uint8_t> key2, std::span<const uint8_t> iv,
               std::span<const uint8_t> in) {
  Reference &ref = Reference::Get();
  const std::string ecb = CipherName(key1.size(), "ECB");
  Block tweak = FirstTweak(key2, iv);
  const size_t full = in.size() / 16, tail = in.size() % 16;
  const size_t regular = tail ? full - 1 : full;

  Bytes whitened(in.begin(), in.begin() + 16 * regular);
  std::vector<Block> tweaks(regular);
  for (size_t b = 0; b < regular; ++b, Double(tweak)) {
    tweaks[b] = tweak;
    for (int i = 0; i < 16; ++i) whitened[16 * b + i] ^= tweak[i];
  }
  Bytes out = ref.Crypt(ecb, encrypt, key1, {}, whitened);
  for (size_t b = 0; b < regular; ++b) {
    for (int i = 0; i < 16; ++i) out[16 * b + i] ^= tweaks[b][i];
  }
  if (tail == 0) return out;

  auto crypt_block = [&](const Block &t, std::span<const uint8_t> src) {
    Block x;
    for (int i = 0; i < 16; ++i) x[i] = src[i] ^ t[i];
    const Bytes y = ref.Crypt(ecb, encrypt, key1, {}, x);
    for (int i = 0; i < 16; ++i) x[i] = y[i] ^ t[i];
    return x;
  };
  out.resize(in.size());
  const size_t m1 = 16 * regular;  // offset of the last full block
  Block next_tweak = tweak;
  Double(next_tweak);
  // Encryption uses T[m-1] then T[m]; decryption T[m] then T[m-1].
  const Block first =
      crypt_block(encrypt ? tweak : next_tweak, in.subspan(m1, 16));
  Block padded = first;
  std::memcpy(padded.data(), &in[m1 + 16], tail);
  std::memcpy(&out[m1 + 16], first.data(), tail);
  const Block last = crypt_block(encrypt ? next_tweak : tweak, padded);
  std::memcpy(&out[m1], last.data(), 16);
  return out;
}

class XtsTest : public TierTest {
 protected:
  // Checks one data unit in both directions against the model and, for
  // 128/256-bit keys, OpenSSL's XTS.
  void Check(std::span<const uint8_t> key1, std::span<const uint8_t> key2,
             std::span<const uint8_t> iv, std::span<const uint8_t> plaintext,
             const Placement &placement) {
    SCOPED_TRACE(::testing::Message() << "key_len=" << key1.size() << " len="
                                      << plaintext.size() << " " << placement);
    const Bytes expected = ModelXts(true, key1, key2, iv, plaintext);
    if (key1.size() != 24) {
      Bytes both(key1.begin(), key1.end());
      both.insert(both.end(), key2.begin(), key2.end());
      const Bytes openssl = Reference::Get().Crypt(
          CipherName(key1.size(), "XTS"), true, both, iv, plaintext);
      ASSERT_TRUE(SameBytes(expected, openssl))
          << "model disagrees with OpenSSL";
    }
    ASSERT_TRUE(SameBytes(ModelXts(false, key1, key2, iv, expected), plaintext))
        << "model does not invert itself";

    const aesmux_aes_key enc = EncryptKey(key1);
    const aesmux_aes_key dec = DecryptKey(key1);
    const Block first_tweak = FirstTweak(key2, iv);
    GuardedBuffer tweak_buffer(first_tweak, 3);

    CallBuffers encrypt(plaintext, placement);
    ops().xts_encrypt(&enc, tweak_buffer.data(), encrypt.out(), encrypt.in(),
                      plaintext.size());
    ASSERT_TRUE(SameBytes(encrypt.output(), expected));
    ASSERT_TRUE(encrypt.GuardsIntact());

    CallBuffers decrypt(expected, placement);
    ops().xts_decrypt(&dec, tweak_buffer.data(), decrypt.out(), decrypt.in(),
                      plaintext.size());
    ASSERT_TRUE(SameBytes(decrypt.output(), plaintext));
    ASSERT_TRUE(decrypt.GuardsIntact());
    ASSERT_TRUE(SameBytes(tweak_buffer.bytes(), first_tweak))
        << "tweak modified";
  }

  void CheckRandom(size_t key_len, size_t len, const Placement &placement) {
    Check(rng_.RandomBytes(key_len), rng_.RandomBytes(key_len),
          rng_.RandomBytes(16), rng_.RandomBytes(len), placement);
  }
};

// Every length from one block to 600 bytes: each tail length 1..15 after
// every block count through the 8-block loop and its remainder steps.
TEST_P(XtsTest, EveryLength16To600) {
  for (size_t key_len : kKeySizes) {
    for (size_t len = 16; len <= 600; ++len) {
      CheckRandom(key_len, len,
                  Placement{len % 16, (len / 16) % 16, len % 3 == 0});
      if (HasFatalFailure()) return;
    }
  }
}

// Every block count to 130, with and without a stolen tail: one to four
// iterations of the eight-vector loop (32 blocks with zmm, 16 with ymm;
// AVX2 enters it from 32 blocks) and every remainder after them through the
// four-vector, one-vector and partial steps.
TEST_P(XtsTest, EveryBlockCountTo130) {
  for (size_t key_len : kKeySizes) {
    for (size_t blocks = 1; blocks <= 130; ++blocks) {
      for (size_t tail : {size_t{0}, size_t{9}}) {
        CheckRandom(key_len, 16 * blocks + tail,
                    Placement{blocks % 5, 0, blocks % 2 == 1});
        if (HasFatalFailure()) return;
      }
    }
  }
}

TEST_P(XtsTest, EveryTailLengthAfterLargeUnits) {
  for (size_t key_len : kKeySizes) {
    for (size_t tail = 0; tail < 16; ++tail) {
      for (size_t blocks : {size_t{129}, size_t{1000}, size_t{4095}}) {
        CheckRandom(
            key_len, 16 * blocks + tail,
            Placement{rng_.Uniform(0, 15), rng_.Uniform(0, 15), rng_.Coin()});
        if (HasFatalFailure()) return;
      }
    }
  }
}

TEST_P(XtsTest, RandomLengthsMatchOpenSsl) {
  ForRandomPlacements(rng_, 200, [&](size_t key_len, const Placement &p) {
    CheckRandom(key_len, std::max<size_t>(16, rng_.MessageLength()), p);
  });
}

TEST_P(XtsTest, EveryMisalignment) {
  ForEveryMisalignment([&](size_t key_len, const Placement &p) {
    CheckRandom(key_len, rng_.Uniform(16, 700), p);
  });
}

// IEEE 1619-2007 Annex B vector 15 (AES-128, 17-byte data unit: one full
// block plus one byte of stealing), as carried in OpenSSL 3.0's
// test/recipes/30-test_evp_data/evpciph_aes_common.txt.
TEST_P(XtsTest, Ieee1619Vector15) {
  const Bytes key1 = FromHex("fffefdfcfbfaf9f8f7f6f5f4f3f2f1f0");
  const Bytes key2 = FromHex("bfbebdbcbbbab9b8b7b6b5b4b3b2b1b0");
  const Bytes iv = FromHex("9a785634120000000000000000000000");
  const Bytes plaintext = FromHex("000102030405060708090a0b0c0d0e0f10");
  const Bytes ciphertext = FromHex("6c1625db4671522d3d7599601de7ca09ed");
  const aesmux_aes_key enc = EncryptKey(key1), dec = DecryptKey(key1);
  const Block tweak = FirstTweak(key2, iv);
  Bytes out(plaintext.size());
  ops().xts_encrypt(&enc, tweak.data(), out.data(), plaintext.data(),
                    plaintext.size());
  EXPECT_EQ(Hex(out), Hex(ciphertext));
  ops().xts_decrypt(&dec, tweak.data(), out.data(), ciphertext.data(),
                    ciphertext.size());
  EXPECT_EQ(Hex(out), Hex(plaintext));
}

AESMUX_INSTANTIATE_FOR_ALL_TIERS(XtsTest);

}  // namespace
}  // namespace aesmux::kernels::testing
