;; SPDX-License-Identifier: Apache-2.0
;; Copyright 2026 The aesmux Authors
;; aes_ecb.asm: AES-ECB for the aesni tier (algorithm in include/ecb.inc).

%include "common.inc"
%include "ecb.inc"

section .text

;; void aesmux_ecb_encrypt_aesni(const aesmux_aes_key *enc, uint8_t *out,
;;                               const uint8_t *in, size_t len);
FUNC_BEGIN aesmux_ecb_encrypt_aesni
        ECB_FUNC enc
FUNC_END aesmux_ecb_encrypt_aesni

;; void aesmux_ecb_decrypt_aesni(const aesmux_aes_key *dec, uint8_t *out,
;;                               const uint8_t *in, size_t len);
FUNC_BEGIN aesmux_ecb_decrypt_aesni
        ECB_FUNC dec
FUNC_END aesmux_ecb_decrypt_aesni
