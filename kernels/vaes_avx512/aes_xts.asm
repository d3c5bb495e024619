;; SPDX-License-Identifier: Apache-2.0
;; Copyright 2026 The aesmux Authors
;; aes_xts.asm: XTS-AES with ciphertext stealing for the vaes_avx512 tier (VAES
;; and VPCLMULQDQ on zmm, AVX-512F/BW/VL); the algorithm is in
;; include/vaes_xts.inc.

%define VEC_BITS 512
%include "common.inc"
%include "vaes_xts.inc"

section .text

;; void aesmux_xts_encrypt_vaes_avx512(const aesmux_aes_key *data_key,
;;                                     const uint8_t tweak[16], uint8_t *out,
;;                                     const uint8_t *in, size_t len);
FUNC_BEGIN aesmux_xts_encrypt_vaes_avx512
        VXTS_FUNC enc
FUNC_END aesmux_xts_encrypt_vaes_avx512

;; void aesmux_xts_decrypt_vaes_avx512(const aesmux_aes_key *data_key,
;;                                     const uint8_t tweak[16], uint8_t *out,
;;                                     const uint8_t *in, size_t len);
FUNC_BEGIN aesmux_xts_decrypt_vaes_avx512
        VXTS_FUNC dec
FUNC_END aesmux_xts_decrypt_vaes_avx512
