/* bigbuf.c — growable buffers on their own huge-page mappings.
 *
 * Why not realloc: a drain appends runs while the workers run, and each new 4 KiB
 * page of the kept log is a page fault. On the VMs this was measured on a fault
 * cost 5 to 80 us, so a drain that should move a run in 10 ns took 800 ns and fell
 * behind the workers. With MADV_HUGEPAGE one fault maps 2 MiB (52,000 runs), and
 * growing by mremap moves page tables instead of copying. */
#define _GNU_SOURCE
#include <sys/mman.h>

#include "bigbuf.h"

#define HUGE_PAGE ((size_t)2 << 20)

static size_t round_up(size_t n)
{
	return (n + HUGE_PAGE - 1) / HUGE_PAGE * HUGE_PAGE;
}

int th__bigbuf_reserve(struct th_bigbuf *b, size_t bytes)
{
	if (bytes <= b->bytes)
		return 0;
	size_t want = b->bytes ? b->bytes : HUGE_PAGE;
	while (want < bytes) {
		if (want > ((size_t)1 << 46))
			return -1;
		want *= 2;
	}
	want = round_up(want);
	void *p = b->p ? mremap(b->p, b->bytes, want, MREMAP_MAYMOVE)
		       : mmap(NULL, want, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return -1;
	(void)madvise(p, want, MADV_HUGEPAGE); /* a hint: without THP, 4 KiB pages */
	b->p = p;
	b->bytes = want;
	return 0;
}

void th__bigbuf_free(struct th_bigbuf *b)
{
	if (b->p)
		munmap(b->p, b->bytes);
	b->p = NULL;
	b->bytes = 0;
}
