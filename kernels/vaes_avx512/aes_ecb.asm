;; SPDX-License-Identifier: Apache-2.0
;; Copyright 2026 The aesmux Authors
;; aes_ecb.asm: AES-ECB for the vaes_avx512 tier (VAES and VPCLMULQDQ on zmm,
;; AVX-512F/BW/VL); the algorithm is in include/vaes_ecb.inc.

%define VEC_BITS 512
%include "common.inc"
%include "vaes_ecb.inc"

section .text

;; void aesmux_ecb_encrypt_vaes_avx512(const aesmux_aes_key *enc, uint8_t *out,
;;                                     const uint8_t *in, size_t len);
FUNC_BEGIN aesmux_ecb_encrypt_vaes_avx512
        SHORT_TO_AVX2 rcx, 144, aesmux_ecb_encrypt_vaes_avx2
        VECB_FUNC enc
FUNC_END aesmux_ecb_encrypt_vaes_avx512

;; void aesmux_ecb_decrypt_vaes_avx512(const aesmux_aes_key *dec, uint8_t *out,
;;                                     const uint8_t *in, size_t len);
FUNC_BEGIN aesmux_ecb_decrypt_vaes_avx512
        SHORT_TO_AVX2 rcx, 144, aesmux_ecb_decrypt_vaes_avx2
        VECB_FUNC dec
FUNC_END aesmux_ecb_decrypt_vaes_avx512
