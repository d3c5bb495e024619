;; SPDX-License-Identifier: Apache-2.0
;; Copyright 2026 The aesmux Authors
;; mb_abi_call.asm: trampolines that call a multi-buffer kernel the way a C
;; caller would and report what it left behind, for mb_abi_test.cc: the
;; callee-saved registers and direction flag, every vector register at the
;; widest width the CPU has, and the stack below the caller, where the
;; callee's frame was.

%include "common.inc"

section .text

;; Values loaded into the callee-saved registers before the call.
%define CANARY_RBX 0x0123456789abcdef
%define CANARY_RBP 0x1111222233334444
%define CANARY_R12 0x5555666677778888
%define CANARY_R13 0x99990000aaaabbbb
%define CANARY_R14 0xccccddddeeeeffff
%define CANARY_R15 0x0f1e2d3c4b5a6978

;; Bytes of stack below the caller that are filled before the call and
;; reported after it.
%define STACK_BYTES 4096
%define STACK_FILL 0xa5a5a5a5a5a5a5a5

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

;; MB_CALL_CHECKED width
;;   width 16: xmm0..xmm15 (legacy SSE, for CPUs without AVX); 32:
;;   ymm0..ymm15; 64: zmm0..zmm31. Every register is set to all-ones before
;;   the call and stored whole after it, `width` bytes per register.
%macro MB_CALL_CHECKED 1
%if %1 == 64
%define %%nregs 32
%else
%define %%nregs 16
%endif
        push    rbx
        push    rbp
        push    r12
        push    r13
        push    r14
        push    r15
        push    rdx                     ;; regs_after
        push    rcx                     ;; stack_after
        sub     rsp, 8                  ;; rsp is now 16-aligned
        mov     rax, STACK_FILL
        lea     r11, [rsp - STACK_BYTES]
%%fill:
        mov     [r11], rax
        add     r11, 8
        cmp     r11, rsp
        jb      %%fill
        mov     rax, rdi
        mov     r10, rsi
%assign i 0
%rep %%nregs
%if %1 == 64
        vpternlogd zmm%[i], zmm%[i], zmm%[i], 0xff
%elif %1 == 32
        vpcmpeqd ymm%[i], ymm%[i], ymm%[i]
%else
        pcmpeqd xmm%[i], xmm%[i]
%endif
%assign i i + 1
%endrep
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
        mov     r10, [rsp + 16]
%assign i 0
%rep %%nregs
%if %1 == 64
        vmovdqu64 [r10 + 64*i], zmm%[i]
%elif %1 == 32
        vmovdqu [r10 + 32*i], ymm%[i]
%else
        movdqu  [r10 + 16*i], xmm%[i]
%endif
%assign i i + 1
%endrep
%if %1 != 16
        vzeroupper
%endif
        mov     r10, [rsp + 8]
        lea     r11, [rsp - STACK_BYTES]
%%copy:
        mov     rax, [r11]
        mov     [r10], rax
        add     r10, 8
        add     r11, 8
        cmp     r11, rsp
        jb      %%copy
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
        add     rsp, 8
        pop     rcx
        pop     rdx
        pop     r15
        pop     r14
        pop     r13
        pop     r12
        pop     rbp
        pop     rbx
        ret
%endmacro

;; uint32_t aesmux_test_mb_call_checked_<width>(const void *fn,
;;                                              const uint64_t args[6],
;;                                              uint8_t *regs_after,
;;                                              uint8_t stack_after[4096]);
;; Calls fn(args[0], ..., args[5]) with every vector register all-ones and
;; canaries in rbx, rbp, r12..r15. Stores the vector registers as the callee
;; left them into regs_after (16 x 16, 16 x 32 or 32 x 64 bytes) and the
;; 4096 bytes below the caller's stack pointer (filled with 0xa5 before the
;; call) into stack_after, lowest address first. Returns a bit mask: bits
;; 0..5 for rbx, rbp, r12..r15 changed, bit 6 for the direction flag left
;; set.
FUNC_BEGIN aesmux_test_mb_call_checked_16
        MB_CALL_CHECKED 16
FUNC_END aesmux_test_mb_call_checked_16

FUNC_BEGIN aesmux_test_mb_call_checked_32
        MB_CALL_CHECKED 32
FUNC_END aesmux_test_mb_call_checked_32

FUNC_BEGIN aesmux_test_mb_call_checked_64
        MB_CALL_CHECKED 64
FUNC_END aesmux_test_mb_call_checked_64

;; void aesmux_test_mb_misbehave_sse(void);
;; void aesmux_test_mb_misbehave_avx2(void);
;; Break the rules on purpose, so the tests can show the trampolines notice:
;; zero rbx, leave 0x42.. in xmm3 (SSE) or only in the upper 128 bits of
;; ymm3 (AVX2), and 16 bytes of 0x42 on the stack below the return address.
FUNC_BEGIN aesmux_test_mb_misbehave_sse
        xor     ebx, ebx
        mov     eax, 0x42424242
        movd    xmm3, eax
        pshufd  xmm3, xmm3, 0
        movdqu  [rsp - 64], xmm3
        ret
FUNC_END aesmux_test_mb_misbehave_sse

FUNC_BEGIN aesmux_test_mb_misbehave_avx2
        xor     ebx, ebx
        mov     eax, 0x42424242
        vmovd   xmm3, eax
        vpbroadcastd ymm3, xmm3
        vmovdqu [rsp - 64], xmm3
        vperm2i128 ymm3, ymm3, ymm3, 0x08   ;; low half zero, high half 0x42..
        ret
FUNC_END aesmux_test_mb_misbehave_avx2
