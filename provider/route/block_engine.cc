// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
#include "provider/route/block_engine.h"

#include <openssl/crypto.h>
#include <openssl/err.h>

#include <algorithm>
#include <cstring>
#include <iterator>

#include "provider/batch/cbc_batch.h"

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
    : route_(router.RouteBlocks(alg, /*key_on_tier=*/false)),
      family_(Info(alg).family) {}

// Before the buffers a queued request would use go (the staging wipes
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
  const kernels::Tier *tier = router().tier();
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
  route_ = router().RouteBlocks(alg(), /*key_on_tier=*/simd_.is_set());
  Router::KeySet(alg());
}

bool BlockEngine::Run(Direction direction, uint8_t *iv,
                      std::span<const Segment> segments, uint8_t *keystream) {
  uint64_t total = 0;
  for (const Segment &segment : segments) total += segment.len;
  batch::CallerProbe caller;
  const Path path =
      route_.Choose(direction, total, segments.size() == 1, caller);
  if (path == Path::kMb) {
    const Segment &s = segments[0];
    return EncryptCbcBatched(iv, s.out, s.in, s.len, caller);
  }
  if (path != Path::kSimd) [[unlikely]] {
    return Run(path, direction, iv, segments, keystream, total);
  }
  for (const Segment &s : segments) RunSimd(direction, iv, s, keystream);
  route_.Served(Path::kSimd, total);
  return true;
}

bool BlockEngine::RunOn(Path path, Direction direction, uint8_t *iv,
                        uint8_t *out, const uint8_t *in, size_t len) {
  const Segment segment{out, in, len};
  return Run(path, direction, iv, std::span(&segment, 1), nullptr, len);
}

bool BlockEngine::Run(Path path, Direction direction, uint8_t *iv,
                      std::span<const Segment> segments, uint8_t *keystream,
                      uint64_t total) {
  if (path != Path::kAfalg) {
    return RunCpu(path, direction, iv, segments, keystream, total);
  }
  Handoff handoff{};
  if (RunAfalg(direction, iv, segments, keystream, total, handoff)) {
    route_.Served(Path::kAfalg, total);
    afalg_->staging.Clear();
    return true;
  }
  // On the CPU, from the staged input if it was staged.
  const bool served = RunCpu(route_.HandedOff(handoff, total), direction, iv,
                             segments, keystream, total);
  if (afalg_) afalg_->staging.Clear();
  return served;
}

bool BlockEngine::RunCpu(Path path, Direction direction, uint8_t *iv,
                         std::span<const Segment> segments,
                         uint8_t *keystream, uint64_t total) {
  if (path == Path::kSimd) {
    for (const Segment &s : segments) RunSimd(direction, iv, s, keystream);
  } else if (!RunFallback(direction, iv, segments, keystream)) {
    return false;
  }
  route_.Served(path, total);
  return true;
}

bool BlockEngine::RunAfalg(Direction direction, uint8_t *iv,
                           std::span<const Segment> &segments,
                           uint8_t *keystream, uint64_t total,
                           Handoff &handoff) {
  AfalgState *afalg = afalg_.GetOrMake();
  if (afalg == nullptr) {
    handoff = Handoff::kSetup;
    return false;
  }
  if (segments.size() > afalg->staged_segments.size()) {
    handoff = Handoff::kUnsupported;
    return false;
  }
  if (InPlace(segments)) {
    ScratchBuffer &staging = afalg->staging;
    if (!staging.Resize(total)) {
      handoff = Handoff::kSetup;
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
      afalg->key.Blocks(alg(), KeyCopy(*this).bytes(), direction, iv,
                        segments, keystream);
  service.Report(alg(), outcome);
  handoff = outcome.reason;
  return outcome.ok();
}

bool BlockEngine::RunCbcEncryptPipes(std::span<const PipeRequest> pipes) {
  if (route_.BatchesPipes()) {
    batch::CbcRequest requests[32];
    const size_t count = std::min(pipes.size(), std::size(requests));
    for (size_t i = 0; i < count; ++i) {
      requests[i] = {alg(), &simd_.encrypt_schedule(), pipes[i].iv,
                     pipes[i].out, pipes[i].in, pipes[i].len};
    }
    if (batch::EncryptCbcStreams(*simd_.tier(), std::span(requests, count))) {
      for (size_t i = 0; i < count; ++i) {
        route_.Served(Path::kMb, pipes[i].len);
      }
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

void BlockEngine::RunSimd(Direction direction, uint8_t *iv, const Segment &s,
                          uint8_t *keystream) {
  switch (family_) {
    case Family::kEcb:
    case Family::kCbc:
      BlocksOnSimd(direction, iv, s.out, s.in, s.len);
      return;
    case Family::kCtr:
      CtrOnSimd(iv, s, keystream);
      return;
    case Family::kXts:
      XtsOnSimd(direction, iv, s.out, s.in, s.len);
      return;
    case Family::kGcm:
      return;  // GCM runs in GcmEngine
  }
}

void BlockEngine::CtrOnSimd(uint8_t *counter, const Segment &segment,
                            uint8_t *keystream) {
  CtrSegment(
      segment, keystream,
      [&](uint8_t *out, const uint8_t *in, size_t len) {
        simd_.Ctr(counter, out, in, len);
        return true;
      },
      [&](uint8_t *block) {
        simd_.EncryptBlock(block, counter);
        IncrementCounter128(counter);
        return true;
      });
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
  const EVP_CIPHER *cipher = router().fallback().cipher(alg());
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
      const std::string_view name = Info(alg()).name;
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
