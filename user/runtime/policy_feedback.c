/* policy_feedback.c — multi-level feedback over attained CPU time: new tasks at the
 * top level, the oldest first within a level, a level lower for each quantum used. */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "policy.h"
#include "mq_heap.h"
#include "preempt.h"

/* The darts experiment asks for short tasks out early when one task is 100x
 * longer, and nobody tells the runtime which task is which. Shortest
 * processing time first would be optimal for mean completion, but needs the
 * sizes. fcfs comes within 1% of it when the long task is spawned last, and
 * is 1.46x off when it comes first: an old long task keeps its worker.
 *
 * A multi-level feedback queue (Corbato's CTSS, 1962; every Unix since)
 * learns sizes from what tasks have already used: a task that has run long
 * is probably long. Levels are ranges of attained CPU time. A new task
 * enters level 0; within a level the oldest task runs first and keeps the
 * worker across its own yields until it has used that level's quantum;
 * then it drops a level, behind every task of the levels above. With
 * preemption (cfg.preempt_ns) the drop happens within a quantum of the
 * crossing, so a long task spawned first gives way after q0 whatever it
 * does; without it the drop waits for the task's next yield.
 *
 * Level k holds attained times in [q0 (2^k - 1), q0 (2^(k+1) - 1)): each
 * quantum twice the one above, the classic choice, so a long task is
 * charged a bounded share of switches and its own order among long tasks
 * still follows age. The last level has no end.
 *
 * q0 learns the size of a short task. A fixed q0 must sit just above the
 * short tasks' size: below it they are cut into rounds and all finish late,
 * above it a long task spawned first holds a worker for q0 while short ones
 * wait. With q0 = 50 ms chosen for darts' 30 ms tasks, inlining the RNG made
 * them 11 ms and long-first went to 1.27x the SPT bound. So q0 is learned:
 * 1.5 times the median attained time of the last 16 tasks to finish, 50 ms
 * until one has. A task that has run 1.5 times longer than most finished
 * tasks is probably long. Before any task finishes nothing is known, and a
 * large start keeps spawn order among tasks of equal size, as fcfs does.
 * tools/bench/feedback_model.py (no runtime costs, 2 workers, 1 ms
 * preemption, mean completion over the SPT bound, 20 short + 1 long task
 * 100 times longer):
 *
 *   short task ms                   3      11      30
 *   fixed q0 20 ms, long first     1.236   1.074   1.358 (long last 1.300)
 *   fixed q0 50 ms, long first     1.405   1.172   1.068
 *   learned q0, long first         1.068   1.063   1.061
 *   learned q0, long last          1.000   1.000   1.000
 *   (feedback_model.py --small 3 --large 300, and so on)
 *
 * The cost is mixed sizes: if most finished tasks are tiny, q0 is small and
 * tasks a few times larger drop levels early, sharing the workers in rounds.
 * The median of recent completions follows a workload that changes phase.
 *
 * Attained time is charged here, not in the worker: each pop or yield_pop
 * on a worker ends the run of the task the worker ran (w->cur), so the
 * time since the run began is that task's. The clock is the worker
 * thread's CPU clock, not the TSC: with the TSC, a worker the kernel
 * preempted kept charging its task, and on a machine shared with other
 * work (a load average of 20 on 2 CPUs) darts' 30 ms tasks were charged
 * hundreds of ms, cut into rounds, and feedback came out worse than fcfs.
 * A reading is a system call (about 0.3 us here), two per run, paid only
 * when a task starts or stops: an idle worker's pops read nothing.
 *
 * One min-heap keyed by (level, id) under one lock, as fcfs's heap is keyed
 * by id: a yield compares the yielder's key with the top key, read without
 * the lock. Sticky tasks, and th_spawn_at tasks until their first run, wait
 * in their worker's own FIFO, served first, as in fcfs. Work-conserving on
 * any number of workers: any worker takes the heap's top. No aging: a
 * stream of new tasks starves the lowest levels, as SRPT starves long jobs. */

