/* context_aarch64.c — a new task's first frame on arm64: what th_ctx_switch
 * (context_aarch64.S) pops, so that the first switch "returns" into th_ctx_trampoline. */
#if defined(__aarch64__)
#include "context.h"

#include <stdint.h>

void th_ctx_trampoline(void);

enum { FRAME_WORDS = 22 }; /* 176 bytes: the layout is in context_aarch64.S */

void th_ctx_make(struct th_ctx *ctx, const struct th_stack *st,
		 void (*entry)(void *), void *arg)
{
	uintptr_t top = (uintptr_t)st->hi & ~(uintptr_t)15;
	uint64_t *sp = (uint64_t *)top - FRAME_WORDS;
	for (int i = 0; i < FRAME_WORDS; i++)
		sp[i] = 0; /* x21-x29 and d8-d15 start at zero; x29 = 0 ends frame chains */
	sp[0] = (uint64_t)(uintptr_t)entry;              /* x19 */
	sp[1] = (uint64_t)(uintptr_t)arg;                /* x20 */
	sp[11] = (uint64_t)(uintptr_t)th_ctx_trampoline; /* lr: where the first ret goes */
	uint64_t fpcr;
	__asm__ volatile("mrs %0, fpcr" : "=r"(fpcr)); /* the creator's rounding mode, as on x86 */
	sp[20] = fpcr;
	ctx->sp = sp;
}
#else
/* ISO C forbids an empty translation unit. */
typedef int taskhop_context_aarch64_unused;
#endif
