// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
// Constant time, checked under valgrind's memcheck (the ctgrind technique):
// keys, plaintext, padding and MACs are marked undefined
// (VALGRIND_MAKE_MEM_UNDEFINED), so that any branch, conditional move or
// memory address computed from them is reported as a use of an
// uninitialised value, and valgrind's exit code fails the test
// (tests/consttime/CMakeLists.txt runs it with --error-exitcode).
//
// What runs: the aesni tier's kernels (valgrind 3.19 emulates AES-NI and
// PCLMULQDQ but neither VAES nor AVX-512, so the other tiers cannot run
// here; they share the algorithms' structure, see kernels/include), their
// C++ glue (key schedules, GCM's partial blocks and tag), the
// multi-buffer CBC kernels of that tier, and the TLS CBC record's padding
// and MAC removal. Results are declassified (VALGRIND_MAKE_MEM_DEFINED)
// only where the caller's use of them is public by design.
//
// ConstantTimeCanary branches on a secret on purpose: run alone under
// valgrind it must fail, which shows that the harness catches what it is
// meant to.
#include <gtest/gtest.h>
#include <valgrind/memcheck.h>
#include <valgrind/valgrind.h>

#include <array>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "kernels/kernels.h"
#include "kernels/simd_gcm.h"
#include "kernels/simd_key.h"
#include "kernels/tiers.h"
#include "provider/openssl/tls_cbc.h"

namespace aesmux::test {
namespace {

template <typename T>
void Secret(T *data, size_t len) {
  VALGRIND_MAKE_MEM_UNDEFINED(data, len);
}
template <typename T>
void Public(T *data, size_t len) {
  VALGRIND_MAKE_MEM_DEFINED(data, len);
}

std::vector<uint8_t> Random(std::mt19937_64 &rng, size_t len) {
  std::vector<uint8_t> bytes(len);
  for (uint8_t &b : bytes) b = static_cast<uint8_t>(rng());
  return bytes;
}

class ConstantTime : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!RUNNING_ON_VALGRIND) {
      GTEST_SKIP() << "meaningful only under valgrind: ctest -L consttime";
    }
  }
  std::mt19937_64 rng_{2026};
};

// The aesni tier's kernels, called directly, for each key size.
TEST_F(ConstantTime, AesniKernels) {
  for (size_t key_len : {16u, 24u, 32u}) {
    std::vector<uint8_t> key = Random(rng_, key_len);
    std::vector<uint8_t> plain = Random(rng_, 16 * 9 + 5);
    std::vector<uint8_t> out(plain.size()), back(plain.size());
    uint8_t iv[16] = {1, 2, 3}, counter[16] = {4, 5, 6};
    Secret(key.data(), key.size());
    Secret(plain.data(), plain.size());

    aesmux_aes_key enc, dec;
    aesmux_aes_expand_key_aesni(&enc, key.data(), key_len);
    aesmux_aes_decrypt_key_aesni(&dec, &enc);
    const size_t whole = plain.size() & ~size_t{15};

    aesmux_ecb_encrypt_aesni(&enc, out.data(), plain.data(), whole);
    aesmux_ecb_decrypt_aesni(&dec, back.data(), out.data(), whole);
    aesmux_cbc_encrypt_aesni(&enc, iv, out.data(), plain.data(), whole);
    aesmux_cbc_decrypt_aesni(&dec, iv, back.data(), out.data(), whole);
    aesmux_ctr_crypt_aesni(&enc, counter, out.data(), plain.data(), whole);
    // XTS with ciphertext stealing (the length is public) from a secret
    // first tweak (it is E(key 2, IV)).
    uint8_t first_tweak[16];
    aesmux_ecb_encrypt_aesni(&enc, first_tweak, iv, 16);
    aesmux_xts_encrypt_aesni(&enc, first_tweak, out.data(), plain.data(),
                             plain.size());
    aesmux_xts_decrypt_aesni(&dec, first_tweak, back.data(), out.data(),
                             plain.size());

    aesmux_gcm_key gkey;
    uint8_t xi[16] = {};
    aesmux_gcm_init_aesni(&gkey, &enc);
    aesmux_ghash_aesni(&gkey, xi, plain.data(), whole);
    aesmux_gcm_encrypt_aesni(&enc, &gkey, counter, xi, out.data(),
                             plain.data(), whole);
    aesmux_gcm_decrypt_aesni(&enc, &gkey, counter, xi, back.data(),
                             out.data(), whole);
  }
}

