// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
#include "kernels/simd_key.h"

#include <cstring>

namespace aesmux::kernels {

namespace {

// GF(2^8) doubling without a branch or a table: round keys are secret.
inline uint8_t Double(uint8_t x) {
  return static_cast<uint8_t>((x << 1) ^ (0x1b & -(x >> 7)));
}

// FIPS-197 MixColumns on one 16-byte round key (four columns of four
// bytes), the inverse of the InvMixColumns a decryption schedule applies.
void MixColumns(uint8_t block[16]) {
  for (int c = 0; c < 4; ++c) {
    uint8_t *a = block + 4 * c;
    const uint8_t a0 = a[0], a1 = a[1], a2 = a[2], a3 = a[3];
    const uint8_t all = a0 ^ a1 ^ a2 ^ a3;
    a[0] = a0 ^ all ^ Double(a0 ^ a1);
    a[1] = a1 ^ all ^ Double(a1 ^ a2);
    a[2] = a2 ^ all ^ Double(a2 ^ a3);
    a[3] = a3 ^ all ^ Double(a3 ^ a0);
  }
}

}  // namespace

// Re-keying overwrites the schedule instead of wiping it first (speed's
// GCM, and TLS stacks that pass the key with every IV, re-key per message):
// what the new schedule does not cover (a longer old key's last round keys)
// is wiped, nothing else.
void SimdKey::Set(const Tier &tier, std::span<const uint8_t> key) {
  const uint32_t old_rounds = tier_ != nullptr ? schedule_.rounds : 0;
  tier.ops.expand_key(&schedule_, key.data(), key.size());
  tier_ = &tier;
  decrypting_ = false;
  key_len_ = static_cast<uint8_t>(key.size());
  if (old_rounds > schedule_.rounds) {
    SecureZero(schedule_.round_keys[schedule_.rounds + 1],
               16 * (old_rounds - schedule_.rounds));
  }
}

void SimdKey::SetRaw(std::span<const uint8_t> key) {
  Clear();
  std::memcpy(schedule_.round_keys, key.data(), key.size());
  key_len_ = static_cast<uint8_t>(key.size());
}

void SimdKey::Clear() {
  SecureZero(&schedule_, sizeof(schedule_));
  decrypting_ = false;
  tier_ = nullptr;
  key_len_ = 0;
}

size_t SimdKey::CipherKey(uint8_t out[64]) const {
  if (!decrypting_) {
    std::memcpy(out, schedule_.round_keys, key_len_);
    return key_len_;
  }
  const uint32_t rounds = schedule_.rounds;
  std::memcpy(out, schedule_.round_keys[rounds], 16);
  if (key_len_ > 16) {
    uint8_t second[16];
    std::memcpy(second, schedule_.round_keys[rounds - 1], 16);
    MixColumns(second);
    std::memcpy(out + 16, second, key_len_ - 16u);
    SecureZero(second, sizeof(second));
  }
  return key_len_;
}

void SimdKey::TurnForDecryption() {
  tier_->ops.decrypt_key(&schedule_, &schedule_);  // in place is allowed
  decrypting_ = true;
}

// The equivalent inverse cipher's schedule is the encryption schedule
// reversed, with InvMixColumns on every round key but the outer two: undo
// both (no kernel does this; it runs once per change of direction).
void SimdKey::TurnForEncryption() {
  const uint32_t rounds = schedule_.rounds;
  aesmux_aes_key enc;
  enc.rounds = rounds;
  for (uint32_t r = 0; r <= rounds; ++r) {
    std::memcpy(enc.round_keys[r], schedule_.round_keys[rounds - r], 16);
    if (r != 0 && r != rounds) MixColumns(enc.round_keys[r]);
  }
  std::memcpy(schedule_.round_keys, enc.round_keys, 16 * (rounds + 1));
  SecureZero(&enc, sizeof(enc));
  decrypting_ = false;
}

}  // namespace aesmux::kernels
