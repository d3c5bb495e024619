#include "provider/route/block_engine.h"

#include <cstring>

#include "provider/route/stats.h"

namespace aesmux::route {
namespace {

// CTR's counter block is one 128-bit big-endian integer.
void IncrementCounter128(uint8_t counter[16]) {
  for (int i = 15; i >= 0; --i) {
    if (++counter[i] != 0) break;
  }
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

}  // namespace

// Whether any output overlaps any input.
bool InPlace(std::span<const Segment> segments) {
  for (const Segment &a : segments) {
    for (const Segment &b : segments) {
      if (a.out < b.in + b.len && b.in < a.out + a.len) return true;
    }
  }
  return false;
}

BlockEngine::~BlockEngine() {
  kernels::SecureZero(key_.data(), key_.size());
  if (!staging_.empty()) kernels::SecureZero(staging_.data(), staging_.size());
}

bool BlockEngine::CopyFrom(const BlockEngine &other) {
  if (!fallback_.CopyFrom(other.fallback_)) return false;
  router_ = other.router_;
  alg_ = other.alg_;
  key_ = other.key_;
  key_len_ = other.key_len_;
  simd_ = other.simd_;
  simd_xts_ = other.simd_xts_;
  afalg_.ShareFrom(other.afalg_);
  return true;
}

void BlockEngine::SetKey(std::span<const uint8_t> key) {
  kernels::SecureZero(key_.data(), key_.size());
  std::memcpy(key_.data(), key.data(), key.size());
  key_len_ = key.size();
  fallback_.Reset();
  afalg_.Reset();
  simd_.Clear();
  simd_xts_.Clear();
  if (const kernels::Tier *tier = router_->tier()) {
    if (Info(alg_).family == Family::kXts) {
      simd_xts_.Set(*tier, key);
    } else {
      simd_.Set(*tier, key);
    }
  }
}

bool BlockEngine::Run(Direction direction, uint8_t *iv,
                      std::span<const Segment> segments, uint8_t *keystream) {
  uint64_t total = 0;
  for (const Segment &segment : segments) total += segment.len;
  Path path = router_->Choose(alg_, total);
  if (path == Path::kAfalg) {
    if (RunAfalg(direction, iv, segments, keystream, total)) return true;
    path = router_->ChooseCpu(alg_, total);
  }
  const bool served =
      path == Path::kSimd
          ? RunSimd(direction, iv, segments, keystream)
          : RunFallback(direction, iv, segments, keystream);
  if (served) CountRequest(alg_, path, total);
  return served;
}

bool BlockEngine::RunAfalg(Direction direction, uint8_t *iv,
                           std::span<const Segment> &segments,
                           uint8_t *keystream, uint64_t total) {
  if (segments.size() > staged_segments_.size()) {
    CountHandoff(alg_, Handoff::kUnsupported, total);
    return false;
  }
  if (InPlace(segments)) {
    if (staging_.size() < total) staging_.resize(total);
    size_t offset = 0;
    for (size_t i = 0; i < segments.size(); ++i) {
      std::memcpy(staging_.data() + offset, segments[i].in, segments[i].len);
      staged_segments_[i] = {segments[i].out, staging_.data() + offset,
                             segments[i].len};
      offset += segments[i].len;
    }
    segments = std::span<const Segment>(staged_segments_.data(),
                                        segments.size());
  }
  afalg::Service &service = afalg::Service::Get();
  const afalg::Outcome outcome =
      afalg_.Blocks(alg_, key(), direction, iv, segments, keystream);
  service.Report(alg_, outcome);
  if (outcome.ok()) {
    CountRequest(alg_, Path::kAfalg, total);
    return true;
  }
  CountHandoff(alg_, outcome.reason, total);
  return false;
}

bool BlockEngine::RunSimd(Direction direction, uint8_t *iv,
                          std::span<const Segment> segments,
                          uint8_t *keystream) {
  const bool encrypt = direction == Direction::kEncrypt;
  for (const Segment &s : segments) {
    switch (Info(alg_).family) {
      case Family::kEcb:
        encrypt ? simd_.EcbEncrypt(s.out, s.in, s.len)
                : simd_.EcbDecrypt(s.out, s.in, s.len);
        break;
      case Family::kCbc:
        encrypt ? simd_.CbcEncrypt(iv, s.out, s.in, s.len)
                : simd_.CbcDecrypt(iv, s.out, s.in, s.len);
        break;
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
        break;
      case Family::kXts:
        encrypt ? simd_xts_.Encrypt(iv, s.out, s.in, s.len)
                : simd_xts_.Decrypt(iv, s.out, s.in, s.len);
        break;
      case Family::kGcm:
        return false;  // GCM runs in GcmEngine
    }
  }
  return true;
}

bool BlockEngine::RunFallback(Direction direction, uint8_t *iv,
                              std::span<const Segment> segments,
                              uint8_t *keystream) {
  const EVP_CIPHER *cipher = router_->fallback().cipher(alg_);
  const Family family = Info(alg_).family;
  uint8_t *chaining = family == Family::kEcb ? nullptr : iv;
  // CTR is its own inverse: keep one keyed direction to avoid rekeying.
  if (family == Family::kCtr) direction = Direction::kEncrypt;
  for (const Segment &s : segments) {
    bool ok;
    if (family == Family::kCtr) {
      ok = CtrSegment(
          s, keystream,
          [&](uint8_t *out, const uint8_t *in, size_t len) {
            return fallback_.Blocks(cipher, key(), direction, chaining, out,
                                    in, len);
          },
          [&](uint8_t *block) {
            static constexpr uint8_t kZeros[16] = {};
            return fallback_.Blocks(cipher, key(), direction, chaining, block,
                                    kZeros, 16);
          });
    } else {
      ok = fallback_.Blocks(cipher, key(), direction, chaining, s.out, s.in,
                            s.len);
    }
    if (!ok) return false;
  }
  return true;
}

}  // namespace aesmux::route
