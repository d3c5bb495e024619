// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The aesmux Authors
// The inventory of aesmux's SIMD kernels: every entry point written in nasm,
// declared once, with its contract.
//
// Conventions shared by every kernel:
// - Parameter order is key material, chaining state, output, input, length.
// - Lengths are in bytes. Bulk kernels (ECB, CBC, CTR, GCM) take whole
//   blocks only: `len` is a multiple of 16 (0 is allowed and does nothing).
//   XTS takes any `len` >= 16 and does ciphertext stealing itself.
// - `out` may equal `in` (in place); partial overlap is not allowed.
// - No alignment is required of `out`, `in`, the IV or the counter. The key
//   structures below are 64-byte aligned.
// - Chaining state (CBC IV, CTR counter, GHASH accumulator) is read on entry
//   and written back on return, so consecutive calls continue one stream.
// - Kernels never fail and never allocate; they clear key-bearing vector
//   registers before returning.
//
// Each kernel shape is declared once, as a function type with its contract
// (aesmux_<shape>_fn); the entry points are declared with it, named
// aesmux_<operation>_<tier>, and the tier table in tiers.h maps a tier name
// to its set of them. This header must stay valid C.
#ifndef AESMUX_KERNELS_KERNELS_H_
#define AESMUX_KERNELS_KERNELS_H_

