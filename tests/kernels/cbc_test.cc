// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
// CBC against OpenSSL's default provider: random keys, IVs and lengths, every
// misalignment, in place and out of place, guard bytes around the output, and
// streams split into random chunks (the IV written back must continue them).
#include <cstring>

#include "tests/kernels/test_support.h"

namespace aesmux::kernels::testing {
namespace {

class CbcTest : public TierTest {
 protected:
  // One call in each direction; checks output, guards and the IV written
  // back (the last ciphertext block).
  void Check(std::span<const uint8_t> key, std::span<const uint8_t> iv,
             std::span<const uint8_t> plaintext, const Placement &placement) {
    SCOPED_TRACE(::testing::Message() << "key_len=" << key.size() << " len="
                                      << plaintext.size() << " " << placement);
    const Bytes expected = Reference::Get().Crypt(CipherName(key.size(), "CBC"),
                                                  true, key, iv, plaintext);
    const Bytes next_iv = plaintext.empty()
                              ? Bytes(iv.begin(), iv.end())
                              : Bytes(expected.end() - 16, expected.end());
    const aesmux_aes_key enc = EncryptKey(key);
    const aesmux_aes_key dec = DecryptKey(key);

    CallBuffers encrypt(plaintext, placement);
    GuardedBuffer chain(iv, placement.out_misalign);
    ops().cbc_encrypt(&enc, chain.data(), encrypt.out(), encrypt.in(),
                      plaintext.size());
    ASSERT_TRUE(SameBytes(encrypt.output(), expected));
    ASSERT_TRUE(encrypt.GuardsIntact());
    ASSERT_TRUE(SameBytes(chain.bytes(), next_iv));
    ASSERT_TRUE(chain.GuardsIntact());

    CallBuffers decrypt(expected, placement);
    GuardedBuffer back_chain(iv, placement.in_misalign);
    ops().cbc_decrypt(&dec, back_chain.data(), decrypt.out(), decrypt.in(),
                      plaintext.size());
    ASSERT_TRUE(SameBytes(decrypt.output(), plaintext));
    ASSERT_TRUE(decrypt.GuardsIntact());
    ASSERT_TRUE(SameBytes(back_chain.bytes(), next_iv));
    ASSERT_TRUE(back_chain.GuardsIntact());
  }

  void CheckRandom(size_t key_len, size_t len, const Placement &placement) {
    Check(rng_.RandomBytes(key_len), rng_.RandomBytes(16),
          rng_.RandomBytes(len), placement);
  }
};

TEST_P(CbcTest, RandomLengthsMatchOpenSsl) {
  ForRandomPlacements(rng_, 300, [&](size_t key_len, const Placement &p) {
    CheckRandom(key_len, rng_.MessageLength() & ~size_t{15}, p);
  });
}

TEST_P(CbcTest, EveryBlockCountUpTo40) {
  for (size_t key_len : kKeySizes) {
    for (size_t blocks = 0; blocks <= 40; ++blocks) {
      CheckRandom(key_len, 16 * blocks, Placement{0, 0, false});
      CheckRandom(key_len, 16 * blocks, Placement{5, 5, true});
      if (HasFatalFailure()) return;
    }
  }
}

TEST_P(CbcTest, EveryMisalignment) {
  ForEveryMisalignment([&](size_t key_len, const Placement &p) {
    CheckRandom(key_len, 16 * rng_.Uniform(1, 40), p);
  });
}

// A stream cut into random whole-block chunks must equal one call: each call
// continues from the IV the previous one wrote back.
TEST_P(CbcTest, ChunkedStreamsMatchOneShot) {
  for (size_t key_len : kKeySizes) {
    for (int i = 0; i < 60; ++i) {
      const Bytes key = rng_.RandomBytes(key_len);
      const Bytes iv = rng_.RandomBytes(16);
      const Bytes plaintext =
          rng_.RandomBytes(16 * rng_.Uniform(0, rng_.Coin() ? 64 : 1024));
      const Bytes expected = Reference::Get().Crypt(CipherName(key_len, "CBC"),
                                                    true, key, iv, plaintext);
      const aesmux_aes_key enc = EncryptKey(key);
      const aesmux_aes_key dec = DecryptKey(key);
      Bytes ciphertext(plaintext.size()), decrypted(plaintext.size());
      uint8_t enc_iv[16], dec_iv[16];
      std::memcpy(enc_iv, iv.data(), 16);
      std::memcpy(dec_iv, iv.data(), 16);
      for (size_t offset = 0; offset < plaintext.size();) {
        const size_t blocks = rng_.Uniform(0, 20);
        const size_t len = std::min(16 * blocks, plaintext.size() - offset);
        ops().cbc_encrypt(&enc, enc_iv, ciphertext.data() + offset,
                          plaintext.data() + offset, len);
        ops().cbc_decrypt(&dec, dec_iv, decrypted.data() + offset,
                          expected.data() + offset, len);
        offset += len;
      }
      ASSERT_TRUE(SameBytes(ciphertext, expected)) << "key_len " << key_len;
      ASSERT_TRUE(SameBytes(decrypted, plaintext)) << "key_len " << key_len;
    }
  }
}

AESMUX_INSTANTIATE_FOR_ALL_TIERS(CbcTest);

}  // namespace
}  // namespace aesmux::kernels::testing
