// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
// The multi-buffer CBC-encryption kernels, every width of every tier,
// against OpenSSL's default provider, lane by lane: every key size; random
// lane masks, with dead lanes' and the lanes above the kernel's width's
// pointers aimed at unmapped addresses and their struct slots checked
// unchanged; lengths that run whole 4-block chunks, 1- to 3-block
// tails and several 256-byte segments; in place and misaligned, with guard
// bytes; streams continued over many calls with changing masks; buffers
// flush against inaccessible pages. And the tier table.
#include <cstring>
#include <memory>
#include <vector>

#include "tests/kernels/mb_test_support.h"

namespace aesmux::kernels::testing {
namespace {

// An address no live lane has and no kernel may dereference: the first
// pages of the address space are never mapped.
uint8_t *Unmapped(unsigned lane) {
  return reinterpret_cast<uint8_t *>(uintptr_t{64} * (lane + 1));
}

uint32_t RoundsFor(size_t key_len) {
  return static_cast<uint32_t>(6 + key_len / 4);
}

// Lengths that exercise every path: whole chunks, tails of 1..3 blocks,
// segment boundaries (256 bytes) and several segments.
constexpr size_t kLengths[] = {0,   16,  32,  48,  64,  80,   112,  128,
                               240, 256, 272, 304, 512, 1040, 4144, 16384};

class MbKernelTest : public MbKernelParamTest {
 protected:
  void SetUp() override {
    MbKernelParamTest::SetUp();
    lanes_ = std::make_unique<aesmux_mb_cbc_lanes>();
  }

  bool Live(uint32_t lane_mask, unsigned lane) const {
    return lane < width() && ((lane_mask >> lane) & 1) != 0;
  }

  // One kernel call on fresh random lanes; checks every live lane against
  // OpenSSL and every dead lane's slots for changes.
  void CheckOneCall(size_t key_len, uint32_t lane_mask, size_t len) {
    SCOPED_TRACE(::testing::Message()
                 << "key_len=" << key_len << " mask=0x" << std::hex << lane_mask
                 << std::dec << " len=" << len);
    struct Lane {
      Bytes key, iv, plaintext, expected;
      std::unique_ptr<CallBuffers> buffers;
    };
    std::vector<Lane> cases(16);
    aesmux_mb_cbc_lanes &lanes = *lanes_;
    rng_.Fill({reinterpret_cast<uint8_t *>(&lanes), sizeof(lanes)});
    for (unsigned l = 0; l < 16; ++l) {
      if (!Live(lane_mask, l)) {
        lanes.in[l] = Unmapped(l);
        lanes.out[l] = Unmapped(l);
        continue;
      }
      Lane &c = cases[l];
      c.key = rng_.RandomBytes(key_len);
      c.iv = rng_.RandomBytes(16);
      c.plaintext = rng_.RandomBytes(len);
      c.expected = ReferenceCbcEncrypt(c.key, c.iv, c.plaintext);
      const Placement placement{rng_.Uniform(0, 15), rng_.Uniform(0, 15),
                                rng_.Coin()};
      c.buffers = std::make_unique<CallBuffers>(c.plaintext, placement);
      lanes.in[l] = c.buffers->in();
      lanes.out[l] = c.buffers->out();
      std::memcpy(lanes.iv[l], c.iv.data(), 16);
      LoadLaneKey(lanes, l, ExpandKey(c.key));
    }
    const auto before = std::make_unique<aesmux_mb_cbc_lanes>(lanes);

    kernel().cbc_encrypt(&lanes, lane_mask, len, RoundsFor(key_len));

    for (unsigned l = 0; l < 16; ++l) {
      SCOPED_TRACE(::testing::Message() << "lane " << l);
      const Bytes iv_after(lanes.iv[l], lanes.iv[l] + 16);
      if (!Live(lane_mask, l)) {
        ASSERT_EQ(lanes.in[l], before->in[l]);
        ASSERT_EQ(lanes.out[l], before->out[l]);
        ASSERT_TRUE(
            SameBytes(iv_after, Bytes(before->iv[l], before->iv[l] + 16)));
        continue;
      }
      const Lane &c = cases[l];
      ASSERT_TRUE(SameBytes(c.buffers->output(), c.expected));
      ASSERT_TRUE(c.buffers->GuardsIntact());
      const Bytes next_iv =
          len == 0 ? c.iv : Bytes(c.expected.end() - 16, c.expected.end());
      ASSERT_TRUE(SameBytes(iv_after, next_iv));
      ASSERT_EQ(lanes.in[l], before->in[l] + len);
      ASSERT_EQ(lanes.out[l], before->out[l] + len);
    }
    ASSERT_EQ(std::memcmp(lanes.round_keys, before->round_keys,
                          sizeof(lanes.round_keys)),
              0);
  }

