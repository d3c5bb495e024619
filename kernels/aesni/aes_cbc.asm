;; aes_cbc.asm: AES-CBC for the aesni tier (algorithm in include/cbc.inc).

%include "common.inc"
%include "cbc.inc"

section .text

;; void aesmux_cbc_encrypt_aesni(const aesmux_aes_key *enc, uint8_t iv[16],
;;                               uint8_t *out, const uint8_t *in, size_t len);
FUNC_BEGIN aesmux_cbc_encrypt_aesni
        shr     r8, 4
        jz      .return
        DISPATCH_ROUNDS rdi, CBC_ENC_BODY
        CLEAR_XMM 0, 5
.return:
        ret
FUNC_END aesmux_cbc_encrypt_aesni

;; void aesmux_cbc_decrypt_aesni(const aesmux_aes_key *dec, uint8_t iv[16],
;;                               uint8_t *out, const uint8_t *in, size_t len);
FUNC_BEGIN aesmux_cbc_decrypt_aesni
        shr     r8, 4
        jz      .return
        DISPATCH_ROUNDS rdi, CBC_DEC_BODY
        CLEAR_XMM 0, 12
.return:
        ret
FUNC_END aesmux_cbc_decrypt_aesni
