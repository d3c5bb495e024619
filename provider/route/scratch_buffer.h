// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
// ScratchBuffer: bytes an engine keeps for a while — a GCM message's AAD
// until the message is routed, its first payload while the kernel serves
// it, an in-place request's input — allocated without exceptions (a
// failure is a false return, never std::bad_alloc) and wiped whenever they
// are cleared, reallocated or freed, since they may hold plaintext.
//
// Only the first size() bytes ever hold data: what lies beyond is wiped or
// was never written. Clear() keeps the allocation for the next request
// only up to kKeptCapacity: a large request leaves nothing behind in a
// context that lives on (what stays is bounded per context, as the default
// provider's own contexts are).
#ifndef AESMUX_PROVIDER_ROUTE_SCRATCH_BUFFER_H_
#define AESMUX_PROVIDER_ROUTE_SCRATCH_BUFFER_H_

// Layers (DEVELOPERS.md): only what links aesmux_route includes this.
#if defined(AESMUX_LAYER) && !defined(AESMUX_SEES_route)
#error "provider/route/scratch_buffer.h belongs to a layer above the one that includes it"
#endif

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <new>
#include <span>

#include "kernels/simd_key.h"

namespace aesmux::route {

class ScratchBuffer {
 public:
  // A TLS record's worth.
  static constexpr size_t kKeptCapacity = 16 * 1024;

  ScratchBuffer() = default;
  ~ScratchBuffer() { Release(); }
  ScratchBuffer(const ScratchBuffer &) = delete;
  ScratchBuffer &operator=(const ScratchBuffer &) = delete;

  uint8_t *data() { return data_; }
  const uint8_t *data() const { return data_; }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  std::span<const uint8_t> bytes() const { return {data_, size_}; }

  // Appends `bytes`; false, leaving the contents as they were, if memory
  // runs out.
  bool Append(std::span<const uint8_t> bytes) {
    if (!Reserve(size_ + bytes.size())) return false;
    if (!bytes.empty()) std::memcpy(data_ + size_, bytes.data(), bytes.size());
    size_ += bytes.size();
    return true;
  }

  // Makes the contents `len` bytes: the first ones kept, the rest
  // unspecified. False, changing nothing, if memory runs out.
  bool Resize(size_t len) {
    if (!Reserve(len)) return false;
    if (len < size_) kernels::SecureZero(data_ + len, size_ - len);
    size_ = len;
    return true;
  }

  // Empties the buffer, wiping what it held.
  void Clear() {
    if (capacity_ > kKeptCapacity) {
      Release();
      return;
    }
    if (size_ != 0) kernels::SecureZero(data_, size_);
    size_ = 0;
  }

  // Makes this a copy of `other`; false, leaving this empty, if memory runs
  // out.
  bool CopyFrom(const ScratchBuffer &other) {
    Clear();
    return Append(other.bytes());
  }

 private:
  bool Reserve(size_t capacity) {
    if (capacity <= capacity_) return true;
    const size_t grown = std::max(capacity, 2 * capacity_);
    auto *fresh = new (std::nothrow) uint8_t[grown];
    if (fresh == nullptr) return false;
    if (size_ != 0) std::memcpy(fresh, data_, size_);
    const size_t size = size_;
    Release();
    data_ = fresh;
    size_ = size;
    capacity_ = grown;
    return true;
  }

  void Release() {
    if (data_ == nullptr) return;
    kernels::SecureZero(data_, size_);
    delete[] data_;
    data_ = nullptr;
    size_ = capacity_ = 0;
  }

  uint8_t *data_ = nullptr;
  size_t size_ = 0;
  size_t capacity_ = 0;
};

}  // namespace aesmux::route

#endif  // AESMUX_PROVIDER_ROUTE_SCRATCH_BUFFER_H_
