// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
#include "bench/peer/floor_provider.h"

#include <openssl/core_dispatch.h>
#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/params.h>
#include <openssl/provider.h>

#include <cstring>
#include <new>
#include <span>
#include <string_view>

#include "kernels/simd_gcm.h"
#include "kernels/tiers.h"

namespace aesmux::test {
namespace {

// floor_thin's kernels, chosen once by FloorProviders.
const kernels::Tier *g_tier = nullptr;

// One context of either provider. kReal: floor_thin (the work done through
// SimdGcm); otherwise floor_nothing, which keeps the same state so that
// libcrypto sees the same answers, and skips the work.
template <size_t kKeyBytes, bool kReal>
class FloorGcm {
 public:
  static constexpr size_t kMaxIvLen = 128;  // the default provider's bound
  static constexpr size_t kTagLen = 16;

  // The dispatch table of this cipher.
  static const OSSL_DISPATCH *Dispatch();

 private:
  FloorGcm() = default;
  FloorGcm(const FloorGcm &) = default;

  static void *NewCtx(void * /*provctx*/) noexcept {
    return new (std::nothrow) FloorGcm;
  }
  static void FreeCtx(void *vctx) noexcept { delete static_cast<FloorGcm *>(vctx); }
  static void *DupCtx(void *vctx) noexcept {
    auto *copy = new (std::nothrow) FloorGcm(*static_cast<FloorGcm *>(vctx));
    // SimdGcm's copy is unkeyed when its GHASH key cannot be allocated.
    if (copy != nullptr && copy->key_set_ && kReal && !copy->gcm_.is_set()) {
      delete copy;
      return nullptr;
    }
    return copy;
  }

  static int EncryptInit(void *vctx, const unsigned char *key, size_t keylen,
                         const unsigned char *iv, size_t ivlen,
                         const OSSL_PARAM params[]) noexcept {
    return static_cast<FloorGcm *>(vctx)->Init(true, key, keylen, iv, ivlen,
                                               params);
  }
  static int DecryptInit(void *vctx, const unsigned char *key, size_t keylen,
                         const unsigned char *iv, size_t ivlen,
                         const OSSL_PARAM params[]) noexcept {
    return static_cast<FloorGcm *>(vctx)->Init(false, key, keylen, iv, ivlen,
                                               params);
  }

  int Init(bool enc, const unsigned char *key, size_t keylen,
           const unsigned char *iv, size_t ivlen,
           const OSSL_PARAM params[]) noexcept {
    enc_ = enc;
    if (key != nullptr) {
      if (keylen != kKeyBytes) return 0;
      if constexpr (kReal) {
        if (!gcm_.SetKey(*g_tier, {key, kKeyBytes})) return 0;
      }
      key_set_ = true;
    }
    if (iv != nullptr) {
      if (ivlen == 0 || ivlen > kMaxIvLen) return 0;
      ivlen_ = ivlen;
      std::memcpy(iv_, iv, ivlen);
      iv_buffered_ = true;
    }
    if (!SetParams(params)) return 0;
    // A message begins once both key and IV are there, in either order.
    if (key_set_ && iv_buffered_) {
      if constexpr (kReal) gcm_.Start({iv_, ivlen_});
      iv_buffered_ = false;
      started_ = true;
    }
    return 1;
  }

  // AAD when out is null, else payload.
  static int Update(void *vctx, unsigned char *out, size_t *outl,
                    size_t outsize, const unsigned char *in, size_t inl) noexcept {
    auto *ctx = static_cast<FloorGcm *>(vctx);
    if (!ctx->started_) return 0;
    if constexpr (kReal) {
      using Status = kernels::SimdGcm::Status;
      Status status;
      if (out == nullptr) {
        status = ctx->gcm_.Aad({in, inl});
      } else {
        if (outsize < inl) return 0;
        status = ctx->enc_ ? ctx->gcm_.Encrypt(out, in, inl)
                           : ctx->gcm_.Decrypt(out, in, inl);
      }
      if (status != Status::kOk) return 0;
    }
    *outl = inl;
    return 1;
  }

