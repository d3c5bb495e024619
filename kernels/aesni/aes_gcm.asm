;; SPDX-License-Identifier: Apache-2.0
;; Copyright 2026 The aesmux Authors
;; aes_gcm.asm: GHASH and AES-GCM bulk kernels for the aesni tier
;; (algorithms in include/ghash.inc and include/gcm.inc).

%include "common.inc"
%include "gcm.inc"

section .text

;; Local helper shared by the entry points: GHASH_BLOCKS as a function.
;;   [in]        GH1_KEY (rsi): GHASH key; GH1_SRC (r11): data; GH1_LEFT
;;               (rax): number of blocks (> 0)
;;   [in/out]    GH1_ACC (xmm0): accumulator (byte-reversed)
;;   [clobbered] rax, r10, r11, xmm1..xmm5
        align   32
aesni_gcm_ghash_blocks:
        GHASH_BLOCKS
        ret

;; void aesmux_gcm_init_aesni(aesmux_gcm_key *gkey, const aesmux_aes_key *enc);
FUNC_BEGIN aesmux_gcm_init_aesni
        ;; H = E(K, 0^128): round key 0 is the whitened zero block.
        movdqa  xmm0, [rsi]
        mov     eax, [rsi + AES_KEY_ROUNDS]
        shl     eax, 4
        mov     ecx, 16
.round:
        aesenc  xmm0, [rsi + rcx]
        add     ecx, 16
        cmp     ecx, eax
        jb      .round
        aesenclast xmm0, [rsi + rax]
        GHASH_INIT_POWERS
        CLEAR_XMM 0, 4
        ret
FUNC_END aesmux_gcm_init_aesni

;; void aesmux_ghash_aesni(aesmux_gcm_key *gkey, uint8_t xi[16],
;;                         const uint8_t *in, size_t len);
FUNC_BEGIN aesmux_ghash_aesni
        shr     rcx, 4
        jz      .return
        ;; SysV: rdi gkey, rsi xi, rdx in, rcx len. The helper takes the
        ;; key in GH1_KEY (rsi), so xi moves to rdx once `in` is in GH1_SRC.
        movdqu  GH1_ACC, [rsi]
        pshufb  GH1_ACC, [aesmux_aesni_bswap128]
        mov     GH1_LEFT, rcx
        mov     GH1_SRC, rdx
        mov     rdx, rsi
        mov     GH1_KEY, rdi
        call    aesni_gcm_ghash_blocks
        pshufb  GH1_ACC, [aesmux_aesni_bswap128]
        movdqu  [rdx], GH1_ACC
        CLEAR_XMM 0, 5
.return:
        ret
FUNC_END aesmux_ghash_aesni

;; void aesmux_gcm_encrypt_aesni(const aesmux_aes_key *enc,
;;                               aesmux_gcm_key *gkey, uint8_t ctr[16],
;;                               uint8_t xi[16], uint8_t *out,
;;                               const uint8_t *in, size_t len);
FUNC_BEGIN aesmux_gcm_encrypt_aesni
        GCM_FUNC enc
FUNC_END aesmux_gcm_encrypt_aesni

;; void aesmux_gcm_decrypt_aesni(const aesmux_aes_key *enc,
;;                               aesmux_gcm_key *gkey, uint8_t ctr[16],
;;                               uint8_t xi[16], uint8_t *out,
;;                               const uint8_t *in, size_t len);
FUNC_BEGIN aesmux_gcm_decrypt_aesni
        GCM_FUNC dec
FUNC_END aesmux_gcm_decrypt_aesni
