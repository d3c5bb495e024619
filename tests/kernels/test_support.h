// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
// Shared pieces of the kernel tests: the tier-parameterised fixture, a seeded
// RNG, guarded and misaligned buffers, and OpenSSL's default provider as the
// reference implementation.
#ifndef AESMUX_TESTS_KERNELS_TEST_SUPPORT_H_
#define AESMUX_TESTS_KERNELS_TEST_SUPPORT_H_

#include <gtest/gtest.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <ostream>
#include <random>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "kernels/kernels.h"
#include "kernels/tiers.h"

// tests/kernels/mb_abi_call.asm: call fn(args[0..5]) with every vector
// register all-ones (xmm, ymm or zmm: the widest of each name) and canaries in
// the callee-saved registers; report the vector registers as the callee left
// them, the 4096 bytes below the caller's stack pointer (filled with 0xa5
// before the call) and a bit mask of the rules broken (bits 0..5: rbx, rbp,
// r12..r15 changed; bit 6: the direction flag left set).
extern "C" {
uint32_t aesmux_test_mb_call_checked_16(const void *fn, const uint64_t args[6],
                                        uint8_t *regs_after,
                                        uint8_t stack_after[4096]);
uint32_t aesmux_test_mb_call_checked_32(const void *fn, const uint64_t args[6],
                                        uint8_t *regs_after,
                                        uint8_t stack_after[4096]);
uint32_t aesmux_test_mb_call_checked_64(const void *fn, const uint64_t args[6],
                                        uint8_t *regs_after,
                                        uint8_t stack_after[4096]);
}

namespace aesmux::kernels {

// Lets GoogleTest print a tier parameter as its name.
inline void PrintTo(const Tier &tier, std::ostream *os) { *os << tier.name; }

}  // namespace aesmux::kernels

namespace aesmux::kernels::testing {

using Bytes = std::vector<uint8_t>;

inline constexpr std::array<size_t, 3> kKeySizes = {16, 24, 32};

// Deterministic RNG. The seed is AESMUX_TEST_SEED when set, a fixed value
// otherwise, mixed with the test's name so tests do not depend on each
// other's order; it is printed so a failure can be replayed.
class Rng {
 public:
  Rng();
  uint64_t seed() const { return seed_; }
  uint64_t Next() { return engine_(); }
  // Uniform in [lo, hi].
  size_t Uniform(size_t lo, size_t hi);
  bool Coin() { return (Next() & 1) != 0; }
  // A message length: uniform in 0..1 KiB or in 0..64 KiB with equal odds,
  // so short tails and long loops both get exercised.
  size_t MessageLength() { return Uniform(0, Coin() ? 1024 : 65536); }
  Bytes RandomBytes(size_t len);
  void Fill(std::span<uint8_t> out);

 private:
  uint64_t seed_;
  std::mt19937_64 engine_;
};

// Fixture for tests that run once per tier in kTiers; skips, with the missing
// features in the message, when this CPU cannot run the tier.
class TierTest : public ::testing::TestWithParam<Tier> {
 protected:
  void SetUp() override;
  const TierOps &ops() const { return GetParam().ops; }

  aesmux_aes_key EncryptKey(std::span<const uint8_t> key) const;
  aesmux_aes_key DecryptKey(std::span<const uint8_t> key) const;

  Rng rng_;
};

// Test-name generator for INSTANTIATE_TEST_SUITE_P: the tier's name.
std::string TierName(const ::testing::TestParamInfo<Tier> &info);

#define AESMUX_INSTANTIATE_FOR_ALL_TIERS(suite)                            \
  INSTANTIATE_TEST_SUITE_P(AllTiers, suite,                                \
                           ::testing::ValuesIn(::aesmux::kernels::kTiers), \
                           ::aesmux::kernels::testing::TierName)

// A buffer of `len` bytes starting `misalign` bytes past a 64-byte boundary,
// with guard bytes on both sides that must survive every kernel call.
class GuardedBuffer {
 public:
  static constexpr size_t kGuard = 64;
  static constexpr uint8_t kGuardByte = 0xA5;

  GuardedBuffer(size_t len, size_t misalign);
  GuardedBuffer(std::span<const uint8_t> contents, size_t misalign);

