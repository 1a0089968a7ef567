/* internal.h — the runtime's private structures and the policy plug-in interface.
 * A policy sees tasks and workers only through the fields documented here. */
#ifndef TASKHOP_INTERNAL_H
#define TASKHOP_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "taskhop.h"
#include "taskhop_abi.h"
#include "context.h"
#include "tscclock.h"
#include "runlog.h"

enum th_state { TH_RUNNABLE, TH_RUNNING, TH_BLOCKED, TH_DONE };

struct th_task {
	/* --- identity and work --- */
	uint64_t id;
	th_fn fn;
	void *arg;
	void *result;
	_Atomic int state;         /* enum th_state */
	_Atomic int refs;          /* user handle + runtime */
	_Atomic uint32_t magic;    /* TH_TASK_LIVE while the user handle is valid (task.c) */
	struct th_group *group;    /* @sync group, or NULL */

	/* --- placement: read by policies --- */
	int home;                  /* th_spawn_on / th_spawn_at target, or -1 */
	bool sticky;               /* must only ever run on `home` */
	int spawn_worker;          /* -1 when spawned by a plain thread */
	int last_worker;           /* -1 before the first run */
	int first_worker;

	/* --- policy-private: one intrusive link and two words --- */
	struct th_task *next;
	uint64_t policy_word;      /* e.g. multiqueue priority */
	void *policy_ptr;

	/* --- execution --- */
	struct th_ctx ctx;
	struct th_stack stack;     /* mapped at first run, unmapped when done */
	struct th_rng rng;
	void *done_waiters;        /* struct th_waiter list, under done_lock */
	_Atomic int done_lock;

	/* --- counters --- */
	uint64_t runs, yields, blocks, worker_hops;
	uint64_t spawn_ns, first_run_ns, done_ns;
	uint64_t kernel_tid;
	bool preemptible;          /* th_spawn_opts: preempt.c may interrupt it */
	uint64_t preempted;        /* times it was */
	int64_t cpu_skew_ns;       /* th_task_cpu_ns: thread CPU clocks left at preemptions */
	uint64_t activations;      /* spare threads started while it blocked */
};

struct th_runtime;

/* Go's P/M split. A worker (P) is its index, queues (policy_data), RNG,
 * caches and run log: what policies see. A thread (M, struct th_os_thread)
 * is what runs a worker's loop and its tasks. Normally thread i serves
 * worker i for the whole run; with activations on, a spare thread takes a
 * worker over while the thread that served it is blocked in the kernel
 * inside a task (activation.c). Owner-only operations on a worker (its
 * deque, caches, log) are done by whichever thread serves it now. */
struct th_worker {
	int index;
	int tid;                   /* kernel tid of the thread serving it (last known) */
	int cpu;                   /* pinned CPU or -1 */
	struct th_runtime *rt;
	struct th_tscclock clock;  /* task timestamps when the run log is off */
	struct th_rng rng;         /* for the policy's random choices */
	void *policy_data;         /* per-worker policy state */
	uint32_t fair_tick;        /* pops since the last fair turn (th_fair_turn) */
	struct th_stack_cache *stacks;
	_Atomic uint32_t park_word; /* futex: 1 = told to wake */
	_Atomic int parked;
	struct th_runlog *log;     /* run log (runlog.h): its line of the run-log area */
	uint64_t steals;           /* tasks this worker took from others (policies count) */
	uint64_t activations;      /* times a spare thread took it over */
	struct th_task *free_tasks; /* freed task structs kept for reuse (task.c) */
	int nfree_tasks;
} __attribute__((aligned(64)));

/* A thread that runs workers (Go's M). */
struct th_os_thread {
	int index;                 /* i < nworkers: started serving worker i; then spares */
	int tid;
	pthread_t thread;
	struct th_runtime *rt;
	struct th_worker *p;       /* the worker it serves, NULL: a parked spare */
	bool act;                  /* activations on: keep *state up to date */
	bool lost;                 /* its worker was taken while it was blocked */
	struct th_ctx sched_ctx;   /* the thread's own stack: the scheduler loop */
	struct th_task *cur;       /* task running now, or NULL */
	/* What the last switch left for the next one to run here to finish
	 * (worker.c, finish_switch): requeue prev (a yield), release prev_lock
	 * (a block), or cache dead_stack (a task that ended). */
	struct th_task *prev;
	int prev_why;              /* enum th_why; TH_WHY_SPAWN: nothing to do */
	_Atomic int *prev_lock;
	struct th_stack dead_stack;
	uint64_t run_start_ns;     /* run log: when cur's run began, a th__stamp (counter ticks) */
	uint64_t switch_seq;
	/* published slot for the recorder (NULL when off) */
	struct th_slot *slot;
	/* activations: the state word the kernel side reads (enum th_slot_state),
	 * in the activation map's line of this thread or in own_line */
	struct th_slot *act_slot;
	_Atomic uint32_t spare_word; /* futex of a parked spare: 1 = a worker was handed over */
	uint64_t handoff_ns;       /* when the block that handed it a worker began */
	void *tsan_fiber;          /* the thread's own fiber under TSan */
	const void *stack_bottom;  /* the thread's own stack, for ASan */
	size_t stack_size;
	void *altstack;            /* sigaltstack for the stack-overflow report */
	struct th_slot_line own_line; /* act_slot when no activation map is published */
	/* preemption is per thread: the timer signals a tid, and the run it
	 * watches is the one this thread runs */
	uint64_t run_seq;          /* bumped as each run begins: preempt.c's clock */
	struct th_preempt_worker *preempt; /* its timer (preempt.c), NULL when off */
} __attribute__((aligned(64)));

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

