;; SPDX-License-Identifier: Apache-2.0
;; Copyright 2026 The aesmux Authors
;; aes_xts.asm: XTS-AES with ciphertext stealing for the aesni tier
;; (algorithm in include/xts.inc).

%include "common.inc"
%include "xts.inc"

section .text

;; void aesmux_xts_encrypt_aesni(const aesmux_aes_key *data_key,
;;                               const uint8_t tweak[16], uint8_t *out,
;;                               const uint8_t *in, size_t len);
FUNC_BEGIN aesmux_xts_encrypt_aesni
        XTS_FUNC enc
FUNC_END aesmux_xts_encrypt_aesni

;; void aesmux_xts_decrypt_aesni(const aesmux_aes_key *data_key,
;;                               const uint8_t tweak[16], uint8_t *out,
;;                               const uint8_t *in, size_t len);
FUNC_BEGIN aesmux_xts_decrypt_aesni
        XTS_FUNC dec
FUNC_END aesmux_xts_decrypt_aesni
