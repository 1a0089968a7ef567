/* policy_shared.c — one global FIFO: at every yield a task goes to the back
 * and whichever worker is free next takes it. Sticky tasks keep a queue per worker. */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "policy.h"

struct shared {
	struct th_lockq global;
	struct th_lockq sticky[]; /* one per worker, for th_spawn_on tasks */
};

static int shared_init(struct th_runtime *rt)
{
	size_t size = sizeof(struct shared) + (size_t)rt->nworkers * sizeof(struct th_lockq);
	struct shared *s = aligned_alloc(64, (size + 63) & ~(size_t)63);
	if (!s) {
		th__set_error("shared: out of memory");
		return -1;
	}
	memset(s, 0, size);
	rt->policy_data = s;
	return 0;
}

static void shared_fini(struct th_runtime *rt)
{
	free(rt->policy_data);
	rt->policy_data = NULL;
}

static int shared_push(struct th_runtime *rt, struct th_worker *self, struct th_task *t, enum th_why why)
{
	(void)self, (void)why;
	struct shared *s = rt->policy_data;
	if (t->sticky) {
		int home = t->home; /* once queued, t may run and end on its worker */
		th_lockq_push(&s->sticky[home], t);
		return home;
	}
	th_lockq_push(&s->global, t);
	return -1;
}

/* A worker's sticky tasks first: only it can run them. */
static struct th_task *shared_pop(struct th_runtime *rt, struct th_worker *w)
{
	struct shared *s = rt->policy_data;
	struct th_task *t = th_lockq_pop(&s->sticky[w->index]);
	return t ? t : th_lockq_pop(&s->global);
}

const struct th_policy th_policy_shared = {
	.name = "shared",
	.description = "one global FIFO: any worker takes any task at every yield",
	.init = shared_init,
	.fini = shared_fini,
	.push = shared_push,
	.pop = shared_pop,
};
