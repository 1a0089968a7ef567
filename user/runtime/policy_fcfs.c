/* policy_fcfs.c — first come, first served: one global queue in spawn order; a
 * worker runs the oldest runnable task, and a yield gives way only to older tasks. */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "policy.h"
#include "mq_heap.h"

/* The round-robin policies (shared, steal, multiqueue) send a yielder to the
 * back of the line. With tasks of equal size that interleaves them all, so
 * they all finish near the end: for mean completion time, round robin is the
 * worst order there is among equals. FCFS keeps the order in which tasks
 * were spawned: a yield is a point where an older task may go first, not a
 * loss of place, so tasks tend to run to completion one after the other, on
 * whichever worker is free, and a task spawned late waits until the earlier
 * ones are done. Batch schedulers have always done this; the price is
 * fairness (a long old task keeps its worker) and no protection from a long
 * task spawned early.
 *
 * One min-heap keyed by task id (ids are handed out in spawn order), under
 * one lock, like `shared`'s one FIFO. Its top key can be read without the
 * lock, which is all a yield needs when nothing older waits. Sticky tasks,
 * and th_spawn_at tasks until their first run, wait in their worker's own
 * FIFO, which the worker serves first, as Julia does. */

struct fcfs {
	struct mq_heap heap;
	struct th_lockq sticky[]; /* one per worker */
};

static int fcfs_init(struct th_runtime *rt)
{
	size_t size = sizeof(struct fcfs) + (size_t)rt->nworkers * sizeof(struct th_lockq);
	struct fcfs *f = aligned_alloc(64, (size + 63) & ~(size_t)63);
	if (!f) {
		th__set_error("fcfs: out of memory");
		return -1;
	}
	memset(f, 0, size);
	atomic_init(&f->heap.top, MQ_EMPTY);
	rt->policy_data = f;
	return 0;
}

static void fcfs_fini(struct th_runtime *rt)
{
	struct fcfs *f = rt->policy_data;
	mq_heap_free(&f->heap);
	free(f);
	rt->policy_data = NULL;
}

static int fcfs_push(struct th_runtime *rt, struct th_worker *self, struct th_task *t, enum th_why why)
{
	(void)self;
	struct fcfs *f = rt->policy_data;
	if (t->sticky || (why == TH_WHY_SPAWN && t->home >= 0)) {
		int home = t->home; /* once queued, t may run and end on its worker */
		th_lockq_push(&f->sticky[home], t);
		return home;
	}
	t->policy_word = t->id;
	mq_heap_push(&f->heap, t);
	return -1;
}

static struct th_task *pop_heap(struct fcfs *f)
{
	return mq_heap_pop_below(&f->heap, MQ_EMPTY);
}

static struct th_task *fcfs_pop(struct th_runtime *rt, struct th_worker *w)
{
	struct fcfs *f = rt->policy_data;
	struct th_task *t;
	/* a sticky task yielding in a loop would shut the heap out */
	if (th_fair_turn(w) && (t = pop_heap(f)))
		return t;
	if ((t = th_lockq_pop(&f->sticky[w->index])))
		return t;
	return pop_heap(f);
}

/* Only an older task, or a task that must start or stay on this worker,
 * takes the worker from a yielder. */
static struct th_task *fcfs_yield_pop(struct th_runtime *rt, struct th_worker *w,
				      const struct th_task *yielder)
{
	struct fcfs *f = rt->policy_data;
	struct th_task *t = th_lockq_pop(&f->sticky[w->index]);
	if (t)
		return t;
	return mq_heap_pop_below(&f->heap, yielder->id);
}

const struct th_policy th_policy_fcfs = {
	.name = "fcfs",
	.description = "one global queue in spawn order: the oldest runnable task runs; a yield gives way only to older tasks",
	.init = fcfs_init,
	.fini = fcfs_fini,
	.push = fcfs_push,
	.pop = fcfs_pop,
	.yield_pop = fcfs_yield_pop,
};
