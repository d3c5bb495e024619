// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
// TLS CBC record mode, as libssl drives it through tls-version and
// tls-mac-size: padding a record before encryption, and removing the
// explicit IV, the padding and the MAC after decryption without branching
// on or indexing memory by any secret byte (a padding oracle otherwise).
#ifndef AESMUX_PROVIDER_OPENSSL_TLS_CBC_H_
#define AESMUX_PROVIDER_OPENSSL_TLS_CBC_H_

// Layers (DEVELOPERS.md): only what links aesmux_edge includes this.
#if defined(AESMUX_LAYER) && !defined(AESMUX_SEES_edge)
#error "provider/openssl/tls_cbc.h belongs to a layer above the one that includes it"
#endif

#include <cstddef>
#include <cstdint>
#include <span>

namespace aesmux::openssl {

// The largest MAC a TLS CBC suite carries (EVP_MAX_MD_SIZE).
inline constexpr size_t kMaxTlsMacSize = 64;

// Appends TLS padding to the `len` bytes of `record` (which has room for
// 16 more): 1..16 bytes of value `count - 1`, or for SSL 3.0 zeros then the
// count. Returns the padded length.
size_t TlsPad(unsigned int tls_version, uint8_t *record, size_t len);

struct TlsRecordLayout {
  size_t payload_offset;  // 16 when an explicit IV leads the record
  size_t payload_len;
};

// After CBC decryption of a whole `record`: drops the explicit IV (TLS 1.1+
// and DTLS), then the padding and `mac_size` bytes of MAC, and copies the MAC
// into `mac`. Returns false only when the record is publicly invalid (too
// short, an unknown version) or, with no MAC (encrypt-then-MAC, where the
// MAC was already checked), when the padding is bad. With a MAC, bad padding
// is not reported here: `mac` receives `random_mac` instead, so the caller's
// MAC check fails in the same time as for a bad MAC.
bool TlsRemovePaddingAndMac(unsigned int tls_version,
                            std::span<const uint8_t> record, size_t mac_size,
                            const uint8_t *random_mac, uint8_t *mac,
                            TlsRecordLayout *layout);

}  // namespace aesmux::openssl

#endif  // AESMUX_PROVIDER_OPENSSL_TLS_CBC_H_
