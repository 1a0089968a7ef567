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

#include "internal.h"
#include "probes.h"
#include "sanitizer.h"
#include "stackcache.h"
#include "waitq.h"

static __thread struct th_worker *tls_worker __attribute__((tls_model("initial-exec")));

/* noipa: a task may resume on another thread, so no caller may keep a value
 * derived from this thread's TLS across a switch; an opaque call forces a
 * fresh read each time. */
#if defined(__clang__)
__attribute__((noinline, optnone))
#else
__attribute__((noinline, noipa))
#endif
struct th_worker *th__self_worker(void)
{
	return tls_worker;
}

uint64_t th__worker_rand(struct th_worker *w)
{
	return th_rng_next(&w->rng);
}

/* ---- switching ------------------------------------------------------------ */

static void publish(struct th_worker *w, uint64_t task_id)
{
	if (!w->slot)
		return;
	w->slot[0] = task_id;
	__atomic_store_n(&w->slot[1], ++w->switch_seq, __ATOMIC_RELEASE);
}

/* From a task back to its current worker's scheduler loop. Returns when the
 * task is next run, on whichever worker that is. The ASan handle is a local:
 * it belongs to this suspension, not to the task (which may be gone by the
 * time a reused stack resumes here). */
static void switch_to_scheduler(struct th_task *t)
{
	struct th_worker *w = th__self_worker();
	void *fake = NULL;
	th_san_start_switch(&fake, w->stack_bottom, w->stack_size);
	th_tsan_switch(w->tsan_fiber);
	th_ctx_switch(&t->ctx, &w->sched_ctx);
	th_san_finish_switch(fake);
}

/* The body of every task stack. It never unwinds: when a task ends, its stack
 * goes back to the cache still parked inside this loop, and the next task to
 * get the stack resumes it here. Besides sparing a context rebuild, this keeps
 * TSan's shadow call stack of a reused fiber balanced. */
static void stack_loop(void *arg)
{
	(void)arg;
	th_san_finish_switch(NULL);
	for (;;) {
		struct th_task *t = th__self_worker()->cur;
		t->result = t->fn(t->arg);
		th__self_worker()->why = TH_WHY_DONE;
		switch_to_scheduler(t);
	}
}

static int prepare_stack(struct th_worker *w, struct th_task *t)
{
	if (th_stack_get(w->stacks, &t->stack, w->rt->cfg.stack_size) != 0)
		return -1;
	if (t->stack.resume.sp)
		t->ctx = t->stack.resume;
	else
		th_ctx_make(&t->ctx, &t->stack, stack_loop, NULL);
	return 0;
}

static void log_run(struct th_worker *w, struct th_task *t, uint64_t start)
{
	if (w->log_n >= w->rt->cfg.run_log_cap) {
		w->log_dropped++;
		return;
	}
	w->log[w->log_n++] = (struct th_run_record){
		.task_id = t->id, .start_ns = start, .end_ns = th_now_ns(),
		.worker = (uint32_t)w->index, .why = (uint32_t)w->why,
	};
}

void th__task_started(struct th_task *t, int worker)
{
	int prev = t->last_worker;
	if (t->runs++ == 0) {
		t->first_worker = worker;
		t->first_run_ns = th_now_ns();
	} else if (prev != worker) {
		t->worker_hops++;
	}
	t->last_worker = worker;
	TH_PROBE_TASK_RUN(t->id, worker, prev);
}

void th__task_done(struct th_worker *w, struct th_task *t); /* task.c */

