#include "provider/route/block_engine.h"

#include <openssl/crypto.h>
#include <openssl/err.h>

#include <algorithm>
#include <cstring>
#include <iterator>

#include "provider/batch/cbc_batch.h"
#include "provider/core/stats.h"

namespace aesmux::route {
namespace {

// CTR's counter block is one 128-bit big-endian integer. Two 8-byte
// stores, as the kernels write it, so that their 8-byte loads of it are
// forwarded from the stores.
void IncrementCounter128(uint8_t counter[16]) {
  uint64_t high, low;
  std::memcpy(&high, counter, 8);
  std::memcpy(&low, counter + 8, 8);
  low = __builtin_bswap64(__builtin_bswap64(low) + 1);
  if (low == 0) high = __builtin_bswap64(__builtin_bswap64(high) + 1);
  std::memcpy(counter, &high, 8);
  std::memcpy(counter + 8, &low, 8);
}

// Runs one CTR segment: whole blocks through `blocks`, then a partial tail
// with a keystream block from `next_keystream` (which also advances `iv`).
template <typename Blocks, typename NextKeystream>
bool CtrSegment(const Segment &segment, uint8_t *keystream, Blocks blocks,
                NextKeystream next_keystream) {
  const size_t whole = segment.len & ~size_t{15};
  if (whole != 0 && !blocks(segment.out, segment.in, whole)) return false;
  const size_t tail = segment.len - whole;
  if (tail == 0) return true;
  if (!next_keystream(keystream)) return false;
  for (size_t i = 0; i < tail; ++i) {
    segment.out[whole + i] = segment.in[whole + i] ^ keystream[i];
  }
  return true;
}

// Whether any output overlaps any input.
bool InPlace(std::span<const Segment> segments) {
  for (const Segment &a : segments) {
    for (const Segment &b : segments) {
      if (a.out < b.in + b.len && b.in < a.out + a.len) return true;
    }
  }
  return false;
}

}  // namespace

BlockEngine::BlockEngine(const Router &router, Alg alg)
    : router_(&router),
      alg_(alg),
      family_(Info(alg).family),
      simd_min_len_(router.SimdMinLen(alg)),
      afalg_min_len_(router.AfalgMinLen(alg)),
      mb_min_len_(router.settings().family(family_).mb_min_len),
      mb_max_len_(router.settings().family(family_).mb_max_len),
      mb_tier_(router.settings().mb_tier) {}

// Before the buffers a queued request would use go (staging_ wipes
// itself).
BlockEngine::~BlockEngine() { CancelQueued(); }

BlockEngine::KeyCopy::KeyCopy(const BlockEngine &engine)
    : len(engine.simd_.CipherKey(buffer)) {
  if (engine.family_ == Family::kXts && engine.simd_.is_set()) {
    std::memcpy(buffer + len, engine.xts_tweak_->key(), len);
    len *= 2;
  }
}

BlockEngine::KeyCopy::~KeyCopy() { OPENSSL_cleanse(buffer, sizeof(buffer)); }

void BlockEngine::CancelQueued() {
  if (batch_) batch_->queued.Cancel();
  if (afalg_) afalg_->key.CancelQueued();
}

void BlockEngine::SetKey(std::span<const uint8_t> key) {
  CancelQueued();
  // The same key again (openssl speed re-keys every operation; so do some
  // applications) keeps its schedules.
  if (has_key()) {
    const KeyCopy current(*this);
    if (key.size() == current.len &&
        CRYPTO_memcmp(key.data(), current.buffer, current.len) == 0) {
      return;
    }
  }
  if (fallback_) fallback_->Reset();
  if (afalg_) afalg_->key.Reset();
  const kernels::Tier *tier = router_->tier();
  kernels::XtsTweakKey *tweak = nullptr;
  if (tier != nullptr && family_ != Family::kXts) {
    simd_.Set(*tier, key);
  } else if (tier != nullptr && (tweak = xts_tweak_.GetOrMake()) != nullptr) {
    const size_t half = key.size() / 2;
    simd_.Set(*tier, key.first(half));
    tweak->Set(*tier, key.subspan(half));
  } else {
    // No tier (or no memory for XTS's tweak key): the fallback path's.
    simd_.SetRaw(key);
  }
  CountKeySetup(alg_);
}

bool BlockEngine::Run(Direction direction, uint8_t *iv,
                      std::span<const Segment> segments, uint8_t *keystream) {
  uint64_t total = 0;
  for (const Segment &segment : segments) total += segment.len;
  if (total >= afalg_min_len_) {
    // Long enough for the afalg path: the router decides (health, fork).
    Path path = router_->Choose(alg_, total);
    bool served = false;
    if (path == Path::kAfalg) {
      served = RunAfalg(direction, iv, segments, keystream, total);
      path = router_->ChooseCpu(alg_, total);
    }
    // Not served there: on the CPU, from the staged input if it was staged.
    if (!served && path == Path::kFallback) {
      served = RunFallback(direction, iv, segments, keystream);
      if (served) CountRequest(alg_, Path::kFallback, total);
    } else if (!served) {
      for (const Segment &segment : segments) {
        RunSimd(direction, iv, segment, keystream);
      }
      CountRequest(alg_, Path::kSimd, total);
      served = true;
    }
    if (afalg_) afalg_->staging.Clear();
    return served;
  }
  if (total >= simd_min_len_ && simd_.is_set()) {
    // CBC encryption is serial within a stream: batch it with concurrent
    // streams when there are any.
    if (family_ == Family::kCbc && direction == Direction::kEncrypt &&
        total >= mb_min_len_ && total <= mb_max_len_ && mb_tier_ != nullptr &&
        segments.size() == 1) {
      const Segment &s = segments[0];
      return EncryptCbcBatched(iv, s.out, s.in, s.len);
    }
    for (const Segment &segment : segments) {
      RunSimd(direction, iv, segment, keystream);
    }
    CountRequest(alg_, Path::kSimd, total);
    return true;
  }
  if (!RunFallback(direction, iv, segments, keystream)) return false;
  CountRequest(alg_, Path::kFallback, total);
  return true;
}

bool BlockEngine::RunAfalg(Direction direction, uint8_t *iv,
                           std::span<const Segment> &segments,
                           uint8_t *keystream, uint64_t total) {
  AfalgState *afalg = afalg_.GetOrMake();
  if (afalg == nullptr) {
    CountHandoff(alg_, Handoff::kSetup, total);
    return false;
  }
  if (segments.size() > afalg->staged_segments.size()) {
    CountHandoff(alg_, Handoff::kUnsupported, total);
    return false;
  }
  if (InPlace(segments)) {
    ScratchBuffer &staging = afalg->staging;
    if (!staging.Resize(total)) {
      CountHandoff(alg_, Handoff::kSetup, total);
      return false;
    }
    size_t offset = 0;
    for (size_t i = 0; i < segments.size(); ++i) {
      std::memcpy(staging.data() + offset, segments[i].in, segments[i].len);
      afalg->staged_segments[i] = {segments[i].out, staging.data() + offset,
                                   segments[i].len};
      offset += segments[i].len;
    }
    segments = std::span<const Segment>(afalg->staged_segments.data(),
                                        segments.size());
  }
  afalg::Service &service = afalg::Service::Get();
  const afalg::Outcome outcome =
      afalg->key.Blocks(alg_, KeyCopy(*this).bytes(), direction, iv, segments,
                        keystream);
  service.Report(alg_, outcome);
  if (outcome.ok()) {
    CountRequest(alg_, Path::kAfalg, total);
    return true;
  }
  CountHandoff(alg_, outcome.reason, total);
  return false;
}

bool BlockEngine::RunCbcEncryptPipes(std::span<const PipeRequest> pipes) {
  if (mb_tier_ != nullptr && simd_.is_set()) {
    batch::CbcRequest requests[32];
    const size_t count = std::min(pipes.size(), std::size(requests));
    for (size_t i = 0; i < count; ++i) {
      requests[i] = {alg_, &simd_.encrypt_schedule(), pipes[i].iv,
                     pipes[i].out, pipes[i].in, pipes[i].len};
    }
    if (batch::EncryptCbcStreams(*mb_tier_, std::span(requests, count))) {
      pipes = pipes.subspan(count);
    }
  }
  for (const PipeRequest &pipe : pipes) {
    const Segment segment{pipe.out, pipe.in, pipe.len};
    if (!Run(Direction::kEncrypt, pipe.iv, std::span(&segment, 1))) {
      return false;
    }
  }
  return true;
}

bool BlockEngine::EncryptCbcBatched(uint8_t *iv, uint8_t *out,
                                    const uint8_t *in, size_t len) {
  BatchState *batch = batch_.GetOrMake();
  if (batch == nullptr) {  // nowhere to hold a queued request: alone
    simd_.CbcEncrypt(iv, out, in, len);
    CountRequest(alg_, Path::kSimd, len);
    return true;
  }
  return batch::EncryptCbc(
      *mb_tier_, *simd_.tier(),
      {alg_, &simd_.encrypt_schedule(), iv, out, in, len, &batch->queued});
}

void BlockEngine::RunSimd(Direction direction, uint8_t *iv, const Segment &s,
                          uint8_t *keystream) {
  const bool encrypt = direction == Direction::kEncrypt;
  switch (family_) {
    case Family::kEcb:
      encrypt ? simd_.EcbEncrypt(s.out, s.in, s.len)
              : simd_.EcbDecrypt(s.out, s.in, s.len);
      return;
    case Family::kCbc:
      encrypt ? simd_.CbcEncrypt(iv, s.out, s.in, s.len)
              : simd_.CbcDecrypt(iv, s.out, s.in, s.len);
      return;
    case Family::kCtr:
      CtrSegment(
          s, keystream,
          [&](uint8_t *out, const uint8_t *in, size_t len) {
            simd_.Ctr(iv, out, in, len);
            return true;
          },
          [&](uint8_t *block) {
            simd_.EncryptBlock(block, iv);
            IncrementCounter128(iv);
            return true;
          });
      return;
    case Family::kXts:
      encrypt ? simd_.XtsEncrypt(xts_tweak_->schedule, iv, s.out, s.in, s.len)
              : simd_.XtsDecrypt(xts_tweak_->schedule, iv, s.out, s.in, s.len);
      return;
    case Family::kGcm:
      return;  // GCM runs in GcmEngine
  }
}

bool BlockEngine::RunFallback(Direction direction, uint8_t *iv,
                              std::span<const Segment> segments,
                              uint8_t *keystream) {
  fallback::FallbackContext *fallback = fallback_.GetOrMake();
  if (fallback == nullptr) {
    ERR_raise_data(ERR_LIB_PROV, ERR_R_MALLOC_FAILURE,
                   "fallback path: no memory for its context");
    return false;
  }
  const EVP_CIPHER *cipher = router_->fallback().cipher(alg_);
  const KeyCopy key(*this);
  const Family family = family_;
  uint8_t *chaining = family == Family::kEcb ? nullptr : iv;
  // CTR is its own inverse: keep one keyed direction to avoid rekeying.
  if (family == Family::kCtr) direction = Direction::kEncrypt;
  for (const Segment &s : segments) {
    bool ok;
    if (family == Family::kCtr) {
      ok = CtrSegment(
          s, keystream,
          [&](uint8_t *out, const uint8_t *in, size_t len) {
            return fallback->Blocks(cipher, key.bytes(), direction, chaining, out,
                                    in, len);
          },
          [&](uint8_t *block) {
            static constexpr uint8_t kZeros[16] = {};
            return fallback->Blocks(cipher, key.bytes(), direction, chaining, block,
                                    kZeros, 16);
          });
    } else {
      ok = fallback->Blocks(cipher, key.bytes(), direction, chaining, s.out, s.in,
                            s.len);
    }
    if (!ok) {
      const std::string_view name = Info(alg_).name;
      ERR_raise_data(ERR_LIB_PROV, ERR_R_OPERATION_FAIL,
                     "fallback path: the default provider's %.*s failed on "
                     "%zu bytes", static_cast<int>(name.size()), name.data(),
                     s.len);
      return false;
    }
  }
  return true;
}

}  // namespace aesmux::route
