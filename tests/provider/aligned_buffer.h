// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
// A zero-filled byte buffer whose data() is 64-byte aligned, so that tests
// can place inputs and outputs at chosen offsets from an alignment boundary.
#ifndef AESMUX_TESTS_PROVIDER_ALIGNED_BUFFER_H_
#define AESMUX_TESTS_PROVIDER_ALIGNED_BUFFER_H_

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>

namespace aesmux::test {

class AlignedBuffer {
 public:
  static constexpr size_t kAlignment = 64;

  explicit AlignedBuffer(size_t size)
      : size_(size),
        data_(static_cast<uint8_t *>(std::aligned_alloc(
            kAlignment,
            (size + kAlignment - 1) / kAlignment * kAlignment + kAlignment))) {
    std::memset(data_.get(), 0, size_);
  }
  AlignedBuffer(const AlignedBuffer &other) : AlignedBuffer(other.size_) {
    std::memcpy(data_.get(), other.data_.get(), size_);
  }
  AlignedBuffer &operator=(const AlignedBuffer &) = delete;
  AlignedBuffer(AlignedBuffer &&) = default;
  AlignedBuffer &operator=(AlignedBuffer &&) = default;

  uint8_t *data() { return data_.get(); }
  const uint8_t *data() const { return data_.get(); }
  size_t size() const { return size_; }

 private:
  struct Free {
    void operator()(uint8_t *p) const { std::free(p); }
  };
  size_t size_;
  std::unique_ptr<uint8_t, Free> data_;
};

}  // namespace aesmux::test

#endif  // AESMUX_TESTS_PROVIDER_ALIGNED_BUFFER_H_
