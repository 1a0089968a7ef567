/* mq_heap.c — the 8-ary min-heap under each of the multiqueue's locks. Julia's
 * partr uses d = 8 too: a shallow tree, and the 8 children share cache lines. */
#include "mq_heap.h"

#include <sched.h>
#include <stdlib.h>

#include "core_check.h"

#define D 8

static uint64_t key(const struct th_task *t)
{
	return t->policy_word;
}

static void set_top(struct mq_heap *h)
{
	atomic_store_explicit(&h->top, h->n ? key(h->a[0]) : MQ_EMPTY, memory_order_relaxed);
}

int mq_heap_insert(struct mq_heap *h, struct th_task *t)
{
	TH_CHECK(atomic_load_explicit(&h->lock, memory_order_relaxed), "mq_heap_insert without the heap's lock");
	if (h->n == h->cap) {
		int cap = h->cap ? h->cap * 2 : 64;
		struct th_task **a = realloc(h->a, (size_t)cap * sizeof(*a));
		if (!a)
			return -1;
		h->a = a;
		h->cap = cap;
	}
	int i = h->n++;
	while (i > 0) { /* sift up */
		int p = (i - 1) / D;
		if (key(h->a[p]) <= key(t))
			break;
		h->a[i] = h->a[p];
		i = p;
	}
	h->a[i] = t;
	set_top(h);
	return 0;
}

struct th_task *mq_heap_pop(struct mq_heap *h)
{
	TH_CHECK(atomic_load_explicit(&h->lock, memory_order_relaxed), "mq_heap_pop without the heap's lock");
	if (!h->n)
		return NULL;
	struct th_task *top = h->a[0], *last = h->a[--h->n];
	int i = 0;
	for (;;) { /* sift `last` down from the root */
		int c = i * D + 1, best = -1;
		for (int k = c; k < c + D && k < h->n; k++)
			if (best < 0 || key(h->a[k]) < key(h->a[best]))
				best = k;
		if (best < 0 || key(h->a[best]) >= key(last))
			break;
		h->a[i] = h->a[best];
		i = best;
	}
	if (h->n)
		h->a[i] = last;
	set_top(h);
	return top;
}

void mq_heap_push(struct mq_heap *h, struct th_task *t)
{
	th_spin_lock(&h->lock);
	while (mq_heap_insert(h, t) != 0) {
		th_spin_unlock(&h->lock);
		sched_yield();
		th_spin_lock(&h->lock);
	}
	th_spin_unlock(&h->lock);
}

struct th_task *mq_heap_pop_below(struct mq_heap *h, uint64_t below)
{
	if (atomic_load_explicit(&h->top, memory_order_relaxed) >= below)
		return NULL;
	th_spin_lock(&h->lock);
	struct th_task *t = h->n && key(h->a[0]) < below ? mq_heap_pop(h) : NULL;
	th_spin_unlock(&h->lock);
	return t;
}

void mq_heap_free(struct mq_heap *h)
{
	free(h->a);
	h->a = NULL;
	h->n = h->cap = 0;
}
