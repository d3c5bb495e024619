;; SPDX-License-Identifier: Apache-2.0
;; Copyright 2026 The aesmux Authors
;; abi_call.asm: a trampoline that calls a kernel the way a C caller would and
;; reports what the callee left behind, for abi_test.cc.

%include "common.inc"

section .text

;; Values loaded into the callee-saved registers before the call.
%define CANARY_RBX 0x0123456789abcdef
%define CANARY_RBP 0x1111222233334444
%define CANARY_R12 0x5555666677778888
%define CANARY_R13 0x99990000aaaabbbb
%define CANARY_R14 0xccccddddeeeeffff
%define CANARY_R15 0x0f1e2d3c4b5a6978

;; CHECK_REG reg, canary, bit
;;   [in/out] eax: bit set when reg no longer holds canary
;;   [clobbered] r11
%macro CHECK_REG 3
        mov     r11, %2
        cmp     %1, r11
        je      %%same
        or      eax, %3
%%same:
%endmacro

;; CALL_CHECKED wide
;;   The body of the trampolines: wide = 0 fills and reports xmm0..xmm15
;;   (legacy SSE: the caller may lack AVX), wide = 1 zmm0..zmm31 (AVX-512),
;;   64 bytes per register.
%macro CALL_CHECKED 1
        push    rbx
        push    rbp
        push    r12
        push    r13
        push    r14
        push    r15
        push    rdx                     ;; regs_after; rsp is now 16-aligned
        mov     rax, rdi
        mov     r10, rsi
%assign i 0
%rep 16
%if %1
%assign j i + 16
        vpternlogd zmm%[i], zmm%[i], zmm%[i], 0xff
        vpternlogd zmm%[j], zmm%[j], zmm%[j], 0xff
%else
        pcmpeqd xmm%[i], xmm%[i]
%endif
%assign i i + 1
%endrep
        push    qword [r10 + 56]
        push    qword [r10 + 48]
        mov     rbx, CANARY_RBX
        mov     rbp, CANARY_RBP
        mov     r12, CANARY_R12
        mov     r13, CANARY_R13
        mov     r14, CANARY_R14
        mov     r15, CANARY_R15
        mov     rdi, [r10]
        mov     rsi, [r10 + 8]
        mov     rdx, [r10 + 16]
        mov     rcx, [r10 + 24]
        mov     r8, [r10 + 32]
        mov     r9, [r10 + 40]
        call    rax
        add     rsp, 16
        mov     r10, [rsp]
%assign i 0
%if %1
%rep 32
        vmovdqu64 [r10 + 64*i], zmm%[i]
%assign i i + 1
%endrep
        vzeroupper
%else
%rep 16
        movdqu  [r10 + 16*i], xmm%[i]
%assign i i + 1
%endrep
%endif
        xor     eax, eax
        CHECK_REG rbx, CANARY_RBX, 1
        CHECK_REG rbp, CANARY_RBP, 2
        CHECK_REG r12, CANARY_R12, 4
        CHECK_REG r13, CANARY_R13, 8
        CHECK_REG r14, CANARY_R14, 16
        CHECK_REG r15, CANARY_R15, 32
        pushfq
        pop     r11
        test    r11d, 0x400
        jz      %%df_clear
        or      eax, 64
        cld
%%df_clear:
        pop     rdx
        pop     r15
        pop     r14
        pop     r13
        pop     r12
        pop     rbp
        pop     rbx
        ret
%endmacro

;; uint32_t aesmux_test_call_checked(const void *fn, const uint64_t args[8],
;;                                   uint8_t xmm_after[256]);
;; Calls fn(args[0], ..., args[7]) (the last two on the stack) with every
;; xmm register set to all-ones and canaries in rbx, rbp, r12..r15. Stores
;; xmm0..xmm15 as the callee left them into xmm_after and returns a bit mask:
;; bits 0..5 for rbx, rbp, r12..r15 changed, bit 6 for the direction flag
;; left set.
FUNC_BEGIN aesmux_test_call_checked
        CALL_CHECKED 0
FUNC_END aesmux_test_call_checked


;; uint32_t aesmux_test_call_checked_zmm(const void *fn,
;;                                       const uint64_t args[8],
;;                                       uint8_t zmm_after[2048]);
;; As aesmux_test_call_checked, with zmm0..zmm31 set to all-ones and stored
;; whole (64 bytes each). Needs AVX-512F.
FUNC_BEGIN aesmux_test_call_checked_zmm
        CALL_CHECKED 1
FUNC_END aesmux_test_call_checked_zmm

;; void aesmux_test_misbehave(void);
;; Breaks the rules on purpose (zeroes rbx, leaves 0x42.. in xmm3) so the test
;; can show the trampoline notices.
FUNC_BEGIN aesmux_test_misbehave
        xor     ebx, ebx
        mov     eax, 0x42424242
        movd    xmm3, eax
        pshufd  xmm3, xmm3, 0
        ret
FUNC_END aesmux_test_misbehave

;; void aesmux_test_misbehave_zmm(void);
;; The same for the zmm trampoline: leaves 0x42.. in the top lane of zmm17.
FUNC_BEGIN aesmux_test_misbehave_zmm
        xor     ebx, ebx
        mov     eax, 0x42424242
        vpbroadcastd zmm17, eax
        ret
FUNC_END aesmux_test_misbehave_zmm