  uint8_t *data() { return storage_.data() + offset_; }
  size_t size() const { return len_; }
  std::span<uint8_t> span() { return {data(), len_}; }
  Bytes bytes() const;
  // True when every guard byte still holds kGuardByte.
  bool GuardsIntact() const;

 private:
  Bytes storage_;
  size_t offset_ = 0;
  size_t len_ = 0;
};

// `len` bytes between two PROT_NONE pages, flush against the one after the
// data (flush_end) or the one before it, so that any access past either end
// faults.
class PageGuardedBuffer {
 public:
  PageGuardedBuffer(std::span<const uint8_t> contents, bool flush_end);
  ~PageGuardedBuffer();
  PageGuardedBuffer(const PageGuardedBuffer &) = delete;
  PageGuardedBuffer &operator=(const PageGuardedBuffer &) = delete;

  uint8_t *data() { return data_; }
  Bytes bytes() const { return Bytes(data_, data_ + len_); }

 private:
  uint8_t *map_ = nullptr;
  size_t map_len_ = 0;
  uint8_t *data_ = nullptr;
  size_t len_ = 0;
};

// Where one call's input and output sit: each `*_misalign` bytes past a
// 64-byte boundary, or one buffer for both (in place, at in_misalign).
struct Placement {
  size_t in_misalign = 0;
  size_t out_misalign = 0;
  bool in_place = false;
};
std::ostream &operator<<(std::ostream &os, const Placement &placement);

// The guarded input and output buffers of one kernel call, placed as asked.
class CallBuffers {
 public:
  CallBuffers(std::span<const uint8_t> input, const Placement &placement);
  CallBuffers(const CallBuffers &) = delete;
  CallBuffers &operator=(const CallBuffers &) = delete;

  const uint8_t *in() { return in_.data(); }
  uint8_t *out() { return out_->data(); }  // == in() in place
  Bytes output() const { return out_->bytes(); }
  bool GuardsIntact() const {
    return in_.GuardsIntact() && separate_out_.GuardsIntact();
  }

 private:
  GuardedBuffer in_;
  GuardedBuffer separate_out_;
  GuardedBuffer *out_;
};

// Case sweeps shared by the mode tests. Each calls check(key_len, placement)
// for every key size in kKeySizes and stops at the first fatal failure; the
// check chooses its own key, data and length.
using CaseCheck = std::function<void(size_t key_len, const Placement &)>;
// `per_key_size` random placements per key size.
void ForRandomPlacements(Rng &rng, int per_key_size, const CaseCheck &check);
// Every pair of input and output misalignments out of place, then every
// misalignment in place.
void ForEveryMisalignment(const CaseCheck &check);

// OpenSSL's default provider in a private library context, so the reference
// never runs anything but OpenSSL's own code.
class Reference {
 public:
  static Reference &Get();

  // One-shot encryption or decryption without padding. `cipher` is an
  // OpenSSL name such as "AES-128-CBC".
  Bytes Crypt(const std::string &cipher, bool encrypt,
              std::span<const uint8_t> key, std::span<const uint8_t> iv,
              std::span<const uint8_t> in);

  struct GcmResult {
    Bytes ciphertext;
    std::array<uint8_t, 16> tag;
  };
  GcmResult GcmEncrypt(std::span<const uint8_t> key,
                       std::span<const uint8_t> iv,
                       std::span<const uint8_t> aad,
                       std::span<const uint8_t> plaintext);

  // Single-block AES-ECB encryption, for test-side constructions.
  std::array<uint8_t, 16> EncryptBlock(std::span<const uint8_t> key,
                                       std::span<const uint8_t, 16> block);

  ~Reference();
  Reference(const Reference &) = delete;
  Reference &operator=(const Reference &) = delete;

 private:
  Reference();
  struct State;
  State *state_;
};

// "AES-<bits>-<mode>".
std::string CipherName(size_t key_len, std::string_view mode);

std::string Hex(std::span<const uint8_t> bytes);

// Success when `actual` equals `expected`; otherwise names the first differing
// offset and shows both around it, instead of printing whole buffers.
::testing::AssertionResult SameBytes(std::span<const uint8_t> actual,
                                     std::span<const uint8_t> expected);
Bytes FromHex(std::string_view hex);

}  // namespace aesmux::kernels::testing

#endif  // AESMUX_TESTS_KERNELS_TEST_SUPPORT_H_
