/* mq_heap.h — one heap of Julia's multiqueue: an 8-ary min-heap of tasks keyed
 * by task->policy_word, with a spinlock and a lock-free peek at its top key. */
#ifndef TASKHOP_MQ_HEAP_H
#define TASKHOP_MQ_HEAP_H

#include <stdatomic.h>
#include <stdint.h>

#include "policy.h"

#define MQ_EMPTY UINT64_MAX

struct mq_heap {
	_Atomic int lock;
	/* Key of the top task, MQ_EMPTY when empty; read without the lock to
	 * choose between two heaps (Julia's heap.prio). */
	_Atomic uint64_t top;
	int n, cap;
	struct th_task **a;
} __attribute__((aligned(64)));

/* With the lock held. insert: 0, or -1 when the array cannot grow. */
int mq_heap_insert(struct mq_heap *h, struct th_task *t);
struct th_task *mq_heap_pop(struct mq_heap *h); /* NULL when empty */
void mq_heap_free(struct mq_heap *h);

/* Taking the lock themselves (the one-heap policies, fcfs and feedback):
 * push waits for memory rather than lose t when the array cannot grow;
 * pop_below pops the top only if its key is below `below` (MQ_EMPTY: any),
 * with a peek at the top key first that spares the lock. */
void mq_heap_push(struct mq_heap *h, struct th_task *t);
struct th_task *mq_heap_pop_below(struct mq_heap *h, uint64_t below);

#endif
