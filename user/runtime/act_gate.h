/* act_gate.h — the fast path of the activations gate (activation.c has the rest):
 * inline, because worker_of runs it on every runtime call from a task. */
#ifndef TASKHOP_ACT_GATE_H
#define TASKHOP_ACT_GATE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "taskhop_abi.h"

/* The gate's fast path, TASK -> RUNTIME without a locked instruction (a
 * compare-and-swap costs 5.8 ns on the EPYC guest of 2026-12, a third of a
 * yield). Why a load and a store are enough inside a restartable sequence:
 * while the thread runs its own code, nothing else moves its slot out of TASK.
 * The kernel side does it only at the thread's own switch-out (TASK ->
 * BLOCKED), and th_blocking_begin is the thread itself; a taker moves only
 * BLOCKED or BLOCKING. So the one danger is a switch-out between the load
 * and the store (a page fault that sleeps, say): a spare could take the
 * worker, and the store would then overwrite TAKEN. The kernel aborts an
 * rseq critical section on every switch-out and signal of its thread
 * (prepare_task_switch -> rseq_preempt), so the store happens only if the
 * thread stayed on its CPU since the load; an abort takes the CAS path.
 * glibc (2.35+) registers rseq for every thread; where it did not
 * (__rseq_size 0: an old kernel, the glibc.pthread.rseq=0 tunable,
 * valgrind) the CAS path is all there is. TSan does not see into asm. */
#if defined(__x86_64__) && !defined(__SANITIZE_THREAD__) && defined(__GLIBC__) && \
	(__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 35))
#include <sys/rseq.h>
static inline __attribute__((always_inline)) bool th__act_gate_fast(_Atomic uint32_t *st)
{
	if (!__rseq_size)
		return false;
	struct rseq *rs = (struct rseq *)((char *)__builtin_thread_pointer() + __rseq_offset);
	uint32_t ok;
	__asm__ volatile(
		".pushsection __rseq_cs, \"aw\"\n\t"
		".balign 32\n"
		"6:\n\t"
		".long 0, 0\n\t"                 /* version, flags */
		".quad 1f, 2f - 1f, 4f\n\t"      /* start, length to the commit's end, abort */
		".popsection\n\t"
		"leaq 6b(%%rip), %%rax\n\t"
		"movq %%rax, %[cs]\n"
		"1:\n\t"
		"cmpl %[task], %[state]\n\t"
		"jne 3f\n\t"
		"movl %[runtime], %[state]\n"    /* the commit */
		"2:\n\t"
		"movl $1, %[ok]\n\t"
		"jmp 5f\n\t"
		/* the signature the kernel checks before an abort address, as
		 * the operand of an undefined instruction (ud1), as librseq does */
		".byte 0x0f, 0xb9, 0x3d\n\t"
		".long %c[sig]\n"
		"4:\n"
		"3:\n\t"
		"xorl %[ok], %[ok]\n"
		"5:\n\t"
		: [ok] "=&r"(ok), [cs] "=m"(rs->rseq_cs), [state] "+m"(*(volatile uint32_t *)st)
		: [task] "i"(TH_SLOT_TASK), [runtime] "i"(TH_SLOT_RUNTIME), [sig] "i"(RSEQ_SIG)
		: "rax", "memory", "cc");
	return ok;
}
#else
static inline __attribute__((always_inline)) bool th__act_gate_fast(_Atomic uint32_t *st)
{
	(void)st;
	return false;
}
#endif

#endif
