/* stackcache.c — per-worker cache of task stacks, touched only by its worker.
 * Only tasks that have started hold a stack, so a million spawned tasks need few. */
#define _GNU_SOURCE
#include "stackcache.h"

#include "sanitizer.h"

#include <stdlib.h>
#include <string.h>

#define CACHE_MAX 32

struct th_stack_cache {
	int n;
	struct th_stack stacks[CACHE_MAX];
};

static void drop(struct th_stack *st)
{
	th_tsan_destroy(st->tsan_fiber);
	th_stack_unmap(st);
}

struct th_stack_cache *th_stack_cache_new(void)
{
	return calloc(1, sizeof(struct th_stack_cache));
}

void th_stack_cache_free(struct th_stack_cache *c)
{
	if (!c)
		return;
	while (c->n > 0)
		drop(&c->stacks[--c->n]);
	free(c);
}

int th_stack_get(struct th_stack_cache *c, struct th_stack *st, size_t size)
{
	while (c->n > 0) {
		*st = c->stacks[--c->n];
		if ((size_t)((char *)st->hi - (char *)st->lo) >= size)
			return 0;
		drop(st);
	}
	if (th_stack_map(st, size) != 0)
		return -1;
	/* Creating a TSan fiber is costly; it lives as long as the stack. */
	st->tsan_fiber = th_tsan_create();
	return 0;
}

void th_stack_put(struct th_stack_cache *c, struct th_stack *st)
{
	if (c && c->n < CACHE_MAX)
		c->stacks[c->n++] = *st;
	else
		drop(st);
	memset(st, 0, sizeof(*st));
}
