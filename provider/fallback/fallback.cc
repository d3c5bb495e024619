// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
#include "provider/fallback/fallback.h"

#include <openssl/core_names.h>
#include <openssl/err.h>
#include <openssl/proverr.h>
#include <openssl/provider.h>
#include <openssl/rand.h>

#include <algorithm>
#include <array>
#include <mutex>
#include <new>
#include <string_view>
#include <utility>

#include "provider/core/process.h"

namespace aesmux::fallback {
namespace {

using core::Direction;

// Requests are fed in chunks that keep block boundaries (a multiple of 16
// bytes), as when they went through EVP_CipherUpdate's int length.
constexpr size_t kMaxChunk = size_t{1} << 30;

// The default provider's functions for `cipher`, fetched from it: found by
// name in the provider's algorithm table, once per process (the tables are
// libcrypto's own, the same in every library context). Null if the
// provider lacks one.
const CipherFunctions *DefaultFunctions(const EVP_CIPHER *cipher) {
  static std::array<CipherFunctions, core::kNumAlgs> table;
  static std::once_flag once;
  const OSSL_PROVIDER *provider = EVP_CIPHER_get0_provider(cipher);
  std::call_once(once, [provider] {
    int no_cache = 0;
    const OSSL_ALGORITHM *algorithms =
        OSSL_PROVIDER_query_operation(provider, OSSL_OP_CIPHER, &no_cache);
    for (const OSSL_ALGORITHM *a = algorithms;
         a != nullptr && a->algorithm_names != nullptr; ++a) {
      const std::string_view names(a->algorithm_names);
      const std::string_view first = names.substr(0, names.find(':'));
      for (const core::AlgInfo &info : core::kAlgs) {
        if (first == info.name) {
          table[static_cast<size_t>(info.alg)] =
              CipherFunctionsOf(a->implementation);
        }
      }
    }
    OSSL_PROVIDER_unquery_operation(provider, OSSL_OP_CIPHER, algorithms);
  });
  for (const core::AlgInfo &info : core::kAlgs) {
    if (EVP_CIPHER_is_a(cipher, std::string(info.name).c_str())) {
      const CipherFunctions &functions = table[static_cast<size_t>(info.alg)];
      return functions.complete() ? &functions : nullptr;
    }
  }
  return nullptr;
}

// The errors OpenSSL raises inside a call are dropped: the OpenSSL edge
// raises what the default provider raises for the request itself.
class DropErrors {
 public:
  DropErrors() { ERR_set_mark(); }
  ~DropErrors() { ERR_pop_to_mark(); }
  DropErrors(const DropErrors &) = delete;
  DropErrors &operator=(const DropErrors &) = delete;
};

}  // namespace

std::unique_ptr<FallbackLibrary> FallbackLibrary::Create(std::string *error) {
  std::unique_ptr<FallbackLibrary> library(new (std::nothrow) FallbackLibrary);
  if (library == nullptr) {
    *error = "out of memory";
    return nullptr;
  }
  if (!library->Make(error)) return nullptr;
  library->ready_.store(true, std::memory_order_release);
  return library;
}

bool FallbackLibrary::MakeOnce() const {
  // Lazily made state of a logically const object (see the header).
  auto *self = const_cast<FallbackLibrary *>(this);
  core::InitLock lock;  // fork() waits while a library is made
  if (ready_.load(std::memory_order_relaxed)) return true;
  std::string error;
  bool made = false;
  try {
    made = self->Make(&error);
  } catch (const std::bad_alloc &) {  // the names and the error text
    self->Release();
    ERR_raise(ERR_LIB_PROV, ERR_R_MALLOC_FAILURE);
    return false;
  }
  if (!made) {
    ERR_raise_data(ERR_LIB_PROV, PROV_R_UNABLE_TO_INITIALISE_CIPHERS, "%s",
                   error.c_str());
    return false;
  }
  ready_.store(true, std::memory_order_release);
  return true;
}

bool FallbackLibrary::RandomBytes(uint8_t *out, size_t len) const {
  return Ready() && RAND_bytes_ex(libctx_, out, len, 0) > 0;
}

bool FallbackLibrary::Make(std::string *error) {
  libctx_ = OSSL_LIB_CTX_new();
  if (libctx_ == nullptr) {
    *error = "cannot create the fallback library context";
    return false;
  }
  provider_ = OSSL_PROVIDER_load(libctx_, "default");
  if (provider_ == nullptr) {
    *error = "cannot load OpenSSL's default provider for the fallback path";
    Release();
    return false;
  }
  for (const core::AlgInfo &info : core::kAlgs) {
    const std::string name(info.name);
    EVP_CIPHER *cipher =
        EVP_CIPHER_fetch(libctx_, name.c_str(), "provider=default");
    if (cipher == nullptr) {
      *error = "the default provider has no " + name;
      Release();
      return false;
    }
    ciphers_[static_cast<size_t>(info.alg)] = cipher;
  }
  return true;
}

void FallbackLibrary::Release() {
  for (EVP_CIPHER *&cipher : ciphers_) {
    EVP_CIPHER_free(cipher);
    cipher = nullptr;
  }
  if (provider_ != nullptr) OSSL_PROVIDER_unload(provider_);
  provider_ = nullptr;
  OSSL_LIB_CTX_free(libctx_);
  libctx_ = nullptr;
}

FallbackLibrary::~FallbackLibrary() { Release(); }

FallbackContext::~FallbackContext() { Free(); }

void FallbackContext::Free() {
  if (ctx_ != nullptr) functions_->freectx(ctx_);  // wipes the key
  ctx_ = nullptr;
}

FallbackContext::FallbackContext(FallbackContext &&other) noexcept
    : functions_(other.functions_),
      ctx_(std::exchange(other.ctx_, nullptr)),
      block_size_(other.block_size_),
      keyed_(std::exchange(other.keyed_, false)),
      direction_(other.direction_) {}

FallbackContext &FallbackContext::operator=(FallbackContext &&other) noexcept {
  if (this != &other) {
    Free();
    functions_ = other.functions_;
    ctx_ = std::exchange(other.ctx_, nullptr);
    block_size_ = other.block_size_;
    keyed_ = std::exchange(other.keyed_, false);
    direction_ = other.direction_;
  }
  return *this;
}

bool FallbackContext::CopyFrom(const FallbackContext &other) {
  void *copy = nullptr;
  // Only a keyed context has anything to copy (Reset() frees it).
  if (other.ctx_ != nullptr && other.keyed_) {
    copy = other.functions_->dupctx(other.ctx_);
    if (copy == nullptr) return false;
  }
  Free();
  functions_ = other.functions_;
  ctx_ = copy;
  block_size_ = other.block_size_;
  keyed_ = copy != nullptr;
  direction_ = other.direction_;
  return true;
}

// The old key's schedule lives in the default provider's context: freeing
// it now (the default provider frees it with OPENSSL_clear_free) wipes it,
// where waiting for the next key's first request here could keep it until
// the context is freed, since a new key may never come this way.
void FallbackContext::Reset() {
  Free();
  keyed_ = false;
}

bool FallbackContext::Prepare(const EVP_CIPHER *cipher,
                              std::span<const uint8_t> key,
                              Direction direction) {
  if (keyed_ && direction_ == direction) return true;
  keyed_ = false;
  if (cipher == nullptr) return false;  // the library could not be made
  functions_ = DefaultFunctions(cipher);
  if (functions_ == nullptr) return false;
  // A fresh context for each key and direction, so that the schedule always
  // matches the direction.
  Free();
  ctx_ = functions_->newctx(
      OSSL_PROVIDER_get0_provider_ctx(EVP_CIPHER_get0_provider(cipher)));
  if (ctx_ == nullptr) return false;
  block_size_ = static_cast<size_t>(EVP_CIPHER_get_block_size(cipher));
  unsigned int padding = 0;
  const OSSL_PARAM params[] = {
      OSSL_PARAM_construct_uint(OSSL_CIPHER_PARAM_PADDING, &padding),
      OSSL_PARAM_construct_end()};
  auto *init = direction == Direction::kEncrypt ? functions_->einit
                                                : functions_->dinit;
  if (!init(ctx_, key.data(), key.size(), nullptr, 0, params)) return false;
  keyed_ = true;
  direction_ = direction;
  return true;
}

bool FallbackContext::SetIv(const uint8_t *iv, size_t iv_len) {
  auto *init = direction_ == Direction::kEncrypt ? functions_->einit
                                                 : functions_->dinit;
  return init(ctx_, nullptr, 0, iv, iv_len, nullptr) == 1;
}

bool FallbackContext::Feed(uint8_t *out, const uint8_t *in, size_t len,
                           size_t max_chunk) {
  while (len > 0) {
    const size_t chunk = std::min(len, max_chunk);
    size_t out_len = 0;
    // The output room EVP gives a provider: the input and, for block
    // ciphers, a block.
    const size_t room = chunk + (block_size_ > 1 ? block_size_ : 0);
    if (!functions_->update(ctx_, out, &out_len, room, in, chunk)) {
      return false;
    }
    if (out != nullptr) out += chunk;
    in += chunk;
    len -= chunk;
  }
  return true;
}

bool FallbackContext::Blocks(const EVP_CIPHER *cipher,
                             std::span<const uint8_t> key, Direction direction,
                             uint8_t *iv, uint8_t *out, const uint8_t *in,
                             size_t len) {
  DropErrors drop;
  if (!Prepare(cipher, key, direction)) return false;
  if (iv != nullptr && !SetIv(iv, 16)) return false;
  // An XTS update is one data unit: it must not be split.
  const int mode = EVP_CIPHER_get_mode(cipher);
  if (!Feed(out, in, len, mode == EVP_CIPH_XTS_MODE ? len : kMaxChunk)) {
    return false;
  }
  if (iv != nullptr && (mode == EVP_CIPH_CBC_MODE || mode == EVP_CIPH_CTR_MODE)) {
    OSSL_PARAM params[] = {OSSL_PARAM_construct_octet_string(
                               OSSL_CIPHER_PARAM_UPDATED_IV, iv, 16),
                           OSSL_PARAM_construct_end()};
    return functions_->get_ctx_params(ctx_, params) == 1;
  }
  return true;
}

bool FallbackContext::GcmStart(const EVP_CIPHER *cipher,
                               std::span<const uint8_t> key,
                               Direction direction,
                               std::span<const uint8_t> iv) {
  DropErrors drop;
  return StartGcm(cipher, key, direction, iv);
}

bool FallbackContext::GcmAad(std::span<const uint8_t> aad) {
  DropErrors drop;
  return AadGcm(aad);
}

bool FallbackContext::GcmCrypt(uint8_t *out, const uint8_t *in, size_t len) {
  DropErrors drop;
  return Feed(out, in, len, kMaxChunk);
}

bool FallbackContext::GcmSwitchDirection(Direction direction) {
  DropErrors drop;
  auto *init =
      direction == Direction::kEncrypt ? functions_->einit : functions_->dinit;
  if (init(ctx_, nullptr, 0, nullptr, 0, nullptr) != 1) return false;
  direction_ = direction;
  return true;
}

bool FallbackContext::GcmFinish(Direction direction, uint8_t tag[16],
                                size_t tag_len) {
  DropErrors drop;
  return FinishGcm(direction, tag, tag_len);
}

bool FallbackContext::GcmRecord(const EVP_CIPHER *cipher,
                                std::span<const uint8_t> key,
                                Direction direction,
                                std::span<const uint8_t> iv,
                                std::span<const uint8_t> aad, uint8_t *out,
                                const uint8_t *in, size_t len,
                                uint8_t tag[16]) {
  DropErrors drop;
  return StartGcm(cipher, key, direction, iv) && AadGcm(aad) &&
         Feed(out, in, len, kMaxChunk) && FinishGcm(direction, tag, 16);
}

bool FallbackContext::GcmTlsRecord(const EVP_CIPHER *cipher,
                                   std::span<const uint8_t> key,
                                   Direction direction,
                                   std::span<const uint8_t> iv,
                                   std::span<const uint8_t> aad,
                                   uint8_t *payload, size_t len) {
  // tlsaad takes the header as the record layer sends it, its length
  // counting the explicit IV (and the tag, decrypting), and takes those
  // off again.
  std::array<uint8_t, EVP_AEAD_TLS1_AAD_LEN> header;
  const size_t taken_off =
      EVP_GCM_TLS_EXPLICIT_IV_LEN +
      (direction == Direction::kDecrypt ? EVP_GCM_TLS_TAG_LEN : 0);
  const size_t sent_len = aad.size() == header.size()
                              ? (size_t{aad[11]} << 8 | aad[12]) + taken_off
                              : SIZE_MAX;
  if (sent_len > 0xffff) {
    return GcmRecord(cipher, key, direction, iv, aad, payload, payload, len,
                     payload + len);
  }
  uint8_t *record = payload - EVP_GCM_TLS_EXPLICIT_IV_LEN;
  const size_t record_len =
      EVP_GCM_TLS_EXPLICIT_IV_LEN + len + EVP_GCM_TLS_TAG_LEN;
  std::copy(aad.begin(), aad.end(), header.begin());
  header[11] = static_cast<uint8_t>(sent_len >> 8);
  header[12] = static_cast<uint8_t>(sent_len);

  DropErrors drop;
  if (!Prepare(cipher, key, direction)) return false;
  size_t iv_len = iv.size();
  // The IV length first: OpenSSL 3.5 and later apply the parameters in
  // their order, and tlsivfixed copies that many bytes. Length -1 is the
  // whole IV (EVP_CTRL_GCM_SET_IV_FIXED's -1, as OpenSSH sets it).
  OSSL_PARAM params[] = {
      OSSL_PARAM_construct_size_t(OSSL_CIPHER_PARAM_AEAD_IVLEN, &iv_len),
      OSSL_PARAM_construct_octet_string(OSSL_CIPHER_PARAM_AEAD_TLS1_AAD,
                                        header.data(), header.size()),
      OSSL_PARAM_construct_octet_string(OSSL_CIPHER_PARAM_AEAD_TLS1_IV_FIXED,
                                        const_cast<uint8_t *>(iv.data()),
                                        static_cast<size_t>(-1)),
      OSSL_PARAM_construct_end()};
  size_t out_len = 0;
  if (functions_->set_ctx_params(ctx_, params) == 1 &&
      functions_->cipher(ctx_, record, &out_len, record_len, record,
                         record_len) == 1) {
    return true;
  }
  // The context may be left in its TLS record mode (tlsaad taken, the
  // record refused): the next request keys a fresh one.
  Reset();
  return false;
}

bool FallbackContext::StartGcm(const EVP_CIPHER *cipher,
                               std::span<const uint8_t> key,
                               Direction direction,
                               std::span<const uint8_t> iv) {
  if (!Prepare(cipher, key, direction)) return false;
  size_t iv_len = iv.size();
  OSSL_PARAM params[] = {
      OSSL_PARAM_construct_size_t(OSSL_CIPHER_PARAM_AEAD_IVLEN, &iv_len),
      OSSL_PARAM_construct_end()};
  return functions_->set_ctx_params(ctx_, params) == 1 &&
         SetIv(iv.data(), iv.size());
}

bool FallbackContext::AadGcm(std::span<const uint8_t> aad) {
  // The cipher function (EVP_Cipher's), unlike update, takes empty AAD to
  // GCM, which refuses it after the payload, as GCM in OpenSSL does.
  static constexpr uint8_t kNone[1] = {};
  const uint8_t *in = aad.empty() ? kNone : aad.data();
  size_t len = aad.size();
  do {
    const size_t chunk = std::min(len, kMaxChunk);
    size_t out_len = 0;
    if (functions_->cipher(ctx_, nullptr, &out_len, chunk, in, chunk) != 1) {
      return false;
    }
    in += chunk;
    len -= chunk;
  } while (len != 0);
  return true;
}

bool FallbackContext::FinishGcm(Direction direction, uint8_t tag[16],
                                size_t tag_len) {
  size_t out_len = 0;
  uint8_t unused[16];
  if (direction == Direction::kDecrypt) {
    OSSL_PARAM params[] = {
        OSSL_PARAM_construct_octet_string(OSSL_CIPHER_PARAM_AEAD_TAG, tag,
                                          tag_len),
        OSSL_PARAM_construct_end()};
    return functions_->set_ctx_params(ctx_, params) == 1 &&
           functions_->final(ctx_, unused, &out_len, 0) == 1;
  }
  OSSL_PARAM params[] = {
      OSSL_PARAM_construct_octet_string(OSSL_CIPHER_PARAM_AEAD_TAG, tag, 16),
      OSSL_PARAM_construct_end()};
  return functions_->final(ctx_, unused, &out_len, 0) == 1 &&
         functions_->get_ctx_params(ctx_, params) == 1;
}

}  // namespace aesmux::fallback
