/* policy_sticky.c — a task never leaves the worker it was placed on.
 * Julia's sticky tasks; the article's modified @tspawnat that disables migration. */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "policy.h"

static int sticky_init(struct th_runtime *rt)
{
	size_t size = (size_t)rt->nworkers * sizeof(struct th_lockq); /* th_lockq is 64-aligned */
	rt->policy_data = aligned_alloc(64, size);
	if (rt->policy_data)
		memset(rt->policy_data, 0, size);
	if (!rt->policy_data) {
		th__set_error("sticky: out of memory");
		return -1;
	}
	return 0;
}

static void sticky_fini(struct th_runtime *rt)
{
	free(rt->policy_data);
	rt->policy_data = NULL;
}

/* The home is chosen once, at spawn (seeded random or round-robin unless the
 * spawner named a worker), and every later push goes back there. */
static int sticky_push(struct th_runtime *rt, struct th_worker *self, struct th_task *t, enum th_why why)
{
	(void)self, (void)why;
	if (t->home < 0)
		t->home = th__place(rt);
	t->sticky = true;
	int home = t->home; /* once queued, t may run and end on its worker */
	struct th_lockq *q = rt->policy_data;
	th_lockq_push(&q[home], t);
	return home;
}

static struct th_task *sticky_pop(struct th_runtime *rt, struct th_worker *w)
{
	struct th_lockq *q = rt->policy_data;
	return th_lockq_pop(&q[w->index]);
}

/* A yielder's queue is its home's, which only its home (this worker) pops. */
static struct th_task *sticky_yield_swap(struct th_runtime *rt, struct th_worker *w, struct th_task *yielder,
					 bool *queued)
{
	struct th_lockq *q = rt->policy_data;
	struct th_task *t = th_lockq_swap(&q[w->index], yielder);
	*queued = t != NULL;
	return t;
}

const struct th_policy th_policy_sticky = {
	.name = "sticky",
	.description = "a task stays on the worker it was placed on (no migration)",
	.init = sticky_init,
	.fini = sticky_fini,
	.push = sticky_push,
	.pop = sticky_pop,
	.yield_swap = sticky_yield_swap,
};
