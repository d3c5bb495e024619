// Shared pieces of the kernel tests: the tier-parameterised fixture, a seeded
// RNG, guarded and misaligned buffers, and OpenSSL's default provider as the
// reference implementation.
#ifndef AESMUX_TESTS_KERNELS_TEST_SUPPORT_H_
#define AESMUX_TESTS_KERNELS_TEST_SUPPORT_H_

#include <gtest/gtest.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <ostream>
#include <random>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "kernels/kernels.h"
#include "kernels/tiers.h"

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
