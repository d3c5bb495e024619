// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
// Cross-validation between tiers: every kernel of the tier under test must
// give the same output and chaining state as the same kernel of every other
// tier this CPU supports, on random lengths from 0 to 64 KiB, inputs and
// outputs at every offset from a 64-byte boundary (out of place and in
// place), and streams split into random pieces. The other tests check each
// tier against OpenSSL; this one makes the tiers check each other where
// they differ most (vector widths, masked tails, group sizes).
#include <algorithm>
#include <cstring>
#include <functional>

#include "tests/kernels/test_support.h"

namespace aesmux::kernels::testing {
namespace {

// The key material of one key for one tier.
struct Keys {
  aesmux_aes_key enc{}, dec{};
  aesmux_gcm_key gcm{};
};

Keys MakeKeys(const TierOps &ops, std::span<const uint8_t> key) {
  Keys keys;
  ops.expand_key(&keys.enc, key.data(), key.size());
  ops.decrypt_key(&keys.dec, &keys.enc);
  ops.gcm_init(&keys.gcm, &keys.enc);
  return keys;
}

// One kernel call: out, in, len, 16 bytes of chaining state (IV, counter,
// GHASH accumulator, XTS's encrypted first tweak) and, for GCM, a second
// 16 bytes (the accumulator).
using Kernel = std::function<void(const TierOps &, Keys &, uint8_t *out,
                                  const uint8_t *in, size_t len,
                                  uint8_t state[32])>;

struct KernelCase {
  const char *name;
  bool streams;        // consecutive calls continue one stream
  bool any_length;     // XTS: any length >= 16; others whole blocks
  Kernel run;
};

const std::vector<KernelCase> &Kernels() {
  static const std::vector<KernelCase> cases = {
      {"ecb_encrypt", true, false,
       [](const TierOps &o, Keys &k, uint8_t *out, const uint8_t *in,
          size_t len, uint8_t *) { o.ecb_encrypt(&k.enc, out, in, len); }},
      {"ecb_decrypt", true, false,
       [](const TierOps &o, Keys &k, uint8_t *out, const uint8_t *in,
          size_t len, uint8_t *) { o.ecb_decrypt(&k.dec, out, in, len); }},
      {"cbc_encrypt", true, false,
       [](const TierOps &o, Keys &k, uint8_t *out, const uint8_t *in,
          size_t len, uint8_t *s) { o.cbc_encrypt(&k.enc, s, out, in, len); }},
      {"cbc_decrypt", true, false,
       [](const TierOps &o, Keys &k, uint8_t *out, const uint8_t *in,
          size_t len, uint8_t *s) { o.cbc_decrypt(&k.dec, s, out, in, len); }},
      {"ctr_crypt", true, false,
       [](const TierOps &o, Keys &k, uint8_t *out, const uint8_t *in,
          size_t len, uint8_t *s) { o.ctr_crypt(&k.enc, s, out, in, len); }},
      {"xts_encrypt", false, true,
       [](const TierOps &o, Keys &k, uint8_t *out, const uint8_t *in,
          size_t len, uint8_t *s) {
         if (len >= 16) o.xts_encrypt(&k.enc, s, out, in, len);
       }},
      {"xts_decrypt", false, true,
       [](const TierOps &o, Keys &k, uint8_t *out, const uint8_t *in,
          size_t len, uint8_t *s) {
         if (len >= 16) o.xts_decrypt(&k.dec, s, out, in, len);
       }},
      {"ghash", true, false,
       [](const TierOps &o, Keys &k, uint8_t *out, const uint8_t *in,
          size_t len, uint8_t *s) {
         o.ghash(&k.gcm, s, in, len);
         if (out != in) std::memcpy(out, in, len);
       }},
      {"gcm_encrypt", true, false,
       [](const TierOps &o, Keys &k, uint8_t *out, const uint8_t *in,
          size_t len, uint8_t *s) {
         o.gcm_encrypt(&k.enc, &k.gcm, s, s + 16, out, in, len);
       }},
      {"gcm_decrypt", true, false,
       [](const TierOps &o, Keys &k, uint8_t *out, const uint8_t *in,
          size_t len, uint8_t *s) {
         o.gcm_decrypt(&k.enc, &k.gcm, s, s + 16, out, in, len);
       }},
  };
  return cases;
}

struct Outcome {
  Bytes out;
  std::array<uint8_t, 32> state;
};

class CrossTierTest : public TierTest {
 protected:
  void SetUp() override {
    TierTest::SetUp();
    if (IsSkipped()) return;
    const CpuFeatures cpu = DetectCpuFeatures();
    for (const Tier &tier : kTiers) {
      if (tier.name != GetParam().name && Supported(tier, cpu)) {
        others_.push_back(&tier);
      }
    }
    if (others_.empty()) {
      GTEST_SKIP() << "no other tier runs on this CPU to compare "
                   << GetParam().name << " with";
    }
  }

