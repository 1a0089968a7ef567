/* worker.c — the worker loop: ask the policy for a task, switch to it, and on
 * its return act on why it came back (yield, block, done); idle, spin then park. */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "guard.h"
#include "core.h"
#include "core_check.h"
#include "preempt.h"
#include "taskhop_abi.h"
#include "probes.h"
#include "sanitizer.h"
#include "stackcache.h"
#include "waitq.h"

/* Hidden, not static: self_thread's x86-64 read names it in assembly. */
__attribute__((visibility("hidden"))) __thread struct th_os_thread *th__tls_thread
	__attribute__((tls_model("initial-exec")));

/* A task may resume on another thread, so no caller may keep a value derived
 * from this thread's TLS across a switch. On x86-64 every TLS access is
 * %fs-relative, so what must not be kept is the value itself: one volatile
 * load, ordered after the switch by its memory clobber (two instructions;
 * an opaque call, as elsewhere, cost a dozen on every yield's two reads).
 * Elsewhere (aarch64) the compiler may also keep the thread pointer in a
 * register across the switch, so the read is an opaque call. */
#if defined(__clang__)
#define TH_OPAQUE __attribute__((noinline, optnone))
#else
#define TH_OPAQUE __attribute__((noinline, noipa))
#endif
#if defined(__x86_64__)
static inline __attribute__((always_inline)) struct th_os_thread *self_thread(void)
{
	struct th_os_thread *m;
	__asm__ volatile("movq th__tls_thread@gottpoff(%%rip), %0\n\tmovq %%fs:(%0), %0" : "=r"(m) : : "memory");
	return m;
}
#else
TH_OPAQUE static struct th_os_thread *self_thread(void)
{
	return th__tls_thread;
}
#endif

struct th_os_thread *th__self_thread(void)
{
	return self_thread();
}

/* The worker m serves, entering the runtime (activations: NULL when it was
 * taken while m blocked). For callers that have just read m themselves: a
 * second opaque TLS read on every yield cost about 2 ns. */
static inline struct th_worker *worker_of(struct th_os_thread *m)
{
	if (!m)
		return NULL;
	if (__builtin_expect(!m->act, 1))
		return m->p;
	if (th__act_gate_fast((_Atomic uint32_t *)&m->act_slot->state))
		return m->p;
	return th__act_enter_runtime(m) ? m->p : NULL;
}

/* With activations off this is one predictable branch more than a TLS read. */
TH_OPAQUE struct th_worker *th__self_worker(void)
{
	return worker_of(th__tls_thread);
}

struct th_task *th__current_task(void)
{
	struct th_os_thread *m = self_thread();
	return m ? m->cur : NULL;
}

uint64_t th__worker_rand(struct th_worker *w)
{
	return th_rng_next(&w->rng);
}

/* ---- what the policy hands back ------------------------------------------ */

/* Debug and sanitizer builds: the task a policy's pop or yield_pop handed to
 * worker w (its owner calls) must be a runnable task it was pushed, handed
 * out once per push (so claimed here: RUNNABLE -> RUNNING, before any other
 * worker could take it a second time), and a sticky one only to its home. */
static void check_handed(struct th_runtime *rt, struct th_worker *w, struct th_task *t,
			 const struct th_task *yielder)
{
	struct th_os_thread *m = self_thread();
	TH_CHECK(m && m->p == w, "pop for worker %d by a thread that does not serve it", w->index);
	if (!t)
		return;
	TH_CHECK(t != yielder, "policy %s handed task %llu back to its own yield (it is running)",
		 rt->policy->name, (unsigned long long)t->id);
	int was = atomic_exchange_explicit(&t->state, TH_RUNNING, memory_order_relaxed);
	TH_CHECK(was == TH_RUNNABLE, "policy %s handed task %llu to worker %d while it is %s "
		 "(each push hands a task out once)", rt->policy->name, (unsigned long long)t->id,
		 w->index, th__state_name(was));
	TH_CHECK(atomic_fetch_sub_explicit(&rt->queued, 1, memory_order_relaxed) > 0,
		 "policy %s handed out more tasks than were pushed (task %llu)", rt->policy->name,
		 (unsigned long long)t->id);
	TH_CHECK(!t->sticky || t->home == w->index, "policy %s handed sticky task %llu (home %d) to worker %d",
		 rt->policy->name, (unsigned long long)t->id, t->home, w->index);
}