  static int Final(void *vctx, unsigned char * /*out*/, size_t *outl,
                   size_t /*outsize*/) noexcept {
    auto *ctx = static_cast<FloorGcm *>(vctx);
    if (!ctx->started_) return 0;
    if (ctx->enc_) {
      if constexpr (kReal) ctx->gcm_.Finish(ctx->tag_);
      ctx->tag_len_ = kTagLen;
    } else {
      // Like the default provider: a decryption needs its tag first.
      if (ctx->tag_len_ == 0) return 0;
      if constexpr (kReal) {
        if (!ctx->gcm_.Verify(ctx->tag_, ctx->tag_len_)) return 0;
      }
    }
    ctx->started_ = false;  // the next message needs a new IV
    *outl = 0;
    return 1;
  }

  // A size_t parameter written inline when it has the usual shape, the
  // cheapest way a provider can answer libcrypto's per-record
  // EVP_CIPHER_CTX_get_iv_length.
  static bool SetSize(OSSL_PARAM *p, size_t value) noexcept {
    if (p->data_type == OSSL_PARAM_UNSIGNED_INTEGER &&
        p->data_size == sizeof(size_t)) {
      std::memcpy(p->data, &value, sizeof(value));
      p->return_size = sizeof(size_t);
      return true;
    }
    return OSSL_PARAM_set_size_t(p, value) == 1;
  }

  // The parameters a context serves, by name: a switch on the first
  // character and one strcmp, the least a provider can do with the names
  // libcrypto passes (its own string literals, which a provider cannot
  // compare by address).
  enum class Key { kOther, kIvLen, kIv, kUpdatedIv, kKeyLen, kTag, kTagLen };
  static Key Lookup(const char *key) noexcept {
    const auto is = [key](const char *name) {
      return std::strcmp(key, name) == 0;
    };
    switch (key[0]) {
      case 'i':  // "ivlen" (also AEAD_IVLEN), "iv"
        return is(OSSL_CIPHER_PARAM_IVLEN) ? Key::kIvLen
               : is(OSSL_CIPHER_PARAM_IV)  ? Key::kIv
                                           : Key::kOther;
      case 't':  // "tag", "taglen"
        return is(OSSL_CIPHER_PARAM_AEAD_TAG)      ? Key::kTag
               : is(OSSL_CIPHER_PARAM_AEAD_TAGLEN) ? Key::kTagLen
                                                   : Key::kOther;
      case 'k':
        return is(OSSL_CIPHER_PARAM_KEYLEN) ? Key::kKeyLen : Key::kOther;
      case 'u':
        return is(OSSL_CIPHER_PARAM_UPDATED_IV) ? Key::kUpdatedIv
                                                : Key::kOther;
      default:
        return Key::kOther;
    }
  }
  static_assert(std::string_view(OSSL_CIPHER_PARAM_AEAD_IVLEN) ==
                OSSL_CIPHER_PARAM_IVLEN);

