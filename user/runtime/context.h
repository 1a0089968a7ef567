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

/* Saves callee-saved registers, MXCSR and the x87 control word on the
 * current stack, stores the stack pointer in *from, and resumes `to`. */
void th_ctx_switch(struct th_ctx *from, const struct th_ctx *to);

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