/* Owner of w only: the policy's next task for w (NULL: none). */
static inline struct th_task *policy_pop(struct th_runtime *rt, struct th_worker *w)
{
	struct th_task *t = rt->policy->pop(rt, w);
	if (TH_CHECKS)
		check_handed(rt, w, t, NULL);
	return t;
}

/* Owner of w only, from the running `yielder`: the task to switch to, or NULL;
 * *queued: the policy has queued the yielder already (yield_swap). */
static inline struct th_task *policy_yield_pop(struct th_runtime *rt, struct th_worker *w,
					       struct th_task *yielder, bool *queued)
{
	const struct th_policy *p = rt->policy;
	struct th_task *t = p->yield_swap ? p->yield_swap(rt, w, yielder, queued)
			    : p->yield_pop ? p->yield_pop(rt, w, yielder) : p->pop(rt, w);
	if (TH_CHECKS)
		check_handed(rt, w, t, yielder);
	return t;
}

/* ---- switching ------------------------------------------------------------ */

static void publish(struct th_os_thread *m, uint64_t task_id)
{
	struct th_slot *s = m->slot;
	if (!s)
		return;
	s->task_id = task_id;
	__atomic_store_n(&s->seq, ++m->switch_seq, __ATOMIC_RELEASE);
}

/* The run log's clock: one counter reading per switch serves as the end of
 * one run and the start of the next; the drain dates it (runlog.h). 0 while
 * nobody drains the log: the run then begun is not logged.
 *
 * Which reading: only a run's start can be read too early, when the task was
 * last run by another worker: an unordered read may be taken before the loads
 * of the pop that found the task, i.e. before that worker's end stamp of its
 * previous run (tscclock.h). An end stamp cannot: the task is handed on by a
 * store after it. So the fence (about 8 ns on top of a 12 ns rdtsc on the
 * EPYC guest measured, where a yield is 26 ns) is paid only when `next`, the
 * task whose run begins, last ran on another worker or never ran. */
static inline uint64_t log_clock_for(const struct th_worker *w, const struct th_task *next)
{
	if (!th__runlog_on(w->log))
		return 0;
	return next && next->last_worker != w->index ? th__stamp() : th__stamp_unordered();
}

/* A reading that starts no task's run (it ends one, or starts the loop). */
static inline uint64_t log_clock(const struct th_worker *w)
{
	return log_clock_for(w, NULL);
}

static inline void log_run(struct th_worker *w, const struct th_os_thread *m, const struct th_task *t,
			   uint64_t start, uint64_t end, int why, uint32_t flags)
{
	th__runlog_push(w->log, &(struct th_area_run){
		.task_id = t->id, .start = start, .end = end,
		.worker = (uint16_t)w->index, .why = (uint8_t)why, .thread = (uint16_t)m->index,
		.flags = (uint8_t)flags,
	});
}

void th__log_run(struct th_worker *w, const struct th_os_thread *m, const struct th_task *t,
		 uint64_t start, uint64_t end_ns, int why)
{
	if (start && th__runlog_on(w->log))
		log_run(w, m, t, start, end_ns, why, TH_AREA_RUN_END_NS);
}

/* A run is logged when both its ends were stamped: a drainer that arrives (or
 * leaves) mid-run makes one end 0, and that run is not one it can date. */
static inline void end_run(struct th_os_thread *m, const struct th_task *t, int why, uint64_t now)
{
	if (now && m->run_start_ns)
		log_run(m->p, m, t, m->run_start_ns, now, why, 0);
}

/* A task's own timestamps: the exact clock when the run log is on (its
 * records are joined with the kernel's), else the cheaper TSC reading. */
