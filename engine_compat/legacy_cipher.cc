// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
#include "engine_compat/legacy_cipher.h"

#include <openssl/core_dispatch.h>
#include <openssl/core_names.h>
#include <openssl/engineerr.h>
#include <openssl/err.h>
#include <openssl/params.h>

#include <atomic>
#include <cstring>
#include <new>
#include <type_traits>
#include <utility>

#include "provider/core/process.h"
#include "provider/fallback/cipher_functions.h"
#include "provider/openssl/generic_ctx.h"
#include "provider/openssl/params.h"

namespace aesmux::engine {
namespace {

using core::Alg;
using core::Family;

// The legacy ciphers' NIDs, in core::Alg order.
constexpr std::array<int, core::kNumAlgs> kNids = [] {
  std::array<int, core::kNumAlgs> nids{};
  for (const core::AlgInfo &info : core::kAlgs) {
    nids[static_cast<size_t>(info.alg)] = info.nid;
  }
  return nids;
}();

// The largest IV a provider context holds (GCM: 128 bytes).
constexpr size_t kMaxProviderIv = 128;

using Functions = fallback::CipherFunctions;

core::ProcessValue<std::array<Functions, core::kNumAlgs>> g_functions;

const Functions &FunctionsFor(Alg alg) {
  const auto &table = g_functions.Get([] {
    std::array<Functions, core::kNumAlgs> t;
    for (const core::AlgInfo &info : core::kAlgs) {
      t[static_cast<size_t>(info.alg)] =
          fallback::CipherFunctionsOf(openssl::CipherDispatch(info.alg));
    }
    return t;
  });
  return table[static_cast<size_t>(alg)];
}

// The instance new contexts start in (SetProviderContext); read and
// written under core::InitLock, so that a context takes its hold on the
// instance before the ENGINE's finish can give up the ENGINE's.
constinit openssl::ProviderContext *g_provider = nullptr;

// The current instance with a hold for the caller, or null.
openssl::ProviderContext *HoldCurrentProvider() {
  core::InitLock lock;
  if (g_provider != nullptr) openssl::HoldProviderContext(g_provider);
  return g_provider;
}

// An EVP_CIPHER_CTX's cipher_data. libcrypto allocates it zeroed and copies
// it with memcpy (EVP_CIPHER_CTX_copy, before EVP_CTRL_COPY), so it is
// plain data.
struct CipherData {
  const Functions *fns;  // the algorithm's provider functions
  void *algctx;          // the provider context; null before it is needed
  // The instance algctx belongs to, held while there is an algctx: the
  // ENGINE may be finished (and its hold given up) before the context.
  openssl::ProviderContext *provider;
  const uint8_t *iv;     // its running IV (an octet pointer into algctx),
                         // or null while it has none (GCM before an IV)
  size_t iv_len;         // the provider context's IV length
  size_t block_size;     // the cipher's: 16 for ECB and CBC, else 1
  unsigned int num;      // CTR: the provider context's `num`
  // The EVP_CIPHER_CTX's own IV (ctx->iv, what EVP_CIPHER_CTX_iv returns
  // for a legacy cipher), asked for once: asking costs more than a small
  // request's cipher call.
  unsigned char *evp_iv;
};
static_assert(std::is_trivially_copyable_v<CipherData>);

CipherData *DataOf(EVP_CIPHER_CTX *ctx) {
  return static_cast<CipherData *>(EVP_CIPHER_CTX_get_cipher_data(ctx));
}

// Every callback of one algorithm's legacy cipher.
template <Alg kAlg>
struct Legacy {
  static constexpr Family kFamily = core::Info(kAlg).family;
  static constexpr bool kGcm = kFamily == Family::kGcm;
  static constexpr bool kCtr = kFamily == Family::kCtr;

  static size_t ProviderSize(const CipherData *d, const char *key) {
    size_t value = 0;
    OSSL_PARAM params[] = {OSSL_PARAM_construct_size_t(key, &value),
                           OSSL_PARAM_END};
    return d->fns->get_ctx_params(d->algctx, params) ? value : 0;
  }

  static int SetParam(CipherData *d, OSSL_PARAM param) {
    OSSL_PARAM params[] = {param, OSSL_PARAM_END};
    return d->fns->set_ctx_params(d->algctx, params);
  }
  static int GetParam(CipherData *d, OSSL_PARAM param) {
    OSSL_PARAM params[] = {param, OSSL_PARAM_END};
    return d->fns->get_ctx_params(d->algctx, params);
  }

