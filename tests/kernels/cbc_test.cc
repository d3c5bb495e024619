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
             std::span<const uint8_t> plaintext, size_t in_misalign,
             size_t out_misalign, bool in_place) {
    SCOPED_TRACE(::testing::Message()
                 << "key_len=" << key.size() << " len=" << plaintext.size()
                 << " in+" << in_misalign << " out+" << out_misalign
                 << (in_place ? " in place" : ""));
    const std::string name = CipherName(key.size(), "CBC");
    const Bytes expected =
        Reference::Get().Crypt(name, true, key, iv, plaintext);
    const Bytes next_iv = plaintext.empty()
                              ? Bytes(iv.begin(), iv.end())
                              : Bytes(expected.end() - 16, expected.end());
    const aesmux_aes_key enc = EncryptKey(key);
    const aesmux_aes_key dec = DecryptKey(key);

    GuardedBuffer in(plaintext, in_misalign);
    GuardedBuffer separate_out(plaintext.size(), out_misalign);
    GuardedBuffer &out = in_place ? in : separate_out;
    GuardedBuffer chain(iv, out_misalign);
    ops().cbc_encrypt(&enc, chain.data(), out.data(), in.data(),
                      plaintext.size());
    ASSERT_TRUE(SameBytes(out.bytes(), expected));
    ASSERT_TRUE(out.GuardsIntact());
    ASSERT_TRUE(SameBytes(chain.bytes(), next_iv));
    ASSERT_TRUE(chain.GuardsIntact());

    GuardedBuffer back_in(expected, in_misalign);
    GuardedBuffer separate_back(plaintext.size(), out_misalign);
    GuardedBuffer &back = in_place ? back_in : separate_back;
    GuardedBuffer back_chain(iv, in_misalign);
    ops().cbc_decrypt(&dec, back_chain.data(), back.data(), back_in.data(),
                      plaintext.size());
    ASSERT_TRUE(SameBytes(back.bytes(), plaintext));
    ASSERT_TRUE(back.GuardsIntact());
    ASSERT_TRUE(SameBytes(back_chain.bytes(), next_iv));
  }
};

TEST_P(CbcTest, RandomLengthsMatchOpenSsl) {
  for (size_t key_len : kKeySizes) {
    for (int i = 0; i < 300; ++i) {
      const size_t max_len = rng_.Coin() ? 1024 : 65536;
      const size_t len = rng_.Uniform(0, max_len) & ~size_t{15};
      Check(rng_.RandomBytes(key_len), rng_.RandomBytes(16),
            rng_.RandomBytes(len), rng_.Uniform(0, 15), rng_.Uniform(0, 15),
            rng_.Coin());
      if (HasFatalFailure()) return;
    }
  }
}

TEST_P(CbcTest, EveryBlockCountUpTo40) {
  for (size_t key_len : kKeySizes) {
    const Bytes key = rng_.RandomBytes(key_len);
    for (size_t blocks = 0; blocks <= 40; ++blocks) {
      Check(key, rng_.RandomBytes(16), rng_.RandomBytes(16 * blocks), 0, 0,
            false);
      Check(key, rng_.RandomBytes(16), rng_.RandomBytes(16 * blocks), 5, 5,
            true);
      if (HasFatalFailure()) return;
    }
  }
}

TEST_P(CbcTest, EveryMisalignment) {
  for (size_t key_len : kKeySizes) {
    const Bytes key = rng_.RandomBytes(key_len);
    for (size_t in_misalign = 0; in_misalign < 16; ++in_misalign) {
      for (size_t out_misalign = 0; out_misalign < 16; ++out_misalign) {
        Check(key, rng_.RandomBytes(16),
              rng_.RandomBytes(16 * rng_.Uniform(1, 40)), in_misalign,
              out_misalign, false);
        if (HasFatalFailure()) return;
      }
      Check(key, rng_.RandomBytes(16), rng_.RandomBytes(16 * 27), in_misalign,
            in_misalign, true);
      if (HasFatalFailure()) return;
    }
  }
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