static inline uint64_t task_clock(struct th_worker *w)
{
	return th__runlog_on(w->log) ? th_now_ns() : th__tscclock_now(&w->clock);
}

/* now: the clock, if the caller has read it already, else 0. */
static inline __attribute__((always_inline)) void task_started(struct th_task *t, int worker, uint64_t now)
{
	int prev = t->last_worker;
	if (t->runs++ == 0) {
		t->first_worker = worker;
		t->first_run_ns = now ? now : th_now_ns();
	} else if (prev != worker) {
		t->worker_hops++;
	}
	t->last_worker = worker;
	TH_PROBE_TASK_RUN(t->id, worker, prev);
}

void th__task_started(struct th_task *t, int worker)
{
	task_started(t, worker, 0);
}

/* m starts running `to` (NULL: its scheduler loop) at `now`, a log_clock stamp. */
static inline __attribute__((always_inline)) void begin_run(struct th_os_thread *m, struct th_task *to,
							    uint64_t now)
{
	m->run_start_ns = now;
	m->cur = to;
	th__set_running_task(to);
	m->run_seq++;
	if (to) {
		/* a first run needs a timestamp on CLOCK_MONOTONIC (now is a log stamp) */
		task_started(to, m->p->index, to->runs ? 0 : task_clock(m->p));
		atomic_store_explicit(&to->state, TH_RUNNING, memory_order_relaxed);
	}
	publish(m, to ? to->id : 0);
}

static void stack_loop(void *arg);

/* A task's first run needs a stack: a cached one (still parked inside
 * stack_loop, see there) or a new mapping. */
static __attribute__((noinline)) void give_stack(struct th_worker *w, struct th_task *t)
{
	if (th_stack_get(w->stacks, &t->stack, w->rt->cfg.stack_size) != 0) {
		/* no memory for a stack: nothing sane to continue with */
		static const char msg[] = "taskhop: cannot map a task stack (out of memory or vm.max_map_count)\n";
		(void)!write(2, msg, sizeof(msg) - 1);
		abort();
	}
	if (t->stack.resume.sp)
		t->ctx = t->stack.resume;
	else
		th_ctx_make(&t->ctx, &t->stack, stack_loop, NULL);
}

/* Called before the clock reading that starts t's run: mapping a stack is the
 * runtime's work, and its mmap can wait in the kernel for the address-space
 * lock (another thread's page fault or mapping). Inside the run, the
 * recorder would charge that wait to t as a block in the kernel. */
static inline void ensure_stack(struct th_worker *w, struct th_task *t)
{
	if (__builtin_expect(t && !t->stack.map, 0))
		give_stack(w, t);
}

/* ---- making a task runnable ----------------------------------------------- */

/* Debug and sanitizer builds: t may be pushed only by self's owner, and only
 * when it is not queued already: new (a spawn) or back from a run or a block. */
static void check_push(struct th_runtime *rt, struct th_worker *self, struct th_task *t,
		       enum th_why why)
{
	struct th_os_thread *m = th__self_thread();
	TH_CHECK(!self || (m && m->p == self), "push from worker %d by a thread that does not serve it",
		 self->index);
	int was = atomic_exchange_explicit(&t->state, TH_RUNNABLE, memory_order_relaxed);
	TH_CHECK(why == TH_WHY_SPAWN ? was == TH_RUNNABLE && t->runs == 0 : was == TH_RUNNING || was == TH_BLOCKED,
		 "task %llu pushed (why %d) while it is %s: a task is queued once per run",
		 (unsigned long long)t->id, (int)why, th__state_name(was));
	atomic_fetch_add_explicit(&rt->queued, 1, memory_order_relaxed);
}

/* What a push does besides the policy's: t's state (checked in debug builds),
 * and every worker's preemption tick back to one quantum if one was stretched. */
static inline __attribute__((always_inline)) void mark_runnable(struct th_runtime *rt, struct th_worker *self,
							       struct th_task *t, enum th_why why)
{
	if (TH_CHECKS)
		check_push(rt, self, t, why);
	else
		atomic_store_explicit(&t->state, TH_RUNNABLE, memory_order_relaxed);
	/* cfg is read-only: a runtime without preemption loads nothing shared here */
	if (rt->cfg.preempt_ns &&
	    __builtin_expect(atomic_load_explicit(&rt->preempt_stretched, memory_order_relaxed) > 0, 0))
		th__preempt_unstretch(rt);
}

