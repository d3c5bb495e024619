;; SPDX-License-Identifier: Apache-2.0
;; Copyright 2026 The aesmux Authors
;; aes_cbc.asm: AES-CBC for the aesni tier (algorithm in include/cbc.inc).

%include "common.inc"
%include "cbc.inc"

section .text

;; void aesmux_cbc_encrypt_aesni(const aesmux_aes_key *enc, uint8_t iv[16],
;;                               uint8_t *out, const uint8_t *in, size_t len);
FUNC_BEGIN aesmux_cbc_encrypt_aesni
        CBC_FUNC CBC_ENC_BODY, 5
FUNC_END aesmux_cbc_encrypt_aesni

;; void aesmux_cbc_decrypt_aesni(const aesmux_aes_key *dec, uint8_t iv[16],
;;                               uint8_t *out, const uint8_t *in, size_t len);
FUNC_BEGIN aesmux_cbc_decrypt_aesni
        CBC_FUNC CBC_DEC_BODY, 15
FUNC_END aesmux_cbc_decrypt_aesni
