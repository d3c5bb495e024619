#include "provider/route/block_engine.h"

#include <openssl/crypto.h>

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

BlockEngine::BlockEngine(const Router &router, Alg alg)
    : router_(&router),
      alg_(alg),
      family_(Info(alg).family),
      simd_min_len_(router.SimdMinLen(alg)) {}

bool BlockEngine::CopyFrom(const BlockEngine &other) {
  if (!fallback_.CopyFrom(other.fallback_)) return false;
  router_ = other.router_;
  alg_ = other.alg_;
  family_ = other.family_;
  simd_min_len_ = other.simd_min_len_;
  key_ = other.key_;
  simd_ = other.simd_;
  simd_xts_ = other.simd_xts_;
  return true;
}

void BlockEngine::SetKey(std::span<const uint8_t> key) {
  // The same key again (openssl speed re-keys every operation; so do some
  // applications) keeps its schedules.
  if (!key_.Replace(key)) return;
  fallback_.Reset();
  simd_.Clear();
  simd_xts_.Clear();
  if (const kernels::Tier *tier = router_->tier()) {
    if (Info(alg_).family == Family::kXts) {
      simd_xts_.Set(*tier, key);
    } else {
      simd_.Set(*tier, key);
    }
  }
  CountKeySetup(alg_);
}

bool BlockEngine::Run(Direction direction, uint8_t *iv,
                      std::span<const Segment> segments, uint8_t *keystream) {
  uint64_t total = 0;
  for (const Segment &segment : segments) total += segment.len;
  if (total >= simd_min_len_ && simd_.is_set() | simd_xts_.is_set()) {
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
      encrypt ? simd_xts_.Encrypt(iv, s.out, s.in, s.len)
              : simd_xts_.Decrypt(iv, s.out, s.in, s.len);
      return;
    case Family::kGcm:
      return;  // GCM runs in GcmEngine
  }
}

bool BlockEngine::RunFallback(Direction direction, uint8_t *iv,
                              std::span<const Segment> segments,
                              uint8_t *keystream) {
  const EVP_CIPHER *cipher = router_->fallback().cipher(alg_);
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
            return fallback_.Blocks(cipher, key_.bytes(), direction, chaining, out,
                                    in, len);
          },
          [&](uint8_t *block) {
            static constexpr uint8_t kZeros[16] = {};
            return fallback_.Blocks(cipher, key_.bytes(), direction, chaining, block,
                                    kZeros, 16);
          });
    } else {
      ok = fallback_.Blocks(cipher, key_.bytes(), direction, chaining, s.out, s.in,
                            s.len);
    }
    if (!ok) return false;
  }
  return true;
}

}  // namespace aesmux::route