/* Inlined where a yield requeues its yielder, which it does after every switch. */
static inline __attribute__((always_inline)) void push_from(struct th_worker *self, struct th_task *t,
							    enum th_why why)
{
	struct th_runtime *rt = th__rt;
	mark_runnable(rt, self, t, why);
	int target = rt->policy->push(rt, self, t, why);
	TH_CHECK(target >= -1 && target < rt->nworkers, "policy %s: push answered worker %d (0..%d, or -1)",
		 rt->policy->name, target, rt->nworkers - 1);
	if (!self || target != self->index) /* queued on ourselves: we are awake */
		th__wake_for_work(rt, self, target);
}

void th__push_from(struct th_worker *self, struct th_task *t, enum th_why why)
{
	push_from(self, t, why);
}

/* ---- switching, continued ------------------------------------------------- */

/* finish_switch's `why` when the task left needs nothing done after the switch. */
#define NOTHING_AFTER (-1)

/* finish_switch for a thread whose worker a spare took while it was blocked
 * (activations): it is a spare again first (th__act_offer_spare says why),
 * then it does what its task left behind as a plain thread: a yielder is
 * requeued as if a plain thread woke it, a blocked task's lock released, a
 * finished task's stack unmapped (the stack cache is the worker's). */
static void __attribute__((noinline)) finish_lost_switch(struct th_os_thread *m, int why, struct th_task *p)
{
	th__act_offer_spare(m->rt, m);
	if (why == TH_WHY_YIELD || why == TH_WHY_PREEMPT)
		th__push_from(NULL, p, TH_WHY_WAKE);
	else if (why == TH_WHY_BLOCK)
		th_spin_unlock(m->prev_lock);
	else if (why == TH_WHY_DONE)
		th_stack_put(NULL, &m->dead_stack);
}

/* A switch leaves work behind that the task we left cannot do itself: until
 * its registers are saved it is still on its stack, so no other worker may
 * get hold of it. Whatever runs next on this worker — another task or the
 * scheduler loop — does that work first thing after the switch. */
static inline __attribute__((always_inline)) void finish_switch(struct th_os_thread *m)
{
	int why = m->prev_why;
	if (why == NOTHING_AFTER) /* a yield the policy queued already: the common case */
		return;
	struct th_task *p = m->prev;
	m->prev = NULL;
	m->prev_why = NOTHING_AFTER;
	if (__builtin_expect(m->lost, 0)) {
		finish_lost_switch(m, why, p);
	} else if (why == TH_WHY_YIELD || why == TH_WHY_PREEMPT) {
		push_from(m->p, p, TH_WHY_YIELD);
	} else if (why == TH_WHY_BLOCK) {
		th_spin_unlock(m->prev_lock);
	} else if (why == TH_WHY_DONE) {
		/* the stack of a finished task, parked in stack_loop */
		th_stack_put(m->p->stacks, &m->dead_stack);
	}
}

/* Back in a task's code: the kernel side may count a block from here on. */
static inline void enter_task(struct th_os_thread *m)
{
	if (__builtin_expect(m->act, 0) && m->cur)
		th__act_set(m, TH_SLOT_TASK);
}

/* Saves the current context in *save and resumes `to`, or the scheduler loop
 * when `to` is NULL. Returns when *save is resumed, maybe on another worker.
 * The ASan handle is a local: it belongs to this suspension, not to a task
 * (which may be gone by the time a reused stack resumes here). Inlined: a
 * yield's cost is a dozen nanoseconds, and a call level more is one of them. */
