;; SPDX-License-Identifier: Apache-2.0
;; Copyright 2026 The aesmux Authors
;; aes_cbc.asm: AES-CBC for the vaes_avx512 tier (VAES and VPCLMULQDQ on zmm,
;; AVX-512F/BW/VL); the algorithm is in include/vaes_cbc.inc.

%define VEC_BITS 512
%include "common.inc"
%include "vaes_cbc.inc"

section .text

;; void aesmux_cbc_encrypt_vaes_avx512(const aesmux_aes_key *enc,
;;                                     uint8_t iv[16], uint8_t *out,
;;                                     const uint8_t *in, size_t len);
FUNC_BEGIN aesmux_cbc_encrypt_vaes_avx512
        VCBC_FUNC CBC_ENC_BODY, 5
FUNC_END aesmux_cbc_encrypt_vaes_avx512

;; void aesmux_cbc_decrypt_vaes_avx512(const aesmux_aes_key *dec,
;;                                     uint8_t iv[16], uint8_t *out,
;;                                     const uint8_t *in, size_t len);
FUNC_BEGIN aesmux_cbc_decrypt_vaes_avx512
        SHORT_TO_AVX2 r8, 144, aesmux_cbc_decrypt_vaes_avx2
        VCBC_FUNC VCBC_DEC_BODY, 13
FUNC_END aesmux_cbc_decrypt_vaes_avx512
