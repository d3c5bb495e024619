// Key material held by the C++ glue is wiped when it is cleared, replaced
// or destroyed: after Clear() or the destructor, every byte of the object
// is zero (the objects are built in zeroed storage, so padding is zero too).
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
  bool all_zero() const {
    return std::all_of(std::begin(bytes), std::end(bytes),
                       [](unsigned char b) { return b == 0; });
  }
};

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

TEST_P(KeyWipeTest, SimdKeyClearAndDestructorWipeBothSchedules) {
  Zeroed<SimdKey> storage;
  SimdKey *key = new (storage.bytes) SimdKey;
  key->Set(*GetParam(), key_);
  key->decrypt_schedule();
  EXPECT_FALSE(storage.all_zero());
  key->Clear();
  EXPECT_TRUE(storage.all_zero());

  key->Set(*GetParam(), key_);
  key->decrypt_schedule();
  key->~SimdKey();
  EXPECT_TRUE(storage.all_zero());
}

TEST_P(KeyWipeTest, SimdGcmWipesKeyPowersOfHAndMessageState) {
  Zeroed<SimdGcm> storage;
  SimdGcm *gcm = new (storage.bytes) SimdGcm;
  gcm->SetKey(*GetParam(), key_);
  const uint8_t iv[12] = {1};
  uint8_t out[40], in[40] = {2}, tag[16];
  gcm->Start(iv);
  gcm->Aad({in, 5});
  gcm->Encrypt(out, in, 37);  // leaves a partial block and its keystream
  gcm->Clear();
  EXPECT_TRUE(storage.all_zero());

  gcm->SetKey(*GetParam(), key_);
  gcm->Start(iv);
  gcm->Encrypt(out, in, 21);
  gcm->Finish(tag);
  gcm->~SimdGcm();
  EXPECT_TRUE(storage.all_zero());
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
