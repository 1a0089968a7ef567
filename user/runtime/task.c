/* task.c — a task's life: spawn, run-queue entry, wait/fetch, completion, stats.
 * A task struct lives until both the runtime and the user handle let go of it. */
#define _GNU_SOURCE
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core.h"
#include "core_check.h"
#include "preempt.h"
#include "probes.h"
#include "waitq.h"

/* A worker's current task (worker.c sets it with each run), a kthread task,
 * or a test thread's. */
__thread struct th_task *th__thread_task __attribute__((tls_model("initial-exec")));

void th__set_thread_task(struct th_task *t)
{
	th__thread_task = t;
}

/* noinline: the read must happen where the caller is now, not where an
 * inlined copy read it before a switch. */
__attribute__((noinline)) th_task *th_self_task(void)
{
	if (!TH_PREEMPT_FLAG) { /* TSan: see preempt.h */
		struct th_task *t = th__current_task();
		if (t)
			return t;
	}
	return th__thread_task;
}

int th_self_worker(void)
{
	struct th_worker *w = th__self_worker();
	return w ? w->index : -1;
}

uint64_t th_task_id(const th_task *t)
{
	return t->id;
}


void th__make_runnable(struct th_task *t, enum th_why why)
{
	th__push_from(th__self_worker(), t, why);
}

/* The magic word makes the handle misuses that would otherwise be silent
 * memory errors in a release build (fetch of a freed handle, a second
 * th_task_free) abort with a message, for one load on entry. A struct
 * freed to a worker's cache says DEAD until spawn hands it out again, so a
 * stale handle is caught until its memory is reused for a new task; ASan
 * builds, which do not reuse structs, catch every case. */
#define TH_TASK_LIVE 0x7441534bu         /* "tASK": the user's handle is valid */
#define TH_TASK_HANDLE_FREED 0x66524545u /* th_task_free done, the task still runs */
#define TH_TASK_DEAD 0x64454144u         /* back in a cache, or freed */

static void misuse(const char *fn, const struct th_task *t, const char *what)
{
	fprintf(stderr, "taskhop: %s: task handle %p %s\n", fn, (const void *)t, what);
	abort();
}

/* Aborts unless t is a handle th_spawn returned and th_task_free has not
 * taken. Reads freed memory at worst, which the magic word tells apart. */
static void check_handle(const struct th_task *t, const char *fn)
{
	if (!t) {
		fprintf(stderr, "taskhop: %s: NULL task handle (did th_spawn fail? see th_last_error)\n", fn);
		abort();
	}
	uint32_t magic = atomic_load_explicit(&t->magic, memory_order_relaxed);
	if (magic == TH_TASK_HANDLE_FREED || magic == TH_TASK_DEAD)
		misuse(fn, t, "was already freed with th_task_free");
	if (magic != TH_TASK_LIVE)
		misuse(fn, t, "is not a task (or its memory was overwritten)");
}

/* Each worker keeps up to TASK_CACHE freed task structs: spawn-and-join
 * code frees a task and spawns the next on the same worker, and glibc's own
 * per-thread cache holds only 7 of a size. Off under ASan, so that a use
 * after free is still caught. */
#define TASK_CACHE 1024

static struct th_task *task_alloc(struct th_worker *self)
{
#ifndef __SANITIZE_ADDRESS__
	struct th_task *t = self ? self->free_tasks : NULL;
	if (t) {
		self->free_tasks = t->next;
		self->nfree_tasks--;
		memset(t, 0, sizeof(*t));
		return t;
	}
#else
	(void)self;
#endif
	return calloc(1, sizeof(struct th_task));
}

static void task_free_struct(struct th_task *t)
{
#ifndef __SANITIZE_ADDRESS__
	struct th_worker *self = th__self_worker();
	if (self && self->nfree_tasks < TASK_CACHE) {
		t->next = self->free_tasks;
		self->free_tasks = t;
		self->nfree_tasks++;
		return;
	}
#endif
	free(t);
}

static void task_free(struct th_task *t)
{
	atomic_store_explicit(&t->magic, TH_TASK_DEAD, memory_order_relaxed);
	task_free_struct(t);
}

void th__free_task_cache(struct th_worker *w)
{
	for (struct th_task *t = w->free_tasks, *next; t; t = next) {
		next = t->next;
		free(t);
	}
	w->free_tasks = NULL;
	w->nfree_tasks = 0;
}

/* ---- how many tasks are live ----------------------------------------------
 * Each spawn and each finish is counted on the worker of the thread that does
 * it (or on the runtime's shared pair by threads that serve none): no line is
 * written by two workers, as a single live count was by the spawner and by
 * whoever ran each task. The sums are read at stop only. */
