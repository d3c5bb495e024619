;; SPDX-License-Identifier: Apache-2.0
;; Copyright 2026 The aesmux Authors
;; constants.asm: read-only constants shared by every tier's kernels, defined
;; once. Declarations with their meaning are in include/common.inc.

%define AESMUX_DEFINING_CONSTANTS
%include "common.inc"

%macro CONST 1-2 16
        global  %1:data hidden
        align   %2
%1:
%endmacro

section .rodata

;; Byte reversal: turns a big-endian 128-bit block into a little-endian
;; integer (counter blocks, GHASH operands) and back.
CONST aesmux_aesni_bswap128
        db      15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0

;; CTR increments for the byte-reversed counter: {k, 0} as qwords. The
;; first 2 or 4 entries, read as one vector, are the per-lane offsets of the
;; VAES tiers' counter vectors.
CONST aesmux_aesni_ctr_inc, 64
%assign k 0
%rep 17
        dq      k, 0
%assign k k + 1
%endrep

;; GCM increments for the byte-reversed counter block: {k, 0, 0, 0} as dwords
;; (the counter is the last 4 bytes, incremented modulo 2^32). Read as a
;; vector like aesmux_aesni_ctr_inc.
CONST aesmux_aesni_gcm_inc, 64
%assign k 0
%rep 17
        dd      k, 0, 0, 0
%assign k k + 1
%endrep

;; Montgomery folding constant for GHASH on byte-reversed operands: the low
;; qword x^57 + x^62 + x^63 multiplies the 64 bits being folded (see
;; include/ghash.inc).
CONST aesmux_aesni_ghash_poly
        dq      0xC200000000000000, 0

;; x^128 + x^127 + x^126 + x^121 + 1 without the x^128 term: reduces H * x.
CONST aesmux_aesni_ghash_hpoly
        dq      0x0000000000000001, 0xC200000000000000

;; XTS doubling: what a carry out of qword 1 (bit 127) adds to dword 0, and
;; what a carry out of qword 0 (bit 63) adds to dword 2.
CONST aesmux_aesni_xts_poly
        dd      0x87, 0, 1, 0

;; Key expansion: shuffles feeding AESENCLAST, whose ShiftRows is a no-op on a
;; block with four equal columns, so AESENCLAST(bcast(RotWord(w)), rcon)
;; computes SubWord(RotWord(w)) ^ rcon in every dword.
CONST aesmux_aesni_rot_word3
        db      13, 14, 15, 12, 13, 14, 15, 12, 13, 14, 15, 12, 13, 14, 15, 12
CONST aesmux_aesni_bcast_word3
        db      12, 13, 14, 15, 12, 13, 14, 15, 12, 13, 14, 15, 12, 13, 14, 15
CONST aesmux_aesni_rot_word1
        db      5, 6, 7, 4, 5, 6, 7, 4, 5, 6, 7, 4, 5, 6, 7, 4
CONST aesmux_aesni_rcon1
        dd      1, 1, 1, 1
CONST aesmux_aesni_rcon1b
        dd      0x1b, 0x1b, 0x1b, 0x1b

;; All ones, the source operand from which BZHI cuts opmasks.
CONST aesmux_vaes_all_ones
        dd      0xffffffff

;; XTS: per-qword shift counts that multiply 128-bit lane j by x^j (lane 0
;; by 1): left shifts, and the right shifts that recover the bits crossing
;; out of each qword (64: none).
CONST aesmux_vaes_xts_lane_shl, 64
        dq      0, 0, 1, 1, 2, 2, 3, 3
CONST aesmux_vaes_xts_lane_shr, 64
        dq      64, 64, 63, 63, 62, 62, 61, 61
;; GHASH folding constant and GCM counter steps in every lane of a vector
;; (the AVX2 tier reads the first two lanes).
CONST aesmux_vaes_ghash_poly_x4, 64
%rep 4
        dq      0xC200000000000000, 0
%endrep
CONST aesmux_vaes_gcm_inc2_x4, 64
%rep 4
        dd      2, 0, 0, 0
%endrep
CONST aesmux_vaes_gcm_inc4_x4, 64
%rep 4
        dd      4, 0, 0, 0
%endrep
;; GCM counter steps on big-endian counter blocks: row i adds i vectors'
;; worth of blocks to byte 15 (the low byte of the 32-bit counter) of every
;; lane, for VPADDD when no carry leaves that byte; one row per vector of a
;; group and one for the next group (vaes_gcm.inc, VGCM_COUNTERS_FAST).
CONST aesmux_vaes_gcm_be_step_x4, 64
%assign i 0
%rep 9
%rep 4
        dd      0, 0, 0, (4*i) << 24
%endrep
%assign i i + 1
%endrep
;; Lane j of a big-endian counter block vector: j added to byte 15, for
;; the first counter vector when no carry leaves that byte.
CONST aesmux_vaes_gcm_be_lanes_x4, 64
%assign j 0
%rep 4
        dd      0, 0, 0, j << 24
%assign j j + 1
%endrep
CONST aesmux_vaes_gcm_be_step_x2, 64
%assign i 0
%rep 9
%rep 2
        dd      0, 0, 0, (2*i) << 24
%endrep
%assign i i + 1
%endrep
;; The byte reversal in every lane of a vector, for memory operands.
CONST aesmux_vaes_bswap_x4, 64
%rep 4
        db      15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0
%endrep
