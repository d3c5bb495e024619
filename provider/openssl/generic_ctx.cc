// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
#include "provider/openssl/generic_ctx.h"

#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/proverr.h>

#include <array>
#include <cstring>
#include <new>

namespace aesmux::openssl {

using core::Family;

GenericCtx::GenericCtx(ProviderContext *provider_context, core::Alg algorithm)
    : engine(provider_context->router, algorithm),
      alg(algorithm),
      family(core::Info(algorithm).family),
      key_len(static_cast<uint8_t>(core::Info(algorithm).key_len)),
      iv_len(family == Family::kEcb ? 0 : kAesBlock),
      block_size(family == Family::kEcb || family == Family::kCbc ? kAesBlock
                                                                  : 1),
      provider(provider_context) {}

// Every keyed context costs its EVP_CIPHER_CTX and this: the bound keeps ECB,
// CBC and CTR within the default provider's bytes per keyed context, and XTS
// (with its tweak key) within the default provider's XTS (BENCHMARKS.md, "What
// does loading aesmux cost: start-up and memory?"; bench/provider/
// ctx_memory_bench).
static_assert(sizeof(GenericCtx) <= 448,
              "a keyed context would cost more than the default provider's");

GenericCtx::~GenericCtx() {
  OPENSSL_cleanse(iv, sizeof(iv));
  OPENSSL_cleanse(oiv, sizeof(oiv));
  OPENSSL_cleanse(buf, sizeof(buf));
  if (pipes) OPENSSL_cleanse(pipes.get(), sizeof(*pipes));
}

GenericCtx::Tls::~Tls() { OPENSSL_cleanse(mac, sizeof(mac)); }

void *NewGenericCtx(void *provctx, core::Alg alg) noexcept {
  auto *ctx = new (std::nothrow)
      GenericCtx(static_cast<ProviderContext *>(provctx), alg);
  if (ctx == nullptr) ERR_raise(ERR_LIB_PROV, ERR_R_MALLOC_FAILURE);
  return ctx;
}

void FreeGenericCtx(void *vctx) noexcept {
  delete static_cast<GenericCtx *>(vctx);
}

void *DupGenericCtx(void *vctx) noexcept {
  try {
    return new GenericCtx(*static_cast<const GenericCtx *>(vctx));
  } catch (const std::bad_alloc &) {
    ERR_raise(ERR_LIB_PROV, ERR_R_MALLOC_FAILURE);
    return nullptr;
  }
}

void RaiseNoPathServed(const GenericCtx *ctx, size_t len) {
  const std::string_view name = core::Info(ctx->alg).name;
  ERR_raise_data(ERR_LIB_PROV, PROV_R_CIPHER_OPERATION_FAILED,
                 "%.*s %s of %zu bytes: no path served it",
                 static_cast<int>(name.size()), name.data(),
                 ctx->encrypt ? "encryption" : "decryption", len);
}

bool SetInitIv(GenericCtx *ctx, const uint8_t *iv, size_t iv_len) {
  if (iv_len != ctx->iv_len || iv_len > sizeof(ctx->iv)) {
    ERR_raise(ERR_LIB_PROV, PROV_R_INVALID_IV_LENGTH);
    return false;
  }
  ctx->iv_set = true;
  std::memcpy(ctx->iv, iv, iv_len);
  std::memcpy(ctx->oiv, iv, iv_len);
  return true;
}

bool SetInitKey(GenericCtx *ctx, const uint8_t *key, size_t key_len) {
  if (key_len != ctx->key_len) {
    ERR_raise(ERR_LIB_PROV, PROV_R_INVALID_KEY_LENGTH);
    return false;
  }
  ctx->engine.SetKey({key, key_len});
  ctx->key_set = true;
  return true;
}

namespace {

// tls-mac: a pointer and tls-mac-size, as the default provider answers.
// A pointer into the held `mac` never comes with a size beyond it: after
// tls-mac-size grows past 64 bytes (which no record can then have), the
// pointer is null.
bool SetTlsMacParam(OSSL_PARAM params[], GenericCtx *ctx) {
  OSSL_PARAM *p = FindParam(params, OSSL_CIPHER_PARAM_TLS_MAC);
  if (p == nullptr) return true;
  const uint8_t *mac = ctx->tls_mac_ptr();
  const size_t size = ctx->tls_mac_size();
  if (ctx->tls && ctx->tls->mac_held && size > kMaxTlsMacSize) mac = nullptr;
  if (OSSL_PARAM_set_octet_ptr(p, mac, size)) return true;
  ERR_raise(ERR_LIB_PROV, PROV_R_FAILED_TO_SET_PARAMETER);
  return false;
}

// The keys get_ctx_params and set_ctx_params serve (3.6 refuses an array
// naming one twice).
constexpr std::array<const char *, 7> kGetKeys = {
    OSSL_CIPHER_PARAM_KEYLEN, OSSL_CIPHER_PARAM_IVLEN,
    OSSL_CIPHER_PARAM_PADDING, OSSL_CIPHER_PARAM_NUM,
    OSSL_CIPHER_PARAM_IV, OSSL_CIPHER_PARAM_UPDATED_IV,
    OSSL_CIPHER_PARAM_TLS_MAC};
constexpr std::array<const char *, 5> kSetKeys = {
    OSSL_CIPHER_PARAM_PADDING, OSSL_CIPHER_PARAM_NUM,
    OSSL_CIPHER_PARAM_USE_BITS, OSSL_CIPHER_PARAM_TLS_VERSION,
    OSSL_CIPHER_PARAM_TLS_MAC_SIZE};

}  // namespace

int GenericGetCtxParams(void *vctx, OSSL_PARAM params[]) noexcept {
  auto *ctx = static_cast<GenericCtx *>(vctx);
  if (RefusedAsRepeated<kGetKeys>(params)) return 0;
  return SetSizeParam(params, OSSL_CIPHER_PARAM_IVLEN, ctx->iv_len) &&
         SetUintParam(params, OSSL_CIPHER_PARAM_PADDING, ctx->pad) &&
         SetIvParam(params, OSSL_CIPHER_PARAM_IV, ctx->oiv, ctx->iv_len) &&
         SetIvParam(params, OSSL_CIPHER_PARAM_UPDATED_IV, ctx->iv,
                    ctx->iv_len) &&
         SetUintParam(params, OSSL_CIPHER_PARAM_NUM, ctx->num) &&
         SetSizeParam(params, OSSL_CIPHER_PARAM_KEYLEN, ctx->key_len) &&
         SetTlsMacParam(params, ctx);
}

namespace {

// tls-mac is listed as an octet pointer, or from 3.6 as an octet string (it
// is served as a pointer either way).
constexpr std::array<OSSL_PARAM, 8> kGettable = {{
    OSSL_PARAM_size_t(OSSL_CIPHER_PARAM_KEYLEN, nullptr),
    OSSL_PARAM_size_t(OSSL_CIPHER_PARAM_IVLEN, nullptr),
    OSSL_PARAM_uint(OSSL_CIPHER_PARAM_PADDING, nullptr),
    OSSL_PARAM_uint(OSSL_CIPHER_PARAM_NUM, nullptr),
    OSSL_PARAM_octet_string(OSSL_CIPHER_PARAM_IV, nullptr, 0),
    OSSL_PARAM_octet_string(OSSL_CIPHER_PARAM_UPDATED_IV, nullptr, 0),
    {OSSL_CIPHER_PARAM_TLS_MAC, OSSL_PARAM_OCTET_PTR, nullptr, 0,
     OSSL_PARAM_UNMODIFIED},
    OSSL_PARAM_END}};
constexpr std::array<OSSL_PARAM, 8> kGettable36 = [] {
  std::array<OSSL_PARAM, 8> list = kGettable;
  list[6].data_type = OSSL_PARAM_OCTET_STRING;
  return list;
}();

}  // namespace

const OSSL_PARAM *GenericGettableCtxParams(void *, void *) noexcept {
  return GenericParamWalk() == ParamWalk::kRefuseRepeats ? kGettable36.data()
                                                          : kGettable.data();
}

namespace {

// The default provider's generic init: any of key, IV and parameters may be
// absent (multi-step init); a CBC re-init without an IV restarts from the
// original IV.
int GenericInit(GenericCtx *ctx, const unsigned char *key, size_t key_len,
                const unsigned char *iv, size_t iv_len,
                const OSSL_PARAM params[], bool encrypt) {
  ctx->engine.CancelQueued();  // what an abandoned ASYNC job left queued
  ctx->num = 0;
  ctx->buf_len = 0;
  ctx->encrypt = encrypt;
  if (iv != nullptr && ctx->family != Family::kEcb &&
      !SetInitIv(ctx, iv, iv_len)) {
    return 0;
  }
  if (iv == nullptr && ctx->iv_set && ctx->family == Family::kCbc) {
    std::memcpy(ctx->iv, ctx->oiv, ctx->iv_len);
  }
  if (key != nullptr && !SetInitKey(ctx, key, key_len)) return 0;
  return GenericSetCtxParams(ctx, params);
}

}  // namespace

int GenericEncryptInit(void *vctx, const unsigned char *key, size_t key_len,
                       const unsigned char *iv, size_t iv_len,
                       const OSSL_PARAM params[]) noexcept {
  return GenericInit(static_cast<GenericCtx *>(vctx), key, key_len, iv, iv_len,
                     params, true);
}

int GenericDecryptInit(void *vctx, const unsigned char *key, size_t key_len,
                       const unsigned char *iv, size_t iv_len,
                       const OSSL_PARAM params[]) noexcept {
  return GenericInit(static_cast<GenericCtx *>(vctx), key, key_len, iv, iv_len,
                     params, false);
}

namespace {

// Sets a TLS field, making the context's TLS state on first use.
template <typename Set>
bool SetTls(GenericCtx *ctx, Set set) {
  GenericCtx::Tls *tls = ctx->tls.GetOrMake();
  if (tls == nullptr) {
    ERR_raise(ERR_LIB_PROV, ERR_R_MALLOC_FAILURE);
    return false;
  }
  set(tls);
  return true;
}

}  // namespace

int GenericSetCtxParams(void *vctx, const OSSL_PARAM params[]) noexcept {
  auto *ctx = static_cast<GenericCtx *>(vctx);
  if (params == nullptr) return 1;
  if (RefusedAsRepeated<kSetKeys>(params)) return 0;
  bool found = false;
  unsigned int value = 0;
  if (!GetUintParam(params, OSSL_CIPHER_PARAM_PADDING, &value, &found)) {
    return 0;
  }
  if (found) ctx->pad = value != 0;
  // use-bits only matters to CFB1, which aesmux does not serve; it is still
  // read so that a malformed value fails as it does in the default provider.
  if (!GetUintParam(params, OSSL_CIPHER_PARAM_USE_BITS, &value, &found)) {
    return 0;
  }
  if (!GetUintParam(params, OSSL_CIPHER_PARAM_TLS_VERSION, &value, &found)) {
    return 0;
  }
  if (found && !SetTls(ctx, [&](GenericCtx::Tls *tls) { tls->version = value; })) {
    return 0;
  }
  size_t size = 0;
  if (!GetSizeParam(params, OSSL_CIPHER_PARAM_TLS_MAC_SIZE, &size, &found)) {
    return 0;
  }
  if (found && !SetTls(ctx, [&](GenericCtx::Tls *tls) { tls->mac_size = size; })) {
    return 0;
  }
  if (!GetUintParam(params, OSSL_CIPHER_PARAM_NUM, &value, &found)) return 0;
  if (found) {
    // num indexes a 16-byte block, the keystream block in CTR. OpenSSL
    // 3.0.19 takes any value there (and reads past its block); 3.0.20 and
    // later bound it by the block size, which for CTR (1) leaves only 0.
    if (value >= kAesBlock) {
      ERR_raise(ERR_LIB_PROV, PROV_R_FAILED_TO_GET_PARAMETER);
      return 0;
    }
    ctx->num = static_cast<uint8_t>(value);
  }
  return 1;
}

const OSSL_PARAM *GenericSettableCtxParams(void *, void *) noexcept {
  static const OSSL_PARAM kSettable[] = {
      OSSL_PARAM_uint(OSSL_CIPHER_PARAM_PADDING, nullptr),
      OSSL_PARAM_uint(OSSL_CIPHER_PARAM_NUM, nullptr),
      OSSL_PARAM_uint(OSSL_CIPHER_PARAM_USE_BITS, nullptr),
      OSSL_PARAM_uint(OSSL_CIPHER_PARAM_TLS_VERSION, nullptr),
      OSSL_PARAM_size_t(OSSL_CIPHER_PARAM_TLS_MAC_SIZE, nullptr),
      OSSL_PARAM_END};
  return kSettable;
}

}  // namespace aesmux::openssl