  // The provider context's running IV, which stays where it is for the
  // context's life; GCM has none before its first IV. Asking leaves no
  // error behind (OpenSSL 3.2 and later raise one for the octet string
  // tried before the pointer): the caller never asked.
  static void FindIv(CipherData *d) {
    void *iv = nullptr;
    ERR_set_mark();
    if (GetParam(d, OSSL_PARAM_construct_octet_ptr(
                        OSSL_CIPHER_PARAM_UPDATED_IV, &iv, kMaxProviderIv))) {
      d->iv = static_cast<const uint8_t *>(iv);
    }
    ERR_pop_to_mark();
  }

  // Makes the provider context on first use.
  static bool Ensure(EVP_CIPHER_CTX *ctx, CipherData *d) {
    if (d->algctx != nullptr) return true;
    openssl::ProviderContext *provider = HoldCurrentProvider();
    if (provider == nullptr) {
      ERR_raise_data(ERR_LIB_ENGINE, ENGINE_R_NOT_INITIALISED,
                     "aesmux: the ENGINE is not initialised");
      return false;
    }
    d->fns = &FunctionsFor(kAlg);
    d->algctx = d->fns->newctx(provider);
    if (d->algctx == nullptr) {
      openssl::FreeProviderContext(provider);
      return false;
    }
    d->provider = provider;
    d->evp_iv = EVP_CIPHER_CTX_iv_noconst(ctx);
    d->iv = nullptr;
    d->iv_len = ProviderSize(d, OSSL_CIPHER_PARAM_IVLEN);
    d->block_size = static_cast<size_t>(EVP_CIPHER_CTX_get_block_size(ctx));
    d->num = 0;
    FindIv(d);
    // ECB/CBC: libcrypto pads, and holds back the last block to unpad; the
    // provider context never does (so its update is its `cipher` on whole
    // blocks).
    if (d->block_size > 1) {
      unsigned int padding = 0;
      return SetParam(d, OSSL_PARAM_construct_uint(OSSL_CIPHER_PARAM_PADDING,
                                                   &padding)) == 1;
    }
    return true;
  }

  // What a legacy caller sees in the EVP_CIPHER_CTX after every call: the
  // running IV (ctx->iv, as OpenSSL's legacy ciphers keep it) and CTR's
  // `num`. `processed` is the length of the data call just made, if any:
  // `num` counts the bytes used of the last keystream block, so whole
  // blocks from a block boundary leave it 0 and it need not be asked for
  // (asking costs as much as a small request).
  static constexpr size_t kNoData = ~size_t{0};
  [[gnu::always_inline]] static void SyncOut(EVP_CIPHER_CTX *ctx,
                                             CipherData *d,
                                             size_t processed = kNoData) {
    if (d->iv == nullptr) {
      if (!kGcm) return;
      FindIv(d);
      if (d->iv == nullptr) return;
    }
    if (d->evp_iv != nullptr && d->iv_len != 0 &&
        d->iv_len <= EVP_MAX_IV_LENGTH) {
      CopyIv(d->evp_iv, d->iv, d->iv_len);
    }
    if constexpr (kCtr) {
      if (processed != kNoData && d->num == 0 && processed % 16 == 0) return;
      unsigned int num = 0;
      if (GetParam(d, OSSL_PARAM_construct_uint(OSSL_CIPHER_PARAM_NUM, &num)) &&
          num != d->num) {
        d->num = num;
        EVP_CIPHER_CTX_set_num(ctx, static_cast<int>(num));
      }
    }
  }

  // Copies an IV; the usual 16 bytes inline (a library call would cost
  // more than the copy at small request sizes).
  [[gnu::always_inline]] static void CopyIv(unsigned char *to,
                                            const uint8_t *from, size_t len) {
    len == 16 ? std::memcpy(to, from, 16) : std::memcpy(to, from, len);
  }
  [[gnu::always_inline]] static bool SameIv(const unsigned char *a,
                                            const uint8_t *b, size_t len) {
    return len == 16 ? std::memcmp(a, b, 16) == 0 : std::memcmp(a, b, len) == 0;
  }

