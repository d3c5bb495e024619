// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
// RawKey: an engine's copy of the key as the application gave it, which
// the fallback path is keyed from lazily. Wiped when replaced or destroyed.
#ifndef AESMUX_PROVIDER_ROUTE_RAW_KEY_H_
#define AESMUX_PROVIDER_ROUTE_RAW_KEY_H_

// Layers (DEVELOPERS.md): only what links aesmux_route includes this.
#if defined(AESMUX_LAYER) && !defined(AESMUX_SEES_route)
#error "provider/route/raw_key.h belongs to a layer above the one that includes it"
#endif

#include <openssl/crypto.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>

#include "kernels/simd_key.h"

namespace aesmux::route {

// kCapacity is the longest key of the family: 64 for XTS's two keys, 32
// for GCM (RawKey and GcmRawKey below), since every keyed context holds
// one.
template <size_t kCapacity>
class RawKeyOf {
 public:
  RawKeyOf() = default;
  RawKeyOf(const RawKeyOf &) = default;
  RawKeyOf &operator=(const RawKeyOf &) = default;
  ~RawKeyOf() { kernels::SecureZero(bytes_.data(), bytes_.size()); }

  // Stores `key` (at most kCapacity bytes). Returns false, storing
  // nothing, when it equals the key already held (compared in constant
  // time), so that callers can keep what they derived from it.
  bool Replace(std::span<const uint8_t> key) {
    if (key.size() == len_ &&
        CRYPTO_memcmp(key.data(), bytes_.data(), len_) == 0) {
      return false;
    }
    kernels::SecureZero(bytes_.data(), bytes_.size());
    std::memcpy(bytes_.data(), key.data(), key.size());
    len_ = static_cast<uint8_t>(key.size());
    return true;
  }

  bool empty() const { return len_ == 0; }
  std::span<const uint8_t> bytes() const { return {bytes_.data(), len_}; }

 private:
  std::array<uint8_t, kCapacity> bytes_{};
  uint8_t len_ = 0;  // (not size_t: every context holds one)
};

using RawKey = RawKeyOf<64>;
using GcmRawKey = RawKeyOf<32>;

}  // namespace aesmux::route

#endif  // AESMUX_PROVIDER_ROUTE_RAW_KEY_H_
