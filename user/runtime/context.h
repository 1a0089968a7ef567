/* context.h — saving and restoring a task's registers, and its stack.
 * The switch is a few instructions of assembly (context_x86_64.S,
 * context_aarch64.S): no syscall. */
#ifndef TASKHOP_CONTEXT_H
#define TASKHOP_CONTEXT_H

#include <stdbool.h>
#include <stddef.h>

struct th_ctx {
	void *sp; /* saved stack pointer; everything else is on that stack */
};

struct th_stack {
	void *map;        /* start of the mapping (the guard page) */
	size_t map_size;  /* guard + usable */
	void *lo, *hi;    /* usable range, hi is the initial stack top */
	void *tsan_fiber; /* TSan's context for this stack, reused with it */
	struct th_ctx resume; /* a cached stack: where its task loop waits (sp NULL: fresh) */
};

/* Saves the callee-saved registers on the current stack, stores the stack
 * pointer in *from, and resumes `to`.
 *
 * The floating-point control state (x86-64: the MXCSR control bits and the x87
 * control word; arm64: FPCR) is callee-saved too, but th_ctx_switch leaves it
 * alone: the tasks of a thread share it, as goroutines do. Saving and
 * restoring it (stmxcsr, fnstcw, ldmxcsr, fldcw: microcoded, 10.3 ns back to
 * back on the EPYC guest measured) moved a yield loop's median from 23.9 to
 * 26.0 ns there, for a state that a task almost never changes.
 * th_ctx_switch_fpenv keeps it per task (cfg.task_fpenv): for tasks that run
 * with their own rounding mode or exception masks across a scheduling point. */
void th_ctx_switch(struct th_ctx *from, const struct th_ctx *to);
void th_ctx_switch_fpenv(struct th_ctx *from, const struct th_ctx *to);

/* Prepares ctx so that the first th_ctx_switch to it calls entry(arg) on
 * the given stack. entry must never return. */
void th_ctx_make(struct th_ctx *ctx, const struct th_stack *st,
		 void (*entry)(void *), void *arg);

/* mmap a stack of `size` usable bytes below a PROT_NONE guard page. */
int th_stack_map(struct th_stack *st, size_t size);
void th_stack_unmap(struct th_stack *st);
/* Whether stack guards are guard regions (MADV_GUARD_INSTALL, one mapping per
 * stack) rather than PROT_NONE pages (two): the kernel's answer, probed once. */
bool th_stack_guard_regions(void);

#endif
