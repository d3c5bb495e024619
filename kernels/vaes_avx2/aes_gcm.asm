;; SPDX-License-Identifier: Apache-2.0
;; Copyright 2026 The aesmux Authors
;; aes_gcm.asm: GHASH and AES-GCM bulk kernels for the vaes_avx2 tier (VAES and
;; VPCLMULQDQ on ymm, AVX2); the algorithm is in include/vaes_gcm.inc.

%define VEC_BITS 256
%include "common.inc"
%include "vaes_gcm.inc"

section .text

;; Local helper of the entry points below: completes the table of powers of
;; H on the first call that needs all of it.
VGCM_COMPLETE_FUNC

;; void aesmux_gcm_init_vaes_avx2(aesmux_gcm_key *gkey,
;;                                const aesmux_aes_key *enc);
FUNC_BEGIN aesmux_gcm_init_vaes_avx2
        VGCM_INIT_FUNC
FUNC_END aesmux_gcm_init_vaes_avx2

;; void aesmux_ghash_vaes_avx2(aesmux_gcm_key *gkey, uint8_t xi[16],
;;                             const uint8_t *in, size_t len);
FUNC_BEGIN aesmux_ghash_vaes_avx2
        VGHASH_FUNC
FUNC_END aesmux_ghash_vaes_avx2

;; void aesmux_gcm_encrypt_vaes_avx2(const aesmux_aes_key *enc,
;;                                   aesmux_gcm_key *gkey, uint8_t ctr[16],
;;                                   uint8_t xi[16], uint8_t *out,
;;                                   const uint8_t *in, size_t len);
FUNC_BEGIN aesmux_gcm_encrypt_vaes_avx2
        VGCM_FUNC enc
FUNC_END aesmux_gcm_encrypt_vaes_avx2

;; void aesmux_gcm_decrypt_vaes_avx2(const aesmux_aes_key *enc,
;;                                   aesmux_gcm_key *gkey, uint8_t ctr[16],
;;                                   uint8_t xi[16], uint8_t *out,
;;                                   const uint8_t *in, size_t len);
FUNC_BEGIN aesmux_gcm_decrypt_vaes_avx2
        VGCM_FUNC dec
FUNC_END aesmux_gcm_decrypt_vaes_avx2