static void count_spawn(struct th_runtime *rt, struct th_worker *self)
{
	atomic_fetch_add(self ? &self->spawned : &rt->ext_spawned, 1);
}

/* Finishes first, spawns after: a task is spawned before it can finish, so
 * the spawns read are at least the finishes read, and equal only when at a
 * moment between the two reads every task spawned had finished (all the
 * counts are sequentially consistent and only grow). */
static bool no_live_tasks(struct th_runtime *rt)
{
	uint64_t done = atomic_load(&rt->ext_finished);
	for (int i = 0; i < rt->nworkers; i++)
		done += atomic_load(&rt->workers[i].finished);
	uint64_t made = atomic_load(&rt->ext_spawned);
	for (int i = 0; i < rt->nworkers; i++)
		made += atomic_load(&rt->workers[i].spawned);
	return made == done;
}

static void wake_stop(struct th_runtime *rt)
{
	atomic_fetch_add(&rt->quiet_word, 1);
	th_futex_wake(&rt->quiet_word, 1 << 30);
}

/* Only while th_runtime_stop waits does a finish look at the sums. Its count
 * comes before its look at quiet_wanted, and stop's store of quiet_wanted
 * before its look at the sums (all seq_cst): either the last finish sees
 * that stop waits, or stop sees the last finish. A thread that serves no
 * worker (kthread's, detached) must not read the workers after its count:
 * if it was the last, stop may free them at once. It wakes stop, which
 * reads the sums itself; rt is static. w: the worker the calling thread
 * serves, or NULL. */
static void count_finish(struct th_runtime *rt, struct th_worker *w)
{
	atomic_fetch_add(w ? &w->finished : &rt->ext_finished, 1);
	if (!atomic_load(&rt->quiet_wanted))
		return;
	if (!w || no_live_tasks(rt))
		wake_stop(rt);
}

void th__wait_for_every_task(struct th_runtime *rt)
{
	atomic_store(&rt->quiet_wanted, 1);
	for (;;) {
		uint32_t seen = atomic_load(&rt->quiet_word);
		if (no_live_tasks(rt))
			return;
		th_futex_wait(&rt->quiet_word, seen);
	}
}

static void release(struct th_task *t)
{
	if (atomic_fetch_sub_explicit(&t->refs, 1, memory_order_acq_rel) == 1)
		task_free(t);
}

static th_task *spawn_task(int home, bool sticky, bool preemptible, th_fn fn, void *arg,
			   struct th_group *g)
{
	struct th_runtime *rt = th__rt;
	if (!rt) {
		th__set_error("th_spawn: the runtime is not started (call th_runtime_start first)");
		return NULL;
	}
	if (home >= rt->nworkers || home < -1) {
		th__set_error("th_spawn_on: worker %d does not exist (0..%d)", home, rt->nworkers - 1);
		return NULL;
	}
	struct th_worker *self = th__self_worker();
	struct th_task *t = task_alloc(self);
	if (!t) {
		th__set_error("th_spawn: out of memory");
		return NULL;
	}
	t->id = atomic_fetch_add_explicit(&rt->next_id, 1, memory_order_relaxed);
	t->fn = fn;
	t->arg = arg;
	t->group = g;
	atomic_init(&t->refs, g ? 1 : 2);
	atomic_init(&t->state, TH_RUNNABLE);
	atomic_init(&t->magic, TH_TASK_LIVE);
	t->home = home;
	t->sticky = sticky;
	t->spawn_worker = self ? self->index : -1;
	t->last_worker = -1;
	t->first_worker = -1;
	t->preemptible = preemptible && rt->cfg.preempt_ns;
	th_rng_seed(&t->rng, rt->cfg.seed, t->id);
	/* A clock read is ~20 ns under kvm-clock, a fifth of a whole spawn and
	 * join; the spawn time is kept when the run is being logged. */
	t->spawn_ns = th__runlog_on((self ? self : &rt->workers[0])->log) ? th_now_ns() : 0;
	count_spawn(rt, self);
	TH_PROBE_TASK_SPAWN(t->id, t->spawn_worker, home);
	if (rt->policy->start_task) {
		if (rt->policy->start_task(rt, t) != 0) {
			count_finish(rt, self);
			task_free(t);
			return NULL;
		}
	} else {
		th__make_runnable(t, TH_WHY_SPAWN);
	}
	return g ? NULL : t;
}

/* Every spawn from a preemptible task must not be interrupted halfway (it
 * takes policy locks and this worker's task cache). */
static th_task *spawn(int home, bool sticky, th_fn fn, void *arg, struct th_group *g)
{
	bool preempt = th__nopreempt_begin();
	th_task *t = spawn_task(home, sticky, false, fn, arg, g);
	th__nopreempt_end(preempt);
	return t;
}

