// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
#include "provider/openssl/iv_buffer.h"

#include <openssl/crypto.h>

#include <new>

namespace aesmux::openssl::gcm {

IvBuffer::~IvBuffer() {
  uint8_t *iv = data();
  OPENSSL_cleanse(iv, capacity());
  if (on_heap_) delete[] iv;
}

bool IvBuffer::MoveToHeap() {
  // Zeroed: the logical buffer's bytes past the inline ones were never
  // written.
  auto *block = new (std::nothrow) uint8_t[kMaxIvLen]();
  if (block == nullptr) return false;
  std::memcpy(block, bytes_, kInlineLen);
  OPENSSL_cleanse(bytes_, kInlineLen);  // as the IV is wiped on free
  std::memcpy(bytes_, &block, sizeof(block));
  on_heap_ = true;
  return true;
}

bool IvBuffer::CopyFrom(const IvBuffer &other) {
  if (!Reserve(other.capacity())) return false;
  uint8_t *iv = data();
  std::memset(iv, 0, capacity());
  std::memcpy(iv, other.data(), other.capacity());
  return true;
}

}  // namespace aesmux::openssl::gcm
