;; SPDX-License-Identifier: Apache-2.0
;; Copyright 2026 The aesmux Authors
;; constants.asm: read-only constants of the multi-buffer kernels, defined
;; once. Declarations with their meaning are in include/mb_cbc.inc.

%define AESMUX_MB_DEFINING_CONSTANTS
%include "common.inc"

section .rodata

;; Lane masks as vectors of pointers: qword i is 1 << i, so the pointer of
;; lane i tests against bit i of a lane mask broadcast to every qword.
        global  aesmux_mb_lane_bits:data hidden
        align   64
aesmux_mb_lane_bits:
%assign i 0
%rep 16
        dq      1 << i
%assign i i + 1
%endrep

;; Lane masks as vectors of blocks: qword i is 1 << (i / 2), so the 16 bytes of lane l
;; test against bit l of a lane mask broadcast to every qword (vptestmq on
;; zmm, vpand + vpcmpeqq on ymm).
        global  aesmux_mb_lane_bit_pairs:data hidden
        align   64
aesmux_mb_lane_bit_pairs:
%assign i 0
%rep 32
        dq      1 << (i / 2)
%assign i i + 1
%endrep