  // Before data: the IV the caller left in the EVP_CIPHER_CTX, where it
  // differs from the provider context's (written through
  // EVP_CIPHER_CTX_iv_noconst, as OpenSSL's legacy ciphers allow; every
  // EVP init reaches Init, so direction and `num` agree already).
  [[gnu::always_inline]] static bool SyncIn(EVP_CIPHER_CTX *ctx,
                                            CipherData *d) {
    if (d->iv_len != 0 &&
        (d->iv == nullptr || !SameIv(d->evp_iv, d->iv, d->iv_len))) {
      const int encrypt = EVP_CIPHER_CTX_is_encrypting(ctx);
      auto *init = encrypt ? d->fns->einit : d->fns->dinit;
      if (!init(d->algctx, nullptr, 0, d->evp_iv, d->iv_len, nullptr)) {
        return false;
      }
      d->num = 0;
    }
    if constexpr (kCtr) return SyncNumIn(ctx, d);
    return true;
  }

  // CTR: the `num` the caller set (EVP_CIPHER_CTX_set_num), where it
  // differs from the provider context's. As in OpenSSL's legacy AES-CTR,
  // it is the offset into the keystream block of the counter before the
  // running IV: 0 starts the next block. Only 0..15 index that block; a
  // larger value (which OpenSSL's legacy code would read past its block
  // with) fails the call, as the provider refuses it.
  [[gnu::always_inline]] static bool SyncNumIn(EVP_CIPHER_CTX *ctx,
                                               CipherData *d) {
    const int num = EVP_CIPHER_CTX_get_num(ctx);
    if (static_cast<unsigned int>(num) == d->num) return true;
    unsigned int value = static_cast<unsigned int>(num);
    if (num < 0 ||
        !SetParam(d, OSSL_PARAM_construct_uint(OSSL_CIPHER_PARAM_NUM, &value))) {
      ERR_raise_data(ERR_LIB_ENGINE, ENGINE_R_INVALID_ARGUMENT,
                     "aesmux: CTR num %d is not an offset into a block", num);
      return false;
    }
    d->num = value;
    return true;
  }

  static int Init(EVP_CIPHER_CTX *ctx, const unsigned char *key,
                  const unsigned char *iv, int enc) noexcept {
    CipherData *d = DataOf(ctx);
    if (!Ensure(ctx, d)) return 0;
    // Every EVP init comes here (EVP_CIPH_ALWAYS_CALL_INIT), with or
    // without a key or IV. GCM and XTS keep their IV themselves
    // (EVP_CIPH_CUSTOM_IV); for CBC and CTR libcrypto has put the IV to use
    // in ctx->iv (the given one, CBC's original one again, or CTR's running
    // counter) and set ctx->num to 0, as the provider's init sets its own.
    const unsigned char *use_iv =
        kGcm || kFamily == Family::kXts
            ? iv
            : (d->iv_len != 0 ? d->evp_iv : nullptr);
    const int key_len = key != nullptr ? EVP_CIPHER_CTX_get_key_length(ctx) : 0;
    auto *init = enc ? d->fns->einit : d->fns->dinit;
    const int ok =
        init(d->algctx, key, key_len > 0 ? static_cast<size_t>(key_len) : 0,
             use_iv, use_iv != nullptr ? d->iv_len : 0, nullptr);
    d->num = 0;
    SyncOut(ctx, d);
    return ok;
  }

  // ECB, CBC, CTR, XTS: 1 or 0. libcrypto hands ECB and CBC whole blocks,
  // except through EVP_Cipher. Whole blocks go to the provider's update, the
  // path it keeps short for small requests (without padding the same as its
  // `cipher`, and cheaper per request: BENCHMARKS.md, "What does it change end
  // to end?"); a trailing partial block to its `cipher` (EVP_Cipher's), with a
  // whole block of output room for it, as EVP gives providers. The stream
  // modes go to `cipher`.
  static int DoCipher(EVP_CIPHER_CTX *ctx, unsigned char *out,
                      const unsigned char *in, size_t inl) noexcept {
    CipherData *d = DataOf(ctx);
    if (!Ensure(ctx, d) || !SyncIn(ctx, d)) return 0;
    size_t outl = 0;
    const bool block = d->block_size > 1;
    const size_t room = block ? inl + d->block_size : inl;
    const int ok =
        block && inl % d->block_size == 0
            ? d->fns->update(d->algctx, out, &outl, room, in, inl)
            : d->fns->cipher(d->algctx, out, &outl, room, in, inl);
    SyncOut(ctx, d, ok ? inl : kNoData);
    return ok;
  }

