// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
// Key expansion (encryption schedule) and the equivalent inverse cipher
// schedule, against FIPS-197 known answers and a straightforward software
// model of FIPS-197 §5.2 / §5.3.5.
#include <array>
#include <cstring>

#include "kernels/simd_key.h"
#include "tests/kernels/test_support.h"

namespace aesmux::kernels::testing {
namespace {

// GF(2^8) arithmetic modulo x^8 + x^4 + x^3 + x + 1.
constexpr uint8_t Xtime(uint8_t a) {
  return static_cast<uint8_t>((a << 1) ^ ((a & 0x80) ? 0x1b : 0));
}
constexpr uint8_t GfMul(uint8_t a, uint8_t b) {
  uint8_t r = 0;
  for (; b != 0; b >>= 1, a = Xtime(a)) {
    if (b & 1) r ^= a;
  }
  return r;
}

// The S-box computed from its definition (inverse, then affine map), so the
// model shares no table with anything under test.
constexpr std::array<uint8_t, 256> MakeSbox() {
  std::array<uint8_t, 256> sbox{};
  for (int a = 0; a < 256; ++a) {
    uint8_t inv = 0;
    for (int b = 1; b < 256 && a != 0; ++b) {
      if (GfMul(static_cast<uint8_t>(a), static_cast<uint8_t>(b)) == 1) {
        inv = static_cast<uint8_t>(b);
        break;
      }
    }
    uint8_t s = inv;
    for (int i = 1; i <= 4; ++i) {
      s ^= static_cast<uint8_t>((inv << i) | (inv >> (8 - i)));
    }
    sbox[a] = s ^ 0x63;
  }
  return sbox;
}

using Schedule = std::array<std::array<uint8_t, 16>, 15>;

// FIPS-197 §5.2 KeyExpansion, byte-oriented.
Schedule ModelExpand(std::span<const uint8_t> key, int *rounds) {
  static const std::array<uint8_t, 256> kSbox = MakeSbox();
  const size_t nk = key.size() / 4;
  *rounds = static_cast<int>(nk) + 6;
  const size_t total_words = 4 * (*rounds + 1);
  std::vector<std::array<uint8_t, 4>> w(total_words);
  for (size_t i = 0; i < nk; ++i) std::memcpy(w[i].data(), &key[4 * i], 4);
  uint8_t rcon = 1;
  for (size_t i = nk; i < total_words; ++i) {
    std::array<uint8_t, 4> t = w[i - 1];
    if (i % nk == 0) {
      t = {static_cast<uint8_t>(kSbox[t[1]] ^ rcon), kSbox[t[2]], kSbox[t[3]],
           kSbox[t[0]]};
      rcon = Xtime(rcon);
    } else if (nk > 6 && i % nk == 4) {
      for (auto &b : t) b = kSbox[b];
    }
    for (int j = 0; j < 4; ++j) w[i][j] = w[i - nk][j] ^ t[j];
  }
  Schedule schedule{};
  for (size_t i = 0; i < total_words; ++i) {
    std::memcpy(&schedule[i / 4][4 * (i % 4)], w[i].data(), 4);
  }
  return schedule;
}

std::array<uint8_t, 16> ModelInvMixColumns(const std::array<uint8_t, 16> &in) {
  std::array<uint8_t, 16> out;
  for (int c = 0; c < 4; ++c) {
    const uint8_t *s = &in[4 * c];
    for (int r = 0; r < 4; ++r) {
      out[4 * c + r] = GfMul(s[r], 0x0e) ^ GfMul(s[(r + 1) % 4], 0x0b) ^
                       GfMul(s[(r + 2) % 4], 0x0d) ^
                       GfMul(s[(r + 3) % 4], 0x09);
    }
  }
  return out;
}

class KeyScheduleTest : public TierTest {
 protected:
  void ExpectMatchesModel(std::span<const uint8_t> key) {
    int rounds = 0;
    const Schedule model = ModelExpand(key, &rounds);
    const aesmux_aes_key enc = EncryptKey(key);
    ASSERT_EQ(enc.rounds, static_cast<uint32_t>(rounds));
    for (int r = 0; r <= rounds; ++r) {
      EXPECT_EQ(Hex(enc.round_keys[r]), Hex(model[r]))
          << "round key " << r << " of key " << Hex(key);
    }
    aesmux_aes_key dec{};
    ops().decrypt_key(&dec, &enc);
    ASSERT_EQ(dec.rounds, static_cast<uint32_t>(rounds));
    for (int r = 0; r <= rounds; ++r) {
      const std::array<uint8_t, 16> expected =
          (r == 0 || r == rounds) ? model[rounds - r]
                                  : ModelInvMixColumns(model[rounds - r]);
      EXPECT_EQ(Hex(dec.round_keys[r]), Hex(expected))
          << "decryption round key " << r << " of key " << Hex(key);
    }
  }
};

// FIPS-197 Appendix A: the expansion examples. We check the first expanded
// words, the last round key, and every word against the model.
struct ExpansionVector {
  const char *key;
  const char *round_key_1;     // w[4..7]
  const char *last_round_key;  // w[4*Nr .. 4*Nr+3]
};
constexpr ExpansionVector kFips197AppendixA[] = {
    // A.1, AES-128
    {"2b7e151628aed2a6abf7158809cf4f3c", "a0fafe1788542cb123a339392a6c7605",
     "d014f9a8c9ee2589e13f0cc8b6630ca6"},
    // A.2, AES-192: w[6..9] spans round keys 1 and 2; round key 1 is
    // w[4..7] = key words 4, 5 then w6, w7.
    {"8e73b0f7da0e6452c810f32b809079e562f8ead2522c6b7b",
     "62f8ead2522c6b7bfe0c91f72402f5a5", "e98ba06f448c773c8ecc720401002202"},
    // A.3, AES-256: round key 1 is the second half of the key.
    {"603deb1015ca71be2b73aef0857d77811f352c073b6108d72d9810a30914dff4",
     "1f352c073b6108d72d9810a30914dff4", "fe4890d1e6188d0b046df344706c631e"},
};

TEST_P(KeyScheduleTest, Fips197AppendixA) {
  for (const ExpansionVector &v : kFips197AppendixA) {
    const Bytes key = FromHex(v.key);
    const aesmux_aes_key enc = EncryptKey(key);
    EXPECT_EQ(Hex(enc.round_keys[1]), v.round_key_1) << v.key;
    EXPECT_EQ(Hex(enc.round_keys[enc.rounds]), v.last_round_key) << v.key;
    ExpectMatchesModel(key);
  }
}

// FIPS-197 Appendix C: one block under each key size, through the
// schedules this tier builds (ECB with one block).
TEST_P(KeyScheduleTest, Fips197AppendixC) {
  struct Vector {
    const char *key;
    const char *ciphertext;
  };
  constexpr Vector kVectors[] = {
      {"000102030405060708090a0b0c0d0e0f", "69c4e0d86a7b0430d8cdb78070b4c55a"},
      {"000102030405060708090a0b0c0d0e0f1011121314151617",
       "dda97ca4864cdfe06eaf70a0ec0d7191"},
      {"000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f",
       "8ea2b7ca516745bfeafc49904b496089"},
  };
  const Bytes plaintext = FromHex("00112233445566778899aabbccddeeff");
  for (const Vector &v : kVectors) {
    const Bytes key = FromHex(v.key);
    const aesmux_aes_key enc = EncryptKey(key);
    const aesmux_aes_key dec = DecryptKey(key);
    uint8_t block[16];
    ops().ecb_encrypt(&enc, block, plaintext.data(), 16);
    EXPECT_EQ(Hex(block), v.ciphertext) << v.key;
    ops().ecb_decrypt(&dec, block, block, 16);
    EXPECT_EQ(Hex(block), Hex(plaintext)) << v.key;
  }
}

TEST_P(KeyScheduleTest, RandomKeysMatchModel) {
  for (size_t key_len : kKeySizes) {
    for (int i = 0; i < 200; ++i) ExpectMatchesModel(rng_.RandomBytes(key_len));
  }
}

// The decryption schedule may be derived in place.
TEST_P(KeyScheduleTest, DecryptKeyInPlace) {
  for (size_t key_len : kKeySizes) {
    const Bytes key = rng_.RandomBytes(key_len);
    const aesmux_aes_key expected = DecryptKey(key);
    aesmux_aes_key key_schedule = EncryptKey(key);
    ops().decrypt_key(&key_schedule, &key_schedule);
    EXPECT_EQ(std::memcmp(&key_schedule, &expected, sizeof expected), 0)
        << Hex(key);
  }
}

// SimdKey holds one schedule and turns it for the direction asked for:
// turned back for encryption (MixColumns in C++, no kernel) it is the
// expansion again, every time.
TEST_P(KeyScheduleTest, SimdKeyTurnsBothWays) {
  for (size_t key_len : kKeySizes) {
    const Bytes key = rng_.RandomBytes(key_len);
    const aesmux_aes_key enc = EncryptKey(key);
    const aesmux_aes_key dec = DecryptKey(key);
    const size_t used = 16 * (enc.rounds + 1);
    SimdKey simd;
    simd.Set(GetParam(), key);
    for (int turn = 0; turn < 3; ++turn) {
      const aesmux_aes_key &d = simd.decrypt_schedule();
      ASSERT_EQ(d.rounds, dec.rounds);
      EXPECT_EQ(std::memcmp(d.round_keys, dec.round_keys, used), 0)
          << "turn " << turn << " of " << Hex(key);
      const aesmux_aes_key &e = simd.encrypt_schedule();
      ASSERT_EQ(e.rounds, enc.rounds);
      EXPECT_EQ(std::memcmp(e.round_keys, enc.round_keys, used), 0)
          << "turn " << turn << " of " << Hex(key);
    }
  }
}

// No context keeps the key beside its schedule: SimdKey gives it back from
// the schedule in either direction, and from SetRaw's storage.
TEST_P(KeyScheduleTest, SimdKeyGivesTheKeyBack) {
  for (size_t key_len : kKeySizes) {
    const Bytes key = rng_.RandomBytes(key_len);
    SimdKey simd;
    simd.Set(GetParam(), key);
    uint8_t out[64] = {};
    ASSERT_EQ(simd.CipherKey(out), key_len);
    EXPECT_EQ(Hex({out, key_len}), Hex(key)) << "encryption schedule";
    simd.decrypt_schedule();
    std::memset(out, 0, sizeof(out));
    ASSERT_EQ(simd.CipherKey(out), key_len);
    EXPECT_EQ(Hex({out, key_len}), Hex(key)) << "decryption schedule";
  }
  const Bytes xts_key = rng_.RandomBytes(64);
  SimdKey raw;
  raw.SetRaw(xts_key);
  EXPECT_FALSE(raw.is_set());
  EXPECT_TRUE(raw.has_key());
  uint8_t out[64] = {};
  ASSERT_EQ(raw.CipherKey(out), 64u);
  EXPECT_EQ(Hex({out, 64}), Hex(xts_key));
}

// Expansion reads only the key bytes and writes only the schedule.
TEST_P(KeyScheduleTest, UnalignedKeyAndNoStrayWrites) {
  for (size_t key_len : kKeySizes) {
    for (size_t misalign = 0; misalign < 16; ++misalign) {
      const Bytes key = rng_.RandomBytes(key_len);
      GuardedBuffer key_buffer(key, misalign);
      struct {
        aesmux_aes_key schedule;
        uint8_t after[64];
      } guarded;
      std::memset(&guarded, 0xA5, sizeof guarded);
      ops().expand_key(&guarded.schedule, key_buffer.data(), key_len);
      for (uint8_t b : guarded.after) ASSERT_EQ(b, 0xA5);
      aesmux_aes_key expected = EncryptKey(key);
      const size_t used = 16 * (expected.rounds + 1);
      EXPECT_EQ(std::memcmp(&guarded.schedule, &expected, used), 0);
      EXPECT_EQ(guarded.schedule.rounds, expected.rounds);
    }
  }
}

AESMUX_INSTANTIATE_FOR_ALL_TIERS(KeyScheduleTest);

}  // namespace
}  // namespace aesmux::kernels::testing
