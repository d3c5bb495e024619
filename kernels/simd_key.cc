#include "kernels/simd_key.h"

#include <string.h>

namespace aesmux::kernels {

void SecureZero(void *ptr, size_t len) { explicit_bzero(ptr, len); }

void SimdKey::Set(const Tier &tier, std::span<const uint8_t> key) {
  Clear();
  tier.ops.expand_key(&enc_, key.data(), key.size());
  tier_ = &tier;
}

void SimdKey::Clear() {
  SecureZero(&enc_, sizeof(enc_));
  SecureZero(&dec_, sizeof(dec_));
  have_decrypt_ = false;
  tier_ = nullptr;
}

const aesmux_aes_key &SimdKey::decrypt_schedule() {
  if (!have_decrypt_) {
    tier_->ops.decrypt_key(&dec_, &enc_);
    have_decrypt_ = true;
  }
  return dec_;
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
