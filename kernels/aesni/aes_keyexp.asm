;; SPDX-License-Identifier: Apache-2.0
;; Copyright 2026 The aesmux Authors
;; aes_keyexp.asm: AES key schedules for the aesni tier.

%include "common.inc"
%include "keyexp.inc"

section .text

;; void aesmux_aes_expand_key_aesni(aesmux_aes_key *enc, const uint8_t *key,
;;                                  size_t key_len);
FUNC_BEGIN aesmux_aes_expand_key_aesni
        cmp     rdx, 24
        je      .key192
        ja      .key256
        cmp     rdx, 16
        jne     .done
        KEYEXP_128 rdi, rsi
        jmp     .done
.key192:
        KEYEXP_192 rdi, rsi
        jmp     .done
.key256:
        cmp     rdx, 32
        jne     .done
        KEYEXP_256 rdi, rsi
.done:
        CLEAR_XMM 0, 7
        ret
FUNC_END aesmux_aes_expand_key_aesni

;; void aesmux_aes_decrypt_key_aesni(aesmux_aes_key *dec,
;;                                   const aesmux_aes_key *enc);
FUNC_BEGIN aesmux_aes_decrypt_key_aesni
        KEYEXP_INVERSE rdi, rsi
        CLEAR_XMM 0, 1
        ret
FUNC_END aesmux_aes_decrypt_key_aesni
