/* policy_steal.c — work stealing as Go, Tokio and Cilk do it: a Chase–Lev deque
 * per worker, idle workers steal half of a random victim's queue. */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "deque.h"
#include "policy.h"
#include "probes.h"

/* Each worker owns two queues.
 *
 * `dq`, a Chase–Lev deque: tasks this worker spawned or woke. The owner
 * pushes and takes at the bottom — LIFO, so the task it just made runnable
 * runs next while its data is still in cache (Cilk's work-first principle,
 * Go's runnext) — and thieves take from the top, the oldest task, which in
 * divide-and-conquer code is the biggest piece of work left.
 *
 * A yield must send the task to the back of the line. The deque's only
 * owner-side end is the LIFO one, where the yielder would be taken again at
 * once and the yield would do nothing; pushing it at the top instead would
 * race the thieves that CAS that end. So yielders go to a FIFO, as in Tokio
 * (LIFO slot + FIFO local queue) and Go (Gosched puts the g on the global
 * queue):
 *
 * `runq`, a FIFO under a spinlock: yielders, and tasks pushed here from
 * other threads (Chase–Lev lets only the owner push). Thieves take from it
 * too (under its lock), except sticky tasks. Yielders must be where thieves
 * can see them: the owner may run a long slice next, and its queue must not
 * be hidden from a worker that falls idle meanwhile. (An owner-only yield
 * queue, published when a yield saw an idle worker, cost darts 1.96x the
 * ideal mean completion instead of ~1.6x: the idle worker waited out every
 * long slice.)
 *
 * `yq`, a plain FIFO only the owner touches, no lock: the yielders of a
 * one-worker runtime, where there is no thief to see them. */
struct steal_worker {
	struct th_deque dq;
	struct th_lockq runq;
	struct th_fifo yq;
} __attribute__((aligned(64)));

struct steal {
	_Atomic int nthieves;
	int max_thieves;
	struct steal_worker w[];
};

#define DEQUE_CAP 256

static int steal_init(struct th_runtime *rt)
{
	size_t size = sizeof(struct steal) + (size_t)rt->nworkers * sizeof(struct steal_worker);
	struct steal *s = aligned_alloc(64, (size + 63) & ~(size_t)63);
	if (!s) {
		th__set_error("steal: out of memory");
		return -1;
	}
	memset(s, 0, size);
	/* Go bounds spinning Ms to half the busy Ps: more thieves than that
	 * only fight over the same victims' top ends and burn CPU the busy
	 * workers could use. At least one, or nobody would ever steal. */
	s->max_thieves = rt->nworkers / 2 > 0 ? rt->nworkers / 2 : 1;
	for (int i = 0; i < rt->nworkers; i++) {
		if (th_deque_init(&s->w[i].dq, DEQUE_CAP) != 0) {
			while (i--)
				th_deque_fini(&s->w[i].dq);
			free(s);
			th__set_error("steal: out of memory");
			return -1;
		}
	}
	rt->policy_data = s;
	return 0;
}

static void steal_fini(struct th_runtime *rt)
{
	struct steal *s = rt->policy_data;
	for (int i = 0; i < rt->nworkers; i++)
		th_deque_fini(&s->w[i].dq);
	free(s);
	rt->policy_data = NULL;
}

/* May a thief take t from a runq? Not a sticky task, and not a th_spawn_at
 * task before its first run: it was asked to start on that worker. */
static bool stealable(const struct th_task *t)
{
	return !t->sticky && !(t->home >= 0 && t->runs == 0);
}

static int push_runq(struct steal *s, int w, struct th_task *t)
{
	th_lockq_push(&s->w[w].runq, t);
	return w;
}

/* Is some worker looking for work? Relaxed: a stale answer only delays
 * publishing yielders to the next yield, or publishes once too often. */
static bool someone_idle(struct th_runtime *rt)
{
	return atomic_load_explicit(&rt->nspinning, memory_order_relaxed) > 0 ||
	       atomic_load_explicit(&rt->nparked, memory_order_relaxed) > 0;
}

/* Should a spawn wake a parked worker to come and steal? Go's wakep()
 * test: someone sleeps and nobody is already looking. Read without a
 * fence: if we miss a worker that is just parking, the task still sits on
 * our own deque and we — awake — run it; the next spawn wakes the sleeper.
 * The full fence the core's wake path needs is then paid only when a
 * worker really is asleep, not on every spawn. */
static bool need_thief(struct th_runtime *rt)
{
	return rt->nworkers > 1 && atomic_load_explicit(&rt->nparked, memory_order_relaxed) > 0 &&
	       atomic_load_explicit(&rt->nspinning, memory_order_relaxed) == 0;
}