// The multi-buffer CBC kernels of the aesni tier, every lane keyed and
// fed with secrets.
TEST_F(ConstantTime, AesniMultiBufferKernels) {
  static aesmux_mb_cbc_lanes lanes;
  std::vector<uint8_t> plain = Random(rng_, 8 * 64), out(8 * 64);
  std::vector<uint8_t> keys = Random(rng_, 8 * 16);
  Secret(plain.data(), plain.size());
  Secret(keys.data(), keys.size());
  for (unsigned lane = 0; lane < 8; ++lane) {
    aesmux_aes_key key;
    aesmux_aes_expand_key_aesni(&key, keys.data() + 16 * lane, 16);
    for (size_t r = 0; r <= key.rounds; ++r) {
      std::memcpy(lanes.round_keys[r][lane], key.round_keys[r], 16);
    }
    std::memset(lanes.iv[lane], static_cast<int>(lane), 16);
  }
  for (auto kernel :
       {aesmux_cbc_encrypt_x4_aesni, aesmux_cbc_encrypt_x8_aesni}) {
    for (unsigned lane = 0; lane < 8; ++lane) {
      lanes.in[lane] = plain.data() + 64 * lane;
      lanes.out[lane] = out.data() + 64 * lane;
    }
    kernel(&lanes, 0xff, 64, 10);
  }
}

// The glue around the kernels: schedules built and replaced, GCM fed in
// fragments that leave partial blocks of AAD and data, and the tag; GCM's
// whole-message Seal and Open.
TEST_F(ConstantTime, AesniKeysAndGcmFragments) {
  const kernels::Tier *tier = kernels::TierByName("aesni");
  ASSERT_NE(tier, nullptr);
  std::vector<uint8_t> key = Random(rng_, 32), other = Random(rng_, 32);
  std::vector<uint8_t> aad = Random(rng_, 45), plain = Random(rng_, 300);
  std::vector<uint8_t> out(plain.size());
  Secret(key.data(), key.size());
  Secret(other.data(), other.size());
  Secret(aad.data(), aad.size());
  Secret(plain.data(), plain.size());

  kernels::SimdKey simd;
  simd.Set(*tier, key);
  uint8_t iv[16] = {9};
  simd.CbcDecrypt(iv, out.data(), plain.data(), 256);
  // The chaining value is the last ciphertext block, which is public; CTR's
  // counter too (the kernels branch on it, to handle carries).
  Public(iv, sizeof(iv));
  simd.Set(*tier, {other.data(), 16});  // a shorter key replaces a longer
  simd.Ctr(iv, out.data(), plain.data(), 256);
  kernels::SimdKey xts_data;
  kernels::XtsTweakKey xts_tweak;
  xts_data.Set(*tier, {key.data(), 16});
  xts_tweak.Set(*tier, {key.data() + 16, 16});
  // The first tweak is made on the first call for an IV and kept: the
  // comparison that decides it reads the IV only.
  xts_data.XtsDecrypt(xts_tweak.FirstTweak(iv), out.data(), plain.data(),
                      250);
  iv[0] ^= 1;
  xts_data.XtsDecrypt(xts_tweak.FirstTweak(iv), out.data(), plain.data(),
                      250);
  xts_data.XtsDecrypt(xts_tweak.FirstTweak(iv), out.data(), plain.data(),
                      250);
  xts_data.EncryptBlock(out.data(), plain.data());  // turned back: MixColumns

  for (const size_t iv_len : {12u, 7u, 60u}) {
    kernels::SimdGcm gcm;
    ASSERT_TRUE(gcm.SetKey(*tier, {key.data(), 32}));
    std::vector<uint8_t> nonce = Random(rng_, iv_len);
    gcm.Start(nonce);
    size_t done = 0;
    for (size_t piece : {1u, 20u, 24u}) {
      ASSERT_EQ(gcm.Aad({aad.data() + done, piece}),
                kernels::SimdGcm::Status::kOk);
      done += piece;
    }
    done = 0;
    for (size_t piece : {3u, 13u, 16u, 200u, 68u}) {
      ASSERT_EQ(gcm.Encrypt(out.data() + done, plain.data() + done, piece),
                kernels::SimdGcm::Status::kOk);
      done += piece;
    }
    uint8_t tag[16];
    gcm.Finish(tag);
    // The whole message in one call, sealed and opened (a TLS record's
    // shape, and one ending in a partial block): whether the tag matches
    // is the caller's to know, so only that is declassified.
    for (const size_t len : {16u, 300u}) {
      ASSERT_EQ(gcm.Seal(nonce, {aad.data(), 13}, out.data(), plain.data(),
                         len, tag),
                kernels::SimdGcm::Status::kOk);
      kernels::SimdGcm::Status opened =
          gcm.Open(nonce, {aad.data(), 13}, out.data(), out.data(), len, tag);
      Public(&opened, sizeof(opened));
      ASSERT_EQ(opened, kernels::SimdGcm::Status::kOk);
    }
    ASSERT_TRUE(gcm.SetKey(*tier, {other.data(), 16}));  // over the old powers
  }
}