// Layers (DEVELOPERS.md): only what links aesmux_kernels includes this.
#if defined(AESMUX_LAYER) && !defined(AESMUX_SEES_kernels)
#error "kernels/kernels.h belongs to a layer above the one that includes it"
#endif

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
#define AESMUX_ALIGNED(n) alignas(n)
extern "C" {
#else
#define AESMUX_ALIGNED(n) _Alignas(n)
#endif

// An expanded AES key schedule: `rounds` + 1 round keys of 16 bytes in the
// byte order of the FIPS-197 state (round_keys[0] is the cipher key for
// AES-128). A decryption schedule holds the "equivalent inverse cipher" keys
// (InvMixColumns applied to rounds 1..rounds-1) in decryption order, as AESDEC
// expects. rounds is 10, 12 or 14. Aligned to 16 bytes, which the kernels'
// movdqa loads need and which keeps every round key within one cache line; no
// more, because every keyed context holds one and pays for padding
// (BENCHMARKS.md, "What does loading aesmux cost: start-up and memory?").
typedef struct aesmux_aes_key {
  AESMUX_ALIGNED(16) uint8_t round_keys[15][16];
  uint32_t rounds;
} aesmux_aes_key;

// GHASH key material for one GCM key, precomputed by a tier's gcm_init and
// only meaningful to kernels of that same tier (each tier chooses its own
// layout of powers of H). A tier's kernels read and write only the first
// AESMUX_GCM_KEY_BYTES_<TIER> bytes, so a key meant for one tier may live in
// that many bytes (64-byte aligned) rather than in the whole struct, which is
// as large as the largest tier's: every keyed GCM context holds one, and the
// aesni tier's 8 powers of H and their halves need under half of the AVX-512
// tier's 32 powers (BENCHMARKS.md, "What does loading aesmux cost: start-up
// and memory?"). A tier may fill it in two stages: gcm_init computes what
// short inputs need, and ghash, gcm_encrypt and gcm_decrypt complete it on the
// first longer input, which is why they take it writable. A copy of a tier's
// bytes is a valid key in whatever stage it was copied.
//   aesni:       H^1..H^8 and their Karatsuba halves (kernels/include/ghash.inc)
//   vaes_avx2:   H^1..H^16, a zero vector, a flag (the kernels compute the
//                powers' Karatsuba halves per call)
//   vaes_avx512: H^1..H^32, the same (kernels/include/vaes_ghash.inc)
#define AESMUX_GCM_KEY_BYTES_AESNI 256
#define AESMUX_GCM_KEY_BYTES_VAES_AVX2 292
#define AESMUX_GCM_KEY_BYTES_VAES_AVX512 580
typedef struct aesmux_gcm_key {
  AESMUX_ALIGNED(64) uint8_t opaque[AESMUX_GCM_KEY_BYTES_VAES_AVX512];
} aesmux_gcm_key;

// ---------------------------------------------------------------------------
// The kernels by shape. Each shape is a function type with its contract;
// every tier implements each one (tiers.h lists a tier's entry points).
// ---------------------------------------------------------------------------

// Expands a 16-, 24- or 32-byte `key` into the encryption schedule `enc`.
// `key_len` must be 16, 24 or 32.
typedef void aesmux_expand_key_fn(aesmux_aes_key *enc, const uint8_t *key,
                                  size_t key_len);

// Derives the decryption schedule `dec` from the encryption schedule `enc`.
typedef void aesmux_decrypt_key_fn(aesmux_aes_key *dec,
                                   const aesmux_aes_key *enc);

// ECB with an encryption schedule (encrypt) or a decryption schedule
// (decrypt).
typedef void aesmux_ecb_fn(const aesmux_aes_key *key, uint8_t *out,
                           const uint8_t *in, size_t len);

// CBC: `iv` is the chaining value; on return it holds the last ciphertext
// block (the next call's IV). `key` is an encryption schedule for
// encryption, a decryption schedule for decryption.
typedef void aesmux_cbc_fn(const aesmux_aes_key *key, uint8_t iv[16],
                           uint8_t *out, const uint8_t *in, size_t len);

// CTR with a full 128-bit big-endian counter (carries propagate through all
// 16 bytes, wrapping at 2^128). On return `counter` is the next unused
// counter block.
typedef void aesmux_ctr_fn(const aesmux_aes_key *enc, uint8_t counter[16],
                           uint8_t *out, const uint8_t *in, size_t len);

// XTS (IEEE 1619) over one data unit of `len` >= 16 bytes with ciphertext
// stealing when `len` is not a multiple of 16. `data_key` is key 1 (an
// encryption schedule for encrypt, a decryption schedule for decrypt);
// `tweak` is the first block's tweak T_0 = E(key 2, IV), already encrypted
// (key 2's encryption schedule, of the data key's size), and is not
// modified. The caller encrypts it: an OpenSSL context keeps its IV from
// one data unit to the next, so T_0 is computed once per IV instead of
// once per call, where its latency stood before every block
// (BENCHMARKS.md, "How fast is aesmux against OpenSSL's default
// provider?").
typedef void aesmux_xts_fn(const aesmux_aes_key *data_key,
                           const uint8_t tweak[16], uint8_t *out,
                           const uint8_t *in, size_t len);

// GCM. `xi` is the GHASH accumulator in the byte order of the GCM
// specification (the tag is xi XOR E(K, J0)), so accumulators are portable
// between tiers. `ctr` is the current counter block; its last 4 bytes are a
// big-endian counter incremented modulo 2^32 per block, as GCM specifies.
//
// gcm_init computes H = E(K, 0^128) from `enc` and this tier's powers of H,
// leaving nothing derived from a key `gkey` held before.
typedef void aesmux_gcm_init_fn(aesmux_gcm_key *gkey,
                                const aesmux_aes_key *enc);
// ghash folds `len` bytes (whole blocks) of `in` into `xi`.
typedef void aesmux_ghash_fn(aesmux_gcm_key *gkey, uint8_t xi[16],
                             const uint8_t *in, size_t len);
// gcm_encrypt encrypts `in` in CTR mode from `ctr` and folds the ciphertext
// into `xi`; gcm_decrypt folds the ciphertext `in` into `xi` and decrypts it
// in CTR mode from `ctr`.
typedef void aesmux_gcm_fn(const aesmux_aes_key *enc, aesmux_gcm_key *gkey,
                           uint8_t ctr[16], uint8_t xi[16], uint8_t *out,
                           const uint8_t *in, size_t len);

// The entry points of tiers "aesni" (AES-NI + PCLMULQDQ + SSE4.1, xmm
// registers), "vaes_avx2" (VAES + VPCLMULQDQ on ymm, AVX2) and
// "vaes_avx512" (the same on zmm, AVX-512F/BW/VL). Key expansion is the
// aesni tier's in all three: the schedule layout is shared and one 128-bit
// recurrence gains nothing from wider vectors.
aesmux_expand_key_fn aesmux_aes_expand_key_aesni;
aesmux_decrypt_key_fn aesmux_aes_decrypt_key_aesni;
aesmux_ecb_fn aesmux_ecb_encrypt_aesni, aesmux_ecb_decrypt_aesni,
    aesmux_ecb_encrypt_vaes_avx2, aesmux_ecb_decrypt_vaes_avx2,
    aesmux_ecb_encrypt_vaes_avx512, aesmux_ecb_decrypt_vaes_avx512;
aesmux_cbc_fn aesmux_cbc_encrypt_aesni, aesmux_cbc_decrypt_aesni,
    aesmux_cbc_encrypt_vaes_avx2, aesmux_cbc_decrypt_vaes_avx2,
    aesmux_cbc_encrypt_vaes_avx512, aesmux_cbc_decrypt_vaes_avx512;
aesmux_ctr_fn aesmux_ctr_crypt_aesni, aesmux_ctr_crypt_vaes_avx2,
    aesmux_ctr_crypt_vaes_avx512;
aesmux_xts_fn aesmux_xts_encrypt_aesni, aesmux_xts_decrypt_aesni,
    aesmux_xts_encrypt_vaes_avx2, aesmux_xts_decrypt_vaes_avx2,
    aesmux_xts_encrypt_vaes_avx512, aesmux_xts_decrypt_vaes_avx512;
aesmux_gcm_init_fn aesmux_gcm_init_aesni, aesmux_gcm_init_vaes_avx2,
    aesmux_gcm_init_vaes_avx512;
aesmux_ghash_fn aesmux_ghash_aesni, aesmux_ghash_vaes_avx2,
    aesmux_ghash_vaes_avx512;
aesmux_gcm_fn aesmux_gcm_encrypt_aesni, aesmux_gcm_decrypt_aesni,
    aesmux_gcm_encrypt_vaes_avx2, aesmux_gcm_decrypt_vaes_avx2,
    aesmux_gcm_encrypt_vaes_avx512, aesmux_gcm_decrypt_vaes_avx512;

// ---------------------------------------------------------------------------
// Multi-buffer CBC encryption (kernels/mb/): up to 16 independent streams
// (lanes), each with its own key of one key size, IV, input and output,
// advanced together one block per lane per step, so that one stream's serial
// chain hides behind the others'. The lane manager (kernels/mb/
// lane_manager.h) fills the lanes; these are its kernels.
// ---------------------------------------------------------------------------

// The lanes of one multi-buffer kernel call. 64-byte aligned; 4352 bytes.
// Lane l's round key r is round_keys[r][l]: the table is transposed so that
// round r of the lanes sharing one vector register is one aligned row slice,
// used directly as the memory operand of (V)AESENC (16 bytes = 1 lane for
// the xmm kernels, 32 = 2 lanes for ymm, 64 = 4 lanes for zmm).
typedef struct aesmux_mb_cbc_lanes {
  const uint8_t *in[16];
  uint8_t *out[16];
  AESMUX_ALIGNED(64) uint8_t iv[16][16];              // chaining values
  AESMUX_ALIGNED(64) uint8_t round_keys[15][16][16];  // [round][lane]
} aesmux_mb_cbc_lanes;

// A multi-buffer CBC-encryption kernel. Advances every lane whose bit is
// set in `lane_mask` (bits 0..N-1 for an
// xN kernel; higher bits are ignored) by `len` bytes: encrypts
// in[l][0, len) into out[l][0, len) in CBC mode from iv[l] with round keys
// round_keys[0..rounds][l], then advances in[l] and out[l] by `len` and
// leaves the last ciphertext block in iv[l]. `len` is a multiple of 16 (0
// does nothing); `rounds` is 10, 12 or 14 for every lane.
//
// Live lanes' buffers may be in place (out == in) but must not overlap other
// lanes' buffers. The kernels use under 1 KiB of stack. Dead lanes (bit
// clear, and every lane from N on): their in/out pointers are never
// dereferenced, and their in, out and iv entries are never written; the
// kernels may read their slots of the struct (whole rows of round_keys and
// iv, and the in/out entries of up to 8 lanes) and discard what they
// compute from them.
//
// Each tier has kernels of 4 and 8 lanes besides its widest, for batches
// whose busy lanes are all low: they cost less per call (fewer vectors per
// step), not less per lane.
typedef void aesmux_mb_cbc_encrypt_fn(aesmux_mb_cbc_lanes *lanes,
                                      uint32_t lane_mask, size_t len,
                                      uint32_t rounds);

aesmux_mb_cbc_encrypt_fn aesmux_cbc_encrypt_x4_aesni,
    aesmux_cbc_encrypt_x8_aesni, aesmux_cbc_encrypt_x4_vaes_avx2,
    aesmux_cbc_encrypt_x8_vaes_avx2, aesmux_cbc_encrypt_x16_vaes_avx2,
    aesmux_cbc_encrypt_x4_vaes_avx512, aesmux_cbc_encrypt_x8_vaes_avx512,
    aesmux_cbc_encrypt_x16_vaes_avx512;

#ifdef __cplusplus
}  // extern "C"
#endif

#endif  // AESMUX_KERNELS_KERNELS_H_
