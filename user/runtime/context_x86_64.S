/* context_x86_64.S — the task switch for x86-64 System V.
 * Saves what the ABI says a callee must preserve: rbx, rbp, r12-r15, the
 * MXCSR control bits and the x87 control word; rsp goes into *from. */
#if defined(__x86_64__) /* the arm64 build assembles every .S: context_aarch64.S is its switch */
	.text
	.globl th_ctx_switch
	.hidden th_ctx_switch
	.type th_ctx_switch, @function
/* void th_ctx_switch(struct th_ctx *from (rdi), const struct th_ctx *to (rsi)) */
th_ctx_switch:
	.cfi_startproc
	pushq %rbp
	pushq %rbx
	pushq %r12
	pushq %r13
	pushq %r14
	pushq %r15
	subq $8, %rsp
	stmxcsr (%rsp)
	fnstcw 4(%rsp)
	movq %rsp, (%rdi)
	movq (%rsi), %rsp
	ldmxcsr (%rsp)
	fldcw 4(%rsp)
	addq $8, %rsp
	popq %r15
	popq %r14
	popq %r13
	popq %r12
	popq %rbx
	popq %rbp
	ret
	.cfi_endproc
	.size th_ctx_switch, .-th_ctx_switch

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
