#include "provider/route/gcm_engine.h"

#include <openssl/crypto.h>

#include <cstring>

#include "provider/route/stats.h"

namespace aesmux::route {
namespace {

// AAD beyond this much forces the routing decision, bounding the buffer.
constexpr size_t kMaxPendingAad = 64 * 1024;

}  // namespace

bool GcmEngine::CopyFrom(const GcmEngine &other) {
  if (!fallback_.CopyFrom(other.fallback_)) return false;
  router_ = other.router_;
  alg_ = other.alg_;
  key_ = other.key_;
  simd_ = other.simd_;
  direction_ = other.direction_;
  iv_ = other.iv_;
  iv_len_ = other.iv_len_;
  path_ = other.path_;
  pending_aad_ = other.pending_aad_;
  message_bytes_ = other.message_bytes_;
  return true;
}

void GcmEngine::SetKey(std::span<const uint8_t> key) {
  // Setting a key ends the current message, as in the default provider.
  path_.reset();
  // The same key again (openssl speed re-keys every operation) keeps its
  // schedule and powers of H.
  if (!key_.Replace(key)) return;
  fallback_.Reset();
  if (const kernels::Tier *tier = router_->tier()) {
    simd_.SetKey(*tier, key);
  } else {
    simd_.Clear();
  }
  CountKeySetup(alg_);
}

bool GcmEngine::Start(Direction direction, std::span<const uint8_t> iv) {
  direction_ = direction;
  std::memcpy(iv_.data(), iv.data(), iv.size());
  iv_len_ = iv.size();
  path_.reset();
  pending_aad_.clear();
  message_bytes_ = 0;
  if (!router_->LengthMatters(alg_)) return Route(0);
  return true;
}

bool GcmEngine::Route(uint64_t len) {
  const Path path = router_->Choose(alg_, len);
  const std::span<const uint8_t> iv(iv_.data(), iv_len_);
  if (path == Path::kSimd) {
    simd_.Start(iv);
  } else if (!fallback_.GcmStart(router_->fallback().cipher(alg_), key_.bytes(),
                                 direction_, iv)) {
    return false;
  }
  path_ = path;
  if (pending_aad_.empty()) return true;
  const bool ok = FeedAad(pending_aad_);
  pending_aad_.clear();
  return ok;
}

bool GcmEngine::Aad(std::span<const uint8_t> aad) {
  message_bytes_ += aad.size();
  if (path_) return FeedAad(aad);
  pending_aad_.insert(pending_aad_.end(), aad.begin(), aad.end());
  return pending_aad_.size() <= kMaxPendingAad || Route(pending_aad_.size());
}

bool GcmEngine::FeedAad(std::span<const uint8_t> aad) {
  if (*path_ == Path::kSimd) {
    return simd_.Aad(aad) == kernels::SimdGcm::Status::kOk;
  }
  return fallback_.GcmAad(aad);
}

bool GcmEngine::Crypt(uint8_t *out, const uint8_t *in, size_t len) {
  if (!path_ && !Route(pending_aad_.size() + len)) return false;
  message_bytes_ += len;
  if (*path_ == Path::kSimd) {
    const auto status = direction_ == Direction::kEncrypt
                            ? simd_.Encrypt(out, in, len)
                            : simd_.Decrypt(out, in, len);
    return status == kernels::SimdGcm::Status::kOk;
  }
  return fallback_.GcmCrypt(out, in, len);
}

bool GcmEngine::Finish(uint8_t tag[16], size_t tag_len) {
  if (!path_ && !Route(pending_aad_.size())) return false;
  const Path path = *path_;
  bool ok;
  if (path == Path::kSimd) {
    uint8_t computed[16];
    simd_.Finish(computed);
    if (direction_ == Direction::kEncrypt) {
      std::memcpy(tag, computed, 16);
      ok = true;
    } else {
      ok = CRYPTO_memcmp(computed, tag, tag_len) == 0;
    }
    kernels::SecureZero(computed, sizeof(computed));
  } else {
    ok = fallback_.GcmFinish(direction_, tag, tag_len);
  }
  CountRequest(alg_, path, message_bytes_);
  // A decryption whose tag did not match stays open on its path, as in the
  // default provider: more data continues the same message.
  if (ok || direction_ == Direction::kEncrypt) path_.reset();
  return ok;
}

}  // namespace aesmux::route
