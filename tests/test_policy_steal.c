/* test_policy_steal.c — the work-stealing policy: its decisions on a runtime
 * without threads (steal half, yield to the back), then live: load spreads, sticky stays. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core.h" /* th__rt: the running runtime's workers */

#if defined(__SANITIZE_THREAD__)
#define SCALE 10
#else
#define SCALE 1
#endif

/* ---- decisions, with the policy driven by hand ---------------------------- */

/* A runtime that is only data: two workers that never run, so each push
 * and pop below is one decision of the policy, in a known order. */
struct fake {
	struct th_runtime rt;
	struct th_worker w[2];
	struct th_task t[64];
};

static struct fake *fake_new(void)
{
	struct fake *f = aligned_alloc(64, sizeof(struct fake));
	assert_non_null(f);
	memset(f, 0, sizeof(*f));
	f->rt.nworkers = 2;
	f->rt.workers = f->w;
	f->rt.policy = &th_policy_steal;
	th_config_default(&f->rt.cfg);
	for (int i = 0; i < 2; i++) {
		f->w[i].index = i;
		f->w[i].rt = &f->rt;
		th_rng_seed(&f->w[i].rng, 1, (uint64_t)i);
	}
	for (int i = 0; i < 64; i++) {
		f->t[i].id = (uint64_t)i;
		f->t[i].home = -1;
		f->t[i].last_worker = -1;
	}
	assert_int_equal(th_policy_steal.init(&f->rt), 0);
	return f;
}

static void fake_free(struct fake *f)
{
	th_policy_steal.fini(&f->rt);
	free(f);
}

static struct th_task *pop(struct fake *f, int w)
{
	return th_policy_steal.pop(&f->rt, &f->w[w]);
}

static void push(struct fake *f, int self, int task, enum th_why why)
{
	th_policy_steal.push(&f->rt, &f->w[self], &f->t[task], why);
}

/* Worker 0 spawned 10 tasks; idle worker 1 takes the 5 oldest (runs the
 * oldest, keeps 4), worker 0 keeps its 5 newest and runs them newest first. */
static void steal_moves_half_of_victim_queue(void **state)
{
	(void)state;
	struct fake *f = fake_new();
	for (int i = 0; i < 10; i++)
		push(f, 0, i, TH_WHY_SPAWN);
	assert_ptr_equal(pop(f, 1), &f->t[0]);
	assert_int_equal(f->w[1].steals, 5);
	for (int i = 9; i >= 5; i--)
		assert_ptr_equal(pop(f, 0), &f->t[i]);
	/* worker 1 now owns 1..4; worker 0 is empty and steals half of them */
	assert_ptr_equal(pop(f, 0), &f->t[1]);
	assert_int_equal(f->w[0].steals, 2);
	assert_ptr_equal(pop(f, 0), &f->t[2]);
	assert_ptr_equal(pop(f, 1), &f->t[4]);
	assert_ptr_equal(pop(f, 1), &f->t[3]);
	assert_null(pop(f, 0));
	assert_null(pop(f, 1));
	fake_free(f);
}

/* The owner runs what it spawned last first (LIFO), but a yielding task goes
 * behind everything waiting, and yielders come back in the order they yielded. */
static void yielded_task_goes_to_the_back(void **state)
{
	(void)state;
	struct fake *f = fake_new();
	push(f, 0, 1, TH_WHY_SPAWN);
	push(f, 0, 2, TH_WHY_SPAWN);
	assert_ptr_equal(pop(f, 0), &f->t[2]);   /* newest spawn first */
	push(f, 0, 2, TH_WHY_YIELD);             /* 2 yields */
	assert_ptr_equal(pop(f, 0), &f->t[1]);   /* not 2 again at once */
	push(f, 0, 1, TH_WHY_YIELD);             /* 1 yields: behind 2 */
	assert_ptr_equal(pop(f, 0), &f->t[2]);
	push(f, 0, 2, TH_WHY_YIELD);
	assert_ptr_equal(pop(f, 0), &f->t[1]);
	assert_ptr_equal(pop(f, 0), &f->t[2]);
	assert_null(pop(f, 0));
	fake_free(f);
}

/* While worker 1 is idle, worker 0's yielders are where it can steal them,
 * except a sticky one. */
static void idle_thief_takes_yielders_but_not_sticky_ones(void **state)
{
	(void)state;
	struct fake *f = fake_new();
	atomic_store(&f->rt.nspinning, 1); /* worker 1 is looking for work */
	f->t[1].sticky = true, f->t[1].home = 0;
	push(f, 0, 1, TH_WHY_YIELD);
	push(f, 0, 2, TH_WHY_YIELD);
	assert_ptr_equal(pop(f, 1), &f->t[2]);
	assert_null(pop(f, 1));
	assert_ptr_equal(pop(f, 0), &f->t[1]);
	fake_free(f);
}

/* With more than one worker, yielders wait where a thief sees them at once,
 * even while no worker is idle yet: their worker may be about to run a long
 * slice (darts: short tasks queued behind a long one). */
static void yielders_are_visible_to_thieves_at_once(void **state)
{
	(void)state;
	struct fake *f = fake_new();
	push(f, 0, 1, TH_WHY_YIELD);
	push(f, 0, 2, TH_WHY_YIELD);
	push(f, 0, 3, TH_WHY_YIELD);
	assert_ptr_equal(pop(f, 1), &f->t[1]); /* half of 3, rounded up: 1 and 2 */
	assert_int_equal(f->w[1].steals, 2);
	assert_ptr_equal(pop(f, 1), &f->t[2]);
	assert_ptr_equal(pop(f, 0), &f->t[3]);
	assert_null(pop(f, 0));
	fake_free(f);
}