/* A yielder (self ran t; if t is sticky, self is its home) of a runtime with
 * more than one worker: one worker's yielders go to yq in steal_yield_swap. */
static inline int push_yielder(struct th_runtime *rt, struct steal *s, struct th_worker *self, struct th_task *t)
{
	struct steal_worker *me = &s->w[self->index];
	/* Where thieves can see it: a worker may run a long slice next, and a
	 * worker that falls idle meanwhile must be able to take the tasks
	 * queued behind it (the darts experiment: 20 short tasks queued behind
	 * one long one). */
	th_lockq_push(&me->runq, t);
	return someone_idle(rt) ? -1 : self->index;
}

/* A spawned or woken task. Out of line: steal_push's yield path, taken after
 * every yield, then saves no registers for it. */
static __attribute__((noinline)) int push_new(struct th_runtime *rt, struct steal *s, struct th_worker *self,
					      struct th_task *t, enum th_why why)
{
	if (t->sticky)
		return push_runq(s, t->home, t);
	if (self && (t->home < 0 || t->home == self->index)) {
		/* Spawned or woken here: the bottom of our own deque. If growing
		 * the deque fails, the runq still takes it. */
		if (th_deque_push(&s->w[self->index].dq, t) != 0)
			return push_runq(s, self->index, t);
		return need_thief(rt) ? -1 : self->index;
	}
	/* From a plain thread or for another worker. A woken task goes back
	 * to where it last ran (its data may still be in that cache). */
	int target = t->home;
	if (target < 0)
		target = why == TH_WHY_WAKE && t->last_worker >= 0 ? t->last_worker : th__place(rt);
	return push_runq(s, target, t);
}

static int steal_push(struct th_runtime *rt, struct th_worker *self, struct th_task *t, enum th_why why)
{
	struct steal *s = rt->policy_data;
	if (why == TH_WHY_YIELD)
		return push_yielder(rt, s, self, t);
	return push_new(rt, s, self, t, why);
}

static void count_steal(struct th_worker *w, struct th_task *t, int victim)
{
	w->steals++;
	TH_PROBE_TASK_STEAL(t->id, w->index, victim);
	(void)t, (void)victim; /* unused when probes compile away */
}

/* Keep what was stolen beyond the first task for later, on our deque. */
static void keep(struct steal *s, struct th_worker *w, struct th_task *t)
{
	if (th_deque_push(&s->w[w->index].dq, t) != 0)
		th_lockq_push(&s->w[w->index].runq, t);
}

/* Steal half of the victim's deque, oldest first. Chase–Lev takes one item
 * per CAS: a batch CAS on top would be unsafe, because the owner takes
 * items below the last one without any CAS and could take one of the batch.
 * So "half" is a run of single steals, each of which can lose a race. */
static struct th_task *steal_deque(struct steal *s, struct th_worker *w, int v)
{
	struct th_deque *dq = &s->w[v].dq;
	long want = (th_deque_size(dq) + 1) / 2, aborts = 0;
	struct th_task *first = NULL;
	for (long got = 0; got < want && aborts < want;) {
		void *x;
		enum th_steal_rc rc = th_deque_steal(dq, &x);
		if (rc == TH_STEAL_EMPTY)
			break;
		if (rc == TH_STEAL_ABORT) {
			aborts++;
			continue;
		}
		got++;
		count_steal(w, x, v);
		if (!first)
			first = x;
		else
			keep(s, w, x);
	}
	return first;
}

/* Steal half of the stealable tasks in the victim's runq (its yielders),
 * from the front. trylock: never make the victim wait for a thief. */
static struct th_task *steal_runq(struct steal *s, struct th_worker *w, int v)
{
	struct th_lockq *lq = &s->w[v].runq;
	if (!__atomic_load_n(&lq->q.head, __ATOMIC_RELAXED) || !th_spin_trylock(&lq->lock))
		return NULL;
	long n = 0;
	for (struct th_task *t = lq->q.head; t; t = t->next)
		n += stealable(t);
	long want = (n + 1) / 2;
	struct th_fifo taken = { 0 }, left = { 0 };
	/* The split is built off to the side, and the queue's head stored once:
	 * the owner peeks at head without the lock before it parks, and a head
	 * emptied for a moment by popping each task here made it park on a queue
	 * of sticky tasks that no one would wake it for (seen under qemu: 1 run in
	 * 20 of test_policy_steal hung with a task in worker 0's runq). */
	for (struct th_task *t = lq->q.head, *next; t; t = next) {
		next = t->next;
		if (taken.len < want && stealable(t))
			th_fifo_push(&taken, t);
		else
			th_fifo_push(&left, t);
	}
	/* head atomically: owners peek at it without the lock */
	__atomic_store_n(&lq->q.head, left.head, __ATOMIC_RELAXED);
	lq->q.tail = left.tail;
	lq->q.len = left.len;
	th_spin_unlock(&lq->lock);
	struct th_task *first = th_fifo_pop(&taken);
	if (first)
		count_steal(w, first, v);
	for (struct th_task *t; (t = th_fifo_pop(&taken));) {
		count_steal(w, t, v);
		keep(s, w, t);
	}
	return first;
}

