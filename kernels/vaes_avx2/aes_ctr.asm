;; SPDX-License-Identifier: Apache-2.0
;; Copyright 2026 The aesmux Authors
;; aes_ctr.asm: AES-CTR with a 128-bit big-endian counter for the vaes_avx2
;; tier (VAES and VPCLMULQDQ on ymm, AVX2); the algorithm is in
;; include/vaes_ctr.inc.

%define VEC_BITS 256
%include "common.inc"
%include "vaes_ctr.inc"

section .text

;; void aesmux_ctr_crypt_vaes_avx2(const aesmux_aes_key *enc,
;;                                 uint8_t counter[16], uint8_t *out,
;;                                 const uint8_t *in, size_t len);
FUNC_BEGIN aesmux_ctr_crypt_vaes_avx2
        VCTR_FUNC
FUNC_END aesmux_ctr_crypt_vaes_avx2