  std::unique_ptr<aesmux_mb_cbc_lanes> lanes_;
};

TEST_P(MbKernelTest, AllLanesMatchOpenSslForEveryKeySizeAndLength) {
  for (size_t key_len : kKeySizes) {
    for (size_t len : kLengths) {
      CheckOneCall(key_len, all_lanes(), len);
      if (HasFatalFailure()) return;
    }
  }
}

TEST_P(MbKernelTest, RandomLaneMasksTouchOnlyLiveLanes) {
  for (size_t key_len : kKeySizes) {
    for (int i = 0; i < 40; ++i) {
      const uint32_t mask = static_cast<uint32_t>(rng_.Next()) & all_lanes();
      CheckOneCall(key_len, mask, 16 * rng_.Uniform(0, 80));
      if (HasFatalFailure()) return;
    }
  }
}

TEST_P(MbKernelTest, EverySingleLaneAlone) {
  for (unsigned l = 0; l < width(); ++l) {
    CheckOneCall(16, 1u << l, 16 * rng_.Uniform(1, 40));
    if (HasFatalFailure()) return;
  }
}

// Bits for lanes the kernel does not have (an x4 kernel's bits 4..15, and
// bits 16..31) are ignored: those lanes' pointers are unmapped.
TEST_P(MbKernelTest, MaskBitsBeyondTheTiersLanesAreIgnored) {
  CheckOneCall(32, 0xffffffffu, 304);
  CheckOneCall(16, 0xffff0000u | 5u, 80);
}

TEST_P(MbKernelTest, EmptyMaskOrLengthTouchesNothing) {
  CheckOneCall(16, 0, 1024);
  CheckOneCall(24, all_lanes(), 0);
}

// Lanes advanced over many calls with changing masks and lengths end up
// with the one-shot encryption of everything each consumed: the pointers
// and IVs written back continue every stream.
TEST_P(MbKernelTest, StreamsContinueAcrossCallsWithChangingMasks) {
  constexpr size_t kMaxLen = 4096;
  for (size_t key_len : kKeySizes) {
    SCOPED_TRACE(::testing::Message() << "key_len=" << key_len);
    aesmux_mb_cbc_lanes &lanes = *lanes_;
    std::memset(&lanes, 0, sizeof(lanes));
    struct Stream {
      Bytes key, iv, plaintext, buffer;
      size_t consumed = 0;
    };
    std::vector<Stream> streams(width());
    for (unsigned l = 0; l < width(); ++l) {
      Stream &s = streams[l];
      s.key = rng_.RandomBytes(key_len);
      s.iv = rng_.RandomBytes(16);
      s.plaintext = rng_.RandomBytes(kMaxLen);
      s.buffer = s.plaintext;  // encrypted in place
      lanes.in[l] = s.buffer.data();
      lanes.out[l] = s.buffer.data();
      std::memcpy(lanes.iv[l], s.iv.data(), 16);
      LoadLaneKey(lanes, l, ExpandKey(s.key));
    }
    for (int call = 0; call < 60; ++call) {
      const size_t len = 16 * rng_.Uniform(0, 24);
      uint32_t mask = 0;
      for (unsigned l = 0; l < width(); ++l) {
        if (rng_.Uniform(0, 3) != 0 && streams[l].consumed + len <= kMaxLen) {
          mask |= 1u << l;
          streams[l].consumed += len;
        }
      }
      kernel().cbc_encrypt(&lanes, mask, len, RoundsFor(key_len));
    }
    for (unsigned l = 0; l < width(); ++l) {
      SCOPED_TRACE(::testing::Message() << "lane " << l);
      const Stream &s = streams[l];
      const Bytes expected = ReferenceCbcEncrypt(
          s.key, s.iv, std::span(s.plaintext).first(s.consumed));
      ASSERT_TRUE(SameBytes(std::span(s.buffer).first(s.consumed), expected));
      ASSERT_TRUE(SameBytes(std::span(s.buffer).subspan(s.consumed),
                            std::span(s.plaintext).subspan(s.consumed)));
      ASSERT_EQ(lanes.in[l], s.buffer.data() + s.consumed);
      const Bytes iv_after(lanes.iv[l], lanes.iv[l] + 16);
      ASSERT_TRUE(SameBytes(
          iv_after,
          s.consumed == 0 ? s.iv : Bytes(expected.end() - 16, expected.end())));
    }
  }
}

// Every lane's input and output sit flush against an inaccessible page
// (after the data, then before it): a read or write past either end, such
// as loading the next step's blocks past the last one, faults.
TEST_P(MbKernelTest, NoAccessPastAnyLanesBuffers) {
  for (bool flush_end : {true, false}) {
    for (size_t len : {16, 48, 64, 80, 256, 304, 1072}) {
      SCOPED_TRACE(::testing::Message()
                   << "flush_end=" << flush_end << " len=" << len);
      aesmux_mb_cbc_lanes &lanes = *lanes_;
      std::memset(&lanes, 0, sizeof(lanes));
      const uint32_t mask = all_lanes() & ~(rng_.Coin() ? 0x22u : 0u);
      std::vector<std::unique_ptr<PageGuardedBuffer>> in(16), out(16);
      std::vector<Bytes> expected(16);
      for (unsigned l = 0; l < width(); ++l) {
        if (!Live(mask, l)) {
          lanes.in[l] = Unmapped(l);
          lanes.out[l] = Unmapped(l);
          continue;
        }
        const Bytes key = rng_.RandomBytes(32), iv = rng_.RandomBytes(16);
        const Bytes plaintext = rng_.RandomBytes(len);
        expected[l] = ReferenceCbcEncrypt(key, iv, plaintext);
        in[l] = std::make_unique<PageGuardedBuffer>(plaintext, flush_end);
        const bool in_place = (l & 1) != 0;
        if (!in_place) {
          out[l] = std::make_unique<PageGuardedBuffer>(Bytes(len), flush_end);
        }
        lanes.in[l] = in[l]->data();
        lanes.out[l] = in_place ? in[l]->data() : out[l]->data();
        std::memcpy(lanes.iv[l], iv.data(), 16);
        LoadLaneKey(lanes, l, ExpandKey(key));
      }
      kernel().cbc_encrypt(&lanes, mask, len, 14);
      for (unsigned l = 0; l < width(); ++l) {
        if (!Live(mask, l)) continue;
        const Bytes actual = out[l] ? out[l]->bytes() : in[l]->bytes();
        ASSERT_TRUE(SameBytes(actual, expected[l])) << "lane " << l;
      }
    }
  }
}

// Every tier has multi-buffer kernels, the widest of the tier's width.
TEST(MbTierTable, EveryTierHasLanes) {
  for (const Tier &tier : kTiers) {
    SCOPED_TRACE(tier.name);
    EXPECT_TRUE(tier.mb.lanes == 8 || tier.mb.lanes == 16);
    EXPECT_EQ(tier.mb.widest().lanes, tier.mb.lanes);
  }
}

// A batch runs on the narrowest kernel that has its highest busy lane.
TEST(MbTierTable, KernelForIsTheNarrowestCoveringTheHighestLane) {
  for (const Tier &tier : kTiers) {
    SCOPED_TRACE(tier.name);
    const MbOps &mb = tier.mb;
    EXPECT_EQ(mb.KernelFor(1).lanes, 4u);
    EXPECT_EQ(mb.KernelFor(0xf).lanes, 4u);
    EXPECT_EQ(mb.KernelFor(0x10).lanes, 8u);
    EXPECT_EQ(mb.KernelFor(0x81).lanes, 8u);
    EXPECT_EQ(mb.KernelFor(0x100).lanes, mb.lanes);
    EXPECT_EQ(mb.KernelFor(0xffffffffu).lanes, mb.lanes);
  }
}

AESMUX_INSTANTIATE_FOR_ALL_MB_KERNELS(MbKernelTest);

}  // namespace
}  // namespace aesmux::kernels::testing
