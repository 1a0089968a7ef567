/* preempt_x86_64.S — where a preempted task resumes (preempt.c): saves what a call
 * into C may change, yields through the policy, restores it and returns. */
#if defined(__x86_64__) && !defined(__SANITIZE_THREAD__)
/* On entry the task was interrupted at pc with stack pointer sp, and the
 * handler left: rsp = sp - 128 - 8, (rsp) = pc. [sp-128, sp) is the red zone
 * of the interrupted function, untouched. Nothing else has changed, so every
 * register still holds the task's value.
 *
 * Saved: rflags (DF must be clear for the C call, and the arithmetic flags
 * may be live), the caller-saved general registers rax rcx rdx rsi rdi
 * r8-r11 (the callee-saved ones, rbx rbp r12-r15, are kept by the C call and
 * by the context switch under it), and the whole vector and x87 state with
 * xsave: xmm/ymm/zmm and mask registers, MXCSR and the x87 stack. The xsave
 * area needs 64-byte alignment and a zeroed header (xsave writes only its
 * first 8 bytes; xrstor faults on garbage in the rest). */
	.text
	.globl th_preempt_trampoline
	.type th_preempt_trampoline, @function
th_preempt_trampoline:
	.cfi_startproc
	.cfi_def_cfa rsp, 136       /* the interrupted sp */
	.cfi_offset rip, -136
	pushfq
	.cfi_adjust_cfa_offset 8
	cld
	pushq %rax
	.cfi_adjust_cfa_offset 8
	pushq %rcx
	.cfi_adjust_cfa_offset 8
	pushq %rdx
	.cfi_adjust_cfa_offset 8
	pushq %rsi
	.cfi_adjust_cfa_offset 8
	pushq %rdi
	.cfi_adjust_cfa_offset 8
	pushq %r8
	.cfi_adjust_cfa_offset 8
	pushq %r9
	.cfi_adjust_cfa_offset 8
	pushq %r10
	.cfi_adjust_cfa_offset 8
	pushq %r11
	.cfi_adjust_cfa_offset 8
	pushq %rbp
	.cfi_adjust_cfa_offset 8
	.cfi_offset rbp, -224
	movq %rsp, %rbp
	.cfi_def_cfa_register rbp
	movl th__xsave_size(%rip), %eax
	subq %rax, %rsp
	andq $-64, %rsp
	xorl %eax, %eax
	movq %rax, 512(%rsp)         /* the 64-byte xsave header */
	movq %rax, 520(%rsp)
	movq %rax, 528(%rsp)
	movq %rax, 536(%rsp)
	movq %rax, 544(%rsp)
	movq %rax, 552(%rsp)
	movq %rax, 560(%rsp)
	movq %rax, 568(%rsp)
	movl th__xsave_mask(%rip), %eax
	movl th__xsave_mask+4(%rip), %edx
	xsave (%rsp)
	call th__preempt_yield
	movl th__xsave_mask(%rip), %eax
	movl th__xsave_mask+4(%rip), %edx
	xrstor (%rsp)
	movq %rbp, %rsp
	.cfi_def_cfa_register rsp
	popq %rbp
	.cfi_adjust_cfa_offset -8
	.cfi_restore rbp
	popq %r11
	.cfi_adjust_cfa_offset -8
	popq %r10
	.cfi_adjust_cfa_offset -8
	popq %r9
	.cfi_adjust_cfa_offset -8
	popq %r8
	.cfi_adjust_cfa_offset -8
	popq %rdi
	.cfi_adjust_cfa_offset -8
	popq %rsi
	.cfi_adjust_cfa_offset -8
	popq %rdx
	.cfi_adjust_cfa_offset -8
	popq %rcx
	.cfi_adjust_cfa_offset -8
	popq %rax
	.cfi_adjust_cfa_offset -8
	popfq
	.cfi_adjust_cfa_offset -8
	ret $128                     /* pops pc, then skips the red zone: rsp = sp */
	.cfi_endproc
	.size th_preempt_trampoline, .-th_preempt_trampoline
#endif
	.section .note.GNU-stack,"",@progbits
