// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
// ECB against OpenSSL's default provider: random keys and lengths, every
// misalignment, in place and out of place, with guard bytes around the output.
#include "tests/kernels/test_support.h"

namespace aesmux::kernels::testing {
namespace {

class EcbTest : public TierTest {
 protected:
  // Encrypts and decrypts `plaintext` with the kernels and checks both
  // against OpenSSL.
  void Check(std::span<const uint8_t> key, std::span<const uint8_t> plaintext,
             const Placement &placement) {
    SCOPED_TRACE(::testing::Message() << "key_len=" << key.size() << " len="
                                      << plaintext.size() << " " << placement);
    const Bytes expected = Reference::Get().Crypt(CipherName(key.size(), "ECB"),
                                                  true, key, {}, plaintext);
    const aesmux_aes_key enc = EncryptKey(key);
    const aesmux_aes_key dec = DecryptKey(key);

    CallBuffers encrypt(plaintext, placement);
    ops().ecb_encrypt(&enc, encrypt.out(), encrypt.in(), plaintext.size());
    ASSERT_TRUE(SameBytes(encrypt.output(), expected));
    ASSERT_TRUE(encrypt.GuardsIntact());

    CallBuffers decrypt(expected, placement);
    ops().ecb_decrypt(&dec, decrypt.out(), decrypt.in(), plaintext.size());
    ASSERT_TRUE(SameBytes(decrypt.output(), plaintext));
    ASSERT_TRUE(decrypt.GuardsIntact());
  }

  void CheckRandom(size_t key_len, size_t len, const Placement &placement) {
    Check(rng_.RandomBytes(key_len), rng_.RandomBytes(len), placement);
  }
};

TEST_P(EcbTest, RandomLengthsMatchOpenSsl) {
  ForRandomPlacements(rng_, 300, [&](size_t key_len, const Placement &p) {
    CheckRandom(key_len, rng_.MessageLength() & ~size_t{15}, p);
  });
}

// Every block count through the 8-block loop and each remainder step.
TEST_P(EcbTest, EveryBlockCountUpTo40) {
  for (size_t key_len : kKeySizes) {
    for (size_t blocks = 0; blocks <= 40; ++blocks) {
      CheckRandom(key_len, 16 * blocks, Placement{0, 0, false});
      CheckRandom(key_len, 16 * blocks, Placement{3, 3, true});
      if (HasFatalFailure()) return;
    }
  }
}

TEST_P(EcbTest, EveryMisalignment) {
  ForEveryMisalignment([&](size_t key_len, const Placement &p) {
    CheckRandom(key_len, 16 * rng_.Uniform(1, 40), p);
  });
}

AESMUX_INSTANTIATE_FOR_ALL_TIERS(EcbTest);

}  // namespace
}  // namespace aesmux::kernels::testing