/* A task woken or spawned by a worker goes on that worker's deque and is
 * next (Go's runnext): the waker's cache still holds what it shared. */
static void woken_task_runs_next_on_the_waker(void **state)
{
	(void)state;
	struct fake *f = fake_new();
	push(f, 1, 3, TH_WHY_YIELD);
	push(f, 1, 4, TH_WHY_WAKE);
	assert_ptr_equal(pop(f, 1), &f->t[4]);
	assert_ptr_equal(pop(f, 1), &f->t[3]);
	fake_free(f);
}

/* ---- live runtime --------------------------------------------------------- */

static void start(int workers)
{
	struct th_config cfg;
	th_config_default(&cfg);
	cfg.policy = "steal";
	cfg.workers = workers;
	cfg.seed = 3;
	if (th_runtime_start(&cfg) != 0)
		fail_msg("th_runtime_start: %s", th_last_error());
}

static _Atomic double sink; /* keeps the loop from being optimised away */

/* ~10 us of arithmetic, so that a spawner's queue outlives one steal. */
static void *work_a_little(void *arg)
{
	double x = 1.0;
	for (int i = 0; i < 4000; i++)
		x = x * 1.0000001 + 1e-9;
	atomic_store_explicit(&sink, x, memory_order_relaxed);
	(void)arg;
	return (void *)(intptr_t)th_self_worker();
}

#define NSPAWN 10000

static void *spawn_many(void *arg)
{
	th_task **t = arg;
	for (int i = 0; i < NSPAWN; i++)
		t[i] = th_spawn(work_a_little, NULL);
	for (int i = 0; i < NSPAWN; i++)
		th_wait(t[i]);
	return NULL;
}

/* All 10,000 tasks start on worker 0's deque; worker 1 only gets work by
 * stealing, and must end up running a substantial share. */
static void other_worker_steals_share_of_10000_spawned(void **state)
{
	(void)state;
	start(2);
	th_task **t = calloc(NSPAWN, sizeof(*t));
	th_task *root = th_spawn_on(0, spawn_many, t);
	assert_non_null(root);
	th_wait(root);
	th_task_free(root);
	long on1 = 0;
	for (int i = 0; i < NSPAWN; i++) {
		struct th_task_stats st;
		th_task_stats(t[i], &st);
		assert_int_equal(st.spawn_worker, 0);
		on1 += st.first_worker == 1;
		assert_int_equal((intptr_t)th_fetch(t[i]), st.last_worker);
		th_task_free(t[i]);
	}
	uint64_t steals = th__rt->workers[1].steals;
	print_message("steal: worker 1 ran %ld of %d tasks, stole %llu\n", on1, NSPAWN,
		      (unsigned long long)steals);
	th_runtime_stop();
	free(t);
	assert_true(steals > 0);
	assert_true(on1 >= NSPAWN / 10);
}

static void *yield_many(void *arg)
{
	for (int i = 0; i < 300 / SCALE; i++) {
		th_yield();
		if (th_self_worker() != (intptr_t)arg)
			return (void *)1;
	}
	return NULL;
}

/* Sticky tasks that yield hundreds of times next to an idle worker that
 * steals whatever it can: they never leave their worker. */
static void sticky_tasks_never_stolen(void **state)
{
	(void)state;
	start(2);
	th_task *t[20];
	for (intptr_t i = 0; i < 20; i++)
		t[i] = th_spawn_on(0, yield_many, (void *)0);
	for (int i = 0; i < 20; i++) {
		struct th_task_stats st;
		assert_null(th_fetch(t[i]));
		th_task_stats(t[i], &st);
		assert_int_equal(st.worker_hops, 0);
		assert_int_equal(st.last_worker, 0);
		th_task_free(t[i]);
	}
	th_runtime_stop();
}

static _Atomic int trace[64];
static _Atomic int trace_n;

static void *alternate(void *arg)
{
	for (int i = 0; i < 16; i++) {
		trace[atomic_fetch_add(&trace_n, 1)] = (int)(intptr_t)arg;
		th_yield();
	}
	return NULL;
}

static void *spawn_two_alternators(void *arg)
{
	(void)arg;
	/* Both are queued before either runs: this task does not yield
	 * between the two spawns. */
	th_task *a = th_spawn(alternate, (void *)1);
	th_task *b = th_spawn(alternate, (void *)2);
	th_wait(a), th_wait(b);
	th_task_free(a), th_task_free(b);
	return NULL;
}

/* Two tasks on one worker yielding to each other run in strict turns. */
static void two_yielding_tasks_take_turns(void **state)
{
	(void)state;
	start(1);
	atomic_store(&trace_n, 0);
	th_task *root = th_spawn(spawn_two_alternators, NULL);
	th_wait(root);
	th_task_free(root);
	th_runtime_stop();
	assert_int_equal(atomic_load(&trace_n), 32);
	for (int i = 1; i < 32; i++)
		assert_int_not_equal(trace[i], trace[i - 1]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(steal_moves_half_of_victim_queue),
		cmocka_unit_test(yielded_task_goes_to_the_back),
		cmocka_unit_test(idle_thief_takes_yielders_but_not_sticky_ones),
		cmocka_unit_test(yielders_are_visible_to_thieves_at_once),
		cmocka_unit_test(woken_task_runs_next_on_the_waker),
		cmocka_unit_test(other_worker_steals_share_of_10000_spawned),
		cmocka_unit_test(sticky_tasks_never_stolen),
		cmocka_unit_test(two_yielding_tasks_take_turns),
	};
	return cmocka_run_group_tests_name("policy_steal", tests, NULL, NULL);
}