  // Runs `kernel` of `tier` over `input` split at `splits` (offsets where a
  // new call starts), with the buffers placed as asked.
  static Outcome Run(const Tier &tier, const KernelCase &kernel,
                     std::span<const uint8_t> key,
                     std::span<const uint8_t> state0,
                     std::span<const uint8_t> input,
                     const std::vector<size_t> &splits,
                     const Placement &placement, bool *guards_ok) {
    Keys keys = MakeKeys(tier.ops, key);
    CallBuffers buffers(input, placement);
    Outcome outcome;
    std::memcpy(outcome.state.data(), state0.data(), 32);
    size_t start = 0;
    for (size_t i = 0; i <= splits.size(); ++i) {
      const size_t end = i < splits.size() ? splits[i] : input.size();
      kernel.run(tier.ops, keys, buffers.out() + start, buffers.in() + start,
                 end - start, outcome.state.data());
      start = end;
    }
    outcome.out = buffers.output();
    *guards_ok = buffers.GuardsIntact();
    return outcome;
  }

  // Compares the tier under test with every other tier on one case.
  void Compare(const KernelCase &kernel, size_t key_len, size_t len,
               const Placement &placement, bool split) {
    const Bytes key = rng_.RandomBytes(key_len);
    const Bytes state0 = rng_.RandomBytes(32);
    const Bytes input = rng_.RandomBytes(len);
    std::vector<size_t> splits;
    if (split && kernel.streams && len >= 32) {
      const size_t pieces = rng_.Uniform(1, 6);
      for (size_t i = 0; i < pieces; ++i) {
        splits.push_back(16 * rng_.Uniform(0, len / 16));
      }
      std::sort(splits.begin(), splits.end());
    }
    SCOPED_TRACE(::testing::Message()
                 << kernel.name << " key_len=" << key_len << " len=" << len
                 << " " << placement << " pieces=" << splits.size() + 1);
    bool guards_ok = false;
    const Outcome ours = Run(GetParam(), kernel, key, state0, input, splits,
                             placement, &guards_ok);
    ASSERT_TRUE(guards_ok) << GetParam().name << " wrote outside the output";
    for (const Tier *other : others_) {
      const Outcome theirs = Run(*other, kernel, key, state0, input, splits,
                                 placement, &guards_ok);
      ASSERT_TRUE(SameBytes(ours.out, theirs.out)) << "vs " << other->name;
      ASSERT_TRUE(SameBytes(ours.state, theirs.state))
          << "chaining state vs " << other->name;
    }
  }

  size_t RandomLength(const KernelCase &kernel, size_t max) {
    const size_t len = rng_.Uniform(0, max);
    return kernel.any_length ? len : len & ~size_t{15};
  }

  std::vector<const Tier *> others_;
};

// Random lengths up to 64 KiB, random placements, random splits.
TEST_P(CrossTierTest, RandomLengthsPlacementsAndSplits) {
  for (const KernelCase &kernel : Kernels()) {
    for (size_t key_len : kKeySizes) {
      for (int i = 0; i < 24; ++i) {
        const Placement placement{rng_.Uniform(0, 63), rng_.Uniform(0, 63),
                                  rng_.Coin()};
        Compare(kernel, key_len,
                RandomLength(kernel, rng_.Coin() ? 65536 : 2048), placement,
                rng_.Coin());
        if (HasFatalFailure()) return;
      }
    }
  }
}

// Every length up to 40 blocks plus a partial block, so that every group,
// vector and tail size of every tier meets every other.
TEST_P(CrossTierTest, EveryShortLength) {
  for (const KernelCase &kernel : Kernels()) {
    for (size_t key_len : kKeySizes) {
      for (size_t len = 0; len <= 16 * 40 + 15; ++len) {
        if (!kernel.any_length && len % 16 != 0) continue;
        Compare(kernel, key_len, len, Placement{len % 64, (len / 16) % 64,
                                                len % 3 == 0},
                false);
        if (HasFatalFailure()) return;
      }
    }
  }
}

// Every pair of offsets from a 64-byte boundary for input and output, and
// every offset in place.
TEST_P(CrossTierTest, EveryAlignment) {
  for (const KernelCase &kernel : Kernels()) {
    const size_t key_len = kKeySizes[rng_.Uniform(0, kKeySizes.size() - 1)];
    for (size_t in_offset = 0; in_offset < 64; ++in_offset) {
      for (size_t out_offset = 0; out_offset < 64; ++out_offset) {
        Compare(kernel, key_len, std::max<size_t>(16, RandomLength(kernel, 700)),
                Placement{in_offset, out_offset, false}, false);
        if (HasFatalFailure()) return;
      }
      Compare(kernel, key_len, std::max<size_t>(16, RandomLength(kernel, 700)),
              Placement{in_offset, in_offset, true}, false);
      if (HasFatalFailure()) return;
    }
  }
}

AESMUX_INSTANTIATE_FOR_ALL_TIERS(CrossTierTest);

}  // namespace
}  // namespace aesmux::kernels::testing
