// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
// A provider's cipher functions, taken from its dispatch table, for code
// that drives a provider's cipher contexts directly instead of through EVP:
// the fallback path (whose contexts EVP would hand to an ENGINE set as the
// default for AES, aesmux's own included) and the ENGINE aesmux (whose
// legacy ciphers run aesmux's provider contexts).
#ifndef AESMUX_PROVIDER_FALLBACK_CIPHER_FUNCTIONS_H_
#define AESMUX_PROVIDER_FALLBACK_CIPHER_FUNCTIONS_H_

// Layers (DEVELOPERS.md): only what links aesmux_fallback includes this.
#if defined(AESMUX_LAYER) && !defined(AESMUX_SEES_fallback)
#error "provider/fallback/cipher_functions.h belongs to a layer above the one that includes it"
#endif

#include <openssl/core_dispatch.h>

namespace aesmux::fallback {

struct CipherFunctions {
  OSSL_FUNC_cipher_newctx_fn *newctx = nullptr;
  OSSL_FUNC_cipher_freectx_fn *freectx = nullptr;
  OSSL_FUNC_cipher_dupctx_fn *dupctx = nullptr;
  OSSL_FUNC_cipher_encrypt_init_fn *einit = nullptr;
  OSSL_FUNC_cipher_decrypt_init_fn *dinit = nullptr;
  OSSL_FUNC_cipher_update_fn *update = nullptr;
  OSSL_FUNC_cipher_final_fn *final = nullptr;
  OSSL_FUNC_cipher_cipher_fn *cipher = nullptr;
  OSSL_FUNC_cipher_get_ctx_params_fn *get_ctx_params = nullptr;
  OSSL_FUNC_cipher_set_ctx_params_fn *set_ctx_params = nullptr;

  // Whether every function a context's life needs is there.
  bool complete() const {
    return newctx && freectx && dupctx && einit && dinit && update && final &&
           cipher && get_ctx_params && set_ctx_params;
  }
};

inline CipherFunctions CipherFunctionsOf(const OSSL_DISPATCH *dispatch) {
  CipherFunctions f;
  for (const OSSL_DISPATCH *d = dispatch; d->function_id != 0; ++d) {
    switch (d->function_id) {
      case OSSL_FUNC_CIPHER_NEWCTX: f.newctx = OSSL_FUNC_cipher_newctx(d); break;
      case OSSL_FUNC_CIPHER_FREECTX:
        f.freectx = OSSL_FUNC_cipher_freectx(d);
        break;
      case OSSL_FUNC_CIPHER_DUPCTX: f.dupctx = OSSL_FUNC_cipher_dupctx(d); break;
      case OSSL_FUNC_CIPHER_ENCRYPT_INIT:
        f.einit = OSSL_FUNC_cipher_encrypt_init(d);
        break;
      case OSSL_FUNC_CIPHER_DECRYPT_INIT:
        f.dinit = OSSL_FUNC_cipher_decrypt_init(d);
        break;
      case OSSL_FUNC_CIPHER_UPDATE: f.update = OSSL_FUNC_cipher_update(d); break;
      case OSSL_FUNC_CIPHER_FINAL: f.final = OSSL_FUNC_cipher_final(d); break;
      case OSSL_FUNC_CIPHER_CIPHER: f.cipher = OSSL_FUNC_cipher_cipher(d); break;
      case OSSL_FUNC_CIPHER_GET_CTX_PARAMS:
        f.get_ctx_params = OSSL_FUNC_cipher_get_ctx_params(d);
        break;
      case OSSL_FUNC_CIPHER_SET_CTX_PARAMS:
        f.set_ctx_params = OSSL_FUNC_cipher_set_ctx_params(d);
        break;
    }
  }
  return f;
}

}  // namespace aesmux::fallback

#endif  // AESMUX_PROVIDER_FALLBACK_CIPHER_FUNCTIONS_H_