/* One round over the other workers from a random start: a fixed order
 * would make every thief pick on worker 0 first. */
static struct th_task *steal_round(struct th_runtime *rt, struct steal *s, struct th_worker *w)
{
	int n = rt->nworkers;
	int start = (int)(th__worker_rand(w) % (uint64_t)n);
	for (int pass = 0; pass < 2; pass++) { /* deques first, then runqs */
		for (int i = 0; i < n; i++) {
			int v = (start + i) % n;
			if (v == w->index)
				continue;
			struct th_task *t = pass == 0 ? steal_deque(s, w, v) : steal_runq(s, w, v);
			if (t)
				return t;
		}
	}
	return NULL;
}

/* The worker's own queues, in the order it serves them. */
static inline __attribute__((always_inline)) struct th_task *pop_local(struct th_worker *w,
								       struct steal_worker *me)
{
	struct th_task *t;
	/* a worker whose deque never empties (a task spawning in a loop) would
	 * otherwise never run its yielded and remotely pushed tasks */
	if (th_fair_turn(w) && ((t = th_lockq_pop(&me->runq)) || (t = th_fifo_pop(&me->yq))))
		return t;
	if (!th_deque_owner_empty(&me->dq) && (t = th_deque_take(&me->dq)))
		return t;
	/* runq before yq: a published yielder is older than a private one */
	if ((t = th_lockq_pop(&me->runq)) || (t = th_fifo_pop(&me->yq)))
		return t;
	return NULL;
}

static __attribute__((noinline)) struct th_task *yield_swap_slow(struct th_runtime *rt, struct th_worker *w,
								 struct steal_worker *me, struct th_task *yielder,
								 bool *queued)
{
	struct th_task *t = pop_local(w, me);
	if (t && rt->nworkers == 1) {
		th_fifo_push(&me->yq, yielder);
		*queued = true;
	}
	return t;
}

/* A yield looks only at the worker's own queues: a yielder that is alone on
 * its worker goes on, as it would if it were queued and popped again, rather
 * than making its worker a thief. With one worker its yielders wait in yq,
 * which only it touches (no thief): queued at once.
 *
 * The first test is pop_local's answer where only yielders wait (a one-worker
 * yield loop: no fair turn due, deque and runq empty), kept a leaf so that
 * it saves no registers, the yielder taking the head's place in yq (one
 * rotation, no count to change). callgrind, instructions a yield: 207;
 * 191 with the leaf; 163 with the rotation and th_yield's short path. */
static struct th_task *steal_yield_swap(struct th_runtime *rt, struct th_worker *w, struct th_task *yielder,
					bool *queued)
{
	struct steal *s = rt->policy_data;
	struct steal_worker *me = &s->w[w->index];
	if (rt->nworkers == 1 && w->fair_tick < TH_FAIR_EVERY - 1 && th_deque_owner_empty(&me->dq) &&
	    !__atomic_load_n(&me->runq.q.head, __ATOMIC_RELAXED) && me->yq.head) {
		w->fair_tick++; /* th_fair_turn's count, short of its turn */
		*queued = true;
		return th_fifo_rotate(&me->yq, yielder);
	}
	return yield_swap_slow(rt, w, me, yielder, queued);
}

static struct th_task *steal_pop(struct th_runtime *rt, struct th_worker *w)
{
	struct steal *s = rt->policy_data;
	struct th_task *t = pop_local(w, &s->w[w->index]);
	if (t)
		return t;
	if (rt->nworkers == 1)
		return NULL;
	/* Bounded thieves: the others return empty-handed, and the worker
	 * loop spins or parks them; a spinning thief that finds work makes
	 * room for the next. */
	if (atomic_fetch_add_explicit(&s->nthieves, 1, memory_order_acquire) >= s->max_thieves) {
		atomic_fetch_sub_explicit(&s->nthieves, 1, memory_order_release);
		return NULL;
	}
	t = steal_round(rt, s, w);
	atomic_fetch_sub_explicit(&s->nthieves, 1, memory_order_release);
	return t;
}

const struct th_policy th_policy_steal = {
	.name = "steal",
	.description = "per-worker Chase-Lev deques; idle workers steal half of a random victim's queue",
	.init = steal_init,
	.fini = steal_fini,
	.push = steal_push,
	.pop = steal_pop,
	.yield_swap = steal_yield_swap,
};
