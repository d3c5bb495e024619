#include "provider/fallback/fallback.h"

#include <openssl/core_names.h>
#include <openssl/err.h>
#include <openssl/provider.h>

#include <climits>
#include <utility>

namespace aesmux::fallback {
namespace {

using route::Direction;

// EVP_CipherUpdate takes an int length: feed longer requests in chunks that
// keep block boundaries (a multiple of 16 bytes).
constexpr size_t kMaxChunk = size_t{1} << 30;

int EncFlag(Direction direction) {
  return direction == Direction::kEncrypt ? 1 : 0;
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
  std::unique_ptr<FallbackLibrary> library(new FallbackLibrary);
  library->libctx_ = OSSL_LIB_CTX_new();
  if (library->libctx_ == nullptr) {
    *error = "cannot create the fallback library context";
    return nullptr;
  }
  library->provider_ = OSSL_PROVIDER_load(library->libctx_, "default");
  if (library->provider_ == nullptr) {
    *error = "cannot load OpenSSL's default provider for the fallback path";
    return nullptr;
  }
  for (const route::AlgInfo &info : route::kAlgs) {
    const std::string name(info.name);
    EVP_CIPHER *cipher =
        EVP_CIPHER_fetch(library->libctx_, name.c_str(), "provider=default");
    if (cipher == nullptr) {
      *error = "the default provider has no " + name;
      return nullptr;
    }
    library->ciphers_[static_cast<size_t>(info.alg)] = cipher;
  }
  return library;
}

FallbackLibrary::~FallbackLibrary() {
  for (EVP_CIPHER *cipher : ciphers_) EVP_CIPHER_free(cipher);
  if (provider_ != nullptr) OSSL_PROVIDER_unload(provider_);
  OSSL_LIB_CTX_free(libctx_);
}

FallbackContext::~FallbackContext() { EVP_CIPHER_CTX_free(ctx_); }

FallbackContext::FallbackContext(FallbackContext &&other) noexcept
    : ctx_(std::exchange(other.ctx_, nullptr)),
      keyed_(std::exchange(other.keyed_, false)),
      direction_(other.direction_) {}

FallbackContext &FallbackContext::operator=(FallbackContext &&other) noexcept {
  if (this != &other) {
    EVP_CIPHER_CTX_free(ctx_);
    ctx_ = std::exchange(other.ctx_, nullptr);
    keyed_ = std::exchange(other.keyed_, false);
    direction_ = other.direction_;
  }
  return *this;
}

bool FallbackContext::CopyFrom(const FallbackContext &other) {
  EVP_CIPHER_CTX *copy = nullptr;
  // Only a keyed context has anything to copy (Reset() empties it).
  if (other.ctx_ != nullptr && other.keyed_) {
    copy = EVP_CIPHER_CTX_new();
    if (copy == nullptr || !EVP_CIPHER_CTX_copy(copy, other.ctx_)) {
      EVP_CIPHER_CTX_free(copy);
      return false;
    }
  }
  EVP_CIPHER_CTX_free(ctx_);
  ctx_ = copy;
  keyed_ = other.keyed_;
  direction_ = other.direction_;
  return true;
}

// The old key's schedule lives in the default provider's context: freeing
// that context now (EVP_CIPHER_CTX_reset; the default provider frees it with
// OPENSSL_clear_free) wipes it, where waiting for the next key's first
// request here could keep it until the context is freed, since a new key
// may never come this way.
void FallbackContext::Reset() {
  if (ctx_ != nullptr) EVP_CIPHER_CTX_reset(ctx_);
  keyed_ = false;
}

bool FallbackContext::Prepare(const EVP_CIPHER *cipher,
                              std::span<const uint8_t> key,
                              Direction direction) {
  if (keyed_ && direction_ == direction) return true;
  if (ctx_ == nullptr) {
    ctx_ = EVP_CIPHER_CTX_new();
    if (ctx_ == nullptr) return false;
  }
  // A fresh init with the cipher resets the context, so the schedule always
  // matches the direction (a direction-only re-init would keep the old one).
  if (!EVP_CipherInit_ex(ctx_, cipher, nullptr, key.data(), nullptr,
                         EncFlag(direction))) {
    keyed_ = false;
    return false;
  }
  EVP_CIPHER_CTX_set_padding(ctx_, 0);
  keyed_ = true;
  direction_ = direction;
  return true;
}

bool FallbackContext::Feed(uint8_t *out, const uint8_t *in, size_t len,
                           size_t max_chunk) {
  while (len > 0) {
    const size_t chunk = std::min(len, max_chunk);
    int out_len = 0;
    if (!EVP_CipherUpdate(ctx_, out, &out_len, in, static_cast<int>(chunk))) {
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
  if (iv != nullptr &&
      !EVP_CipherInit_ex(ctx_, nullptr, nullptr, nullptr, iv, -1)) {
    return false;
  }
  // An XTS update is one data unit: it must not be split.
  const int mode = EVP_CIPHER_get_mode(cipher);
  if (!Feed(out, in, len, mode == EVP_CIPH_XTS_MODE ? len : kMaxChunk)) {
    return false;
  }
  if (iv != nullptr && (mode == EVP_CIPH_CBC_MODE || mode == EVP_CIPH_CTR_MODE)) {
    return EVP_CIPHER_CTX_get_updated_iv(ctx_, iv, 16) == 1;
  }
  return true;
}

bool FallbackContext::GcmStart(const EVP_CIPHER *cipher,
                               std::span<const uint8_t> key,
                               Direction direction,
                               std::span<const uint8_t> iv) {
  DropErrors drop;
  if (!Prepare(cipher, key, direction)) return false;
  size_t iv_len = iv.size();
  OSSL_PARAM params[] = {
      OSSL_PARAM_construct_size_t(OSSL_CIPHER_PARAM_AEAD_IVLEN, &iv_len),
      OSSL_PARAM_construct_end()};
  return EVP_CIPHER_CTX_set_params(ctx_, params) == 1 &&
         EVP_CipherInit_ex(ctx_, nullptr, nullptr, nullptr, iv.data(),
                           EncFlag(direction)) == 1;
}

bool FallbackContext::GcmAad(std::span<const uint8_t> aad) {
  DropErrors drop;
  // EVP_Cipher, unlike EVP_CipherUpdate, takes empty AAD to the provider,
  // which refuses it after the payload, as GCM in OpenSSL does.
  static constexpr uint8_t kNone[1] = {};
  const uint8_t *in = aad.empty() ? kNone : aad.data();
  size_t len = aad.size();
  do {
    const size_t chunk = std::min(len, kMaxChunk);
    if (EVP_Cipher(ctx_, nullptr, in, static_cast<unsigned int>(chunk)) < 0) {
      return false;
    }
    in += chunk;
    len -= chunk;
  } while (len != 0);
  return true;
}

bool FallbackContext::GcmCrypt(uint8_t *out, const uint8_t *in, size_t len) {
  DropErrors drop;
  return Feed(out, in, len, kMaxChunk);
}

bool FallbackContext::GcmSwitchDirection(Direction direction) {
  DropErrors drop;
  return EVP_CipherInit_ex(ctx_, nullptr, nullptr, nullptr, nullptr,
                           EncFlag(direction)) == 1;
}

bool FallbackContext::GcmFinish(Direction direction, uint8_t tag[16],
                                size_t tag_len) {
  DropErrors drop;
  int out_len = 0;
  uint8_t unused[16];
  if (direction == Direction::kDecrypt) {
    OSSL_PARAM params[] = {
        OSSL_PARAM_construct_octet_string(OSSL_CIPHER_PARAM_AEAD_TAG, tag,
                                          tag_len),
        OSSL_PARAM_construct_end()};
    return EVP_CIPHER_CTX_set_params(ctx_, params) == 1 &&
           EVP_CipherFinal_ex(ctx_, unused, &out_len) == 1;
  }
  OSSL_PARAM params[] = {
      OSSL_PARAM_construct_octet_string(OSSL_CIPHER_PARAM_AEAD_TAG, tag, 16),
      OSSL_PARAM_construct_end()};
  return EVP_CipherFinal_ex(ctx_, unused, &out_len) == 1 &&
         EVP_CIPHER_CTX_get_params(ctx_, params) == 1;
}

}  // namespace aesmux::fallback
