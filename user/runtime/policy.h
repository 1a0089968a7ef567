/* policy.h — what a built-in migration policy sees of the runtime: the vtable it
 * fills, the queues and locks it builds with, and the few core calls it may make. */
#ifndef TASKHOP_POLICY_INTERNAL_H
#define TASKHOP_POLICY_INTERNAL_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "core_types.h"

/* A migration policy: where a runnable task waits, and which one a worker runs next.
 *
 * Caller contracts, as Go's proc.go states them. Every call below comes from the
 * runtime's own code, never from a signal handler, and with preemption off (inside
 * th__nopreempt_begin/end): a policy is never interrupted halfway through its locks.
 * "Owner" means the thread serving worker w now (with activations a spare thread may
 * take a worker over; it is then the owner). The owner alone touches w's unlocked
 * state: w->rng (th__worker_rand), w->fair_tick (th_fair_turn), w->steals, and any
 * per-worker queue the policy keeps without a lock (a deque's bottom end).
 *
 * Between push(t) and the pop that hands t back, t is the policy's: it is RUNNABLE,
 * in no other queue, and only the policy writes t->next, t->policy_word and
 * t->policy_ptr. Everything else of t is read-only to a policy (home and sticky may
 * be set by push itself, before t is queued). Debug and sanitizer builds check the
 * hand-back (core_check.h): a task pop returns must be RUNNABLE (not running, not
 * the yielder, not blocked or done), handed out once per push, and, if sticky,
 * popped by its home worker; push must answer a worker that exists. */
struct th_policy {
	const char *name;
	const char *description;
	/* th_runtime_start's thread, once, before any worker thread exists.
	 * 0, or -1 with th__set_error. */
	int (*init)(struct th_runtime *rt);
	/* th_runtime_stop's thread, once, after every worker thread was joined:
	 * every task pushed has been popped and has ended. */
	void (*fini)(struct th_runtime *rt);
	/* Makes t runnable. Any thread, concurrently with every other call: a
	 * worker's owner (self = that worker: the caller may use self's owner-only
	 * state) or a plain thread, a kthread task or a thread whose worker was
	 * taken (self = NULL). why == TH_WHY_YIELD: self is non-NULL and just ran t.
	 * Returns the worker to wake for t, in -1 .. nworkers-1: one whose pop
	 * will look where t waits (the only one that can, if t waits where only
	 * it looks: a sticky queue, an owner-only queue), or -1: any idle worker,
	 * whose pop must then be able to find t. The caller's own worker is not
	 * woken (it is awake). Once t is queued, another worker may run it, finish
	 * it and free it: read what you need from t before queueing it. */
	int (*push)(struct th_runtime *rt, struct th_worker *self, struct th_task *t, enum th_why why);
	/* Worker w's next task, or NULL. Owner of w only: from its scheduler loop
	 * (no current task), or from its task that blocks or ends. The task is
	 * removed from the policy's queues before it is returned; a sticky one only
	 * to its home. A NULL may send w to sleep: before parking, w pops once
	 * more after a full fence, so a task pushed with -1 or w as the answer is
	 * found by that pop or wakes w. */
	struct th_task *(*pop)(struct th_runtime *rt, struct th_worker *w);
	/* Optional: the task w should run instead of `yielder`, which is still
	 * running (th__current_task() == yielder) and in no queue; NULL lets the
	 * yielder go on. Owner of w only, from the yielder's th_yield or a
	 * preemption. Never returns the yielder itself. Without it a yield takes
	 * pop()'s task. push(yielder, TH_WHY_YIELD) follows the switch either way. */
	struct th_task *(*yield_pop)(struct th_runtime *rt, struct th_worker *w,
				     const struct th_task *yielder);
	/* Optional, used instead of yield_pop: the same answer, and when it is a
	 * task and the yielder can wait where nobody but w's owner takes tasks
	 * from (a queue only w pops), the yielder already queued there, as
	 * push(yielder, TH_WHY_YIELD) would have, with *queued set. That is safe
	 * before the switch has saved the yielder's registers because no other
	 * thread can take it, and w itself pops next only after the switch; it
	 * spares the yield a second call into the policy (and sticky a second
	 * lock). Where another worker could take the yielder (a thief, a shared
	 * queue), leave *queued false: the push follows the switch as usual. */
	struct th_task *(*yield_swap)(struct th_runtime *rt, struct th_worker *w, struct th_task *yielder,
				      bool *queued);
	/* Optional: run the task some other way (kthread: its own thread). The
	 * spawning thread (any) calls it instead of push, and workers only idle. */
	int (*start_task)(struct th_runtime *rt, struct th_task *t);
	/* A preempted task that yield_pop lets go on may still owe its place soon:
	 * the policy measures its own quanta (feedback), so the worker's tick must
	 * stay at one quantum. Without it, a preemption that finds nothing else to
	 * run stretches the tick (preempt.c). */
	bool ticks_every_quantum;
};