static inline __attribute__((always_inline)) void switch_away(struct th_os_thread *m, struct th_ctx *save,
							     struct th_task *to)
{
	void *fake = NULL;
	const struct th_ctx *ctx;
	if (to) { /* its stack was given before its run began (ensure_stack) */
		th_san_start_switch(&fake, to->stack.lo, (size_t)((char *)to->stack.hi - (char *)to->stack.lo));
		th_tsan_switch(to->stack.tsan_fiber);
		ctx = &to->ctx;
	} else {
		th_san_start_switch(&fake, m->stack_bottom, m->stack_size);
		th_tsan_switch(m->tsan_fiber);
		ctx = &m->sched_ctx;
	}
	if (__builtin_expect(m->fpenv, 0))
		th_ctx_switch_fpenv(save, ctx);
	else
		th_ctx_switch(save, ctx);
	th_san_finish_switch(fake);
	struct th_os_thread *self = self_thread();
	finish_switch(self);
	enter_task(self);
}

/* Task t stops running for `why`; the worker goes straight on to `next`
 * (no stop in the scheduler loop, one context switch instead of two) or, if
 * NULL, to its loop, and does `after` for t there (finish_switch: usually
 * why, or NOTHING_AFTER). Returns when t runs again. */
static inline __attribute__((always_inline)) void leave_task(struct th_os_thread *m, struct th_task *t, int why,
							    int after, struct th_task *next)
{
	ensure_stack(m->p, next);
	uint64_t now = log_clock_for(m->p, next);
	end_run(m, t, why, now);
	m->prev = after == NOTHING_AFTER ? NULL : t;
	m->prev_why = after;
	begin_run(m, next, now);
	switch_away(m, &t->ctx, next);
}

/* ---- a thread whose worker was taken over (activations) -------------------- */

/* m left the CPU inside t and a spare took its worker; m is back at a
 * scheduling point of t. It never touches the worker again: it leaves t for
 * its own loop, where finish_lost_switch makes m a spare and then does `why`
 * without a worker, and th__thread_main parks it. t's run after the
 * block is not in any run log (the taker closed it at the block). */
static void leave_lost_task(struct th_os_thread *m, struct th_task *t, int why)
{
	m->lost = true;
	m->prev = t;
	m->prev_why = why;
	m->cur = NULL;
	publish(m, 0);
	switch_away(m, &t->ctx, NULL);
}

void th__lost_yield(struct th_os_thread *m)
{
	leave_lost_task(m, m->cur, TH_WHY_YIELD);
}

static void exit_lost_task(struct th_os_thread *m, struct th_task *t)
{
	uint64_t now = th_now_ns();
	m->dead_stack = t->stack;
	TH_PROBE_TASK_DONE(t->id, -1);
	m->lost = true;
	m->cur = NULL;
	publish(m, 0);
	th__task_finish_at(t, t->result, now, NULL); /* lost: it serves no worker */
	m->prev = NULL;
	m->prev_why = TH_WHY_DONE;
	switch_away(m, &m->dead_stack.resume, NULL);
}

/* A task has returned: wake its fetchers, then run the next task on its
 * stack's behalf. The task may be freed as soon as it is finished, so its
 * stack is first copied to the worker, and its context saved there. */
static void exit_task(struct th_task *t)
{
	struct th_os_thread *m = self_thread();
	struct th_worker *w = worker_of(m);
	if (!w) {
		exit_lost_task(m, t);
		return;
	}
	struct th_runtime *rt = w->rt;
	uint64_t now = log_clock(w); /* t's end */
	end_run(m, t, TH_WHY_DONE, now);
	m->dead_stack = t->stack;
	TH_PROBE_TASK_DONE(t->id, w->index);
	/* "no task" is published before t's fetchers can see it done */
	begin_run(m, NULL, now);
	th__task_finish_at(t, t->result, task_clock(w), w); /* a fetcher it wakes may be next */
	struct th_task *next = policy_pop(rt, w);
	m->prev = NULL;
	m->prev_why = TH_WHY_DONE;
	/* next's start is read after the pop, not taken from `now`: the kernel
	 * may have preempted this worker in between, while next still ran
	 * elsewhere (seen: a run logged from 5 ms before it began, which put a
	 * task's runs out of order and miscounted its worker hops). Without the
	 * run log, begin_run reads the clock only for a first run. */
	if (next) {
		ensure_stack(w, next);
		begin_run(m, next, log_clock_for(w, next));
	}
	switch_away(m, &m->dead_stack.resume, next);
}