/* Runs t until it yields, blocks or ends, then does what its return asks. */
static void run_task(struct th_worker *w, struct th_task *t)
{
	if (!t->stack.map && prepare_stack(w, t) != 0) {
		/* no memory for a stack: nothing sane to continue with */
		static const char msg[] = "taskhop: cannot map a task stack (out of memory or vm.max_map_count)\n";
		(void)!write(2, msg, sizeof(msg) - 1);
		abort();
	}
	th__task_started(t, w->index);
	atomic_store_explicit(&t->state, TH_RUNNING, memory_order_relaxed);
	w->cur = t;
	publish(w, t->id);
	uint64_t start = w->log ? th_now_ns() : 0;

	void *fake = NULL;
	th_san_start_switch(&fake, t->stack.lo,
			    (size_t)((char *)t->stack.hi - (char *)t->stack.lo));
	th_tsan_switch(t->stack.tsan_fiber);
	th_ctx_switch(&w->sched_ctx, &t->ctx);
	th_san_finish_switch(fake);

	publish(w, 0);
	if (w->log)
		log_run(w, t, start);
	w->cur = NULL;
	/* From here t may be handed to another worker: touch it no more after. */
	switch (w->why) {
	case TH_WHY_YIELD:
		th__make_runnable(t, TH_WHY_YIELD);
		break;
	case TH_WHY_BLOCK:
		th_spin_unlock((_Atomic int *)w->after_arg);
		break;
	case TH_WHY_DONE:
		t->stack.resume = t->ctx; /* the loop waits there for the next task */
		th_stack_put(w->stacks, &t->stack);
		th__task_done(w, t);
		break;
	}
}

/* Called by a running task, with *lock held: blocks it; the worker releases
 * the lock once the task's registers are saved, so no waker can resume it
 * while it is still on its stack. */
void th__task_block(_Atomic int *lock)
{
	struct th_worker *w = th__self_worker();
	struct th_task *t = w->cur;
	t->blocks++;
	atomic_store_explicit(&t->state, TH_BLOCKED, memory_order_relaxed);
	TH_PROBE_TASK_BLOCK(t->id, w->index);
	w->why = TH_WHY_BLOCK;
	w->after_arg = (void *)lock;
	switch_to_scheduler(t);
}

void th_yield(void)
{
	struct th_worker *w = th__self_worker();
	struct th_task *t = w ? w->cur : NULL;
	if (!t) {
		struct th_task *kt = th_self_task(); /* a kthread-policy task */
		if (kt)
			kt->yields++;
		sched_yield();
		return;
	}
	t->yields++;
	TH_PROBE_TASK_YIELD(t->id, w->index);
	w->why = TH_WHY_YIELD;
	switch_to_scheduler(t);
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
		if ((t = rt->policy->pop(rt, w)))
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
	struct th_task *t = rt->policy->pop(rt, w);
	if (!t && !atomic_load(&rt->stopping)) {
		TH_PROBE_WORKER_PARK(w->index);
		while (atomic_load(&w->parked) && !atomic_load(&rt->stopping))
			th_futex_wait(&w->park_word, 0);
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

/* After a push: wake the worker the policy named, or one idle worker if no
 * worker is already spinning (it will find the task). One, never all: waking
 * every sleeper for one task is the thundering herd Julia once had. */
void th__wake_for_work(struct th_runtime *rt, int target)
{
	struct th_worker *self = th__self_worker();
	if (self && target == self->index)
		return; /* queued on ourselves: we are awake */
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

void th__guard_install_thread(struct th_worker *w); /* guard.c */
void th__guard_remove_thread(struct th_worker *w);

static void worker_init_thread(struct th_worker *w)
{
	tls_worker = w;
	__atomic_store_n(&w->tid, (int)syscall(SYS_gettid), __ATOMIC_RELEASE);
	w->tsan_fiber = th_tsan_current();
	pthread_attr_t attr;
	if (pthread_getattr_np(pthread_self(), &attr) == 0) {
		void *addr;
		size_t size;
		pthread_attr_getstack(&attr, &addr, &size);
		w->stack_bottom = addr;
		w->stack_size = size;
		pthread_attr_destroy(&attr);
	}
	th__guard_install_thread(w);
	TH_PROBE_WORKER_START(w->index, w->tid);
}

void *th__worker_main(void *arg)
{
	struct th_worker *w = arg;
	struct th_runtime *rt = w->rt;
	worker_init_thread(w);
	while (!atomic_load_explicit(&rt->stopping, memory_order_acquire)) {
		struct th_task *t = rt->policy->pop(rt, w);
		if (!t)
			t = spin_for_work(rt, w);
		if (!t)
			t = park(rt, w);
		if (t)
			run_task(w, t);
	}
	th__guard_remove_thread(w);
	tls_worker = NULL;
	return NULL;
}