#ifndef FEEDBACK_Q0_MS
#define FEEDBACK_Q0_MS 50 /* until a task has finished */
#endif
#define Q0_MIN_NS 100000u /* 0.1 ms: a preemption costs ~30 us here */
#define LEVELS 8
#define RECENT 16 /* finished tasks q0 learns from */
#define LEVEL_SHIFT 56 /* key = level << 56 | id: ids stay below 2^56 */

struct fb_worker {
	uint64_t since;      /* the thread's CPU ns when its current run began */
	uint64_t base;       /* its task's attained ns then */
	const void *thread;  /* the thread that began it (activations: a spare may take w) */
	bool running;        /* a task's run began and was not charged yet */
} __attribute__((aligned(64)));

struct feedback {
	struct mq_heap heap;
	_Atomic uint64_t q0;           /* level 0's quantum, ns; level k's is q0 2^k */
	_Atomic int recent_lock;
	unsigned nrecent;              /* finished tasks seen, the last RECENT kept */
	uint64_t recent[RECENT];       /* their attained ns */
	struct fb_worker *workers;
	struct th_lockq sticky[]; /* one per worker */
};

/* policy_ptr holds the task's attained CPU time in ns. */
static uint64_t attained(const struct th_task *t)
{
	return (uint64_t)(uintptr_t)t->policy_ptr;
}

/* Level k holds attained times in [q0 (2^k - 1), q0 (2^(k+1) - 1)). */
static int level_of(const struct feedback *f, uint64_t ns)
{
	uint64_t q = atomic_load_explicit(&f->q0, memory_order_relaxed), end = q;
	int k = 0;
	while (k < LEVELS - 1 && ns >= end) {
		q *= 2;
		end += q;
		k++;
	}
	return k;
}

static int u64_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return (x > y) - (x < y);
}

/* A task finished after `ns` of CPU: q0 becomes 1.5 times the median of the
 * last RECENT finished tasks' attained times. */
static void learn_q0(struct feedback *f, uint64_t ns)
{
	uint64_t sorted[RECENT];
	th_spin_lock(&f->recent_lock);
	f->recent[f->nrecent++ % RECENT] = ns;
	unsigned n = f->nrecent < RECENT ? f->nrecent : RECENT;
	memcpy(sorted, f->recent, n * sizeof(*sorted));
	th_spin_unlock(&f->recent_lock);
	qsort(sorted, n, sizeof(*sorted), u64_cmp);
	uint64_t q = sorted[n / 2] + sorted[n / 2] / 2;
	atomic_store_explicit(&f->q0, q < Q0_MIN_NS ? Q0_MIN_NS : q, memory_order_relaxed);
}

static uint64_t key_of(const struct feedback *f, const struct th_task *t)
{
	return (uint64_t)level_of(f, attained(t)) << LEVEL_SHIFT | t->id;
}

/* The task w ran (if any) is charged for its run; returns the clock, or 0
 * when there was no task and it was not read. */
static uint64_t charge(struct feedback *f, struct th_worker *w)
{
	/* the calling thread serves w: its task is w's */
	struct th_task *cur = th__current_task();
	struct fb_worker *fw = &f->workers[w->index];
	bool ran = fw->running && fw->thread == th__self_thread();
	fw->running = false;
	if (!cur && !ran)
		return 0;
	uint64_t now = th__thread_cpu_ns();
	uint64_t used = now > fw->since ? now - fw->since : 0;
	if (cur) {
		uint64_t a = attained(cur) + used;
		cur->policy_ptr = (void *)(uintptr_t)a;
		/* a yielder the pop lets go on keeps running; a blocked task does not */
		fw->base = a;
		fw->thread = th__self_thread();
		fw->running = atomic_load_explicit(&cur->state, memory_order_relaxed) == TH_RUNNING;
	} else {
		/* only exit_task pops with no current task after a run this thread
		 * began: the task finished (it may be freed already: not touched) */
		learn_q0(f, fw->base + used);
	}
	fw->since = now;
	return now;
}

