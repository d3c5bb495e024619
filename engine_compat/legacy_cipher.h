// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
// The ENGINE's ciphers: one legacy EVP_CIPHER (EVP_CIPHER_meth_new) per
// aesmux algorithm, whose callbacks drive that algorithm's provider
// functions (newctx, encrypt/decrypt init, update, final, cipher, get/set
// ctx params, dupctx, freectx, from CipherDispatch()). Every EVP contract
// detail (IV state, padding, TLS records, routing, statistics) is the
// provider's code; this layer only translates the legacy calls:
//
// - init, do_cipher and cleanup as libcrypto's legacy EVP makes them. The
//   flags are those of OpenSSL's own legacy AES ciphers (crypto/evp/e_aes.c),
//   so libcrypto buffers and pads ECB/CBC itself and hands do_cipher whole
//   blocks, and GCM is a custom cipher (do_cipher returns a length, or -1),
//   plus EVP_CIPH_CUSTOM_COPY on every cipher, whose context holds a
//   provider context that a plain memcpy must not share.
// - ctrls into OSSL_PARAMs, as libcrypto maps them for providers
//   (EVP_CIPHER_CTX_ctrl): GCM IV length, tags, TLS 1.2 fixed IV, IV
//   generation, explicit IV, TLS1 AAD; EVP_CTRL_INIT; EVP_CTRL_COPY.
// - The IV and `num` a legacy caller reads and writes in the EVP_CIPHER_CTX
//   (EVP_CIPHER_CTX_iv, _set_num): copied from the provider context after
//   every call, and handed back to it before a call when the caller changed
//   them (an IV-only re-init of CBC or CTR does not call a legacy init).
#ifndef AESMUX_ENGINE_COMPAT_LEGACY_CIPHER_H_
#define AESMUX_ENGINE_COMPAT_LEGACY_CIPHER_H_

#include <openssl/evp.h>

#include <array>
#include <memory>
#include <span>

#include "provider/openssl/provider_context.h"
#include "provider/core/algorithm.h"

namespace aesmux::engine {

// The instance new cipher contexts belong to: set while the ENGINE is
// initialised, null otherwise (a context then fails to start, with an
// error). A context keeps the instance it started in, with a hold on it
// (HoldProviderContext): a context set up without a functional reference
// on the ENGINE (EVP_EncryptInit_ex(ctx, ENGINE_get_cipher(e, nid), NULL,
// ...)) may outlive the ENGINE's last ENGINE_finish, and goes on in its
// instance, which the last such context frees.
void SetProviderContext(openssl::ProviderContext *context);

// The 14 ciphers. Made once per process and never freed: a context points
// to its cipher (libcrypto counts no references on a legacy cipher) and
// may outlive the ENGINE that gave it.
class LegacyCiphers {
 public:
  // Null (with OpenSSL's error on the queue) if a cipher could not be made.
  static std::unique_ptr<LegacyCiphers> Create();
  ~LegacyCiphers();
  LegacyCiphers(const LegacyCiphers &) = delete;
  LegacyCiphers &operator=(const LegacyCiphers &) = delete;

  // The NIDs of the legacy AES ciphers, in core::Alg order.
  static std::span<const int> Nids();
  // The cipher for `nid`, or null if aesmux has none.
  const EVP_CIPHER *ByNid(int nid) const;

 private:
  LegacyCiphers() = default;
  std::array<EVP_CIPHER *, core::kNumAlgs> ciphers_{};
};

}  // namespace aesmux::engine

#endif  // AESMUX_ENGINE_COMPAT_LEGACY_CIPHER_H_
