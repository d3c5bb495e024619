// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
// The fuzz input, read front to back: one byte per decision, then the bytes
// an operation needs. Reads past the end return zeros, so every input is a
// complete program and a short seed ends where its bytes end.
#ifndef AESMUX_TESTS_FUZZ_FUZZ_INPUT_H_
#define AESMUX_TESTS_FUZZ_FUZZ_INPUT_H_

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace aesmux::fuzz {

class FuzzInput {
 public:
  FuzzInput(const uint8_t *data, size_t size) : data_(data), size_(size) {}

  bool empty() const { return pos_ >= size_; }

  uint8_t Byte() { return pos_ < size_ ? data_[pos_++] : 0; }
  uint16_t U16() {
    const uint16_t low = Byte();
    return static_cast<uint16_t>(low | (Byte() << 8));
  }
  uint32_t U32() {
    const uint32_t low = U16();
    return low | (static_cast<uint32_t>(U16()) << 16);
  }
  // A choice among `n` (1..256) alternatives.
  size_t Pick(size_t n) { return Byte() % n; }
  bool Bit() { return (Byte() & 1) != 0; }

  // `n` bytes of the input; past its end, a pattern that depends only on
  // the position, so both providers always see the same bytes.
  void Bytes(uint8_t *out, size_t n) {
    const size_t take = pos_ < size_ ? std::min(n, size_ - pos_) : 0;
    if (take != 0) std::memcpy(out, data_ + pos_, take);
    pos_ += take;
    for (size_t i = take; i < n; ++i) out[i] = static_cast<uint8_t>(i * 131 + 7);
  }

 private:
  const uint8_t *data_;
  size_t size_;
  size_t pos_ = 0;
};

}  // namespace aesmux::fuzz

#endif  // AESMUX_TESTS_FUZZ_FUZZ_INPUT_H_