/* The body of every task stack. It never unwinds: when a task ends, its stack
 * goes back to the cache still parked inside exit_task, and the next task to
 * get the stack resumes it there and comes round this loop. Besides sparing
 * a context rebuild, this keeps TSan's shadow call stack of a reused fiber
 * balanced. */
static void stack_loop(void *arg)
{
	(void)arg;
	th_san_finish_switch(NULL);
	struct th_os_thread *self = self_thread();
	finish_switch(self);
	enter_task(self);
	for (;;) {
		struct th_task *t = self_thread()->cur;
		th__preempt_set(t->preemptible); /* from here on, its own code */
		t->result = t->fn(t->arg);
		th__preempt_set(false);
		exit_task(t);
	}
}

/* The scheduler loop's side: runs t until the worker comes back here (t, or
 * tasks it handed over to directly, yielded, blocked or ended). */
static void run_task(struct th_os_thread *m, struct th_task *t)
{
	ensure_stack(m->p, t);
	begin_run(m, t, log_clock_for(m->p, t));
	switch_away(m, &m->sched_ctx, t);
}

/* Called by a running task, with *lock held: blocks it; the lock is released
 * once the task's registers are saved, so no waker can resume it while it is
 * still on its stack. */
void th__task_block(_Atomic int *lock)
{
	struct th_os_thread *m = self_thread();
	struct th_worker *w = worker_of(m);
	struct th_task *t = m->cur;
	t->blocks++;
	atomic_store_explicit(&t->state, TH_BLOCKED, memory_order_relaxed);
	TH_PROBE_TASK_BLOCK(t->id, w ? w->index : -1);
	m->prev_lock = lock;
	if (!w)
		leave_lost_task(m, t, TH_WHY_BLOCK);
	else
		leave_task(m, t, TH_WHY_BLOCK, TH_WHY_BLOCK, policy_pop(w->rt, w));
}

/* A yield ends the task's run (why: TH_WHY_YIELD, or TH_WHY_PREEMPT when
 * preempt.c yields for the task). If the policy has another task for this
 * worker, the worker switches to it directly and requeues the yielder after
 * the switch (or the policy's yield_swap already queued it where only this
 * worker looks); if not, the yielder just goes on (a new run, as the run log
 * and the counters show), which is what a requeue and a pop would give. */
static inline __attribute__((always_inline)) void yield_task(struct th_os_thread *m, struct th_worker *w,
							    struct th_task *t, int why)
{
	struct th_runtime *rt = w->rt;
	TH_CHECK(m->cur == t, "a yield of task %llu on a thread that runs another", (unsigned long long)t->id);
	bool queued = false;
	struct th_task *next = policy_yield_pop(rt, w, t, &queued);
	if (next) {
		if (queued) /* no wake: it waits where only this worker, awake, looks */
			mark_runnable(rt, w, t, TH_WHY_YIELD);
		leave_task(m, t, why, queued ? NOTHING_AFTER : why, next);
		return;
	}
	if (why == TH_WHY_PREEMPT && !rt->policy->ticks_every_quantum)
		th__preempt_found_nothing(m);
	uint64_t now = log_clock_for(w, t); /* t goes on: its own last worker */
	end_run(m, t, why, now);
	begin_run(m, t, now);
	enter_task(m);
}

/* th_yield from no worker: t (m's task) lost its worker while it blocked, or
 * the caller is no worker's task (a kthread-policy task, or a plain thread).
 * Out of line, so that th_yield's own path stays short. */
static __attribute__((noinline, cold)) void yield_without_worker(struct th_os_thread *m, struct th_task *t)
{
	if (t) { /* requeue, retire */
		t->yields++;
		th__lost_yield(m);
		return;
	}
	struct th_task *kt = th_self_task(); /* a kthread-policy task */
	if (kt)
		kt->yields++;
	sched_yield();
}