// TLS CBC records (MAC-then-encrypt) after decryption: the padding, its
// length and the MAC are secret; the layout the function reports is
// public by design only once the caller's MAC check has passed, so it is
// left undefined here and not looked at.
TEST_F(ConstantTime, TlsCbcPaddingAndMacRemoval) {
  constexpr unsigned kTls10 = 0x0301, kTls12 = 0x0303, kSsl3 = 0x0300;
  for (unsigned version : {kTls10, kTls12, kSsl3}) {
    for (size_t mac_size : {20u, 32u, 48u}) {
      for (size_t record_len : {64u, 160u, 400u}) {
        std::vector<uint8_t> record = Random(rng_, record_len);
        // A well-formed padding on some records, garbage on others: the
        // code must not care which.
        const size_t pad = rng_() % 16;
        if (rng_() % 2 == 0) {
          std::memset(record.data() + record_len - 1 - pad,
                      static_cast<int>(pad), pad + 1);
        }
        uint8_t random_mac[openssl::kMaxTlsMacSize];
        uint8_t mac[openssl::kMaxTlsMacSize];
        for (uint8_t &b : random_mac) b = static_cast<uint8_t>(rng_());
        Secret(record.data(), record.size());
        Secret(random_mac, sizeof(random_mac));
        openssl::TlsRecordLayout layout;
        const bool publicly_valid = openssl::TlsRemovePaddingAndMac(
            version, record, mac_size, random_mac, mac, &layout);
        // Only lengths decide this.
        const size_t explicit_iv = version == kTls12 ? 16 : 0;
        EXPECT_EQ(publicly_valid,
                  record_len >= explicit_iv + 1 + mac_size);
      }
    }
  }
}

// Padding a record to encrypt it: the record's length is public, its bytes
// secret.
TEST_F(ConstantTime, TlsCbcPadding) {
  for (size_t len : {0u, 15u, 16u, 100u}) {
    std::vector<uint8_t> record = Random(rng_, len + 16);
    Secret(record.data(), record.size());
    EXPECT_EQ(openssl::TlsPad(0x0303, record.data(), len) % 16, 0u);
  }
}

// Not a check of aesmux: it must fail under valgrind (CMakeLists.txt runs
// it expecting failure), proving that a branch on a secret is caught.
TEST(ConstantTimeCanary, ABranchOnASecretIsReported) {
  if (!RUNNING_ON_VALGRIND) GTEST_SKIP() << "meaningful only under valgrind";
  volatile uint8_t secret_byte = 7;
  uint8_t secret = secret_byte;
  Secret(&secret, 1);
  volatile int sink = 0;
  if (secret > 3) sink = 1;
  (void)sink;
}

}  // namespace
}  // namespace aesmux::test
