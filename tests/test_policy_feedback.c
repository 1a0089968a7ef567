/* test_policy_feedback.c — multi-level feedback: the oldest task of a level keeps its
 * worker across yields until its quantum is used, then new tasks go first. */
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

#include "taskhop.h"

#define MS 1000000ull

#if defined(__x86_64__) && !defined(__SANITIZE_THREAD__)
#define PREEMPT_WORKS 1
#else
#define PREEMPT_WORKS 0
#endif

static void start(const char *policy, int workers, uint64_t quantum)
{
	struct th_config cfg;
	th_config_default(&cfg);
	cfg.policy = policy;
	cfg.workers = workers;
	cfg.seed = 3;
	cfg.preempt_ns = quantum;
	if (th_runtime_start(&cfg) != 0)
		fail_msg("th_runtime_start(%s): %s", policy, th_last_error());
}

static void spin_ms(uint64_t ms)
{
	uint64_t until = th_now_ns() + ms * MS;
	while (th_now_ns() < until)
		;
}

/* Spins for ms of the task's own CPU time, what feedback charges: the same
 * whatever share of the CPUs a busy machine leaves the test. */
static void spin_cpu_ms(uint64_t ms)
{
	uint64_t until = th_task_cpu_ns() + ms * MS;
	while (th_task_cpu_ns() < until)
		;
}

/* Within the top level feedback runs tasks as fcfs does: test_policy_fcfs.c. */

/* ---- a used-up quantum: the new task goes first --------------------------- */

enum { CHUNKS = 8, CHUNK_MS = 15 }; /* 120 ms in all, over the 50 ms top quantum */
static _Atomic int chunks_done, chunks_seen_by_new;

struct chunking {
	int n, ms;
};

/* n chunks of ms of CPU time, a yield after each */
static void *long_yielding(void *arg)
{
	const struct chunking *c = arg;
	for (int i = 0; i < c->n; i++) {
		spin_cpu_ms((uint64_t)c->ms);
		atomic_fetch_add(&chunks_done, 1);
		th_yield();
	}
	return NULL;
}

static void *note_chunks(void *arg)
{
	(void)arg;
	atomic_store(&chunks_seen_by_new, atomic_load(&chunks_done));
	return NULL;
}

/* Spawns a long task of chunks c and a new task after it, waits for both and
 * stops the runtime: returns how many chunks the long task had done when the
 * new task ran. */
static int new_task_after(const struct chunking *c)
{
	atomic_store(&chunks_done, 0);
	th_task *l = th_spawn(long_yielding, (void *)c);
	th_task *s = th_spawn(note_chunks, NULL);
	th_wait(l);
	th_wait(s);
	th_task_free(l);
	th_task_free(s);
	th_runtime_stop();
	return atomic_load(&chunks_seen_by_new);
}

/* One worker, no preemption: returns how many chunks the long task had done
 * when the task spawned after it ran. */
static int chunks_before_new_task(const char *policy)
{
	start(policy, 1, 0);
	return new_task_after(&(struct chunking){ CHUNKS, CHUNK_MS });
}

static void task_that_used_its_quantum_gives_way_to_a_new_one(void **state)
{
	(void)state;
	int fb = chunks_before_new_task("feedback");
	int fcfs = chunks_before_new_task("fcfs");
	print_message("  the new task ran after %d chunks of 15 ms under feedback, %d under fcfs\n",
		      fb, fcfs);
	/* 50 ms of attained CPU time: at the yield after the 4th chunk (60 ms);
	 * 3 if the runtime's own time before the first chunk tips it over */
	assert_true(fb >= 3 && fb <= 4);
	assert_int_equal(fcfs, CHUNKS); /* the contrast: fcfs keeps the old task */
}

/* ---- the top quantum is learned from tasks that finished ------------------- */

enum { FINE_CHUNKS = 40, FINE_CHUNK_MS = 2, WARM_TASKS = 4, WARM_MS = 5 };

static void *warm_task(void *arg)
{
	(void)arg;
	spin_cpu_ms(WARM_MS);
	return NULL;
}

/* One worker, no preemption; `warm` tasks of 5 ms finish first. Returns how
 * many 2 ms chunks a long task had done when the task spawned after it ran. */
