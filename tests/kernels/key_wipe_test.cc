// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
// Key material held by the C++ glue is wiped when it is cleared, replaced
// or destroyed. After Clear(), every byte of the object is zero (the objects
// are built in zeroed storage, so padding is zero too). After destruction
// the compiler may drop the plain stores to non-secret members (the tier
// pointer, flags), but no key material may remain: at most 16 non-zero
// bytes, and none of the round keys.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <new>
#include <vector>

#include "kernels/simd_gcm.h"
#include "kernels/simd_key.h"
#include "kernels/tiers.h"

namespace aesmux::kernels {
namespace {

template <typename T>
struct Zeroed {
  alignas(T) unsigned char bytes[sizeof(T)] = {};
  T *object() { return std::launder(reinterpret_cast<T *>(bytes)); }
  bool all_zero() const { return nonzero() == 0; }
  size_t nonzero() const {
    return std::count_if(std::begin(bytes), std::end(bytes),
                         [](unsigned char b) { return b != 0; });
  }
  bool contains(const uint8_t *needle, size_t len) const {
    return std::search(std::begin(bytes), std::end(bytes), needle,
                       needle + len) != std::end(bytes);
  }
};

// True when `storage` holds none of the round keys of `key`.
template <typename T>
bool HoldsNoRoundKey(const Zeroed<T> &storage, const SimdKey &key) {
  SimdKey copy = key;
  const aesmux_aes_key enc = copy.encrypt_schedule();  // one storage: copies
  const aesmux_aes_key dec = copy.decrypt_schedule();
  for (uint32_t r = 0; r <= enc.rounds; ++r) {
    if (storage.contains(enc.round_keys[r], 16) ||
        storage.contains(dec.round_keys[r], 16)) {
      return false;
    }
  }
  return true;
}

class KeyWipeTest : public ::testing::TestWithParam<const Tier *> {
 protected:
  void SetUp() override {
    if (!Supported(*GetParam(), DetectCpuFeatures())) {
      GTEST_SKIP() << "this CPU lacks "
                   << DescribeCpuFeatures(GetParam()->required &
                                          ~DetectCpuFeatures());
    }
  }
  const std::vector<uint8_t> key_ = std::vector<uint8_t>(32, 0xa5);
};

TEST_P(KeyWipeTest, SimdKeyClearAndDestructorWipeTheSchedule) {
  Zeroed<SimdKey> storage;
  SimdKey *key = new (storage.bytes) SimdKey;
  key->Set(*GetParam(), key_);
  key->decrypt_schedule();
  EXPECT_FALSE(storage.all_zero());
  key->Clear();
  EXPECT_TRUE(storage.all_zero());

  SimdKey reference;
  reference.Set(*GetParam(), key_);
  key->Set(*GetParam(), key_);
  key->decrypt_schedule();
  EXPECT_FALSE(HoldsNoRoundKey(storage, reference));
  key->~SimdKey();
  EXPECT_LE(storage.nonzero(), 16u);
  EXPECT_TRUE(HoldsNoRoundKey(storage, reference));
}

TEST_P(KeyWipeTest, SimdGcmWipesKeyPowersOfHAndMessageState) {
  Zeroed<SimdGcm> storage;
  SimdGcm *gcm = new (storage.bytes) SimdGcm;
  ASSERT_TRUE(gcm->SetKey(*GetParam(), key_));
  const uint8_t iv[12] = {1};
  uint8_t out[40], in[40] = {2}, tag[16];
  gcm->Start(iv);
  gcm->Aad({in, 5});
  gcm->Encrypt(out, in, 37);  // leaves a partial block and its keystream
  gcm->Clear();
  EXPECT_TRUE(storage.all_zero());

  SimdKey reference;
  reference.Set(*GetParam(), key_);
  ASSERT_TRUE(gcm->SetKey(*GetParam(), key_));
  gcm->Start(iv);
  gcm->Encrypt(out, in, 21);
  gcm->Finish(tag);
  EXPECT_FALSE(HoldsNoRoundKey(storage, reference));
  gcm->~SimdGcm();
  EXPECT_LE(storage.nonzero(), 16u);
  EXPECT_TRUE(HoldsNoRoundKey(storage, reference));
}

std::vector<const Tier *> AllTiers() {
  std::vector<const Tier *> tiers;
  for (const Tier &tier : kTiers) tiers.push_back(&tier);
  return tiers;
}

INSTANTIATE_TEST_SUITE_P(AllTiers, KeyWipeTest, ::testing::ValuesIn(AllTiers()),
                         [](const auto &info) {
                           return std::string(info.param->name);
                         });

}  // namespace
}  // namespace aesmux::kernels
