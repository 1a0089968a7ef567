/* context_aarch64.S — the task switch for arm64 (AAPCS64), the twin of context_x86_64.S.
 * Saves what the ABI says a callee must preserve: x19-x29, lr, d8-d15;
 * th_ctx_switch_fpenv also FPCR (cfg.task_fpenv), th_ctx_switch leaves it to the thread. */
#if defined(__aarch64__)
/* The frame both leave below sp, and th_ctx_make builds (context_aarch64.c):
 *   0 x19 x20 | 16 x21 x22 | 32 x23 x24 | 48 x25 x26 | 64 x27 x28 | 80 x29 lr
 *  96 d8 d9  | 112 d10 d11 | 128 d12 d13 | 144 d14 d15 | 160 fpcr, pad  (176, 16-aligned) */
	.text

/* void NAME(struct th_ctx *from (x0), const struct th_ctx *to (x1)) */
.macro SWITCH name, fpenv
	.globl \name
	.hidden \name
	.type \name, %function
	.p2align 4
\name:
	.cfi_startproc
	sub sp, sp, #176
	stp x19, x20, [sp, #0]
	stp x21, x22, [sp, #16]
	stp x23, x24, [sp, #32]
	stp x25, x26, [sp, #48]
	stp x27, x28, [sp, #64]
	stp x29, x30, [sp, #80]
	stp d8, d9, [sp, #96]
	stp d10, d11, [sp, #112]
	stp d12, d13, [sp, #128]
	stp d14, d15, [sp, #144]
.if \fpenv
	mrs x9, fpcr
	str x9, [sp, #160]
.endif
	mov x9, sp
	str x9, [x0]
	ldr x9, [x1]
	mov sp, x9
.if \fpenv
	ldr x9, [sp, #160]
	msr fpcr, x9
.endif
	ldp x19, x20, [sp, #0]
	ldp x21, x22, [sp, #16]
	ldp x23, x24, [sp, #32]
	ldp x25, x26, [sp, #48]
	ldp x27, x28, [sp, #64]
	ldp x29, x30, [sp, #80]
	ldp d8, d9, [sp, #96]
	ldp d10, d11, [sp, #112]
	ldp d12, d13, [sp, #128]
	ldp d14, d15, [sp, #144]
	add sp, sp, #176
	ret
	.cfi_endproc
	.size \name, .-\name
.endm

	SWITCH th_ctx_switch, 0
	SWITCH th_ctx_switch_fpenv, 1

/* First code a new task runs: th_ctx_make left entry in x19, arg in x20, and
 * sp at the 16-aligned stack top. lr is undefined: backtraces stop here. */
	.globl th_ctx_trampoline
	.hidden th_ctx_trampoline
	.type th_ctx_trampoline, %function
	.p2align 2
th_ctx_trampoline:
	.cfi_startproc
	.cfi_undefined x30
	mov x0, x20
	blr x19
	brk #0
	.cfi_endproc
	.size th_ctx_trampoline, .-th_ctx_trampoline
#endif

	.section .note.GNU-stack,"",%progbits
