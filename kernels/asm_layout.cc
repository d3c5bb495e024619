// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
// Prints layout.inc, the one list of the offsets and sizes of kernels.h's
// structs that the nasm kernels use: kernels/CMakeLists.txt runs it at build
// time and the kernels %include its output, so no offset is typed by hand in
// assembly. The layout facts the kernels rely on without naming them (round
// key r at [key + 16*r], the alignment of aligned loads) are checked here.
#include <cstddef>
#include <cstdio>

#include "kernels/kernels.h"

namespace {

struct Entry {
  const char *name;
  size_t value;
  const char *what;
};

constexpr Entry kLayout[] = {
    {"AES_KEY_ROUNDS", offsetof(aesmux_aes_key, rounds),
     "offsetof(aesmux_aes_key, rounds)"},
    {"GCM_KEY_BYTES_AESNI", AESMUX_GCM_KEY_BYTES_AESNI,
     "AESMUX_GCM_KEY_BYTES_AESNI"},
    {"GCM_KEY_BYTES_VAES_AVX2", AESMUX_GCM_KEY_BYTES_VAES_AVX2,
     "AESMUX_GCM_KEY_BYTES_VAES_AVX2"},
    {"GCM_KEY_BYTES_VAES_AVX512", AESMUX_GCM_KEY_BYTES_VAES_AVX512,
     "AESMUX_GCM_KEY_BYTES_VAES_AVX512"},
    {"MB_IN", offsetof(aesmux_mb_cbc_lanes, in),
     "offsetof(aesmux_mb_cbc_lanes, in)"},
    {"MB_OUT", offsetof(aesmux_mb_cbc_lanes, out),
     "offsetof(aesmux_mb_cbc_lanes, out)"},
    {"MB_IV", offsetof(aesmux_mb_cbc_lanes, iv),
     "offsetof(aesmux_mb_cbc_lanes, iv)"},
    {"MB_KEYS", offsetof(aesmux_mb_cbc_lanes, round_keys),
     "offsetof(aesmux_mb_cbc_lanes, round_keys)"},
    {"MB_KEY_ROUND", sizeof(aesmux_mb_cbc_lanes{}.round_keys[0]),
     "bytes per round of round_keys: one row of 16 lanes"},
};

// Round key r is [key + 16*r], aligned for legacy-SSE memory operands.
static_assert(offsetof(aesmux_aes_key, round_keys) == 0);
static_assert(sizeof(aesmux_aes_key{}.round_keys[0]) == 16);
static_assert(alignof(aesmux_aes_key) % 16 == 0);
// The VAES GHASH tables are whole-vector aligned moves (VMOVA); the struct
// holds a key of any tier.
static_assert(alignof(aesmux_gcm_key) % 64 == 0);
static_assert(sizeof(aesmux_gcm_key) >= AESMUX_GCM_KEY_BYTES_AESNI);
static_assert(sizeof(aesmux_gcm_key) >= AESMUX_GCM_KEY_BYTES_VAES_AVX2);
static_assert(sizeof(aesmux_gcm_key) >= AESMUX_GCM_KEY_BYTES_VAES_AVX512);
// Lane l's pointers are [MB_IN/MB_OUT + 8*l], its IV [MB_IV + 16*l] and its
// round key r [MB_KEYS + MB_KEY_ROUND*r + 16*l]; the zmm kernels load IV and
// key rows of four lanes, and pointer rows of eight, as aligned vectors.
static_assert(sizeof(aesmux_mb_cbc_lanes{}.in[0]) == 8);
static_assert(sizeof(aesmux_mb_cbc_lanes{}.iv[0]) == 16);
static_assert(sizeof(aesmux_mb_cbc_lanes{}.round_keys[0][0]) == 16);
static_assert(alignof(aesmux_mb_cbc_lanes) % 64 == 0);
static_assert(offsetof(aesmux_mb_cbc_lanes, in) % 64 == 0);
static_assert(offsetof(aesmux_mb_cbc_lanes, out) % 64 == 0);
static_assert(offsetof(aesmux_mb_cbc_lanes, iv) % 64 == 0);
static_assert(offsetof(aesmux_mb_cbc_lanes, round_keys) % 64 == 0);

}  // namespace

int main() {
  std::printf(
      ";; layout.inc: generated at build time by kernels/asm_layout.cc from\n"
      ";; kernels/kernels.h; do not edit.\n"
      "%%ifndef AESMUX_LAYOUT_INC\n%%define AESMUX_LAYOUT_INC\n");
  for (const Entry &e : kLayout) {
    std::printf("%%define %-16s %-6zu ;; %s\n", e.name, e.value, e.what);
  }
  std::printf("%%endif\n");
  return 0;
}
