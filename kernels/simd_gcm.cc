// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
#include "kernels/simd_gcm.h"

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <new>

namespace aesmux::kernels {
namespace {

// A 16-byte block as one vector value (GCC's vector extension), so that it
// is loaded and stored with single 16-byte instructions; on x86-64 the code
// is the same as with SSE2 intrinsics, and it compiles for any target.
using Block64x2 = uint64_t __attribute__((vector_size(16)));
using Block8x16 = uint8_t __attribute__((vector_size(16)));

void StoreBigEndian64(uint8_t *out, uint64_t value) {
  for (int i = 7; i >= 0; --i) {
    out[i] = static_cast<uint8_t>(value);
    value >>= 8;
  }
}

// One 16-byte store of the block {low, high} (little-endian qwords): the
// kernels load counter and length blocks whole, and a 16-byte load can take
// its data from the store buffer only if a single store wrote all of it
// (otherwise it waits for the stores to reach the cache).
void StoreBlock(uint8_t out[16], uint64_t low, uint64_t high) {
  const Block64x2 block = {low, high};
  std::memcpy(out, &block, 16);
}

// A mask of `len` (<= 16) 0xff bytes then zeros.
Block8x16 LeadingBytesMask(size_t len) {
  alignas(16) static constexpr uint8_t kMasks[32] = {
      0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
      0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
  Block8x16 mask;
  std::memcpy(&mask, kMasks + 16 - len, 16);
  return mask;
}

// out = the first `len` (< 16) bytes of `in`, zero padded to a block, in
// one 16-byte store (see StoreBlock).
void ZeroPad(uint8_t out[16], const uint8_t in[16], size_t len) {
  Block8x16 block;
  std::memcpy(&block, in, 16);
  block &= LeadingBytesMask(len);
  std::memcpy(out, &block, 16);
}

// GCM's inc32: the last four bytes are a big-endian counter modulo 2^32.
void IncrementCounter32(uint8_t block[16]) {
  uint64_t low, high;
  std::memcpy(&low, block, 8);
  std::memcpy(&high, block + 8, 8);
  const uint32_t counter =
      __builtin_bswap32(static_cast<uint32_t>(high >> 32)) + 1;
  high = (high & 0xffffffff) | uint64_t{__builtin_bswap32(counter)} << 32;
  StoreBlock(block, low, high);
}

}  // namespace

bool SimdGcm::GhashKey::Allocate(size_t bytes) {
  key_ = static_cast<aesmux_gcm_key *>(::operator new(
      bytes, std::align_val_t{alignof(aesmux_gcm_key)}, std::nothrow));
  return key_ != nullptr;
}

void SimdGcm::GhashKey::Reset(size_t bytes) {
  if (aesmux_gcm_key *storage = Release(bytes)) {
    ::operator delete(storage, std::align_val_t{alignof(aesmux_gcm_key)});
  }
}

aesmux_gcm_key *SimdGcm::GhashKey::Release(size_t bytes) {
  aesmux_gcm_key *storage = key_;
  if (storage != nullptr) SecureZero(storage, bytes);
  key_ = nullptr;
  return storage;
}

SimdGcm::SimdGcm(const SimdGcm &other) {
  if (!other.is_set() || !gkey_.Allocate(other.tier_->gcm_key_bytes)) return;
  CopyKeyAndMessage(other);
}

SimdGcm::SimdGcm(const SimdGcm &other, aesmux_gcm_key *storage) {
  gkey_.Adopt(storage);
  CopyKeyAndMessage(other);
}

void SimdGcm::CopyKeyAndMessage(const SimdGcm &other) {
  std::memcpy(gkey_.get(), other.gkey_.get(), other.tier_->gcm_key_bytes);
  tier_ = other.tier_;
  enc_ = other.enc_;
  msg_ = other.msg_;
}

// As SimdKey::Set, the schedule and the powers of H are overwritten in
// place (gcm_init leaves nothing of the old key's, kernels.h), except a
// longer old key's last round keys; only a change of tier (another layout
// and size) wipes them first. The message state, all derived from the old
// key (its keystream, E(K, J0), the GHASH accumulator), is wiped here
// rather than at every Start, which overwrites what it uses.
bool SimdGcm::SetKey(const Tier &tier, std::span<const uint8_t> key) {
  if (tier_ != &tier || gkey_.get() == nullptr) {
    Clear();
    if (!gkey_.Allocate(tier.gcm_key_bytes)) return false;
  } else {
    WipeMessage();
  }
  Expand(tier, key);
  return true;
}

void SimdGcm::SetKey(const Tier &tier, std::span<const uint8_t> key,
                     aesmux_gcm_key *storage) {
  Clear();
  gkey_.Adopt(storage);
  Expand(tier, key);
}

void SimdGcm::Expand(const Tier &tier, std::span<const uint8_t> key) {
  const uint32_t old_rounds = tier_ != nullptr ? enc_.rounds : 0;
  tier.ops.expand_key(&enc_, key.data(), key.size());
  tier_ = &tier;
  if (old_rounds > enc_.rounds) {
    SecureZero(enc_.round_keys[enc_.rounds + 1],
               16 * (old_rounds - enc_.rounds));
  }
  tier.ops.gcm_init(gkey_.get(), &enc_);
}

void SimdGcm::WipeMessage() {
  SecureZero(&msg_, sizeof(msg_));
}

aesmux_gcm_key *SimdGcm::ReleaseKeyStorage() {
  aesmux_gcm_key *storage =
      tier_ != nullptr ? gkey_.Release(tier_->gcm_key_bytes) : nullptr;
  Clear();
  return storage;
}

void SimdGcm::Clear() {
  if (tier_ != nullptr) gkey_.Reset(tier_->gcm_key_bytes);
  SecureZero(&enc_, sizeof(enc_));
  tier_ = nullptr;
  WipeMessage();
}

// Nothing of the last message needs wiping here: what it left of its key's
// (the accumulator, a partial block's keystream) is overwritten before
// use, and SetKey and Clear wipe it.
void SimdGcm::Start(std::span<const uint8_t> iv) {
  msg_.aad_len = msg_.data_len = 0;
  BeginJ0(iv);
  EncryptBlock(msg_.j0_keystream, msg_.j0_keystream);  // in place: E(K, J0)
}

void SimdGcm::BeginJ0(std::span<const uint8_t> iv) {
  std::memset(msg_.xi, 0, sizeof(msg_.xi));
  if (iv.size() == 12) [[likely]] {
    // J0 = IV || 0^31 || 1, and the first counter block, J0 + 1, made with
    // it rather than by incrementing a stored J0.
    uint64_t iv_low, iv_high = 0;
    std::memcpy(&iv_low, iv.data(), 8);
    std::memcpy(&iv_high, iv.data() + 8, 4);
    StoreBlock(msg_.j0_keystream, iv_low, iv_high | uint64_t{1} << 56);
    StoreBlock(msg_.counter, iv_low, iv_high | uint64_t{2} << 56);
  } else {
    // J0 = GHASH(IV || 0-padding || 0^64 || [len(IV)]_64).
    const auto &ops = tier_->ops;
    std::memset(msg_.j0_keystream, 0, sizeof(msg_.j0_keystream));
    const size_t whole = iv.size() & ~size_t{15};
    ops.ghash(gkey_.get(), msg_.j0_keystream, iv.data(), whole);
    uint8_t block[16] = {};
    if (whole != iv.size()) {
      std::memcpy(block, iv.data() + whole, iv.size() - whole);
      ops.ghash(gkey_.get(), msg_.j0_keystream, block, 16);
    }
    std::memset(block, 0, sizeof(block));
    StoreBigEndian64(block + 8, uint64_t{iv.size()} * 8);
    ops.ghash(gkey_.get(), msg_.j0_keystream, block, 16);
    std::memcpy(msg_.counter, msg_.j0_keystream, 16);
    IncrementCounter32(msg_.counter);
  }
}

void SimdGcm::CopyShort(uint8_t *out, const uint8_t *in, size_t len) {
  if (len >= 8) {
    uint64_t head, tail;
    std::memcpy(&head, in, 8);
    std::memcpy(&tail, in + len - 8, 8);
    std::memcpy(out, &head, 8);
    std::memcpy(out + len - 8, &tail, 8);
  } else if (len >= 4) {
    uint32_t head, tail;
    std::memcpy(&head, in, 4);
    std::memcpy(&tail, in + len - 4, 4);
    std::memcpy(out, &head, 4);
    std::memcpy(out + len - 4, &tail, 4);
  } else if (len != 0) {
    out[0] = in[0];
    out[len / 2] = in[len / 2];
    out[len - 1] = in[len - 1];
  }
}

// XORs `len` bytes with the keystream in msg_.pending[offset..] and puts
// their ciphertext side there in its place, for GHASH.
template <bool kEncrypt>
void SimdGcm::XorPartial(uint8_t *out, const uint8_t *in, size_t len,
                         size_t offset) {
  for (size_t i = 0; i < len; ++i) {
    const uint8_t x = in[i];
    const uint8_t y = x ^ msg_.pending[offset + i];
    out[i] = y;
    msg_.pending[offset + i] = kEncrypt ? y : x;
  }
}

// Inlined into Encrypt and Decrypt, which are all that call it: one call
// per update, not two (BENCHMARKS.md, "Instructions per record").
template <bool kEncrypt>
[[gnu::always_inline]] inline SimdGcm::Status SimdGcm::Crypt(
    uint8_t *out, const uint8_t *in, size_t len) {
  const auto &ops = tier_->ops;
  if (msg_.data_len == 0) {
    if (len == 0) return Status::kOk;
    // The first payload byte ends the AAD: its partial block is folded in.
    if (const size_t aad_pending = msg_.aad_len & 15; aad_pending != 0) {
      ZeroPad(msg_.pending, msg_.pending, aad_pending);
      ops.ghash(gkey_.get(), msg_.xi, msg_.pending, 16);
    }
  }
  const size_t pending = msg_.data_len & 15;
  msg_.data_len += len;

  if (pending != 0) [[unlikely]] {
    const size_t take = std::min(len, 16 - pending);
    XorPartial<kEncrypt>(out, in, take, pending);
    if (pending + take < 16) return Status::kOk;
    ops.ghash(gkey_.get(), msg_.xi, msg_.pending, 16);
    in += take;
    out += take;
    len -= take;
  }
  const size_t whole = len & ~size_t{15};
  if (whole != 0) {
    const auto bulk = kEncrypt ? ops.gcm_encrypt : ops.gcm_decrypt;
    bulk(&enc_, gkey_.get(), msg_.counter, msg_.xi, out, in, whole);
  }
  if (whole != len) {
    // The keystream of the partial block.
    EncryptBlock(msg_.pending, msg_.counter);
    IncrementCounter32(msg_.counter);
    XorPartial<kEncrypt>(out + whole, in + whole, len - whole, 0);
  }
  return Status::kOk;
}

SimdGcm::Status SimdGcm::Encrypt(uint8_t *out, const uint8_t *in, size_t len) {
  return Crypt<true>(out, in, len);
}

SimdGcm::Status SimdGcm::Decrypt(uint8_t *out, const uint8_t *in, size_t len) {
  return Crypt<false>(out, in, len);
}

// The tag is computed on a copy of the GHASH state, leaving the counter,
// the partial block and its keystream as they are: OpenSSL's
// CRYPTO_gcm128_finish does the same, and the default provider lets a
// decryption whose tag did not verify go on with more data.
// The last partial block and the length block go to the kernel in one
// call.
void SimdGcm::Finish(uint8_t tag[16]) {
  uint8_t xi[16];
  std::memcpy(xi, msg_.xi, sizeof(xi));
  // AAD or ciphertext and the lengths: nothing secret (the keystream in
  // msg_.pending is padded away), so not wiped.
  uint8_t blocks[32];
  size_t len = 0;
  if (const size_t pending = PendingLen(); pending != 0) {
    ZeroPad(blocks, msg_.pending, pending);
    len = 16;
  }
  StoreBlock(blocks + len, __builtin_bswap64(msg_.aad_len * 8),
             __builtin_bswap64(msg_.data_len * 8));
  tier_->ops.ghash(gkey_.get(), xi, blocks, len + 16);
  Block8x16 block, keystream;
  std::memcpy(&block, xi, 16);
  std::memcpy(&keystream, msg_.j0_keystream, 16);
  block ^= keystream;
  std::memcpy(tag, &block, 16);
  SecureZero(xi, sizeof(xi));
}

// The whole tag is compared, masked to its first `tag_len` bytes, in
// vector operations without an early exit: the time does not depend on
// where the tags differ. Inline rather than CRYPTO_memcmp, a call into
// libcrypto per record (BENCHMARKS.md, "Instructions per record"). Never
// inlined: its tag buffer would make its caller's frame one that the stack
// protector checks on every call, decrypting or not.
[[gnu::noinline]] bool SimdGcm::Verify(const uint8_t tag[16], size_t tag_len) {
  uint8_t computed[16];
  Finish(computed);
  Block8x16 expected, given;
  std::memcpy(&expected, computed, 16);
  std::memcpy(&given, tag, 16);
  const Block8x16 diff = (expected ^ given) & LeadingBytesMask(tag_len);
  Block64x2 folded;
  std::memcpy(&folded, &diff, 16);
  SecureZero(computed, sizeof(computed));
  return (folded[0] | folded[1]) == 0;
}

// The message's parts are all here, so nothing is staged across calls: the
// AAD's partial block is padded and hashed at once, E(K, J0) and the last
// partial block's keystream are one kernel call (J0 and the counter lie
// side by side), and the last partial block and the lengths go to the
// kernel in one call, through the J0 and counter slots, whose values are
// used up by then. Four kernel calls for a TLS record of whole blocks
// (AAD, payload, E(K, J0), lengths), four with a partial block too, where
// Start, Aad, Encrypt and Finish make five.
template <bool kEncrypt>
[[gnu::always_inline]] inline void SimdGcm::Record(
    std::span<const uint8_t> iv, std::span<const uint8_t> aad, uint8_t *out,
    const uint8_t *in, size_t len) {
  static_assert(offsetof(Message, counter) ==
                offsetof(Message, j0_keystream) + 16);
  const auto &ops = tier_->ops;
  aesmux_gcm_key *const gkey = gkey_.get();
  BeginJ0(iv);
  msg_.aad_len = aad.size();
  msg_.data_len = len;

  const size_t aad_whole = aad.size() & ~size_t{15};
  if (aad_whole != 0) ops.ghash(gkey, msg_.xi, aad.data(), aad_whole);
  if (aad_whole != aad.size()) {
    StoreBlock(msg_.pending, 0, 0);
    CopyShort(msg_.pending, aad.data() + aad_whole, aad.size() - aad_whole);
    ops.ghash(gkey, msg_.xi, msg_.pending, 16);
  }
  const size_t whole = len & ~size_t{15};
  if (whole != 0) {
    const auto bulk = kEncrypt ? ops.gcm_encrypt : ops.gcm_decrypt;
    bulk(&enc_, gkey, msg_.counter, msg_.xi, out, in, whole);
  }
  const size_t rest = len - whole;
  // In place: E(K, J0), and after it the last partial block's keystream.
  ops.ecb_encrypt(&enc_, msg_.j0_keystream, msg_.j0_keystream,
                  rest != 0 ? 32 : 16);
  Block8x16 j0_keystream;
  std::memcpy(&j0_keystream, msg_.j0_keystream, 16);
  uint8_t *last = msg_.counter;  // what goes to GHASH last: 1 or 2 blocks
  if (rest != 0) {
    // The input's partial block, zero padded, in the J0 slot (no read
    // past `in`), XORed with the keystream in the counter slot; the block
    // GHASH takes (the ciphertext) is left in the J0 slot.
    uint8_t *staged = msg_.j0_keystream;
    StoreBlock(staged, 0, 0);
    CopyShort(staged, in + whole, rest);
    Block8x16 input, keystream;
    std::memcpy(&input, staged, 16);
    std::memcpy(&keystream, msg_.counter, 16);
    const Block8x16 output = (input ^ keystream) & LeadingBytesMask(rest);
    std::memcpy(msg_.counter, &output, 16);
    CopyShort(out + whole, msg_.counter, rest);
    if (kEncrypt) std::memcpy(staged, &output, 16);
    last = staged;
  }
  StoreBlock(msg_.counter, __builtin_bswap64(uint64_t{aad.size()} * 8),
             __builtin_bswap64(uint64_t{len} * 8));
  ops.ghash(gkey, msg_.xi, last, rest != 0 ? 32 : 16);
  Block8x16 tag;
  std::memcpy(&tag, msg_.xi, 16);
  tag ^= j0_keystream;
  std::memcpy(msg_.xi, &tag, 16);
}

SimdGcm::Status SimdGcm::Seal(std::span<const uint8_t> iv,
                              std::span<const uint8_t> aad, uint8_t *out,
                              const uint8_t *in, size_t len, uint8_t tag[16]) {
  Record<true>(iv, aad, out, in, len);
  std::memcpy(tag, msg_.xi, 16);
  return Status::kOk;
}

// Compared as Verify compares, then the computed tag is wiped: what a
// forger would want is not left in the context.
SimdGcm::Status SimdGcm::Open(std::span<const uint8_t> iv,
                              std::span<const uint8_t> aad, uint8_t *out,
                              const uint8_t *in, size_t len,
                              const uint8_t tag[16]) {
  Record<false>(iv, aad, out, in, len);
  Block8x16 computed, given;
  std::memcpy(&computed, msg_.xi, 16);
  std::memcpy(&given, tag, 16);
  const Block8x16 diff = computed ^ given;
  Block64x2 folded;
  std::memcpy(&folded, &diff, 16);
  StoreBlock(msg_.xi, 0, 0);
  return (folded[0] | folded[1]) == 0 ? Status::kOk : Status::kBadTag;
}

}  // namespace aesmux::kernels
