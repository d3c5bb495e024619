// Shared pieces of the multi-buffer tests: the fixture parameterised over
// the multi-buffer tiers, and loading a key into a lane of the transposed
// key table.
#ifndef AESMUX_TESTS_KERNELS_MB_TEST_SUPPORT_H_
#define AESMUX_TESTS_KERNELS_MB_TEST_SUPPORT_H_

#include <gtest/gtest.h>

#include <cstring>
#include <ostream>
#include <string>

#include "kernels/kernels.h"
#include "kernels/mb/lane_manager.h"
#include "kernels/tiers.h"
#include "tests/kernels/test_support.h"

namespace aesmux::kernels::mb {

// Lets GoogleTest print a tier parameter as its name.
inline void PrintTo(const MbTier &tier, std::ostream *os) { *os << tier.name; }

}  // namespace aesmux::kernels::mb

namespace aesmux::kernels::testing {

// Fixture for tests that run once per tier in kMbTiers; skips, with the
// missing features in the message, when this CPU cannot run the tier.
class MbTierTest : public ::testing::TestWithParam<mb::MbTier> {
 protected:
  void SetUp() override {
    const CpuFeatures available = DetectCpuFeatures();
    if (!mb::Supported(tier(), available)) {
      GTEST_SKIP() << "CPU lacks "
                   << DescribeCpuFeatures(tier().required & ~available)
                   << " needed by multi-buffer tier " << tier().name;
    }
  }
  const mb::MbTier &tier() const { return GetParam(); }
  uint32_t all_lanes() const { return (uint32_t{1} << tier().lanes) - 1; }

  // The encryption schedule of `key` (16, 24 or 32 bytes).
  static aesmux_aes_key ExpandKey(const Bytes &key) {
    aesmux_aes_key enc{};
    aesmux_aes_expand_key_aesni(&enc, key.data(), key.size());
    return enc;
  }

  Rng rng_;
};

inline std::string MbTierName(
    const ::testing::TestParamInfo<mb::MbTier> &info) {
  return std::string(info.param.name);
}

#define AESMUX_INSTANTIATE_FOR_ALL_MB_TIERS(suite)                             \
  INSTANTIATE_TEST_SUITE_P(                                                    \
      AllMbTiers, suite, ::testing::ValuesIn(::aesmux::kernels::mb::kMbTiers), \
      ::aesmux::kernels::testing::MbTierName)

// Copies `key`'s round keys into lane `lane` of the transposed table.
inline void LoadLaneKey(aesmux_mb_cbc_lanes &lanes, unsigned lane,
                        const aesmux_aes_key &key) {
  for (uint32_t r = 0; r <= key.rounds; ++r) {
    std::memcpy(lanes.round_keys[r][lane], key.round_keys[r], 16);
  }
}

// CBC encryption by OpenSSL's default provider (no padding).
inline Bytes ReferenceCbcEncrypt(const Bytes &key, const Bytes &iv,
                                 std::span<const uint8_t> plaintext) {
  return Reference::Get().Crypt(CipherName(key.size(), "CBC"), true, key, iv,
                                plaintext);
}

}  // namespace aesmux::kernels::testing

#endif  // AESMUX_TESTS_KERNELS_MB_TEST_SUPPORT_H_