void th_yield(void)
{
	bool preempt = th__nopreempt_begin();
	struct th_os_thread *m = self_thread();
	struct th_task *t = m ? m->cur : NULL;
	struct th_worker *w = t ? worker_of(m) : NULL;
	if (__builtin_expect(w != NULL, 1)) {
		t->yields++;
		TH_PROBE_TASK_YIELD(t->id, w->index);
		yield_task(m, w, t, TH_WHY_YIELD);
	} else {
		yield_without_worker(m, t);
	}
	th__nopreempt_end(preempt);
}

/* preempt.c's trampoline, on the task's stack with its registers saved. */
void th__yield_preempted(void)
{
	struct th_os_thread *m = self_thread();
	struct th_worker *w = worker_of(m);
	struct th_task *t = m->cur;
	t->preempted++;
	if (!w) {
		th__lost_yield(m);
		return;
	}
	TH_PROBE_TASK_YIELD(t->id, w->index);
	yield_task(m, w, t, TH_WHY_PREEMPT);
}

/* ---- idling: spin briefly, then park on a futex ---------------------------- */

/* The park/push handshake needs a store-load barrier on both sides. TSan does
 * not model standalone fences, so under TSan both sides do a seq_cst
 * read-modify-write of one shared word instead (same guarantee, slower). */
static inline void store_load_barrier(struct th_runtime *rt)
{
#ifdef __SANITIZE_THREAD__
	atomic_fetch_add_explicit(&rt->fence_word, 0, memory_order_seq_cst);
#else
	(void)rt;
	atomic_thread_fence(memory_order_seq_cst);
#endif
}

/* Go's runtime spins before parking because a park/unpark pair costs a few
 * microseconds of syscalls, more than most gaps between tasks. 20 us covers
 * the gap of a spawn or wake on the other worker without burning a core for
 * long when there is really nothing to do. */
#define SPIN_NS 20000

static struct th_task *spin_for_work(struct th_runtime *rt, struct th_worker *w)
{
	atomic_fetch_add(&rt->nspinning, 1);
	uint64_t until = th_now_ns() + SPIN_NS;
	struct th_task *t = NULL;
	for (unsigned i = 1; !atomic_load_explicit(&rt->stopping, memory_order_relaxed); i++) {
		if ((t = policy_pop(rt, w)))
			break;
		th_cpu_relax();
		if ((i & 63) == 0 && th_now_ns() > until)
			break;
	}
	atomic_fetch_sub(&rt->nspinning, 1);
	return t;
}

static struct th_task *park(struct th_runtime *rt, struct th_worker *w)
{
	atomic_store(&w->park_word, 0);
	atomic_store(&w->parked, 1);
	atomic_fetch_add(&rt->nparked, 1);
	/* Pairs with the barrier in th__wake_for_work: either the pusher sees us
	 * parked, or we see its task here. */
	store_load_barrier(rt);
	struct th_task *t = policy_pop(rt, w);
	if (!t && !atomic_load(&rt->stopping)) {
		TH_PROBE_WORKER_PARK(w->index);
		th__preempt_idle(self_thread(), true); /* no timer signals to a sleeper */
		while (atomic_load(&w->parked) && !atomic_load(&rt->stopping))
			th_futex_wait(&w->park_word, 0);
		th__preempt_idle(self_thread(), false);
		TH_PROBE_WORKER_UNPARK(w->index);
	}
	int one = 1;
	if (atomic_compare_exchange_strong(&w->parked, &one, 0))
		atomic_fetch_sub(&rt->nparked, 1); /* nobody claimed us: undo ourselves */
	return t;
}

static bool unpark(struct th_runtime *rt, struct th_worker *w)
{
	int one = 1;
	if (!atomic_compare_exchange_strong(&w->parked, &one, 0))
		return false;
	atomic_fetch_sub(&rt->nparked, 1);
	atomic_store(&w->park_word, 1);
	th_futex_wake(&w->park_word, 1);
	return true;
}

