// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
// Test support: byte buffers and hex.
#ifndef AESMUX_TESTS_SUPPORT_BYTES_H_
#define AESMUX_TESTS_SUPPORT_BYTES_H_

#include <cstdint>
#include <random>
#include <string>
#include <string_view>
#include <vector>

namespace aesmux::test {

using Bytes = std::vector<uint8_t>;

inline Bytes RandomBytes(std::mt19937_64 &rng, size_t len) {
  Bytes out(len);
  for (uint8_t &b : out) b = static_cast<uint8_t>(rng());
  return out;
}

inline Bytes FromHex(std::string_view hex) {
  Bytes out;
  auto nibble = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  for (size_t i = 0; i + 1 < hex.size(); i += 2) {
    out.push_back(static_cast<uint8_t>(nibble(hex[i]) << 4 | nibble(hex[i + 1])));
  }
  return out;
}

inline std::string ToHex(const uint8_t *data, size_t len) {
  static const char kDigits[] = "0123456789abcdef";
  std::string out;
  for (size_t i = 0; i < len; ++i) {
    out += kDigits[data[i] >> 4];
    out += kDigits[data[i] & 15];
  }
  return out;
}

inline std::string ToHex(const Bytes &bytes) {
  return ToHex(bytes.data(), bytes.size());
}

}  // namespace aesmux::test

#endif  // AESMUX_TESTS_SUPPORT_BYTES_H_
