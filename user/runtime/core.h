/* core.h — the runtime's core: the thread that serves a worker, and the core's own
 * functions (switching, waking, blocking, activations, a task's life) for its .c files. */
#ifndef TASKHOP_CORE_H
#define TASKHOP_CORE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "taskhop.h"
#include "taskhop_abi.h"
#include "core_types.h"
#include "policy.h"
#include "runlog.h"

/* A thread that runs workers (Go's M). */
struct th_os_thread {
	int index;                 /* i < nworkers: started serving worker i; then spares */
	int tid;
	pthread_t thread;
	struct th_runtime *rt;
	struct th_worker *p;       /* the worker it serves, NULL: a parked spare */
	bool act;                  /* activations on: keep *state up to date */
	bool lost;                 /* its worker was taken while it was blocked */
	bool fpenv;                /* cfg.task_fpenv: switch with th_ctx_switch_fpenv */
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

/* Caller contracts. "Owner of w": the thread serving worker w now (m->p == w).
 * "m itself": the thread m, on its own stack or a task's. "Bracketed": between
 * th__nopreempt_begin and th__nopreempt_end (preempt.h), which every public
 * entry that reaches these does; none of them may run in a signal handler,
 * unless it says async-signal-safe. */

/* activation.c, for runtime.c and worker.c. th_runtime_start's / _stop's
 * thread: configure before the threads exist, init_threads once they are
 * allocated and not running, start after they run, stop (close, wake spares)
 * before they are joined, free after. */
int th__act_configure(struct th_runtime *rt);
int th__act_start(struct th_runtime *rt);
void th__act_stop(struct th_runtime *rt);
void th__act_free(struct th_runtime *rt);
int th__act_init_threads(struct th_runtime *rt);
/* m itself, entering the runtime from a task (worker_of, after th__act_gate_fast
 * failed): false when its worker was taken while it blocked; then it must not
 * touch its worker. */
bool th__act_enter_runtime(struct th_os_thread *m);
/* The gate's fast path (act_gate.h): *st TASK -> RUNTIME by a load and a store
 * in an rseq critical section. true: done; false: *st was not TASK, the kernel
 * aborted the sequence (the thread left its CPU or took a signal: *st untouched),
 * or there is no rseq here. The caller then takes the compare-and-swap path. */
#include "act_gate.h"
/* m itself, a parked spare: true with m->p set when handed a worker, false
 * when the runtime stops. */
bool th__act_wait_for_worker(struct th_runtime *rt, struct th_os_thread *m);
/* m itself, back in its loop after losing its worker, before it requeues its
 * task: puts it on the spare list (th__thread_main then parks it). */
void th__act_offer_spare(struct th_runtime *rt, struct th_os_thread *m);
/* Any thread (the monitor, or a thread that saw m block): hands m's worker to a
 * spare if m is still blocked; the compare-and-swap on m's state decides. */
bool th__act_take_over(struct th_runtime *rt, struct th_os_thread *m, uint64_t blocked_ns);
/* m itself, or the thread that took m's worker: the state word the kernel
 * side reads. */
static inline void th__act_set(struct th_os_thread *m, uint32_t state)
{
	__atomic_store_n(&m->act_slot->state, state, __ATOMIC_RELEASE);
}

/* worker.c */
void *th__thread_main(void *arg);              /* each runtime thread's body (runtime.c starts them) */
/* th_runtime_stop's thread, with rt->stopping set: every parked worker returns. */
void th__wake_all_workers(struct th_runtime *rt);
/* Any thread, right after a push from `self` (the caller's worker, or NULL)
 * that answered `target` (-1: any): wakes a parked worker for the task unless
 * one is already spinning. Holds no lock; the caller holds none of the policy's. */
void th__wake_for_work(struct th_runtime *rt, struct th_worker *self, int target);
/* A task, on a worker's thread, bracketed, with *lock (a spinlock) held: the
 * task blocks; *lock is released once its registers are saved, so no waker
 * can resume it while it is still on its stack. Returns when it is woken,
 * maybe on another worker. */
void th__task_block(_Atomic int *lock);
/* m itself, in its task, bracketed: m's worker was taken while m blocked:
 * requeue the task as a wake from no worker and go to m's own loop (returns
 * when the task resumes). */
void th__lost_yield(struct th_os_thread *m);
/* task.c and sync.c, any thread: a group's task is spawned into it / has finished */
void th__group_spawn(struct th_group *g, th_fn fn, void *arg);
void th__group_task_done(struct th_group *g);
/* th_runtime_start's thread: a policy by name, or loaded from a .so path;
 * NULL with th__set_error. */
const struct th_policy *th__policy_resolve(const char *name);
const struct th_policy *th__policy_load(const char *path);

/* The running runtime: set by th_runtime_start before its threads start,
 * cleared by th_runtime_stop after they are joined. */
extern struct th_runtime *th__rt;

/* Any thread, not in a signal handler: with activations on it is the gate of
 * th__act_enter_runtime (it may change the thread's state). The worker the
 * calling thread serves: NULL outside a worker, and NULL in a thread whose
 * worker was taken over while it was blocked (activations). */
struct th_worker *th__self_worker(void);
/* Owner of w, or the thread taking w over from a blocked m (th__act_take_over;
 * m never writes w's log again): the log has one producer at a time.
 * Appends a run of t by thread m to w's run log (if it keeps one): from
 * `start`, a th__stamp (m->run_start_ns), to end_ns on CLOCK_MONOTONIC (the
 * kernel's time of a block, activation.c). */
void th__log_run(struct th_worker *w, const struct th_os_thread *m, const struct th_task *t,
		 uint64_t start, uint64_t end_ns, int why);

/* For policies that run tasks outside the workers (kthread), from the thread
 * that runs t: it calls th__set_thread_task(t) first (th_self_task, th_rand_* then see
 * t; blocking calls block the thread), runs t->fn(t->arg), then
 * th__task_finish(t, result) (wakes fetchers, group, drops the runtime ref).
 * th__task_started(t, worker) does the run counters and the task_run probe. */
void th__set_thread_task(struct th_task *t);
void th__task_started(struct th_task *t, int worker);
void th__task_finish(struct th_task *t, void *result);
/* by: the worker the calling thread serves, or NULL (it is counted there). */
void th__task_finish_at(struct th_task *t, void *result, uint64_t done_ns, struct th_worker *by);
/* Returns once every task spawned so far has finished (th_runtime_stop). */
void th__wait_for_every_task(struct th_runtime *rt);
/* th_runtime_stop's thread, after the worker threads are joined: gives back
 * the task structs a worker kept for reuse. */
void th__free_task_cache(struct th_worker *w);

/* Any thread, bracketed, holding no spinlock (wakers take waiters off their
 * list under its lock and call this after releasing it): makes t runnable through the
 * policy and wakes a worker for it. t is new, woken (BLOCKED) or a yielder
 * whose registers are saved, and in no queue. */
void th__make_runnable(struct th_task *t, enum th_why why);
/* The same, from worker `self`, known to the caller: self is the worker the
 * calling thread serves (it owns self), or NULL for a plain thread or one
 * whose worker was taken. */
void th__push_from(struct th_worker *self, struct th_task *t, enum th_why why);

#endif