struct th_runtime {
	int nworkers;
	struct th_worker *workers;
	int nthreads;               /* nworkers + spares */
	struct th_os_thread *threads;
	const struct th_policy *policy;
	void *policy_data;          /* global policy state */
	struct th_config cfg;
	_Atomic uint64_t next_id;
	_Atomic long live_tasks;    /* spawned and not yet done */
	_Atomic int nparked;
	_Atomic int nspinning;      /* workers looking for work right now */
	_Atomic uint32_t quiet_word; /* futex: bumped when live_tasks reaches 0 */
	_Atomic int fence_word;      /* TSan builds: the park/push barrier */
	_Atomic bool stopping;
	struct th_area_head *area;  /* the run-log area (area.c) */
	size_t area_size;
	_Atomic uint32_t rr_next;   /* round-robin placement */
	struct th_rng place_rng;    /* seeded random placement (under place_lock) */
	_Atomic int place_lock;
	/* activations (activation.c) */
	int act_mode;               /* enum th_activations in effect */
	int nspares;
	const struct th_activation_backend *act_backend; /* opened, or NULL */
	_Atomic int spare_lock;     /* guards the fields below */
	int nidle;
	int *idle;                  /* indices of parked spare threads */
	uint64_t act_count, act_missed;
	size_t act_nlat;
	uint64_t *act_lat;
};

/* activation.c, for runtime.c and worker.c */
int th__act_configure(struct th_runtime *rt);  /* before the threads exist */
int th__act_start(struct th_runtime *rt);      /* after they run */
void th__act_stop(struct th_runtime *rt);      /* stopping: close, wake spares */
void th__act_free(struct th_runtime *rt);
bool th__act_enter_runtime(struct th_os_thread *m); /* false: its worker was taken */
bool th__act_wait_for_worker(struct th_runtime *rt, struct th_os_thread *m);
void th__act_retire(struct th_runtime *rt, struct th_os_thread *m);
int th__act_init_threads(struct th_runtime *rt); /* threads allocated, not running */
bool th__act_take_over(struct th_runtime *rt, struct th_os_thread *m, uint64_t blocked_ns);
/* worker.c */
struct th_os_thread *th__self_thread(void);    /* NULL outside the runtime's threads */
void *th__thread_main(void *arg);              /* each runtime thread's body (runtime.c starts them) */
void th__wake_all_workers(struct th_runtime *rt); /* stopping: every parked worker returns */
/* A task became runnable on `target` (-1: any): wakes a parked worker for it
 * unless one is already spinning. */
void th__wake_for_work(struct th_runtime *rt, struct th_worker *self, int target);
/* The running task blocks; *lock (held by the caller) is released once its
 * registers are saved, so no waker can resume it while it is still on its stack. */
void th__task_block(_Atomic int *lock);
/* task.c and sync.c: a group's task is spawned into it / has finished */
void th__group_spawn(struct th_group *g, th_fn fn, void *arg);
void th__group_task_done(struct th_group *g);
/* policy.c and policy_plugin.c: a policy by name, or loaded from a .so path */
const struct th_policy *th__policy_resolve(const char *name);
const struct th_policy *th__policy_load(const char *path);
/* m's worker was taken while m blocked in its task: requeue the task as a
 * wake from no worker and go to m's own loop (returns when the task resumes). */
void th__lost_yield(struct th_os_thread *m);
static inline void th__act_set(struct th_os_thread *m, uint32_t state)
{
	__atomic_store_n(&m->act_slot->state, state, __ATOMIC_RELEASE);
}

extern struct th_runtime *th__rt;

/* Helpers the policies may use. */
void th__set_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
int th__place(struct th_runtime *rt);           /* a worker per cfg.placement */
uint64_t th__worker_rand(struct th_worker *w);  /* the worker's own RNG */
/* The worker the calling thread serves: NULL outside a worker, and NULL in a
 * thread whose worker was taken over while it was blocked (activations). */
struct th_worker *th__self_worker(void);
/* The task the calling thread runs (NULL in a scheduler loop or outside). */
struct th_task *th__current_task(void);
/* Appends a run of t by thread m to w's run log (if it keeps one): from
 * `start`, a th__stamp (m->run_start_ns), to end_ns on CLOCK_MONOTONIC (the
 * kernel's time of a block, activation.c). */
void th__log_run(struct th_worker *w, const struct th_os_thread *m, const struct th_task *t,
		 uint64_t start, uint64_t end_ns, int why);

/* For policies that run tasks outside the workers (kthread): the thread that
 * runs t calls th__set_thread_task(t) first (th_self_task, th_rand_* then see
 * t; blocking calls block the thread), runs t->fn(t->arg), then
 * th__task_finish(t, result) (wakes fetchers, group, drops the runtime ref).
 * th__task_started(t, worker) does the run counters and the task_run probe. */
void th__set_thread_task(struct th_task *t);
void th__task_started(struct th_task *t, int worker);
void th__task_finish(struct th_task *t, void *result);
void th__task_finish_at(struct th_task *t, void *result, uint64_t done_ns);
/* Gives back the task structs a worker kept for reuse (runtime stop). */
void th__free_task_cache(struct th_worker *w);

/* Makes t runnable through the policy and wakes a worker for it. */
void th__make_runnable(struct th_task *t, enum th_why why);
/* The same, from worker `self` (NULL: a plain thread), known to the caller. */
void th__push_from(struct th_worker *self, struct th_task *t, enum th_why why);

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

/* Policy registry: each policy file defines one `const struct th_policy`. */
extern const struct th_policy th_policy_sticky, th_policy_shared, th_policy_steal,
	th_policy_multiqueue, th_policy_fcfs, th_policy_kthread, th_policy_feedback;

#endif
