#include "kernels/simd_key.h"

namespace aesmux::kernels {

// Re-keying overwrites the schedule instead of wiping it first (speed's
// GCM, and TLS stacks that pass the key with every IV, re-key per message):
// what the new schedule does not cover (a longer old key's last round keys,
// a decryption schedule) is wiped, nothing else.
void SimdKey::Set(const Tier &tier, std::span<const uint8_t> key) {
  const uint32_t old_rounds = tier_ != nullptr ? enc_.rounds : 0;
  if (have_decrypt_) {
    SecureZero(&dec_, sizeof(dec_));
    have_decrypt_ = false;
  }
  tier.ops.expand_key(&enc_, key.data(), key.size());
  tier_ = &tier;
  if (old_rounds > enc_.rounds) {
    SecureZero(enc_.round_keys[enc_.rounds + 1],
               16 * (old_rounds - enc_.rounds));
  }
}

void SimdKey::Clear() {
  SecureZero(&enc_, sizeof(enc_));
  SecureZero(&dec_, sizeof(dec_));
  have_decrypt_ = false;
  tier_ = nullptr;
}

void SimdKey::DeriveDecryptSchedule() {
  tier_->ops.decrypt_key(&dec_, &enc_);
  have_decrypt_ = true;
}

void SimdXtsKey::Set(const Tier &tier, std::span<const uint8_t> key) {
  const size_t half = key.size() / 2;
  data_.Set(tier, key.first(half));
  tweak_.Set(tier, key.subspan(half));
}

void SimdXtsKey::Clear() {
  data_.Clear();
  tweak_.Clear();
}

}  // namespace aesmux::kernels
