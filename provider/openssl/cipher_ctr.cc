// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
// AES-CTR: a stream cipher over a 128-bit big-endian counter. `num` counts
// the bytes already used of the keystream block in `buf`, so a stream may be
// cut anywhere between updates.
#include <openssl/core_dispatch.h>
#include <openssl/err.h>
#include <openssl/proverr.h>

#include "provider/openssl/dispatch.h"
#include "provider/openssl/generic_ctx.h"

namespace aesmux::openssl {
namespace {

using core::Alg;

bool CtrCrypt(GenericCtx *ctx, uint8_t *out, const uint8_t *in, size_t len) {
  size_t used = ctx->num;
  while (used != 0 && len != 0) {
    *out++ = *in++ ^ ctx->buf[used];
    used = (used + 1) % kAesBlock;
    --len;
  }
  if (len != 0) {
    if (!ctx->engine.RunCtr(ctx->iv, out, in, len, ctx->buf)) {
      RaiseNoPathServed(ctx, len);
      return false;
    }
    used = len % kAesBlock;
  }
  ctx->num = static_cast<uint8_t>(used);
  return true;
}

bool CheckCtrCall(const GenericCtx *ctx, size_t outsize, size_t inl) {
  if (!ctx->key_set) {
    ERR_raise(ERR_LIB_PROV, PROV_R_NO_KEY_SET);
    return false;
  }
  if (outsize < inl) {
    ERR_raise(ERR_LIB_PROV, PROV_R_OUTPUT_BUFFER_TOO_SMALL);
    return false;
  }
  return true;
}

int CtrCipher(void *vctx, unsigned char *out, size_t *outl, size_t outsize,
              const unsigned char *in, size_t inl) noexcept {
  auto *ctx = static_cast<GenericCtx *>(vctx);
  if (!CheckCtrCall(ctx, outsize, inl) || !CtrCrypt(ctx, out, in, inl)) {
    return 0;
  }
  *outl = inl;
  return 1;
}

// In TLS mode (tls-version set) a decrypted record ends in its MAC, which
// goes to tls-mac and out of the output length, as the default provider's
// stream ciphers do; a record shorter than the MAC fails, with nothing on
// the error queue, after its bytes were decrypted.
int CtrUpdate(void *vctx, unsigned char *out, size_t *outl, size_t outsize,
              const unsigned char *in, size_t inl) noexcept {
  auto *ctx = static_cast<GenericCtx *>(vctx);
  if (ctx->key_set && inl == 0) {
    *outl = 0;
    return 1;
  }
  if (!CtrCipher(vctx, out, outl, outsize, in, inl)) return 0;
  if (ctx->encrypt || ctx->tls_version() == 0 || ctx->tls->mac_size == 0) {
    return 1;
  }
  if (*outl < ctx->tls->mac_size) return 0;
  *outl -= ctx->tls->mac_size;
  ctx->tls->mac_out = out + *outl;
  return 1;
}

int CtrFinal(void *vctx, unsigned char *, size_t *outl, size_t) noexcept {
  auto *ctx = static_cast<GenericCtx *>(vctx);
  if (!ctx->key_set) {
    ERR_raise(ERR_LIB_PROV, PROV_R_NO_KEY_SET);
    return 0;
  }
  *outl = 0;
  return 1;
}

struct CtrFamily : GenericFamily {
  static constexpr auto Update = CtrUpdate;
  static constexpr auto Final = CtrFinal;
  static constexpr auto Cipher = CtrCipher;
};

}  // namespace

const OSSL_DISPATCH *CtrDispatch(Alg alg) {
  return FamilyDispatch<core::Family::kCtr, CtrFamily>(alg);
}

}  // namespace aesmux::openssl
