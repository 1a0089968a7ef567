/* stackcache.c — per-worker cache of task stacks, touched only by its worker.
 * Only tasks that have started hold a stack, so a million spawned tasks need few. */
#define _GNU_SOURCE
#include "stackcache.h"

#include <stdlib.h>
#include <string.h>

#define CACHE_MAX 32

struct th_stack_cache {
	int n;
	struct th_stack stacks[CACHE_MAX];
};

struct th_stack_cache *th_stack_cache_new(void)
{
	return calloc(1, sizeof(struct th_stack_cache));
}

void th_stack_cache_free(struct th_stack_cache *c)
{
	if (!c)
		return;
	while (c->n > 0)
		th_stack_unmap(&c->stacks[--c->n]);
	free(c);
}

int th_stack_get(struct th_stack_cache *c, struct th_stack *st, size_t size)
{
	while (c->n > 0) {
		*st = c->stacks[--c->n];
		if ((size_t)((char *)st->hi - (char *)st->lo) >= size)
			return 0;
		th_stack_unmap(st);
	}
	return th_stack_map(st, size);
}

void th_stack_put(struct th_stack_cache *c, struct th_stack *st)
{
	if (c->n < CACHE_MAX)
		c->stacks[c->n++] = *st;
	else
		th_stack_unmap(st);
	memset(st, 0, sizeof(*st));
}