  static int GetCtxParams(void *vctx, OSSL_PARAM params[]) noexcept {
    auto *ctx = static_cast<FloorGcm *>(vctx);
    for (OSSL_PARAM *p = params; p != nullptr && p->key != nullptr; ++p) {
      bool ok = true;
      switch (Lookup(p->key)) {
        case Key::kIvLen:
          ok = SetSize(p, ctx->ivlen_);
          break;
        case Key::kTag:
          // Encrypting, after final: the first data_size bytes of the tag.
          ok = ctx->enc_ && ctx->tag_len_ != 0 && p->data_size != 0 &&
               p->data_size <= kTagLen &&
               p->data_type == OSSL_PARAM_OCTET_STRING;
          if (ok) {
            // The whole tag, as EVP_CTRL_AEAD_GET_TAG asks, without a call.
            if (p->data_size == kTagLen) {
              std::memcpy(p->data, ctx->tag_, kTagLen);
            } else {
              std::memcpy(p->data, ctx->tag_, p->data_size);
            }
            p->return_size = p->data_size;
          }
          break;
        case Key::kKeyLen:
          ok = SetSize(p, kKeyBytes);
          break;
        case Key::kTagLen:
          ok = SetSize(p, ctx->tag_len_ != 0 ? ctx->tag_len_ : kTagLen);
          break;
        case Key::kIv:
        case Key::kUpdatedIv:
          ok = OSSL_PARAM_set_octet_string(p, ctx->iv_, ctx->ivlen_) == 1 ||
               OSSL_PARAM_set_octet_ptr(p, ctx->iv_, ctx->ivlen_) == 1;
          break;
        case Key::kOther:
          break;
      }
      if (!ok) return 0;
    }
    return 1;
  }

  static int SetCtxParams(void *vctx, const OSSL_PARAM params[]) noexcept {
    return static_cast<FloorGcm *>(vctx)->SetParams(params) ? 1 : 0;
  }

  bool SetParams(const OSSL_PARAM params[]) noexcept {
    for (const OSSL_PARAM *p = params; p != nullptr && p->key != nullptr;
         ++p) {
      const Key key = Lookup(p->key);
      if (key == Key::kTag) {
        // Decrypting: the tag to verify (or, data null, only its length).
        if (p->data_type != OSSL_PARAM_OCTET_STRING || p->data_size == 0 ||
            p->data_size > kTagLen) {
          return false;
        }
        if (p->data != nullptr) {
          if (enc_) return false;
          if (p->data_size == kTagLen) {
            std::memcpy(tag_, p->data, kTagLen);
          } else {
            std::memcpy(tag_, p->data, p->data_size);
          }
        }
        tag_len_ = p->data_size;
      } else if (key == Key::kIvLen) {
        size_t len = 0;
        if (OSSL_PARAM_get_size_t(p, &len) != 1 || len == 0 ||
            len > kMaxIvLen) {
          return false;
        }
        ivlen_ = len;
      }
    }
    return true;
  }

  static int GetParams(OSSL_PARAM params[]) noexcept {
    OSSL_PARAM *p;
    const auto set_int = [&](const char *key, int value) {
      p = OSSL_PARAM_locate(params, key);
      return p == nullptr || OSSL_PARAM_set_int(p, value) == 1;
    };
    const auto set_size = [&](const char *key, size_t value) {
      p = OSSL_PARAM_locate(params, key);
      return p == nullptr || OSSL_PARAM_set_size_t(p, value) == 1;
    };
    p = OSSL_PARAM_locate(params, OSSL_CIPHER_PARAM_MODE);
    if (p != nullptr && OSSL_PARAM_set_uint(p, EVP_CIPH_GCM_MODE) != 1) {
      return 0;
    }
    return set_size(OSSL_CIPHER_PARAM_KEYLEN, kKeyBytes) &&
                   set_size(OSSL_CIPHER_PARAM_IVLEN, 12) &&
                   set_size(OSSL_CIPHER_PARAM_BLOCK_SIZE, 1) &&
                   set_int(OSSL_CIPHER_PARAM_AEAD, 1) &&
                   set_int(OSSL_CIPHER_PARAM_CUSTOM_IV, 1) &&
                   set_int(OSSL_CIPHER_PARAM_CTS, 0) &&
                   set_int(OSSL_CIPHER_PARAM_TLS1_MULTIBLOCK, 0) &&
                   set_int(OSSL_CIPHER_PARAM_HAS_RAND_KEY, 0)
               ? 1
               : 0;
  }

