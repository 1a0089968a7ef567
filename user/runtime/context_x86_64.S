/* context_x86_64.S — the task switch for x86-64 System V.
 * Saves what the ABI says a callee must preserve: rbx, rbp, r12-r15; rsp goes into
 * *from. th_ctx_switch_fpenv also saves and restores the MXCSR control bits and the
 * x87 control word (cfg.task_fpenv); th_ctx_switch leaves them to the thread, whose
 * tasks then share them (context.h says why). Both use one frame, with a slot for the
 * two words, so a stack saved by either can be resumed by either. */
#if defined(__x86_64__) /* the arm64 build assembles every .S: context_aarch64.S is its switch */
	.text

/* void NAME(struct th_ctx *from (rdi), const struct th_ctx *to (rsi)) */
.macro SWITCH name, fpenv
	.globl \name
	.hidden \name
	.type \name, @function
\name:
	.cfi_startproc
	pushq %rbp
	pushq %rbx
	pushq %r12
	pushq %r13
	pushq %r14
	pushq %r15
	subq $8, %rsp
.if \fpenv
	stmxcsr (%rsp)
	fnstcw 4(%rsp)
.endif
	movq %rsp, (%rdi)
	movq (%rsi), %rsp
.if \fpenv
	ldmxcsr (%rsp)
	fldcw 4(%rsp)
.endif
	addq $8, %rsp
	popq %r15
	popq %r14
	popq %r13
	popq %r12
	popq %rbx
	popq %rbp
	ret
	.cfi_endproc
	.size \name, .-\name
.endm

	SWITCH th_ctx_switch, 0
	SWITCH th_ctx_switch_fpenv, 1

/* First code a new task runs: th_ctx_make left entry in r12, arg in r13.
 * The stack is 16-byte aligned here, as a call expects. */
	.globl th_ctx_trampoline
	.hidden th_ctx_trampoline
	.type th_ctx_trampoline, @function
th_ctx_trampoline:
	.cfi_startproc
	.cfi_undefined rip
	movq %r13, %rdi
	callq *%r12
	ud2
	.cfi_endproc
	.size th_ctx_trampoline, .-th_ctx_trampoline

#endif

	.section .note.GNU-stack,"",@progbits
