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
             size_t in_misalign, size_t out_misalign, bool in_place) {
    SCOPED_TRACE(::testing::Message()
                 << "key_len=" << key.size() << " len=" << plaintext.size()
                 << " in+" << in_misalign << " out+" << out_misalign
                 << (in_place ? " in place" : ""));
    const std::string name = CipherName(key.size(), "ECB");
    const Bytes expected =
        Reference::Get().Crypt(name, true, key, {}, plaintext);
    const aesmux_aes_key enc = EncryptKey(key);
    const aesmux_aes_key dec = DecryptKey(key);

    GuardedBuffer in(plaintext, in_misalign);
    GuardedBuffer separate_out(plaintext.size(), out_misalign);
    GuardedBuffer &out = in_place ? in : separate_out;
    ops().ecb_encrypt(&enc, out.data(), in.data(), plaintext.size());
    ASSERT_TRUE(SameBytes(out.bytes(), expected));
    ASSERT_TRUE(out.GuardsIntact());

    GuardedBuffer back_in(expected, in_misalign);
    GuardedBuffer separate_back(plaintext.size(), out_misalign);
    GuardedBuffer &back = in_place ? back_in : separate_back;
    ops().ecb_decrypt(&dec, back.data(), back_in.data(), plaintext.size());
    ASSERT_TRUE(SameBytes(back.bytes(), plaintext));
    ASSERT_TRUE(back.GuardsIntact());
  }
};

TEST_P(EcbTest, RandomLengthsMatchOpenSsl) {
  for (size_t key_len : kKeySizes) {
    for (int i = 0; i < 300; ++i) {
      const size_t max_len = rng_.Coin() ? 1024 : 65536;
      const size_t len = rng_.Uniform(0, max_len) & ~size_t{15};
      Check(rng_.RandomBytes(key_len), rng_.RandomBytes(len),
            rng_.Uniform(0, 15), rng_.Uniform(0, 15), rng_.Coin());
      if (HasFatalFailure()) return;
    }
  }
}

// Every block count through the 8-block loop and each remainder step.
TEST_P(EcbTest, EveryBlockCountUpTo40) {
  for (size_t key_len : kKeySizes) {
    const Bytes key = rng_.RandomBytes(key_len);
    for (size_t blocks = 0; blocks <= 40; ++blocks) {
      Check(key, rng_.RandomBytes(16 * blocks), 0, 0, false);
      Check(key, rng_.RandomBytes(16 * blocks), 3, 3, true);
      if (HasFatalFailure()) return;
    }
  }
}

TEST_P(EcbTest, EveryMisalignment) {
  for (size_t key_len : kKeySizes) {
    const Bytes key = rng_.RandomBytes(key_len);
    for (size_t in_misalign = 0; in_misalign < 16; ++in_misalign) {
      for (size_t out_misalign = 0; out_misalign < 16; ++out_misalign) {
        const size_t len = 16 * rng_.Uniform(1, 40);
        Check(key, rng_.RandomBytes(len), in_misalign, out_misalign, false);
        if (HasFatalFailure()) return;
      }
      Check(key, rng_.RandomBytes(16 * 23), in_misalign, in_misalign, true);
      if (HasFatalFailure()) return;
    }
  }
}

AESMUX_INSTANTIATE_FOR_ALL_TIERS(EcbTest);

}  // namespace
}  // namespace aesmux::kernels::testing
