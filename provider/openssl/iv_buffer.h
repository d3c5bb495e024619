// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
// IvBuffer: a GCM context's IV storage, 1..kMaxIvLen (128) bytes, as the
// default provider's 128-byte IV buffer behaves, in 17 bytes of the context:
// IVs of up to 16 bytes (TLS's 12 among them) live inline; the first longer
// length the context is given moves the IV into a 128-byte heap block, where
// it stays until the context is freed (every keyed context holds an IvBuffer:
// BENCHMARKS.md, "What does loading aesmux cost: start-up and memory?").
//
// The buffer is one logical 128-byte array, zero until written: bytes past
// the current IV length keep what was last written there (the default
// provider's IV shows them when its length grows without a new IV), and a
// move to the heap carries the inline bytes over.
//
// Reserve and CopyFrom allocate and may fail: they return false and change
// nothing; the caller raises the error. The storage is wiped when freed.
// Internal to the OpenSSL edge (gcm_ctx.h).
#ifndef AESMUX_PROVIDER_OPENSSL_IV_BUFFER_H_
#define AESMUX_PROVIDER_OPENSSL_IV_BUFFER_H_

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace aesmux::openssl::gcm {

inline constexpr size_t kMaxIvLen = 128;

class IvBuffer {
 public:
  static constexpr size_t kInlineLen = 16;

  IvBuffer() = default;
  IvBuffer(const IvBuffer &) = delete;
  IvBuffer &operator=(const IvBuffer &) = delete;
  ~IvBuffer();

  uint8_t *data() { return on_heap_ ? HeapBlock() : bytes_; }
  const uint8_t *data() const { return on_heap_ ? HeapBlock() : bytes_; }
  // How many of the logical buffer's bytes are stored: kInlineLen or
  // kMaxIvLen.
  size_t capacity() const { return on_heap_ ? kMaxIvLen : kInlineLen; }

  // Makes room for an IV of `len` (1..kMaxIvLen) bytes. Inline: every
  // record's IV passes here (BENCHMARKS.md, "Instructions per record").
  [[nodiscard]] bool Reserve(size_t len) {
    return len <= kInlineLen || on_heap_ || MoveToHeap();
  }
  // Makes this buffer's bytes (all kMaxIvLen of them) those of `other`.
  [[nodiscard]] bool CopyFrom(const IvBuffer &other);

 private:
  bool MoveToHeap();
  uint8_t *HeapBlock() const {
    uint8_t *block;
    std::memcpy(&block, bytes_, sizeof(block));
    return block;
  }

  // The IV, or (on_heap_) the heap block's address: a byte array rather
  // than a union with a pointer, so that the buffer takes 17 bytes aligned
  // to 1, which fill the end of GcmState's padding in GcmCtx, not 24.
  uint8_t bytes_[kInlineLen] = {};
  bool on_heap_ = false;
  static_assert(sizeof(uint8_t *) <= kInlineLen);
};

}  // namespace aesmux::openssl::gcm

#endif  // AESMUX_PROVIDER_OPENSSL_IV_BUFFER_H_
