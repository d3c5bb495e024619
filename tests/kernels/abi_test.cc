// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
// Every kernel honours the SysV ABI (rbx, rbp, r12..r15 preserved, direction
// flag clear) and leaves no key material, data or keystream in vector
// registers: on return every 16-byte lane of every vector register is either
// untouched or zero. On a CPU with AVX-512 that covers zmm0..zmm31 at full
// width (the VAES tiers' upper lanes and zmm16..zmm31), otherwise xmm0..15.
// Lengths are chosen to run the main loops and every tail step.
#include <algorithm>
#include <cstring>
#include <type_traits>

#include "tests/kernels/test_support.h"

extern "C" uint32_t aesmux_test_call_checked(const void *fn,
                                             const uint64_t args[8],
                                             uint8_t xmm_after[256]);
extern "C" uint32_t aesmux_test_call_checked_zmm(const void *fn,
                                                 const uint64_t args[8],
                                                 uint8_t zmm_after[2048]);

namespace aesmux::kernels::testing {
namespace {

template <typename T>
uint64_t Arg(T value) {
  if constexpr (std::is_pointer_v<T>) {
    return reinterpret_cast<uint64_t>(value);
  } else {
    return static_cast<uint64_t>(value);
  }
}

class AbiTest : public TierTest {
 protected:
  // Calls `fn` through the trampoline and checks what it left behind.
  template <typename Fn, typename... Args>
  void CallChecked(const char *what, Fn *fn, Args... args) {
    static_assert(sizeof...(Args) <= 8);
    uint64_t regs[8] = {Arg(args)...};
    const bool zmm = (DetectCpuFeatures() & kAvx512f) != 0;
    const int num_regs = zmm ? 32 : 16;
    const int reg_bytes = zmm ? 64 : 16;
    uint8_t after[2048];
    const uint32_t clobbered =
        zmm ? aesmux_test_call_checked_zmm(reinterpret_cast<const void *>(fn),
                                           regs, after)
            : aesmux_test_call_checked(reinterpret_cast<const void *>(fn),
                                       regs, after);
    EXPECT_EQ(clobbered, 0u)
        << what << ": callee-saved registers changed (bits: rbx, rbp, r12, "
        << "r13, r14, r15, DF)";
    for (int r = 0; r < num_regs; ++r) {
      for (int lane = 0; lane < reg_bytes / 16; ++lane) {
        const std::span<const uint8_t> chunk(after + reg_bytes * r + 16 * lane,
                                             16);
        const bool untouched = std::all_of(
            chunk.begin(), chunk.end(), [](uint8_t b) { return b == 0xff; });
        const bool zero = std::all_of(chunk.begin(), chunk.end(),
                                      [](uint8_t b) { return b == 0; });
        EXPECT_TRUE(untouched || zero)
            << what << " left " << (zmm ? "zmm" : "xmm") << r << " lane "
            << lane << " = " << Hex(chunk);
      }
    }
  }
};

TEST_P(AbiTest, EveryKernelPreservesRegistersAndClearsVectors) {
  for (size_t key_len : kKeySizes) {
    SCOPED_TRACE(::testing::Message() << "key_len=" << key_len);
    const Bytes key = rng_.RandomBytes(key_len);
    aesmux_aes_key enc{}, dec{};
    CallChecked("expand_key", ops().expand_key, &enc, key.data(), key.size());
    CallChecked("decrypt_key", ops().decrypt_key, &dec, &enc);
    aesmux_gcm_key gkey{};
    CallChecked("gcm_init", ops().gcm_init, &gkey, &enc);

    // 67 blocks: eight 8-vector loops of ymm plus a partial vector, four
    // 16-block loops of zmm and a tail of 3, and so on for every tier's
    // loop and tail steps.
    const size_t len = 16 * 67;
    Bytes in = rng_.RandomBytes(len + 5), out(len + 5);
    uint8_t iv[16] = {}, xi[16] = {};
    CallChecked("ecb_encrypt", ops().ecb_encrypt, &enc, out.data(), in.data(),
                len);
    CallChecked("ecb_decrypt", ops().ecb_decrypt, &dec, out.data(), in.data(),
                len);
    CallChecked("cbc_encrypt", ops().cbc_encrypt, &enc, iv, out.data(),
                in.data(), len);
    CallChecked("cbc_decrypt", ops().cbc_decrypt, &dec, iv, out.data(),
                in.data(), len);
    CallChecked("ctr_crypt", ops().ctr_crypt, &enc, iv, out.data(), in.data(),
                len);
    for (size_t xts_len : {len, len + 5}) {
      CallChecked("xts_encrypt", ops().xts_encrypt, &enc, iv, out.data(),
                  in.data(), xts_len);
      CallChecked("xts_decrypt", ops().xts_decrypt, &dec, iv, out.data(),
                  in.data(), xts_len);
    }
    // GCM also through each of its paths: one block; messages shorter
    // than a group (9 blocks first, which completes the AVX2 tier's powers
    // of H on that path; 2, 3 and 5: partial and 1-, 2-vector steps); on
    // AVX-512 a run of one 4-vector step, 16-block groups, 32-block groups
    // (round keys in zmm21..31) and a run of 2-, 1- and partial-vector
    // steps after them.
    Bytes long_in = rng_.RandomBytes(16 * 143), long_out(16 * 143);
    for (size_t blocks : {9, 1, 2, 3, 5, 16, 67, 143}) {
      CallChecked("ghash", ops().ghash, &gkey, xi, long_in.data(), 16 * blocks);
      CallChecked("gcm_encrypt", ops().gcm_encrypt, &enc, &gkey, iv, xi,
                  long_out.data(), long_in.data(), 16 * blocks);
      CallChecked("gcm_decrypt", ops().gcm_decrypt, &enc, &gkey, iv, xi,
                  long_out.data(), long_in.data(), 16 * blocks);
    }
  }
}

// The trampoline itself must be able to see a clobber, or the test above
// proves nothing: a function that zeroes rbx and leaves data in xmm3.
extern "C" void aesmux_test_misbehave();
extern "C" void aesmux_test_misbehave_zmm();

TEST_P(AbiTest, TrampolineDetectsViolations) {
  uint64_t regs[8] = {};
  uint8_t xmm[256];
  const uint32_t clobbered = aesmux_test_call_checked(
      reinterpret_cast<const void *>(aesmux_test_misbehave), regs, xmm);
  EXPECT_EQ(clobbered, 1u);
  EXPECT_EQ(xmm[16 * 3], 0x42);
  if ((DetectCpuFeatures() & kAvx512f) == 0) return;
  uint8_t zmm[2048];
  EXPECT_EQ(aesmux_test_call_checked_zmm(
                reinterpret_cast<const void *>(aesmux_test_misbehave_zmm), regs,
                zmm),
            1u);
  EXPECT_EQ(zmm[64 * 17 + 48], 0x42);
}

AESMUX_INSTANTIATE_FOR_ALL_TIERS(AbiTest);

}  // namespace
}  // namespace aesmux::kernels::testing
