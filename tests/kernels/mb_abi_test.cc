// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
// The multi-buffer kernels honour the SysV ABI (rbx, rbp, r12..r15
// preserved, direction flag clear) and leave no key material, data or
// chaining value behind: on return every 16-byte lane of every vector
// register (zmm0..31 with AVX-512, ymm0..15 with AVX2, else xmm0..15) is
// untouched or zero, and the stack they used holds none of the lanes'
// round keys, plaintext, ciphertext or IVs.
#include <algorithm>
#include <cstring>
#include <set>
#include <vector>

#include "tests/kernels/mb_test_support.h"

extern "C" {
void aesmux_test_mb_misbehave_sse();
void aesmux_test_mb_misbehave_avx2();
}

namespace aesmux::kernels::testing {
namespace {

using Block = std::array<uint8_t, 16>;

// What a checked call left behind.
struct Leftovers {
  uint32_t clobbered = 0;  // bits: rbx, rbp, r12, r13, r14, r15, DF
  int reg_bytes = 16;      // per register: 16, 32 or 64
  std::vector<uint8_t> regs;
  std::vector<uint8_t> stack;
};

// Calls fn(args...) through the widest trampoline this CPU supports.
Leftovers CallChecked(const void *fn, const uint64_t args[6]) {
  const CpuFeatures cpu = DetectCpuFeatures();
  Leftovers result;
  result.stack.resize(4096);
  result.regs.resize(32 * 64);
  if (cpu & kAvx512f) {
    result.reg_bytes = 64;
    result.clobbered = aesmux_test_mb_call_checked_64(
        fn, args, result.regs.data(), result.stack.data());
    return result;
  }
  if (cpu & kAvx) {
    result.reg_bytes = 32;
    result.clobbered = aesmux_test_mb_call_checked_32(
        fn, args, result.regs.data(), result.stack.data());
  } else {
    result.clobbered = aesmux_test_mb_call_checked_16(
        fn, args, result.regs.data(), result.stack.data());
  }
  result.regs.resize(16 * result.reg_bytes);
  return result;
}

// Every 16-byte lane of every register that is neither all-ones (untouched)
// nor zero, named.
std::vector<std::string> DirtyRegisters(const Leftovers &left) {
  std::vector<std::string> dirty;
  const char *name = left.reg_bytes == 64   ? "zmm"
                     : left.reg_bytes == 32 ? "ymm"
                                            : "xmm";
  for (size_t offset = 0; offset < left.regs.size(); offset += 16) {
    const auto begin = left.regs.begin() + offset;
    const bool untouched =
        std::all_of(begin, begin + 16, [](uint8_t b) { return b == 0xff; });
    const bool zero =
        std::all_of(begin, begin + 16, [](uint8_t b) { return b == 0; });
    if (!untouched && !zero) {
      dirty.push_back(std::string(name) +
                      std::to_string(offset / left.reg_bytes) + " lane " +
                      std::to_string(offset % left.reg_bytes / 16) + " = " +
                      Hex({&*begin, 16}));
    }
  }
  return dirty;
}

// The secrets found anywhere (at any byte offset) in the stack snapshot.
size_t SecretsOnStack(const Leftovers &left, const std::set<Block> &secrets) {
  size_t found = 0;
  for (size_t i = 0; i + 16 <= left.stack.size(); ++i) {
    Block b;
    std::memcpy(b.data(), left.stack.data() + i, 16);
    found += secrets.count(b);
  }
  return found;
}

class MbAbiTest : public MbKernelParamTest {};

TEST_P(MbAbiTest, KernelsPreserveRegistersAndLeaveNoSecrets) {
  for (size_t key_len : kKeySizes) {
    // A length running several segments, whole chunks and a 3-block tail;
    // a mask with live and dead lanes in every vector.
    for (uint32_t mask : {all_lanes(), all_lanes() & 0x6b5au}) {
      SCOPED_TRACE(::testing::Message()
                   << "key_len=" << key_len << " mask=0x" << std::hex << mask);
      const size_t len = 16 * 47;
      auto lanes = std::make_unique<aesmux_mb_cbc_lanes>();
      std::vector<Bytes> data(16);
      std::set<Block> secrets;
      auto remember = [&](const uint8_t *p, size_t n) {
        for (size_t i = 0; i + 16 <= n; i += 16) {
          Block b;
          std::memcpy(b.data(), p + i, 16);
          secrets.insert(b);
        }
      };
      for (unsigned l = 0; l < width(); ++l) {
        const aesmux_aes_key key = ExpandKey(rng_.RandomBytes(key_len));
        LoadLaneKey(*lanes, l, key);
        remember(&key.round_keys[0][0], 16 * (key.rounds + 1));
        rng_.Fill({lanes->iv[l], 16});
        remember(lanes->iv[l], 16);
        data[l] = rng_.RandomBytes(len);
        remember(data[l].data(), len);
        lanes->in[l] = data[l].data();
        lanes->out[l] = data[l].data();
      }
      const uint64_t args[6] = {reinterpret_cast<uint64_t>(lanes.get()), mask,
                                len, 6 + key_len / 4};
      const Leftovers left =
          CallChecked(reinterpret_cast<const void *>(kernel().cbc_encrypt), args);
      for (unsigned l = 0; l < width(); ++l) {
        remember(data[l].data(), len);  // the ciphertext
      }
      EXPECT_EQ(left.clobbered, 0u)
          << "callee-saved registers changed (bits: rbx, rbp, r12, r13, r14, "
             "r15, DF)";
      for (const std::string &dirty : DirtyRegisters(left)) {
        ADD_FAILURE() << "left " << dirty;
      }
      EXPECT_EQ(SecretsOnStack(left, secrets), 0u);
    }
  }
}

// The checks above must be able to fail: a function that zeroes rbx, leaves
// data in a vector register and a secret on the stack.
TEST_P(MbAbiTest, TrampolinesDetectViolations) {
  const bool avx2 = (DetectCpuFeatures() & kAvx2) != 0;
  const uint64_t args[6] = {};
  const Leftovers left = CallChecked(
      reinterpret_cast<const void *>(avx2 ? aesmux_test_mb_misbehave_avx2
                                          : aesmux_test_mb_misbehave_sse),
      args);
  EXPECT_EQ(left.clobbered, 1u);
  EXPECT_EQ(DirtyRegisters(left).size(), 1u);
  Block secret;
  secret.fill(0x42);
  EXPECT_EQ(SecretsOnStack(left, {secret}), 1u);
}

AESMUX_INSTANTIATE_FOR_ALL_MB_KERNELS(MbAbiTest);

}  // namespace
}  // namespace aesmux::kernels::testing