/* t's run on w begins (now: the clock if charge read it). */
static struct th_task *begin(struct feedback *f, struct th_worker *w, struct th_task *t,
			     uint64_t now)
{
	if (t) {
		struct fb_worker *fw = &f->workers[w->index];
		fw->since = now ? now : th__thread_cpu_ns();
		fw->base = attained(t);
		fw->thread = th__self_thread();
		fw->running = true;
	}
	return t;
}

static int feedback_init(struct th_runtime *rt)
{
	size_t size = sizeof(struct feedback) + (size_t)rt->nworkers * sizeof(struct th_lockq);
	struct feedback *f = aligned_alloc(64, (size + 63) & ~(size_t)63);
	struct fb_worker *ws = aligned_alloc(64, (size_t)rt->nworkers * sizeof(*ws));
	if (!f || !ws) {
		free(f);
		free(ws);
		th__set_error("feedback: out of memory");
		return -1;
	}
	memset(f, 0, size);
	memset(ws, 0, (size_t)rt->nworkers * sizeof(*ws));
	atomic_init(&f->heap.top, MQ_EMPTY);
	f->workers = ws;
	atomic_init(&f->q0, (uint64_t)FEEDBACK_Q0_MS * 1000000u);
	rt->policy_data = f;
	return 0;
}

static void feedback_fini(struct th_runtime *rt)
{
	struct feedback *f = rt->policy_data;
	mq_heap_free(&f->heap);
	free(f->workers);
	free(f);
	rt->policy_data = NULL;
}

static int feedback_push(struct th_runtime *rt, struct th_worker *self, struct th_task *t,
			 enum th_why why)
{
	(void)self;
	struct feedback *f = rt->policy_data;
	if (t->sticky || (why == TH_WHY_SPAWN && t->home >= 0)) {
		int home = t->home; /* once queued, t may run and end on its worker */
		th_lockq_push(&f->sticky[home], t);
		return home;
	}
	t->policy_word = key_of(f, t);
	mq_heap_push(&f->heap, t);
	return -1;
}

static struct th_task *feedback_pop(struct th_runtime *rt, struct th_worker *w)
{
	struct feedback *f = rt->policy_data;
	struct th_task *t = NULL;
	uint64_t now = charge(f, w);
	/* a sticky task yielding in a loop would shut the heap out */
	if (th_fair_turn(w))
		t = mq_heap_pop_below(&f->heap, MQ_EMPTY);
	if (!t)
		t = th_lockq_pop(&f->sticky[w->index]);
	if (!t)
		t = mq_heap_pop_below(&f->heap, MQ_EMPTY);
	return begin(f, w, t, now);
}

/* The yielder goes on unless a task of a higher level, or an older one of
 * its level, waits (or one that must start or stay here). Its key is
 * computed afresh: the quantum it has just used up moves it down. */
static struct th_task *feedback_yield_pop(struct th_runtime *rt, struct th_worker *w,
					  const struct th_task *yielder)
{
	struct feedback *f = rt->policy_data;
	charge(f, w);
	struct th_task *t = th_lockq_pop(&f->sticky[w->index]);
	if (t)
		return t;
	return mq_heap_pop_below(&f->heap, key_of(f, yielder));
}

const struct th_policy th_policy_feedback = {
	.name = "feedback",
	.description = "multi-level feedback over attained CPU time: new tasks first, the oldest first "
		       "within a level, a level down per quantum used (q0 1.5x the median finished task, "
		       "50 ms until one has; doubling)",
	.init = feedback_init,
	.fini = feedback_fini,
	.push = feedback_push,
	.pop = feedback_pop,
	.yield_pop = feedback_yield_pop,
	.ticks_every_quantum = true, /* a level's quantum ends between ticks, not at a pop */
};
