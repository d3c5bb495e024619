// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
#include "provider/openssl/tls_cbc.h"

#include <algorithm>
#include <climits>
#include <cstring>

namespace aesmux::openssl {
namespace {

// Protocol versions as libssl passes them in tls-version.
constexpr unsigned int kSsl3 = 0x0300;
constexpr unsigned int kTls1 = 0x0301;
constexpr unsigned int kTls11 = 0x0302;
constexpr unsigned int kTls12 = 0x0303;
constexpr unsigned int kDtls1 = 0xfeff;
constexpr unsigned int kDtls12 = 0xfefd;
constexpr unsigned int kDtls1Bad = 0x0100;  // DTLS1_BAD_VER

constexpr size_t kBlock = 16;
// The padding, with its length byte, spans at most 256 bytes.
constexpr size_t kMaxPadding = 256;

// Masks: all ones when the relation holds, zero otherwise, computed without
// branches so that secret operands leave no trace in timing.
constexpr unsigned kTopBit = sizeof(size_t) * CHAR_BIT - 1;
size_t MaskLt(size_t a, size_t b) {
  return 0 - ((a ^ ((a ^ b) | ((a - b) ^ b))) >> kTopBit);
}
size_t MaskGe(size_t a, size_t b) { return ~MaskLt(a, b); }
size_t MaskZero(size_t a) { return 0 - ((~a & (a - 1)) >> kTopBit); }
size_t MaskEq(size_t a, size_t b) { return MaskZero(a ^ b); }

// `value`, opaque to the optimiser. Inside a loop over public indexes, a
// secret the compiler sees whole may become part of an induction variable:
// GCC 12 rewrote `random_mac[k]` as an address derived from
// `rotation + k`, and the loop's exit test with it, and
// `data[total - 1 - i]` from `pad - i`. The secret cancels out of the
// address, but the code then computes addresses and branches from secret
// values (tests/consttime catches it); passing the secret through here
// each iteration leaves the compiler nothing to combine.
size_t Opaque(size_t value) {
  __asm__("" : "+r"(value));
  return value;
}

}  // namespace

size_t TlsPad(unsigned int tls_version, uint8_t *record, size_t len) {
  const size_t count = kBlock - len % kBlock;
  const auto value = static_cast<uint8_t>(count - 1);
  if (tls_version == kSsl3) {
    std::memset(record + len, 0, count - 1);
    record[len + count - 1] = value;
  } else {
    std::memset(record + len, value, count);
  }
  return len + count;
}

bool TlsRemovePaddingAndMac(unsigned int tls_version,
                            std::span<const uint8_t> record, size_t mac_size,
                            const uint8_t *random_mac, uint8_t *mac,
                            TlsRecordLayout *layout) {
  size_t offset = 0;
  switch (tls_version) {
    case kSsl3:
    case kTls1:
      break;
    case kTls11:
    case kTls12:
    case kDtls1:
    case kDtls12:
    case kDtls1Bad:
      offset = kBlock;  // the explicit IV
      break;
    default:
      return false;
  }
  // Lengths are public: these checks may branch.
  if (record.size() < offset || mac_size > kMaxTlsMacSize) return false;
  const uint8_t *data = record.data() + offset;
  const size_t total = record.size() - offset;
  if (1 + mac_size > total) return false;

  const size_t pad = data[total - 1];
  size_t good = MaskGe(total, 1 + mac_size + pad);
  if (tls_version == kSsl3) {
    // SSL 3.0 padding is minimal and its bytes are arbitrary.
    good &= MaskGe(kBlock, pad + 1);
  } else {
    // Every padding byte equals the length byte. Check the largest padding
    // possible so the work does not depend on `pad`.
    const size_t to_check = std::min(kMaxPadding, total);
    size_t differences = 0;
    for (size_t i = 0; i < to_check; ++i) {
      const size_t secret_pad = Opaque(pad);
      differences |= MaskGe(secret_pad, i) & (secret_pad ^ data[total - 1 - i]);
    }
    good &= MaskZero(differences & 0xff);
  }
  const size_t unpadded = total - (good & (pad + 1));

  if (mac_size == 0) {
    // Encrypt-then-MAC: the MAC was checked before decryption, so bad
    // padding can be reported directly.
    if (good == 0) return false;
    *layout = {offset, unpadded};
    return true;
  }

  // The MAC ends where the padding starts, which is secret. It can only lie
  // in the last mac_size + 256 bytes: collect that window into `rotated`
  // with a cursor that wraps every mac_size bytes, so the MAC lands there
  // rotated by the (secret) cursor position at its start.
  const size_t mac_end = unpadded;
  const size_t mac_start = mac_end - mac_size;
  const size_t window = mac_size + kMaxPadding + 1;
  const size_t scan_start = total > window ? total - window : 0;
  uint8_t rotated[kMaxTlsMacSize] = {};
  size_t rotation = 0;
  size_t cursor = 0;
  for (size_t i = scan_start; i < total; ++i) {
    const size_t in_mac = MaskGe(i, mac_start) & MaskLt(i, mac_end);
    rotation |= cursor & MaskEq(i, mac_start);
    rotated[cursor] |= static_cast<uint8_t>(data[i] & in_mac);
    ++cursor;
    cursor &= MaskLt(cursor, mac_size);
  }
  // Undo the rotation by reading every byte for every output position, and
  // substitute the random MAC when the padding was bad.
  for (size_t k = 0; k < mac_size; ++k) {
    size_t source = Opaque(rotation) + k;
    source -= mac_size & MaskGe(source, mac_size);
    uint8_t byte = 0;
    for (size_t s = 0; s < mac_size; ++s) {
      byte |= static_cast<uint8_t>(rotated[s] & MaskEq(s, source));
    }
    mac[k] = static_cast<uint8_t>((byte & good) | (random_mac[k] & ~good));
  }
  *layout = {offset, unpadded - mac_size};
  return true;
}

}  // namespace aesmux::openssl
