/* policy_multiqueue.c — Julia 1.7's scheduler (partr): 2 heaps per worker, insert
 * into a random heap, pop the better top of two random heaps; sticky queues first. */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "policy.h"
#include "mq_heap.h"

/* A MultiQueue (Rihani, Sanders, Dementiev 2015) is a relaxed priority
 * queue: c*W heaps, each behind its own lock. Insert picks a random heap;
 * delete-min looks at the tops of two random heaps and takes the better.
 * No lock is shared by all workers, yet what comes out is close to the
 * global order, and any task can run on any worker — which is how Julia 1.7
 * gained task migration. Julia uses c = 2 (heap_c) and 8-ary heaps.
 *
 * The key: Julia orders by task priority, which every task has equal by
 * default, so its order among ready tasks is whatever the heap makes of
 * ties. We key by the time the task became runnable, so the queue is a
 * relaxed FIFO: a yielding task goes behind the tasks already waiting,
 * which is what yield() promises. The clock is the CPU's time-stamp counter:
 * no shared cache line, as a global ticket counter would be, and ~20x
 * cheaper than clock_gettime under kvm-clock. Keys only need to be roughly
 * ordered across CPUs: the queue is relaxed anyway. */
#define HEAPS_PER_WORKER 2

static inline uint64_t runnable_since(void)
{
#if defined(__x86_64__)
	return __builtin_ia32_rdtsc();
#else
	return th_now_ns();
#endif
}

struct mq {
	int nheaps;
	struct mq_heap *heaps;
	struct th_lockq *sticky; /* per worker: Julia's sticky workqueue */
};

static int mq_init(struct th_runtime *rt)
{
	struct mq *m = calloc(1, sizeof(*m));
	if (!m)
		goto oom;
	m->nheaps = HEAPS_PER_WORKER * rt->nworkers;
	m->heaps = aligned_alloc(64, (size_t)m->nheaps * sizeof(*m->heaps));
	m->sticky = aligned_alloc(64, (size_t)rt->nworkers * sizeof(*m->sticky));
	if (!m->heaps || !m->sticky) {
		free(m->heaps), free(m->sticky), free(m);
		goto oom;
	}
	memset(m->heaps, 0, (size_t)m->nheaps * sizeof(*m->heaps));
	for (int i = 0; i < m->nheaps; i++)
		atomic_init(&m->heaps[i].top, MQ_EMPTY);
	memset(m->sticky, 0, (size_t)rt->nworkers * sizeof(*m->sticky));
	rt->policy_data = m;
	return 0;
oom:
	th__set_error("multiqueue: out of memory");
	return -1;
}

static void mq_fini(struct th_runtime *rt)
{
	struct mq *m = rt->policy_data;
	for (int i = 0; i < m->nheaps; i++)
		mq_heap_free(&m->heaps[i]);
	free(m->heaps), free(m->sticky), free(m);
	rt->policy_data = NULL;
}

/* Julia's multiq_insert: try random heaps until one's lock is free. A busy
 * lock means another worker is in that heap; another random heap is as good
 * and spares us the wait. A plain thread (no worker RNG) uses the run's
 * seeded placement and then walks on from there. */
static void mq_insert(struct th_runtime *rt, struct mq *m, struct th_worker *self, struct th_task *t)
{
	uint64_t n = (uint64_t)m->nheaps;
	uint64_t base = self ? 0 : (uint64_t)th__place(rt) * HEAPS_PER_WORKER;
	t->policy_word = runnable_since();
	for (uint64_t tries = 0;; tries++) {
		struct mq_heap *h = &m->heaps[self ? th__worker_rand(self) % n : (base + tries) % n];
		if (tries < 4 * n) {
			if (!th_spin_trylock(&h->lock))
				continue;
		} else {
			th_spin_lock(&h->lock); /* every lock was busy for a while: wait */
		}
		int rc = mq_heap_insert(h, t);
		th_spin_unlock(&h->lock);
		if (rc == 0)
			return;
		/* this heap could not grow (out of memory): try another */
	}
}

static int mq_push(struct th_runtime *rt, struct th_worker *self, struct th_task *t, enum th_why why)
{
	struct mq *m = rt->policy_data;
	/* Sticky tasks, and th_spawn_at tasks for their first run, wait in
	 * their worker's own queue: no other worker looks there. */
	if (t->sticky || (why == TH_WHY_SPAWN && t->home >= 0)) {
		th_lockq_push(&m->sticky[t->home], t);
		return t->home;
	}
	mq_insert(rt, m, self, t);
	return rt->nworkers > 1 || !self ? -1 : self->index;
}

/* Julia's multiq_deletemin: pick two random heaps, go for the one whose
 * top is better; if its lock is busy or its top changed meanwhile, draw
 * again. nheaps draws, then a full scan so that "nothing" really means the
 * heaps were empty — the worker parks on that answer. */
static struct th_task *mq_deletemin(struct mq *m, struct th_worker *w)
{
	uint64_t n = (uint64_t)m->nheaps;
	for (uint64_t i = 0; i < n; i++) {
		struct mq_heap *a = &m->heaps[th__worker_rand(w) % n];
		struct mq_heap *b = &m->heaps[th__worker_rand(w) % n];
		uint64_t pa = atomic_load_explicit(&a->top, memory_order_relaxed);
		uint64_t pb = atomic_load_explicit(&b->top, memory_order_relaxed);
		if (pb < pa)
			a = b, pa = pb;
		if (pa == MQ_EMPTY || !th_spin_trylock(&a->lock))
			continue;
		struct th_task *t = NULL;
		if (atomic_load_explicit(&a->top, memory_order_relaxed) == pa)
			t = mq_heap_pop(a);
		th_spin_unlock(&a->lock);
		if (t)
			return t;
	}
	for (uint64_t i = 0; i < n; i++) {
		struct mq_heap *h = &m->heaps[i];
		if (atomic_load_explicit(&h->top, memory_order_relaxed) == MQ_EMPTY)
			continue;
		th_spin_lock(&h->lock);
		struct th_task *t = mq_heap_pop(h);
		th_spin_unlock(&h->lock);
		if (t)
			return t;
	}
	return NULL;
}

static struct th_task *mq_pop(struct th_runtime *rt, struct th_worker *w)
{
	struct mq *m = rt->policy_data;
	struct th_lockq *mine = &m->sticky[w->index];
	struct th_task *t;
	/* Julia looks at the sticky queue first, always. A sticky task that
	 * yields in a loop would then shut every other task out of its worker,
	 * so every 61st pop (Go's number) the heaps go first. */
	if (th_fair_turn(w) && (t = mq_deletemin(m, w)))
		return t;
	if ((t = th_lockq_pop(mine)))
		return t;
	return mq_deletemin(m, w);
}

const struct th_policy th_policy_multiqueue = {
	.name = "multiqueue",
	.description = "Julia 1.7 partr: 2 heaps per worker, insert into a random heap, pop the better of two",
	.init = mq_init,
	.fini = mq_fini,
	.push = mq_push,
	.pop = mq_pop,
};