  static const OSSL_PARAM *GettableParams(void * /*provctx*/) noexcept {
    static const OSSL_PARAM kList[] = {
        OSSL_PARAM_uint(OSSL_CIPHER_PARAM_MODE, nullptr),
        OSSL_PARAM_size_t(OSSL_CIPHER_PARAM_KEYLEN, nullptr),
        OSSL_PARAM_size_t(OSSL_CIPHER_PARAM_IVLEN, nullptr),
        OSSL_PARAM_size_t(OSSL_CIPHER_PARAM_BLOCK_SIZE, nullptr),
        OSSL_PARAM_int(OSSL_CIPHER_PARAM_AEAD, nullptr),
        OSSL_PARAM_int(OSSL_CIPHER_PARAM_CUSTOM_IV, nullptr),
        OSSL_PARAM_int(OSSL_CIPHER_PARAM_CTS, nullptr),
        OSSL_PARAM_int(OSSL_CIPHER_PARAM_TLS1_MULTIBLOCK, nullptr),
        OSSL_PARAM_int(OSSL_CIPHER_PARAM_HAS_RAND_KEY, nullptr),
        OSSL_PARAM_END};
    return kList;
  }
  static const OSSL_PARAM *GettableCtxParams(void * /*cctx*/,
                                             void * /*provctx*/) noexcept {
    static const OSSL_PARAM kList[] = {
        OSSL_PARAM_size_t(OSSL_CIPHER_PARAM_KEYLEN, nullptr),
        OSSL_PARAM_size_t(OSSL_CIPHER_PARAM_IVLEN, nullptr),
        OSSL_PARAM_size_t(OSSL_CIPHER_PARAM_AEAD_TAGLEN, nullptr),
        OSSL_PARAM_octet_string(OSSL_CIPHER_PARAM_IV, nullptr, 0),
        OSSL_PARAM_octet_string(OSSL_CIPHER_PARAM_UPDATED_IV, nullptr, 0),
        OSSL_PARAM_octet_string(OSSL_CIPHER_PARAM_AEAD_TAG, nullptr, 0),
        OSSL_PARAM_END};
    return kList;
  }
  static const OSSL_PARAM *SettableCtxParams(void * /*cctx*/,
                                             void * /*provctx*/) noexcept {
    static const OSSL_PARAM kList[] = {
        OSSL_PARAM_size_t(OSSL_CIPHER_PARAM_AEAD_IVLEN, nullptr),
        OSSL_PARAM_octet_string(OSSL_CIPHER_PARAM_AEAD_TAG, nullptr, 0),
        OSSL_PARAM_END};
    return kList;
  }