  // GCM (a custom cipher): `in` null finishes, `out` null is AAD; returns
  // the bytes written (0 for AAD and final), or -1.
  static int DoGcm(EVP_CIPHER_CTX *ctx, unsigned char *out,
                   const unsigned char *in, size_t len) noexcept {
    CipherData *d = DataOf(ctx);
    if (!Ensure(ctx, d)) return -1;
    size_t outl = 0;
    const int ok = in == nullptr
                       ? d->fns->final(d->algctx, out, &outl, 0)
                       : d->fns->update(d->algctx, out, &outl, len, in, len);
    SyncOut(ctx, d);
    return ok ? static_cast<int>(outl) : -1;
  }

  static int Cleanup(EVP_CIPHER_CTX *ctx) noexcept {
    CipherData *d = DataOf(ctx);
    if (d != nullptr && d->algctx != nullptr) {
      d->fns->freectx(d->algctx);  // wipes keys and IVs
      d->algctx = nullptr;
      d->iv = nullptr;
      openssl::FreeProviderContext(d->provider);
      d->provider = nullptr;
    }
    return 1;
  }

  // EVP_CTRL_COPY: libcrypto has copied cipher_data into `out`; `out` gets
  // a provider context of its own.
  static int Copy(CipherData *d, EVP_CIPHER_CTX *out) {
    CipherData *copy = DataOf(out);
    copy->algctx = nullptr;
    copy->iv = nullptr;
    copy->evp_iv = EVP_CIPHER_CTX_iv_noconst(out);
    if (d->algctx == nullptr) return 1;
    copy->algctx = d->fns->dupctx(d->algctx);
    if (copy->algctx == nullptr) return 0;
    openssl::HoldProviderContext(copy->provider);
    FindIv(copy);
    return 1;
  }

  // GCM's ctrls, as libcrypto maps them to a provider's parameters
  // (EVP_CIPHER_CTX_ctrl), lengths included.
  static int GcmCtrl(CipherData *d, int type, int arg, void *ptr) {
    const auto size = static_cast<size_t>(arg);
    switch (type) {
      case EVP_CTRL_GET_IVLEN:
        *static_cast<int *>(ptr) = static_cast<int>(d->iv_len);
        return 1;
      case EVP_CTRL_AEAD_SET_IVLEN: {
        if (arg < 0) return 0;
        size_t value = size;
        const int ok = SetParam(d, OSSL_PARAM_construct_size_t(
                                       OSSL_CIPHER_PARAM_AEAD_IVLEN, &value));
        d->iv_len = ProviderSize(d, OSSL_CIPHER_PARAM_IVLEN);
        return ok;
      }
      case EVP_CTRL_AEAD_SET_TAG:
        return SetParam(d, OSSL_PARAM_construct_octet_string(
                               OSSL_CIPHER_PARAM_AEAD_TAG, ptr, size));
      case EVP_CTRL_AEAD_GET_TAG:
        return GetParam(d, OSSL_PARAM_construct_octet_string(
                               OSSL_CIPHER_PARAM_AEAD_TAG, ptr, size));
      case EVP_CTRL_GCM_SET_IV_FIXED:  // arg -1: the whole IV (OpenSSH)
        return SetParam(d, OSSL_PARAM_construct_octet_string(
                               OSSL_CIPHER_PARAM_AEAD_TLS1_IV_FIXED, ptr,
                               size));
      case EVP_CTRL_GCM_IV_GEN:
        return GetParam(d, OSSL_PARAM_construct_octet_string(
                               OSSL_CIPHER_PARAM_AEAD_TLS1_GET_IV_GEN, ptr,
                               arg < 0 ? 0 : size));
      case EVP_CTRL_GCM_SET_IV_INV:
        if (arg < 0) return 0;
        return SetParam(d, OSSL_PARAM_construct_octet_string(
                               OSSL_CIPHER_PARAM_AEAD_TLS1_SET_IV_INV, ptr,
                               size));
      case EVP_CTRL_AEAD_TLS1_AAD:
        // Returns the record's extra length (the tag).
        if (!SetParam(d, OSSL_PARAM_construct_octet_string(
                             OSSL_CIPHER_PARAM_AEAD_TLS1_AAD, ptr, size))) {
          return 0;
        }
        return static_cast<int>(
            ProviderSize(d, OSSL_CIPHER_PARAM_AEAD_TLS1_AAD_PAD));
      default:
        return -1;
    }
  }