/* Policy registry (policy.c): each policy file defines one of these. */
extern const struct th_policy th_policy_sticky, th_policy_shared, th_policy_steal,
	th_policy_multiqueue, th_policy_fcfs, th_policy_kthread, th_policy_feedback;

/* ---- core calls a policy may make ------------------------------------------ */

/* Any thread: the calling thread's th_last_error() (init's failure, mostly). */
void th__set_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Any thread: a worker per cfg.placement (seeded random under a lock, or
 * round-robin); for a task pushed with no worker to go to. */
int th__place(struct th_runtime *rt);
/* Owner of w only (the stream is w's, unlocked): the worker's own RNG. */
uint64_t th__worker_rand(struct th_worker *w);
/* Any thread, async-signal-safe: the task the calling thread runs (NULL in a
 * scheduler loop or outside the runtime's threads). */
struct th_task *th__current_task(void);
/* Any thread: the calling thread, as an identity to compare (the struct is the
 * core's; NULL outside the runtime's threads). With activations a worker may
 * be served by another thread after a block. */
struct th_os_thread *th__self_thread(void);

/* ---- queues and locks ------------------------------------------------------ */

/* Intrusive FIFO of tasks (through task->next), no locking of its own: the
 * caller holds the lock that guards q, or q is one thread's only. */
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
		struct th_task *next = t->next; /* not re-read from head: an atomic store is not forwarded */
		__atomic_store_n(&q->head, next, __ATOMIC_RELAXED);
		if (!next)
			q->tail = NULL;
		q->len--;
	}
	return t;
}

/* Pops the head of q (not empty) and queues `back` at the tail in its place:
 * a yield's rotation, in which len does not change. */
static inline struct th_task *th_fifo_rotate(struct th_fifo *q, struct th_task *back)
{
	struct th_task *t = q->head, *next = t->next;
	back->next = NULL;
	if (next)
		q->tail->next = back;
	else
		next = back; /* t was alone: back is all there is */
	__atomic_store_n(&q->head, next, __ATOMIC_RELAXED);
	q->tail = back;
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

/* Test-and-test-and-set spinlock for short critical sections. Never held
 * across a call into the core (push/pop's callers hold none of the policy's),
 * nor taken in a signal handler: a handler that interrupted its holder spins
 * forever. */
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

/* A FIFO with its own spinlock: the building block of sticky/shared queues.
 * Any thread. */
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
/* Pops the head and, if there was one, queues `back` at the tail, under one lock. */
static inline struct th_task *th_lockq_swap(struct th_lockq *lq, struct th_task *back)
{
	if (!__atomic_load_n(&lq->q.head, __ATOMIC_RELAXED))
		return NULL;
	th_spin_lock(&lq->lock);
	struct th_task *t = lq->q.head ? th_fifo_rotate(&lq->q, back) : NULL;
	th_spin_unlock(&lq->lock);
	return t;
}

/* Go's 61st schedule, for a policy's pop() (owner of w only: the tick is w's,
 * unlocked): true on every 61st pop of w, when the policy should look at its
 * other queues first, so that a queue that never empties (a task spawning or
 * yielding in a loop) cannot starve them. */
#define TH_FAIR_EVERY 61
static inline bool th_fair_turn(struct th_worker *w)
{
	if (++w->fair_tick < TH_FAIR_EVERY)
		return false;
	w->fair_tick = 0;
	return true;
}

#endif
