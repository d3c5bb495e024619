#include "provider/route/gcm_engine.h"

#include <openssl/crypto.h>
#include <openssl/err.h>

#include <cerrno>
#include <cstring>

#include "provider/core/stats.h"

namespace aesmux::route {
namespace {

// AAD beyond this much forces the routing decision, bounding the buffer.
constexpr size_t kMaxPendingAad = 64 * 1024;
constexpr size_t kAfalgIvLen = 12;

bool OutOfMemory() {
  ERR_raise(ERR_LIB_PROV, ERR_R_MALLOC_FAILURE);
  return false;
}

}  // namespace

GcmEngine::~GcmEngine() {
  afalg_.CancelQueued();  // before the buffers the kernel would use go
}

bool GcmEngine::CopyFrom(const GcmEngine &other) {
  if (!fallback_.CopyFrom(other.fallback_)) return false;
  if (!pending_aad_.CopyFrom(other.pending_aad_) ||
      !afalg_input_.CopyFrom(other.afalg_input_)) {
    return OutOfMemory();
  }
  router_ = other.router_;
  alg_ = other.alg_;
  start_path_ = other.start_path_;
  key_ = other.key_;
  simd_ = other.simd_;
  direction_ = other.direction_;
  iv_ = other.iv_;
  iv_len_ = other.iv_len_;
  path_ = other.path_;
  message_bytes_ = other.message_bytes_;
  afalg_.ShareFrom(other.afalg_);
  expected_tag_ = other.expected_tag_;
  afalg_ran_ = other.afalg_ran_;
  afalg_tag_ = other.afalg_tag_;
  return true;
}

void GcmEngine::SetKey(std::span<const uint8_t> key) {
  // Setting a key ends the current message, as in the default provider,
  // and one a paused ASYNC job left on the kernel and never came back for.
  afalg_.CancelQueued();
  path_.reset();
  expected_tag_.reset();
  // The same key again (openssl speed re-keys every operation) keeps its
  // schedule and powers of H.
  if (!key_.Replace(key)) return;
  fallback_.Reset();
  afalg_.Reset();
  if (const kernels::Tier *tier = router_->tier()) {
    simd_.SetKey(*tier, key);
  } else {
    simd_.Clear();
  }
  CountKeySetup(alg_);
}

bool GcmEngine::Start(Direction direction, std::span<const uint8_t> iv) {
  direction_ = direction;
  // The common IV length copied inline.
  if (iv.size() == 12) {
    std::memcpy(iv_.data(), iv.data(), 12);
  } else {
    std::memcpy(iv_.data(), iv.data(), iv.size());
  }
  iv_len_ = iv.size();
  afalg_.CancelQueued();  // a message whose ASYNC job never came back
  path_.reset();
  EndMessage();
  message_bytes_ = 0;
  if (start_path_) return StartCpu(*start_path_);
  return true;
}

bool GcmEngine::SwitchDirection(Direction direction) {
  if (direction == direction_) return true;
  if (path_ == Path::kAfalg && afalg_ran_) {
    // The kernel has taken the first payload in the old direction: the
    // message goes on on a CPU path.
    CountHandoff(alg_, Handoff::kGcmSplit, message_bytes_);
    if (!ReplayOnCpu()) return false;
  }
  direction_ = direction;
  if (path_ == Path::kFallback) return fallback_.GcmSwitchDirection(direction);
  return true;
}

void GcmEngine::ExpectTag(std::span<const uint8_t> tag) {
  if (tag.size() != 16) {
    expected_tag_.reset();
    return;
  }
  expected_tag_.emplace();
  std::memcpy(expected_tag_->data(), tag.data(), 16);
}

bool GcmEngine::Route(uint64_t len) {
  const Path path = router_->Choose(alg_, len);
  if (path == Path::kAfalg) {
    // The message goes to the kernel whole, at its first payload.
    path_ = Path::kAfalg;
    return true;
  }
  return StartCpu(path);
}

bool GcmEngine::StartCpu(Path path) {
  const std::span<const uint8_t> iv(iv_.data(), iv_len_);
  if (path == Path::kSimd) {
    simd_.Start(iv);
  } else if (!fallback_.GcmStart(router_->fallback().cipher(alg_), key_.bytes(),
                                 direction_, iv)) {
    return false;
  }
  path_ = path;
  if (pending_aad_.empty()) return true;
  const bool ok = FeedAad(pending_aad_.bytes());
  pending_aad_.Clear();
  return ok;
}

bool GcmEngine::Aad(std::span<const uint8_t> aad) {
  message_bytes_ += aad.size();
  if (path_ == Path::kAfalg) return false;  // AAD after payload
  if (path_) return FeedAad(aad);
  const uint64_t len = uint64_t{pending_aad_.size()} + aad.size();
  if (len <= kMaxPendingAad) {
    return pending_aad_.Append(aad) || OutOfMemory();
  }
  // Too much to buffer: this message starts now, on a CPU path, with the
  // AAD buffered so far and then this, unbuffered.
  if (router_->Choose(alg_, len) == Path::kAfalg) {
    CountHandoff(alg_, Handoff::kTooLong, len);
  }
  return StartCpu(router_->ChooseCpu(alg_, len)) && FeedAad(aad);
}

bool GcmEngine::FeedAad(std::span<const uint8_t> aad) {
  if (*path_ == Path::kSimd) {
    return simd_.Aad(aad) == kernels::SimdGcm::Status::kOk;
  }
  return fallback_.GcmAad(aad);
}

bool GcmEngine::Crypt(uint8_t *out, const uint8_t *in, size_t len) {
  if (!path_ && !Route(uint64_t{pending_aad_.size()} + len)) return false;
  if (*path_ == Path::kAfalg) {
    if (!afalg_ran_) return CryptAfalg(out, in, len);
    // The message goes on: the kernel cannot continue it.
    CountHandoff(alg_, Handoff::kGcmSplit, message_bytes_);
    if (!ReplayOnCpu()) return false;
  }
  message_bytes_ += len;
  return CryptCpu(out, in, len);
}

bool GcmEngine::CryptCpu(uint8_t *out, const uint8_t *in, size_t len) {
  if (*path_ == Path::kSimd) {
    const auto status = direction_ == Direction::kEncrypt
                            ? simd_.Encrypt(out, in, len)
                            : simd_.Decrypt(out, in, len);
    return status == kernels::SimdGcm::Status::kOk;
  }
  return fallback_.GcmCrypt(out, in, len);
}

bool GcmEngine::CryptAfalg(uint8_t *out, const uint8_t *in, size_t len) {
  const uint64_t total = pending_aad_.size() + len;
  const bool encrypt = direction_ == Direction::kEncrypt;
  message_bytes_ += len;
  afalg_input_.Clear();
  afalg::Outcome outcome;
  if (iv_len_ != kAfalgIvLen || (!encrypt && !expected_tag_.has_value())) {
    outcome = afalg::Outcome::Fail(Handoff::kUnsupported, -EOPNOTSUPP);
  } else if (!afalg::Service::Get().GcmFits(pending_aad_.size(), len)) {
    outcome = afalg::Outcome::Fail(Handoff::kTooLong, -EMSGSIZE);
  } else if (!afalg_input_.Append({in, len})) {
    // Kept for a replay, and so that an in-place request keeps its input.
    outcome = afalg::Outcome::Fail(Handoff::kSetup, -ENOMEM);
  } else {
    if (!encrypt) afalg_tag_ = *expected_tag_;
    outcome = afalg_.Gcm(alg_, key_.bytes(), direction_, {iv_.data(), iv_len_},
                         pending_aad_.bytes(), out, afalg_input_.data(), len,
                         afalg_tag_.data());
    afalg::Service::Get().Report(alg_, outcome);
  }
  if (outcome.ok()) {
    afalg_ran_ = true;
    return true;
  }
  // Replayed on a CPU path, from the copy if the kernel had it (it may have
  // written over an in-place input): for a rejected tag (EBADMSG) too,
  // since the caller gets the plaintext before final, as from the default
  // provider, and since the message may go on (then the kernel checked the
  // tag against its first part only). That path's Finish gives the verdict.
  CountHandoff(alg_, outcome.reason, total);
  if (!StartCpu(router_->ChooseCpu(alg_, total))) return false;
  const uint8_t *input = afalg_input_.empty() ? in : afalg_input_.data();
  const bool ok = CryptCpu(out, input, len);
  afalg_input_.Clear();
  return ok;
}

bool GcmEngine::ReplayOnCpu() {
  if (!StartCpu(router_->ChooseCpu(alg_, message_bytes_))) return false;
  // The kernel's output was the caller's: this pass only advances the CPU
  // path's state, a piece at a time.
  uint8_t discard[512];
  bool ok = true;
  for (size_t done = 0; ok && done < afalg_input_.size();) {
    const size_t piece = std::min(sizeof(discard), afalg_input_.size() - done);
    ok = CryptCpu(discard, afalg_input_.data() + done, piece);
    done += piece;
  }
  kernels::SecureZero(discard, sizeof(discard));
  afalg_ran_ = false;
  afalg_input_.Clear();
  return ok;
}

void GcmEngine::EndMessage() {
  pending_aad_.Clear();
  afalg_input_.Clear();
  afalg_ran_ = false;
}

bool GcmEngine::Finish(uint8_t tag[16], size_t tag_len) {
  if (!path_ && !Route(pending_aad_.size())) return false;
  if (*path_ == Path::kAfalg && !afalg_ran_ &&
      !CryptAfalg(nullptr, nullptr, 0)) {
    return false;
  }
  bool ok = false;
  bool done = false;
  if (*path_ == Path::kAfalg) {
    if (direction_ == Direction::kEncrypt) {
      std::memcpy(tag, afalg_tag_.data(), 16);
      ok = done = true;
    } else if (tag_len == 16 &&
               CRYPTO_memcmp(tag, afalg_tag_.data(), 16) == 0) {
      ok = done = true;  // the kernel verified this very tag
    } else if (!ReplayOnCpu()) {
      // The caller changed the tag since the payload: check it on a CPU path.
      return false;
    }
  }
  const Path path = *path_;
  if (!done) {
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
  }
  CountRequest(alg_, path, message_bytes_);
  expected_tag_.reset();
  // A decryption whose tag did not match stays open on its path, as in the
  // default provider: more data continues the same message.
  if (ok || direction_ == Direction::kEncrypt) {
    path_.reset();
    EndMessage();
  }
  return ok;
}

}  // namespace aesmux::route
