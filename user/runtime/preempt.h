/* preempt.h — what the rest of the runtime sees of preemption (preempt.c): the
 * per-thread flag that every runtime entry clears, and the worker's hooks. */
#ifndef TASKHOP_PREEMPT_H
#define TASKHOP_PREEMPT_H

#include <stdatomic.h>
#include <stdbool.h>

#include <stdint.h>

#include "taskhop.h"

struct th_task;
struct th_os_thread;

/* True only while this thread runs the own code of a preemptible task; the
 * signal handler preempts nothing else, so the runtime's code (switches,
 * policies, logs, spinlocks) is never interrupted, as Go's asyncPreempt
 * only acts at async safe points. Every public entry that touches runtime
 * state brackets itself with th__nopreempt_begin/end. The flag is a
 * thread-local byte read and written by fs-relative instructions: a task
 * preempted between the read and the store of begin resumes on some thread
 * whose flag its resumption set, and the store then clears that thread's. */
extern __thread bool th__preempt_on __attribute__((tls_model("initial-exec")));

/* A tick that found the task overdue but inside the runtime leaves this
 * (the run's run_seq + 1); the runtime's exit then yields for the task, as
 * Go preempts at the next safe point when the signal found none. So a task
 * that spends most of its time in runtime calls is still preempted. */
extern __thread uint64_t th__preempt_pending __attribute__((tls_model("initial-exec")));
void th__preempt_at_exit(void);

/* Under TSan preemption is refused, and TSan's model of our fibers reports
 * a thread-local written by one task and read by another that ran on the
 * same thread later as a race (seen on both thread-locals below): there
 * neither is touched from a task, and th_self_task reads the worker. */
#if defined(__SANITIZE_THREAD__)
#define TH_PREEMPT_FLAG 0
#else
#define TH_PREEMPT_FLAG 1
#endif

/* stack_loop: a task's own code starts (on: it is preemptible) or ended. */
static inline void th__preempt_set(bool on)
{
	if (TH_PREEMPT_FLAG)
		th__preempt_on = on;
}

static inline bool th__nopreempt_begin(void)
{
	if (!TH_PREEMPT_FLAG)
		return false;
	bool was = th__preempt_on;
	th__preempt_on = false;
	atomic_signal_fence(memory_order_seq_cst);
	return was;
}

static inline void th__nopreempt_end(bool was)
{
	if (!TH_PREEMPT_FLAG)
		return;
	atomic_signal_fence(memory_order_seq_cst);
	th__preempt_on = was;
	if (was && __builtin_expect(th__preempt_pending != 0, 0))
		th__preempt_at_exit();
}

/* The task this thread runs (a worker's current task, a kthread task),
 * read in one instruction so that th_self_task needs no bracket: darts
 * draws through it in its inner loop, which must stay preemptible. */
extern __thread struct th_task *th__thread_task __attribute__((tls_model("initial-exec")));

void th__set_thread_task(struct th_task *t); /* task.c */

/* begin_run: the worker runs t now (NULL: its own loop). On x86-64 every
 * thread-local access is %fs-relative, so it lands on the thread that runs it.
 * On aarch64 the compiler reads the thread pointer (tpidr_el0) into a register
 * once and may reuse it across a context switch, e.g. hoisted out of
 * stack_loop's loop: a stack resumed on thread B then wrote thread A's
 * th__thread_task, and a task on B drew from another task's RNG (seen under
 * qemu: 1 run in 12 of rng_stream_depends_only_on_seed_and_task_id). There
 * the store goes through a call in another file, which reads it afresh. */
static inline void th__set_running_task(struct th_task *t)
{
	if (!TH_PREEMPT_FLAG)
		return;
#if defined(__x86_64__)
	th__thread_task = t;
#else
	th__set_thread_task(t);
#endif
}

/* CLOCK_THREAD_CPUTIME_ID in ns (a system call). */
uint64_t th__thread_cpu_ns(void);

/* th_runtime_start: 0, or -1 with th_last_error set when preemption cannot
 * work here (architecture, sanitizer, quantum out of range). */
int th__preempt_check(const struct th_config *cfg);
/* The worker's timer: created and deleted by the worker thread itself,
 * stopped while it sleeps. No-ops when cfg.preempt_ns is 0. */
void th__preempt_thread_start(struct th_os_thread *m);
void th__preempt_thread_stop(struct th_os_thread *m);
void th__preempt_idle(struct th_os_thread *m, bool idle);
/* m's task was preempted and the policy had nothing else for m: its timer
 * ticks less often (preempt.c: MAX_STRETCH). Owner thread only. */
void th__preempt_found_nothing(struct th_os_thread *m);
/* A task was pushed: every worker's timer back to one quantum. Any thread;
 * callers test rt->preempt_stretched first (a relaxed load), so the push
 * path pays nothing while no timer is stretched. Not while threads stop. */
struct th_runtime;
void th__preempt_unstretch(struct th_runtime *rt);
/* worker.c: yields the current task on its own behalf (the trampoline). */
void th__yield_preempted(void);

#endif