  kernels::SimdGcm gcm_;  // unused by floor_nothing
  bool enc_ = true;
  bool key_set_ = false;
  bool iv_buffered_ = false;  // an IV waits for the key
  bool started_ = false;      // a message is open
  size_t ivlen_ = 12;
  size_t tag_len_ = 0;  // 0: no tag set or made yet
  uint8_t iv_[kMaxIvLen] = {};
  uint8_t tag_[kTagLen] = {};
};

#define AESMUX_FLOOR_FN(id, fn) \
  { id, reinterpret_cast<void (*)(void)>(fn) }

template <size_t kKeyBytes, bool kReal>
const OSSL_DISPATCH *FloorGcm<kKeyBytes, kReal>::Dispatch() {
  static const OSSL_DISPATCH kTable[] = {
      AESMUX_FLOOR_FN(OSSL_FUNC_CIPHER_NEWCTX, NewCtx),
      AESMUX_FLOOR_FN(OSSL_FUNC_CIPHER_FREECTX, FreeCtx),
      AESMUX_FLOOR_FN(OSSL_FUNC_CIPHER_DUPCTX, DupCtx),
      AESMUX_FLOOR_FN(OSSL_FUNC_CIPHER_ENCRYPT_INIT, EncryptInit),
      AESMUX_FLOOR_FN(OSSL_FUNC_CIPHER_DECRYPT_INIT, DecryptInit),
      AESMUX_FLOOR_FN(OSSL_FUNC_CIPHER_UPDATE, Update),
      AESMUX_FLOOR_FN(OSSL_FUNC_CIPHER_FINAL, Final),
      AESMUX_FLOOR_FN(OSSL_FUNC_CIPHER_GET_PARAMS, GetParams),
      AESMUX_FLOOR_FN(OSSL_FUNC_CIPHER_GET_CTX_PARAMS, GetCtxParams),
      AESMUX_FLOOR_FN(OSSL_FUNC_CIPHER_SET_CTX_PARAMS, SetCtxParams),
      AESMUX_FLOOR_FN(OSSL_FUNC_CIPHER_GETTABLE_PARAMS, GettableParams),
      AESMUX_FLOOR_FN(OSSL_FUNC_CIPHER_GETTABLE_CTX_PARAMS, GettableCtxParams),
      AESMUX_FLOOR_FN(OSSL_FUNC_CIPHER_SETTABLE_CTX_PARAMS, SettableCtxParams),
      {0, nullptr}};
  return kTable;
}

// One provider: both key sizes of one variant.
template <bool kReal>
struct FloorProvider {
  static const OSSL_ALGORITHM *Query(void * /*provctx*/, int operation_id,
                                     int *no_cache) noexcept {
    *no_cache = 0;
    // kFloorThin / kFloorNothing.
    static constexpr const char *kProperty =
        kReal ? "provider=floor_thin" : "provider=floor_nothing";
    static const OSSL_ALGORITHM kCiphers[] = {
        {"AES-128-GCM:id-aes128-GCM:2.16.840.1.101.3.4.1.6",
         kProperty,
         FloorGcm<16, kReal>::Dispatch(), nullptr},
        {"AES-256-GCM:id-aes256-GCM:2.16.840.1.101.3.4.1.46",
         kProperty,
         FloorGcm<32, kReal>::Dispatch(), nullptr},
        {nullptr, nullptr, nullptr, nullptr}};
    return operation_id == OSSL_OP_CIPHER ? kCiphers : nullptr;
  }

  static int Init(const OSSL_CORE_HANDLE *handle, const OSSL_DISPATCH * /*in*/,
                  const OSSL_DISPATCH **out, void **provctx) noexcept {
    static const OSSL_DISPATCH kTable[] = {
        AESMUX_FLOOR_FN(OSSL_FUNC_PROVIDER_QUERY_OPERATION, Query),
        {0, nullptr}};
    *out = kTable;
    // No state of its own: the core handle stands for it.
    *provctx = const_cast<OSSL_CORE_HANDLE *>(handle);
    return 1;
  }
};

#undef AESMUX_FLOOR_FN

}  // namespace

FloorProviders::FloorProviders(OSSL_LIB_CTX *libctx, const std::string &tier) {
  const kernels::CpuFeatures cpu = kernels::DetectCpuFeatures();
  g_tier = tier.empty() ? kernels::BestTier(cpu) : kernels::TierByName(tier);
  if (g_tier == nullptr || !kernels::Supported(*g_tier, cpu)) {
    error_ = "no kernel tier " + tier + " on this CPU";
    return;
  }
  if (OSSL_PROVIDER_add_builtin(libctx, kFloorNothing,
                                FloorProvider<false>::Init) == 1 &&
      OSSL_PROVIDER_add_builtin(libctx, kFloorThin,
                                FloorProvider<true>::Init) == 1) {
    nothing_ = OSSL_PROVIDER_load(libctx, kFloorNothing);
    thin_ = OSSL_PROVIDER_load(libctx, kFloorThin);
  }
  if (nothing_ == nullptr || thin_ == nullptr) {
    error_ = "cannot load the floor providers";
  }
}

FloorProviders::~FloorProviders() {
  if (thin_ != nullptr) OSSL_PROVIDER_unload(thin_);
  if (nothing_ != nullptr) OSSL_PROVIDER_unload(nothing_);
}

std::string FloorProviders::tier() const {
  return g_tier != nullptr ? std::string(g_tier->name) : "";
}

}  // namespace aesmux::test
