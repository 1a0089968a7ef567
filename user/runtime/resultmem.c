/* resultmem.c — memory for a large result that is written once, front to back
 * (th_map's `out`, a pmap's gathered series).
 *
 * On 4 KiB pages such a result takes a page fault per 4 KiB, each a kernel
 * entry: costly in a guest, and costlier still when two workers of one
 * process fault at once (they share the address space's locks). Measured on
 * the isprime map (80 MB of results, 2 workers on a 2-vCPU guest): the
 * parallel run spent 0.11-0.20 s in the kernel against the serial run's
 * 0.09-0.12 s. Whole 2 MiB stretches of the buffer are therefore offered
 * transparent huge pages: one fault each. Only stretches inside `size`: the
 * caller fills them all, so the resident size is what 4 KiB pages give. */
#define _GNU_SOURCE
#include <stdlib.h>
#include <sys/mman.h>

#include "taskhop.h"

#define RESULT_HUGE ((size_t)2 << 20)

void *th_result_alloc(size_t size)
{
	if (size < RESULT_HUGE)
		return malloc(size ? size : 1);
	void *p;
	if (posix_memalign(&p, RESULT_HUGE, size) != 0)
		return NULL;
	/* a hint: where THP is off the buffer simply gets 4 KiB pages */
	madvise(p, size & ~(RESULT_HUGE - 1), MADV_HUGEPAGE);
	return p;
}