  static int Ctrl(EVP_CIPHER_CTX *ctx, int type, int arg, void *ptr) noexcept {
    CipherData *d = DataOf(ctx);
    if (d == nullptr) return 0;
    if (type == EVP_CTRL_INIT) return Ensure(ctx, d) ? 1 : 0;
    if (type == EVP_CTRL_COPY) {
      return Copy(d, static_cast<EVP_CIPHER_CTX *>(ptr));
    }
    if constexpr (kGcm) {
      if (!Ensure(ctx, d)) return 0;
      const int ret = GcmCtrl(d, type, arg, ptr);
      SyncOut(ctx, d);
      return ret;
    }
    return -1;  // EVP_CTRL_RET_UNSUPPORTED
  }

  // A cipher with the flags of OpenSSL's own legacy AES cipher of this
  // mode (crypto/evp/e_aes.c), from core::kAlgs: ASN.1 parameters where
  // the cipher has an OID; a custom IV with its init ctrl for the modes
  // whose context keeps its IV; GCM's AEAD flags. Plus
  // EVP_CIPH_CUSTOM_COPY (the context holds a provider context, which a
  // memcpy must not share) and EVP_CIPH_ALWAYS_CALL_INIT (an init without
  // a key resets the provider context's IV and `num` as libcrypto resets
  // the EVP_CIPHER_CTX's; without it, Init would see key changes only and
  // every data call would have to compare `num`, a large part of a short
  // CTR request: BENCHMARKS.md, "What does it change end to end?").
  static EVP_CIPHER *Make() {
    const core::AlgInfo &info = core::Info(kAlg);
    const core::FamilyInfo &c = core::Info(kFamily);
    unsigned long flags =
        c.mode | EVP_CIPH_CUSTOM_COPY | EVP_CIPH_ALWAYS_CALL_INIT;
    if (!info.oid.empty()) flags |= EVP_CIPH_FLAG_DEFAULT_ASN1;
    if (c.custom_iv) flags |= EVP_CIPH_CUSTOM_IV | EVP_CIPH_CTRL_INIT;
    if (c.aead) {
      flags |= EVP_CIPH_FLAG_AEAD_CIPHER | EVP_CIPH_FLAG_CUSTOM_CIPHER |
               EVP_CIPH_CUSTOM_IV_LENGTH;
    }
    EVP_CIPHER *cipher =
        EVP_CIPHER_meth_new(info.nid, static_cast<int>(c.block_size),
                            static_cast<int>(info.key_len));
    if (cipher == nullptr ||
        !EVP_CIPHER_meth_set_iv_length(cipher, static_cast<int>(c.iv_len)) ||
        !EVP_CIPHER_meth_set_flags(cipher, flags) ||
        !EVP_CIPHER_meth_set_init(cipher, Init) ||
        !EVP_CIPHER_meth_set_do_cipher(cipher, kGcm ? DoGcm : DoCipher) ||
        !EVP_CIPHER_meth_set_cleanup(cipher, Cleanup) ||
        !EVP_CIPHER_meth_set_impl_ctx_size(cipher, sizeof(CipherData)) ||
        !EVP_CIPHER_meth_set_ctrl(cipher, Ctrl)) {
      EVP_CIPHER_meth_free(cipher);
      return nullptr;
    }
    return cipher;
  }
};

template <size_t... kIndex>
std::array<EVP_CIPHER *, core::kNumAlgs> MakeAll(
    std::index_sequence<kIndex...>) {
  return {Legacy<static_cast<Alg>(kIndex)>::Make()...};
}

}  // namespace

void SetProviderContext(openssl::ProviderContext *context) {
  core::InitLock lock;
  g_provider = context;
}

std::unique_ptr<LegacyCiphers> LegacyCiphers::Create() {
  std::unique_ptr<LegacyCiphers> ciphers(new (std::nothrow) LegacyCiphers);
  if (ciphers == nullptr) return nullptr;
  ciphers->ciphers_ = MakeAll(std::make_index_sequence<core::kNumAlgs>());
  for (EVP_CIPHER *cipher : ciphers->ciphers_) {
    if (cipher == nullptr) return nullptr;
  }
  return ciphers;
}

LegacyCiphers::~LegacyCiphers() {
  for (EVP_CIPHER *cipher : ciphers_) EVP_CIPHER_meth_free(cipher);
}

std::span<const int> LegacyCiphers::Nids() { return kNids; }

const EVP_CIPHER *LegacyCiphers::ByNid(int nid) const {
  for (size_t i = 0; i < kNids.size(); ++i) {
    if (kNids[i] == nid) return ciphers_[i];
  }
  return nullptr;
}

}  // namespace aesmux::engine
