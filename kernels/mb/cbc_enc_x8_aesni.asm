;; SPDX-License-Identifier: Apache-2.0
;; Copyright 2026 The aesmux Authors
;; cbc_enc_x8_aesni.asm: multi-buffer CBC encryption, 8 lanes in 8 xmm
;; registers (legacy SSE AES-NI; algorithm in include/mb_cbc.inc).

%define MB_W 1
%define MB_NV 8
%include "common.inc"
%include "mb_cbc.inc"

section .text

;; void aesmux_cbc_encrypt_x8_aesni(aesmux_mb_cbc_lanes *lanes,
;;                                  uint32_t lane_mask, size_t len,
;;                                  uint32_t rounds);
FUNC_BEGIN aesmux_cbc_encrypt_x8_aesni
        MB_CBC_FUNC
FUNC_END aesmux_cbc_encrypt_x8_aesni
