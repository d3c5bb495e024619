// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
// Kernels touch only [in, in+len), [out, out+len) and their 16-byte state:
// buffers are placed flush against an inaccessible page (after the data, and
// in a second pass before it), so any read or write past either end faults.
// Results must match the same call on ordinary buffers.
#include <cstring>
#include <memory>
#include <vector>

#include "tests/kernels/test_support.h"

namespace aesmux::kernels::testing {
namespace {

class BoundsTest : public TierTest {
 protected:
  void SetUp() override {
    TierTest::SetUp();
    if (IsSkipped()) return;
    key_ = rng_.RandomBytes(32);
    PageGuardedBuffer key_buffer(key_, true);
    ops().expand_key(&enc_, key_buffer.data(), 32);
    ops().decrypt_key(&dec_, &enc_);
    // The GHASH key in the tier's bytes only, rounded up to the 64-byte
    // alignment its kernels assume, against the inaccessible page.
    gkey_buffer_ = std::make_unique<PageGuardedBuffer>(
        Bytes((GetParam().gcm_key_bytes + 63) & ~size_t{63}), true);
    gkey_ = reinterpret_cast<aesmux_gcm_key *>(gkey_buffer_->data());
    ops().gcm_init(gkey_, &enc_);
  }

  // Runs `call(out, in, state)` on guarded buffers (both placements) and on
  // plain ones; outputs and state must agree.
  template <typename Call>
  void Compare(const char *what, size_t len, Call call) {
    SCOPED_TRACE(::testing::Message() << what << " len=" << len);
    const Bytes input = rng_.RandomBytes(len);
    const Bytes state0 = rng_.RandomBytes(16);
    Bytes plain_out(len), plain_state = state0;
    call(plain_out.data(), input.data(), plain_state.data());
    for (bool flush_end : {true, false}) {
      PageGuardedBuffer in(input, flush_end);
      PageGuardedBuffer out(Bytes(len), flush_end);
      PageGuardedBuffer state(state0, flush_end);
      call(out.data(), in.data(), state.data());
      ASSERT_TRUE(SameBytes(out.bytes(), plain_out));
      ASSERT_TRUE(SameBytes(state.bytes(), plain_state));
    }
  }

  Bytes key_;
  aesmux_aes_key enc_{}, dec_{};
  std::unique_ptr<PageGuardedBuffer> gkey_buffer_;
  aesmux_gcm_key *gkey_ = nullptr;
};

TEST_P(BoundsTest, BulkKernelsStayInBounds) {
  // Every count to 41, then around the GCM kernels' choices of loop on
  // AVX-512 (two 16-block groups, the 32-block groups from 128 blocks) with
  // runs of every step size after them.
  std::vector<size_t> block_counts;
  for (size_t blocks = 0; blocks <= 41; ++blocks) block_counts.push_back(blocks);
  for (size_t blocks : {63, 64, 65, 127, 128, 129, 143}) {
    block_counts.push_back(blocks);
  }
  for (size_t blocks : block_counts) {
    const size_t len = 16 * blocks;
    Compare("ecb_encrypt", len,
            [&](uint8_t *out, const uint8_t *in, uint8_t *) {
              ops().ecb_encrypt(&enc_, out, in, len);
            });
    Compare("ecb_decrypt", len,
            [&](uint8_t *out, const uint8_t *in, uint8_t *) {
              ops().ecb_decrypt(&dec_, out, in, len);
            });
    Compare("cbc_encrypt", len,
            [&](uint8_t *out, const uint8_t *in, uint8_t *iv) {
              ops().cbc_encrypt(&enc_, iv, out, in, len);
            });
    Compare("cbc_decrypt", len,
            [&](uint8_t *out, const uint8_t *in, uint8_t *iv) {
              ops().cbc_decrypt(&dec_, iv, out, in, len);
            });
    Compare("ctr_crypt", len,
            [&](uint8_t *out, const uint8_t *in, uint8_t *ctr) {
              ops().ctr_crypt(&enc_, ctr, out, in, len);
            });
    Compare("ghash", len, [&](uint8_t *, const uint8_t *in, uint8_t *xi) {
      ops().ghash(gkey_, xi, in, len);
    });
    uint8_t xi[16] = {};
    Compare("gcm_encrypt", len,
            [&](uint8_t *out, const uint8_t *in, uint8_t *ctr) {
              uint8_t x[16];
              std::memcpy(x, xi, 16);
              ops().gcm_encrypt(&enc_, gkey_, ctr, x, out, in, len);
            });
    Compare("gcm_decrypt", len,
            [&](uint8_t *out, const uint8_t *in, uint8_t *ctr) {
              uint8_t x[16];
              std::memcpy(x, xi, 16);
              ops().gcm_decrypt(&enc_, gkey_, ctr, x, out, in, len);
            });
    if (HasFatalFailure()) return;
  }
}

TEST_P(BoundsTest, XtsStaysInBounds) {
  std::vector<size_t> lengths;
  for (size_t len = 16; len <= 200; ++len) lengths.push_back(len);
  for (size_t tail = 0; tail < 16; ++tail) lengths.push_back(16 * 40 + tail);
  for (size_t len : lengths) {
    Compare("xts_encrypt", len,
            [&](uint8_t *out, const uint8_t *in, uint8_t *tweak) {
              ops().xts_encrypt(&enc_, tweak, out, in, len);
            });
    Compare("xts_decrypt", len,
            [&](uint8_t *out, const uint8_t *in, uint8_t *tweak) {
              ops().xts_decrypt(&dec_, tweak, out, in, len);
            });
    if (HasFatalFailure()) return;
  }
}

TEST_P(BoundsTest, KeyExpansionReadsOnlyTheKey) {
  for (size_t key_len : kKeySizes) {
    const Bytes key = rng_.RandomBytes(key_len);
    aesmux_aes_key expected{};
    ops().expand_key(&expected, key.data(), key_len);
    for (bool flush_end : {true, false}) {
      PageGuardedBuffer key_buffer(key, flush_end);
      aesmux_aes_key enc{};
      ops().expand_key(&enc, key_buffer.data(), key_len);
      EXPECT_EQ(std::memcmp(&enc, &expected, sizeof enc), 0);
    }
  }
}

AESMUX_INSTANTIATE_FOR_ALL_TIERS(BoundsTest);

}  // namespace
}  // namespace aesmux::kernels::testing
