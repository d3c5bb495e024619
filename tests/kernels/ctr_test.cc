// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
// CTR with a full 128-bit big-endian counter against OpenSSL's default
// provider (whose CTR also carries through all 16 bytes): random cases,
// misalignment, in place, chunked streams, and counters about to carry out of
// the low 64 bits or to wrap at 2^128.
#include <cstring>

#include "tests/kernels/test_support.h"

namespace aesmux::kernels::testing {
namespace {

// counter + blocks modulo 2^128, big-endian.
Bytes AddToCounter(std::span<const uint8_t> counter, uint64_t blocks) {
  Bytes out(counter.begin(), counter.end());
  unsigned carry = 0;
  for (int i = 15; i >= 0; --i) {
    const unsigned add =
        i >= 8 ? static_cast<unsigned>(blocks >> (8 * (15 - i)) & 0xff) : 0;
    const unsigned sum = out[i] + add + carry;
    out[i] = static_cast<uint8_t>(sum);
    carry = sum >> 8;
  }
  return out;
}

class CtrTest : public TierTest {
 protected:
  void Check(std::span<const uint8_t> key, std::span<const uint8_t> counter,
             std::span<const uint8_t> input, const Placement &placement) {
    SCOPED_TRACE(::testing::Message()
                 << "key_len=" << key.size() << " len=" << input.size()
                 << " counter=" << Hex(counter) << " " << placement);
    const Bytes expected = Reference::Get().Crypt(CipherName(key.size(), "CTR"),
                                                  true, key, counter, input);
    const aesmux_aes_key enc = EncryptKey(key);
    CallBuffers call(input, placement);
    GuardedBuffer chain(counter, placement.in_misalign ^ 7);
    ops().ctr_crypt(&enc, chain.data(), call.out(), call.in(), input.size());
    ASSERT_TRUE(SameBytes(call.output(), expected));
    ASSERT_TRUE(call.GuardsIntact());
    ASSERT_TRUE(
        SameBytes(chain.bytes(), AddToCounter(counter, input.size() / 16)));
    ASSERT_TRUE(chain.GuardsIntact());
  }

  void CheckRandom(size_t key_len, size_t len, const Placement &placement) {
    Check(rng_.RandomBytes(key_len), rng_.RandomBytes(16),
          rng_.RandomBytes(len), placement);
  }
};

TEST_P(CtrTest, RandomLengthsMatchOpenSsl) {
  ForRandomPlacements(rng_, 300, [&](size_t key_len, const Placement &p) {
    CheckRandom(key_len, rng_.MessageLength() & ~size_t{15}, p);
  });
}

TEST_P(CtrTest, EveryBlockCountUpTo40) {
  for (size_t key_len : kKeySizes) {
    for (size_t blocks = 0; blocks <= 40; ++blocks) {
      CheckRandom(key_len, 16 * blocks, Placement{0, 0, false});
      CheckRandom(key_len, 16 * blocks, Placement{9, 9, true});
      if (HasFatalFailure()) return;
    }
  }
}

TEST_P(CtrTest, EveryMisalignment) {
  ForEveryMisalignment([&](size_t key_len, const Placement &p) {
    CheckRandom(key_len, 16 * rng_.Uniform(1, 40), p);
  });
}

// Counters whose low 64 bits are within a few blocks of wrapping (so the
// carry into the high half lands at every position of the 8-block loop and
// its tails), with random, all-zero and all-one high halves; the last case
// wraps the whole counter to zero.
TEST_P(CtrTest, CounterCarries) {
  for (size_t key_len : kKeySizes) {
    const Bytes key = rng_.RandomBytes(key_len);
    for (int high_kind = 0; high_kind < 3; ++high_kind) {
      for (unsigned below_wrap = 1; below_wrap <= 20; ++below_wrap) {
        Bytes counter(16);
        if (high_kind == 0) rng_.Fill(std::span(counter).first(8));
        if (high_kind == 2) std::memset(counter.data(), 0xff, 8);
        // low64 = 2^64 - below_wrap
        const uint64_t low = ~uint64_t{0} - below_wrap + 1;
        for (int i = 0; i < 8; ++i)
          counter[15 - i] = static_cast<uint8_t>(low >> (8 * i));
        for (size_t blocks :
             {size_t{1}, size_t{below_wrap}, size_t{below_wrap + 1},
              size_t{below_wrap + 7}, size_t{40}, size_t{300}}) {
          Check(key, counter, rng_.RandomBytes(16 * blocks),
                Placement{0, 0, rng_.Coin()});
          if (HasFatalFailure()) return;
        }
      }
    }
    // 0xff..ff: the first block uses it, the second wraps to zero.
    const Bytes all_ones(16, 0xff);
    Check(key, all_ones, rng_.RandomBytes(16 * 19), Placement{});
    Check(key, all_ones, rng_.RandomBytes(16), Placement{});
    // Low half all ones, high half 0x..fe: carry without wrapping.
    Bytes counter(16, 0xff);
    counter[7] = 0xfe;
    Check(key, counter, rng_.RandomBytes(16 * 9), Placement{});
  }
}

TEST_P(CtrTest, ChunkedStreamsMatchOneShot) {
  for (size_t key_len : kKeySizes) {
    for (int i = 0; i < 60; ++i) {
      const Bytes key = rng_.RandomBytes(key_len);
      Bytes counter = rng_.RandomBytes(16);
      if (i % 3 == 0) std::memset(counter.data() + 9, 0xff, 7);  // carries
      const Bytes input =
          rng_.RandomBytes(16 * rng_.Uniform(0, rng_.Coin() ? 64 : 1024));
      const Bytes expected = Reference::Get().Crypt(CipherName(key_len, "CTR"),
                                                    true, key, counter, input);
      const aesmux_aes_key enc = EncryptKey(key);
      Bytes output(input.size());
      uint8_t chain[16];
      std::memcpy(chain, counter.data(), 16);
      for (size_t offset = 0; offset < input.size();) {
        const size_t len =
            std::min(16 * rng_.Uniform(0, 20), input.size() - offset);
        ops().ctr_crypt(&enc, chain, output.data() + offset,
                        input.data() + offset, len);
        offset += len;
      }
      ASSERT_TRUE(SameBytes(output, expected)) << "key_len " << key_len;
      ASSERT_TRUE(SameBytes(chain, AddToCounter(counter, input.size() / 16)));
    }
  }
}

AESMUX_INSTANTIATE_FOR_ALL_TIERS(CtrTest);

}  // namespace
}  // namespace aesmux::kernels::testing
