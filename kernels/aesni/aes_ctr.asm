;; SPDX-License-Identifier: Apache-2.0
;; Copyright 2026 The aesmux Authors
;; aes_ctr.asm: AES-CTR with a 128-bit big-endian counter for the aesni tier
;; (algorithm in include/ctr.inc).

%include "common.inc"
%include "ctr.inc"

section .text

;; void aesmux_ctr_crypt_aesni(const aesmux_aes_key *enc, uint8_t counter[16],
;;                             uint8_t *out, const uint8_t *in, size_t len);
FUNC_BEGIN aesmux_ctr_crypt_aesni
        CTR_FUNC
FUNC_END aesmux_ctr_crypt_aesni