/* After a push from `self` (NULL: a plain thread) that queued the task
 * elsewhere: wake the worker the policy named, or one idle worker if no
 * worker is already spinning (it will find the task). One, never all: waking
 * every sleeper for one task is the thundering herd Julia once had. */
void th__wake_for_work(struct th_runtime *rt, struct th_worker *self, int target)
{
	store_load_barrier(rt);
	if (target >= 0) {
		unpark(rt, &rt->workers[target]);
		return;
	}
	if (atomic_load(&rt->nspinning) > 0 || atomic_load(&rt->nparked) == 0)
		return;
	int start = self ? self->index + 1 : 0;
	for (int i = 0; i < rt->nworkers; i++)
		if (unpark(rt, &rt->workers[(start + i) % rt->nworkers]))
			return;
}

void th__wake_all_workers(struct th_runtime *rt)
{
	for (int i = 0; i < rt->nworkers; i++) {
		atomic_store(&rt->workers[i].park_word, 1);
		th_futex_wake(&rt->workers[i].park_word, 1);
	}
}

/* ---- the loop ------------------------------------------------------------- */


static void thread_init(struct th_os_thread *m)
{
	th__tls_thread = m;
	m->tsan_fiber = th_tsan_current();
	pthread_attr_t attr;
	if (pthread_getattr_np(pthread_self(), &attr) == 0) {
		void *addr;
		size_t size;
		pthread_attr_getstack(&attr, &addr, &size);
		m->stack_bottom = addr;
		m->stack_size = size;
		pthread_attr_destroy(&attr);
	}
	th__guard_install_thread(&m->altstack);
	int tid = (int)syscall(SYS_gettid);
	th__area_set_tid(m->rt, m->index, tid);
	__atomic_store_n(&m->tid, tid, __ATOMIC_RELEASE);
	th__preempt_thread_start(m);
}

/* Serves m's worker until the runtime stops or (activations) m loses it. */
static void serve_worker(struct th_runtime *rt, struct th_os_thread *m)
{
	struct th_worker *w = m->p;
	while (!atomic_load_explicit(&rt->stopping, memory_order_acquire) && !m->lost) {
		TH_CHECK(!m->cur, "worker %d's scheduler loop with task %llu current", w->index,
			 (unsigned long long)(m->cur ? m->cur->id : 0));
		struct th_task *t = policy_pop(rt, w);
		if (!t)
			t = spin_for_work(rt, w);
		if (!t) {
			if (m->act)
				th__act_set(m, TH_SLOT_PARKED); /* the runtime's own sleep is no block */
			t = park(rt, w);
			if (m->act)
				th__act_set(m, TH_SLOT_RUNTIME);
		}
		if (t)
			run_task(m, t);
	}
}

/* A parked spare's preemption timer is stopped, like a parked worker's. */
static bool wait_as_spare(struct th_runtime *rt, struct th_os_thread *m)
{
	th__preempt_idle(m, true);
	bool handed = th__act_wait_for_worker(rt, m);
	th__preempt_idle(m, false);
	return handed;
}

/* A thread serves its worker (threads i < nworkers start with worker i), and
 * with activations on, alternates between parking as a spare and serving a
 * worker handed over to it. */
void *th__thread_main(void *arg)
{
	struct th_os_thread *m = arg;
	struct th_runtime *rt = m->rt;
	thread_init(m);
	/* a spare's p is written by whoever hands it a worker: read it only
	 * after th__act_wait_for_worker says one was handed over */
	bool serving = m->index < rt->nworkers;
	if (serving) {
		__atomic_store_n(&m->p->tid, m->tid, __ATOMIC_RELEASE);
		TH_PROBE_WORKER_START(m->p->index, m->tid);
	}
	while (serving || (m->act && wait_as_spare(rt, m))) {
		serve_worker(rt, m);
		if (!m->lost)
			break; /* stopping */
		m->lost = false; /* a spare already: finish_lost_switch offered it */
		serving = false;
	}
	th__preempt_thread_stop(m);
	th__guard_remove_thread(&m->altstack);
	th__tls_thread = NULL;
	return NULL;
}
