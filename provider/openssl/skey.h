// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
// OpenSSL 3.5's opaque symmetric keys (EVP_SKEY): aesmux's key management
// (skey.cc says why it has one).
#ifndef AESMUX_PROVIDER_OPENSSL_SKEY_H_
#define AESMUX_PROVIDER_OPENSSL_SKEY_H_

// Layers (DEVELOPERS.md): only what links aesmux_edge includes this.
#if defined(AESMUX_LAYER) && !defined(AESMUX_SEES_edge)
#error "provider/openssl/skey.h belongs to a layer above the one that includes it"
#endif

#include <openssl/core.h>

namespace aesmux::openssl {

// OSSL_OP_SKEYMGMT, which headers before 3.5 lack.
int SkeyOperation();
// The key managers query_operation returns for it.
const OSSL_ALGORITHM *SkeyManagers();

}  // namespace aesmux::openssl

#endif  // AESMUX_PROVIDER_OPENSSL_SKEY_H_
