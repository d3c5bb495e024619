// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
// The GCM kernels leave no key material on the stack. The VAES tiers' GHASH
// keys hold the powers of H without their Karatsuba middle operands
// (lo ^ hi), which the stitched loops build in a stack frame for the call
// (kernels/include/vaes_gcm.inc, VGCM_HALVES_SETUP; so does AVX-512 GHASH)
// and must zero before they return: after every call, the 4096 bytes below
// the caller's stack pointer hold no power of H, no middle operand of one
// and no round key.
// Lengths run every path that builds the frame (groups, the AVX-512 tier's
// four-vector groups, runs after groups) and some that do not.
#include <array>
#include <cstring>
#include <set>
#include <vector>

#include "tests/kernels/test_support.h"

namespace aesmux::kernels::testing {
namespace {

using Block = std::array<uint8_t, 16>;

// One gcm_encrypt or gcm_decrypt call. The trampoline passes six register
// arguments and the kernels take seven, so it calls CallGcm with this.
struct GcmCall {
  decltype(TierOps::gcm_encrypt) fn;
  const aesmux_aes_key *enc;
  aesmux_gcm_key *gkey;
  uint8_t *ctr;
  uint8_t *xi;
  uint8_t *out;
  const uint8_t *in;
  size_t len;
};

void CallGcm(const GcmCall *call) {
  call->fn(call->enc, call->gkey, call->ctr, call->xi, call->out, call->in,
           call->len);
}

// The stack below the caller after fn(args), through the widest trampoline
// this CPU supports.
std::vector<uint8_t> StackAfter(const void *fn, const uint64_t args[6]) {
  const CpuFeatures cpu = DetectCpuFeatures();
  std::vector<uint8_t> regs(32 * 64), stack(4096);
  if (cpu & kAvx512f) {
    aesmux_test_mb_call_checked_64(fn, args, regs.data(), stack.data());
  } else if (cpu & kAvx) {
    aesmux_test_mb_call_checked_32(fn, args, regs.data(), stack.data());
  } else {
    aesmux_test_mb_call_checked_16(fn, args, regs.data(), stack.data());
  }
  return stack;
}

size_t SecretsIn(const std::vector<uint8_t> &stack,
                 const std::set<Block> &secrets) {
  size_t found = 0;
  for (size_t i = 0; i + 16 <= stack.size(); ++i) {
    Block b;
    std::memcpy(b.data(), stack.data() + i, 16);
    found += secrets.count(b);
  }
  return found;
}

class GcmStackTest : public TierTest {};

TEST_P(GcmStackTest, NoPowersOfHNorRoundKeysLeftOnTheStack) {
  for (size_t key_len : kKeySizes) {
    SCOPED_TRACE(::testing::Message() << "key_len=" << key_len);
    const aesmux_aes_key enc = EncryptKey(rng_.RandomBytes(key_len));
    aesmux_gcm_key gkey{};
    ops().gcm_init(&gkey, &enc);
    Bytes in = rng_.RandomBytes(16 * 143), out(16 * 143);
    uint8_t ctr[16] = {}, xi[16] = {};
    // A long call first completes the powers a tier computes late.
    ops().gcm_encrypt(&enc, &gkey, ctr, xi, out.data(), in.data(), in.size());

    std::set<Block> secrets;
    const Block zero{};
    for (size_t off = 0; off + 16 <= GetParam().gcm_key_bytes; off += 16) {
      Block power;
      std::memcpy(power.data(), gkey.opaque + off, 16);
      if (power == zero) continue;
      secrets.insert(power);
      uint64_t q[2];
      std::memcpy(q, power.data(), 16);
      const uint64_t middle[2] = {q[0] ^ q[1], q[0] ^ q[1]};
      Block operand;
      std::memcpy(operand.data(), middle, 16);
      // (The aesni tier stores the middle operands too: theirs are zero.)
      if (operand != zero) secrets.insert(operand);
    }
    for (uint32_t r = 0; r <= enc.rounds; ++r) {
      Block round_key;
      std::memcpy(round_key.data(), enc.round_keys[r], 16);
      secrets.insert(round_key);
    }

    for (size_t blocks : {2, 16, 20, 31, 32, 47, 48, 67, 84, 143}) {
      SCOPED_TRACE(::testing::Message() << blocks << " blocks");
      for (bool encrypt : {true, false}) {
        SCOPED_TRACE(encrypt ? "gcm_encrypt" : "gcm_decrypt");
        const GcmCall call{encrypt ? ops().gcm_encrypt : ops().gcm_decrypt,
                           &enc, &gkey, ctr, xi, out.data(), in.data(),
                           16 * blocks};
        const uint64_t args[6] = {reinterpret_cast<uint64_t>(&call)};
        EXPECT_EQ(SecretsIn(StackAfter(reinterpret_cast<const void *>(&CallGcm),
                                       args),
                            secrets),
                  0u);
      }
      SCOPED_TRACE("ghash");
      const uint64_t args[6] = {reinterpret_cast<uint64_t>(&gkey),
                                reinterpret_cast<uint64_t>(xi),
                                reinterpret_cast<uint64_t>(in.data()),
                                16 * blocks};
      EXPECT_EQ(SecretsIn(StackAfter(reinterpret_cast<const void *>(ops().ghash),
                                     args),
                          secrets),
                0u);
    }
  }
}

AESMUX_INSTANTIATE_FOR_ALL_TIERS(GcmStackTest);

}  // namespace
}  // namespace aesmux::kernels::testing
