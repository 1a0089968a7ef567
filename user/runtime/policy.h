/* policy.h — what a built-in migration policy sees of the runtime: the vtable it
 * fills, the queues and locks it builds with, and the few core calls it may make. */
#ifndef TASKHOP_POLICY_INTERNAL_H
#define TASKHOP_POLICY_INTERNAL_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "core_types.h"

/* A migration policy. push() makes a task runnable and returns the worker
 * that should be woken for it (or -1: any idle worker). Once push has put t
 * in a queue, another worker may run it, finish it and free it: read what
 * you need from t before queueing it. pop() gives worker
 * w its next task or NULL. `self` is the calling worker, NULL when a plain
 * thread (main, a kthread task) pushes. */
struct th_policy {
	const char *name;
	const char *description;
	int (*init)(struct th_runtime *rt);      /* 0 or -1 with th__set_error */
	void (*fini)(struct th_runtime *rt);
	int (*push)(struct th_runtime *rt, struct th_worker *self, struct th_task *t, enum th_why why);
	struct th_task *(*pop)(struct th_runtime *rt, struct th_worker *w);
	/* Optional: the task w should run instead of `yielder`, which is still
	 * running and in no queue; NULL lets the yielder go on. Without it a
	 * yield takes pop()'s task. push(yielder, TH_WHY_YIELD) follows the
	 * switch either way. */
	struct th_task *(*yield_pop)(struct th_runtime *rt, struct th_worker *w,
				     const struct th_task *yielder);
	/* Optional: run the task some other way (kthread: its own thread).
	 * When set, spawn calls it instead of push, and workers only idle. */
	int (*start_task)(struct th_runtime *rt, struct th_task *t);
};

/* Policy registry (policy.c): each policy file defines one of these. */
extern const struct th_policy th_policy_sticky, th_policy_shared, th_policy_steal,
	th_policy_multiqueue, th_policy_fcfs, th_policy_kthread, th_policy_feedback;

/* ---- core calls a policy may make ------------------------------------------ */

void th__set_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
int th__place(struct th_runtime *rt);           /* a worker per cfg.placement */
uint64_t th__worker_rand(struct th_worker *w);  /* the worker's own RNG */
/* The task the calling thread runs (NULL in a scheduler loop or outside). */
struct th_task *th__current_task(void);
/* The calling thread, as an identity to compare (the struct is the core's):
 * with activations a worker may be served by another thread after a block. */
struct th_os_thread *th__self_thread(void);

/* ---- queues and locks ------------------------------------------------------ */

/* Intrusive FIFO of tasks (through task->next), no locking of its own. */
struct th_fifo { struct th_task *head, *tail; long len; };
static inline void th_fifo_push(struct th_fifo *q, struct th_task *t)
{
	t->next = NULL;
	if (q->tail)
		q->tail->next = t;
	else /* atomic: th_lockq_pop peeks at head without the lock */
		__atomic_store_n(&q->head, t, __ATOMIC_RELAXED);
	q->tail = t;
	q->len++;
}
static inline struct th_task *th_fifo_pop(struct th_fifo *q)
{
	struct th_task *t = q->head;
	if (t) {
		__atomic_store_n(&q->head, t->next, __ATOMIC_RELAXED);
		if (!q->head)
			q->tail = NULL;
		q->len--;
	}
	return t;
}

static inline void th_cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ volatile("yield");
#endif
}

/* Test-and-test-and-set spinlock for short critical sections. */
static inline void th_spin_lock(_Atomic int *l)
{
	for (;;) {
		if (!atomic_exchange_explicit(l, 1, memory_order_acquire))
			return;
		while (atomic_load_explicit(l, memory_order_relaxed))
			th_cpu_relax();
	}
}
static inline bool th_spin_trylock(_Atomic int *l)
{
	return !atomic_load_explicit(l, memory_order_relaxed) &&
	       !atomic_exchange_explicit(l, 1, memory_order_acquire);
}
static inline void th_spin_unlock(_Atomic int *l)
{
	atomic_store_explicit(l, 0, memory_order_release);
}

/* A FIFO with its own spinlock: the building block of sticky/shared queues. */
struct th_lockq {
	_Atomic int lock;
	struct th_fifo q;
} __attribute__((aligned(64)));
static inline void th_lockq_push(struct th_lockq *lq, struct th_task *t)
{
	th_spin_lock(&lq->lock);
	th_fifo_push(&lq->q, t);
	th_spin_unlock(&lq->lock);
}
static inline struct th_task *th_lockq_pop(struct th_lockq *lq)
{
	/* unlocked peek: an empty queue is the common case of an idle worker */
	if (!__atomic_load_n(&lq->q.head, __ATOMIC_RELAXED))
		return NULL;
	th_spin_lock(&lq->lock);
	struct th_task *t = th_fifo_pop(&lq->q);
	th_spin_unlock(&lq->lock);
	return t;
}

/* Go's 61st schedule, for a policy's pop(): true on every 61st pop of w, when
 * the policy should look at its other queues first, so that a queue that
 * never empties (a task spawning or yielding in a loop) cannot starve them. */
static inline bool th_fair_turn(struct th_worker *w)
{
	if (++w->fair_tick < 61)
		return false;
	w->fair_tick = 0;
	return true;
}

#endif