static int fine_chunks_before_new_task(int warm)
{
	start("feedback", 1, 0);
	for (int i = 0; i < warm; i++) {
		th_task *w = th_spawn(warm_task, NULL);
		th_wait(w);
		th_task_free(w);
	}
	return new_task_after(&(struct chunking){ FINE_CHUNKS, FINE_CHUNK_MS });
}

static void top_quantum_is_learned_from_finished_tasks(void **state)
{
	(void)state;
	int learned = fine_chunks_before_new_task(WARM_TASKS);
	int fresh = fine_chunks_before_new_task(0);
	print_message("  after %d finished tasks of %d ms the new task ran after %d chunks of "
		      "%d ms, with none finished after %d\n",
		      WARM_TASKS, WARM_MS, learned, FINE_CHUNK_MS, fresh);
	/* q0 = 1.5 x 5 ms = 7.5 ms: at the yield after the 4th chunk (3 if the runtime's own
	 * time tips it over, 5 if a warm task's clock read a little long) */
	assert_true(learned >= 3 && learned <= 5);
	/* q0 = 50 ms until a task has finished: the 25th chunk */
	assert_true(fresh >= 24 && fresh <= 25);
}

/* ---- with preemption: a long task spawned first gives way ----------------- */

struct times {
	uint64_t long_done, short_done;
};

static void *long_spin(void *arg)
{
	struct times *t = arg;
	spin_cpu_ms(300);
	t->long_done = th_now_ns();
	return NULL;
}

static void *short_work(void *arg)
{
	struct times *t = arg;
	spin_cpu_ms(5);
	t->short_done = th_now_ns();
	return NULL;
}

static struct times long_first(const char *policy)
{
	struct times tm = { 0, 0 };
	start(policy, 1, 1 * MS);
	th_task *l = th_spawn_opts(long_spin, &tm, &(struct th_spawn_opts){ .preemptible = true });
	th_task *s = th_spawn_opts(short_work, &tm, &(struct th_spawn_opts){ .preemptible = true });
	th_wait(l);
	th_wait(s);
	th_task_free(l);
	th_task_free(s);
	th_runtime_stop();
	return tm;
}

static void long_task_spawned_first_gives_way_with_preemption(void **state)
{
	(void)state;
	if (!PREEMPT_WORKS) {
		skip();
		return;
	}
	struct times fb = long_first("feedback"), fcfs = long_first("fcfs");
	assert_true(fb.short_done < fb.long_done);
	assert_true(fcfs.short_done > fcfs.long_done); /* oldest first, preempted or not */
}

/* ---- work-conserving ------------------------------------------------------ */

static _Atomic int running_now, most_at_once;

static void *long_chunks_counting(void *arg)
{
	(void)arg;
	for (int c = 0; c < CHUNKS; c++) {
		int n = atomic_fetch_add(&running_now, 1) + 1;
		for (int m = atomic_load(&most_at_once); n > m;)
			if (atomic_compare_exchange_weak(&most_at_once, &m, n))
				break;
		spin_ms(CHUNK_MS);
		atomic_fetch_sub(&running_now, 1);
		th_yield();
	}
	return NULL;
}

/* Two long tasks, both dropped to lower levels, still run side by side on
 * two workers: no worker waits while a task of any level is runnable. */
static void dropped_tasks_still_use_every_worker(void **state)
{
	(void)state;
	start("feedback", 2, 0);
	atomic_store(&running_now, 0);
	atomic_store(&most_at_once, 0);
	th_task *a = th_spawn(long_chunks_counting, NULL);
	th_task *b = th_spawn(long_chunks_counting, NULL);
	th_wait(a);
	th_wait(b);
	th_task_free(a);
	th_task_free(b);
	th_runtime_stop();
	assert_int_equal(atomic_load(&most_at_once), 2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(task_that_used_its_quantum_gives_way_to_a_new_one),
		cmocka_unit_test(top_quantum_is_learned_from_finished_tasks),
		cmocka_unit_test(long_task_spawned_first_gives_way_with_preemption),
		cmocka_unit_test(dropped_tasks_still_use_every_worker),
	};
	return cmocka_run_group_tests_name("policy_feedback", tests, NULL, NULL);
}
