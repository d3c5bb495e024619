;; SPDX-License-Identifier: Apache-2.0
;; Copyright 2026 The aesmux Authors
;; cbc_enc_x4_vaes_avx512.asm: multi-buffer CBC encryption, 4 lanes in one zmm
;; register (VAES, AVX-512; algorithm in include/mb_cbc.inc), for batches
;; whose busy lanes are all below 4.

%define MB_W 4
%define MB_NV 1
%include "common.inc"
%include "mb_cbc.inc"

section .text

;; void aesmux_cbc_encrypt_x4_vaes_avx512(aesmux_mb_cbc_lanes *lanes,
;;                                        uint32_t lane_mask, size_t len,
;;                                        uint32_t rounds);
FUNC_BEGIN aesmux_cbc_encrypt_x4_vaes_avx512
        MB_CBC_FUNC
FUNC_END aesmux_cbc_encrypt_x4_vaes_avx512
