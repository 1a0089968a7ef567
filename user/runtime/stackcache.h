/* stackcache.h — a worker's small cache of task stacks.
 * mmap+mprotect+munmap per task would cost microseconds; reuse costs nothing. */
#ifndef TASKHOP_STACKCACHE_H
#define TASKHOP_STACKCACHE_H

#include <stddef.h>

#include "context.h"

struct th_stack_cache;

struct th_stack_cache *th_stack_cache_new(void);
void th_stack_cache_free(struct th_stack_cache *c);
/* A stack of `size` usable bytes with a guard below: cached or newly mapped. */
int th_stack_get(struct th_stack_cache *c, struct th_stack *st, size_t size);
/* Gives a dead task's stack back (kept if there is room, else unmapped;
 * c NULL: unmapped). */
void th_stack_put(struct th_stack_cache *c, struct th_stack *st);

#endif