th_task *th_spawn(th_fn fn, void *arg)
{
	return spawn(-1, false, fn, arg, NULL);
}

th_task *th_spawn_opts(th_fn fn, void *arg, const struct th_spawn_opts *o)
{
	static const struct th_spawn_opts none;
	if (!o)
		o = &none;
	if (o->where != TH_ANYWHERE && o->where != TH_START_AT && o->where != TH_STICK_TO) {
		th__set_error("th_spawn_opts: where must be TH_ANYWHERE, TH_START_AT or TH_STICK_TO");
		return NULL;
	}
	if (o->where != TH_ANYWHERE && o->worker < 0) {
		th__set_error("th_spawn_opts: worker %d does not exist", o->worker);
		return NULL;
	}
	bool preempt = th__nopreempt_begin();
	th_task *t = spawn_task(o->where == TH_ANYWHERE ? -1 : o->worker, o->where == TH_STICK_TO,
				o->preemptible, fn, arg, NULL);
	th__nopreempt_end(preempt);
	return t;
}

th_task *th_spawn_on(int worker, th_fn fn, void *arg)
{
	if (worker < 0) {
		th__set_error("th_spawn_on: worker %d does not exist", worker);
		return NULL;
	}
	return spawn(worker, true, fn, arg, NULL);
}

th_task *th_spawn_at(int worker, th_fn fn, void *arg)
{
	if (worker < 0) {
		th__set_error("th_spawn_at: worker %d does not exist", worker);
		return NULL;
	}
	return spawn(worker, false, fn, arg, NULL);
}

void th__group_spawn(struct th_group *g, th_fn fn, void *arg)
{
	spawn(-1, false, fn, arg, g);
}


/* Completion, on the worker's stack (or the kthread's own thread): publish
 * the result, wake whoever waits, then drop the runtime's reference. */
void th__task_finish(struct th_task *t, void *result)
{
	th__task_finish_at(t, result, th_now_ns(), th__self_worker());
}

void th__task_finish_at(struct th_task *t, void *result, uint64_t done_ns, struct th_worker *by)
{
	struct th_runtime *rt = th__rt;
	t->result = result;
	t->done_ns = done_ns;
	struct th_group *g = t->group;
	th_spin_lock(&t->done_lock);
	atomic_store_explicit(&t->state, TH_DONE, memory_order_release);
	struct th_waiter *waiters = th_waiters_take(&t->done_waiters);
	th_spin_unlock(&t->done_lock);
	th_waiters_wake_all(waiters);
	release(t);
	if (g)
		th__group_task_done(g);
	count_finish(rt, by);
}

static void wait_done(th_task *t)
{
	if (atomic_load_explicit(&t->state, memory_order_acquire) == TH_DONE)
		return;
	bool preempt = th__nopreempt_begin();
	th_spin_lock(&t->done_lock);
	if (atomic_load_explicit(&t->state, memory_order_acquire) == TH_DONE)
		th_spin_unlock(&t->done_lock);
	else
		th_block(&t->done_lock, &t->done_waiters);
	th__nopreempt_end(preempt);
}

void th_wait(th_task *t)
{
	check_handle(t, "th_wait");
	wait_done(t);
}

void *th_fetch(th_task *t)
{
	check_handle(t, "th_fetch");
	wait_done(t);
	return t->result;
}

/* The exchange makes a second free abort even when two threads race to it. */
void th_task_free(th_task *t)
{
	if (!t)
		return;
	uint32_t was = TH_TASK_LIVE;
	if (!atomic_compare_exchange_strong(&t->magic, &was, TH_TASK_HANDLE_FREED))
		check_handle(t, "th_task_free");
	bool preempt = th__nopreempt_begin(); /* the worker's task cache */
	release(t);
	th__nopreempt_end(preempt);
}

void th_task_stats(const th_task *t, struct th_task_stats *o)
{
	if (t != th_self_task()) /* a task may read its own after main freed the handle */
		check_handle(t, "th_task_stats");
	memset(o, 0, sizeof(*o));
	o->id = t->id;
	o->spawn_worker = t->spawn_worker;
	o->home_worker = t->home;
	o->first_worker = t->first_worker;
	o->last_worker = t->last_worker;
	o->runs = t->runs;
	o->yields = t->yields;
	o->blocks = t->blocks;
	o->worker_hops = t->worker_hops;
	o->spawn_ns = t->spawn_ns;
	o->first_run_ns = t->first_run_ns;
	o->done_ns = t->done_ns;
	o->kernel_tid = t->kernel_tid;
	o->preempted = t->preempted;
	o->activations = t->activations;
}
