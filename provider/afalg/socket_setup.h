// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
// The two calls that make an AF_ALG tfm socket serve an algorithm, shared
// by the probe (afalg.cc) and the keys (key.cc). Each returns 0 or -errno.
#ifndef AESMUX_PROVIDER_AFALG_SOCKET_SETUP_H_
#define AESMUX_PROVIDER_AFALG_SOCKET_SETUP_H_

// Layers (DEVELOPERS.md): only what links aesmux_afalg includes this.
#if defined(AESMUX_LAYER) && !defined(AESMUX_SEES_afalg)
#error "provider/afalg/socket_setup.h belongs to a layer above the one that includes it"
#endif

#include <cstdint>
#include <span>
#include <string_view>

#include "provider/core/algorithm.h"

namespace aesmux::afalg {

// Binds `fd`, an AF_ALG socket, to `name` of `type` ("skcipher",
// "aead"): an algorithm's name ("cbc(aes)", the implementation of highest
// priority) or one implementation's driver name ("virtio_crypto_aes_cbc").
int BindAlgorithm(int fd, std::string_view type, std::string_view name);

// Sets the key of a bound tfm socket (and for GCM the 16-byte tag length).
int SetSocketKey(int fd, core::Family family, std::span<const uint8_t> key);

}  // namespace aesmux::afalg

#endif  // AESMUX_PROVIDER_AFALG_SOCKET_SETUP_H_
