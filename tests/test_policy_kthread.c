/* test_policy_kthread.c — the thread-per-task baseline: each task on its own
 * kernel thread, same API (yield, fetch, mutex, groups) and the same counters. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cmocka.h>

#include "taskhop.h"

static void start(void)
{
	struct th_config cfg;
	th_config_default(&cfg);
	cfg.policy = "kthread";
	cfg.workers = 2;
	if (th_runtime_start(&cfg) != 0)
		fail_msg("th_runtime_start: %s", th_last_error());
}

enum { N = 64 };
static _Atomic int started;

/* Records its tid, then waits until all N tasks have started: they are all
 * alive at once, so a pool of fewer than N threads could not pass. */
static void *record_tid_and_wait_for_all(void *arg)
{
	(void)arg;
	atomic_fetch_add(&started, 1);
	while (atomic_load(&started) < N)
		th_yield();
	return (void *)(intptr_t)syscall(SYS_gettid);
}

static void every_task_runs_on_its_own_kernel_tid(void **state)
{
	(void)state;
	start();
	atomic_store(&started, 0);
	th_task *t[N];
	for (int i = 0; i < N; i++)
		t[i] = th_spawn(record_tid_and_wait_for_all, NULL);
	intptr_t tid[N];
	for (int i = 0; i < N; i++) {
		struct th_task_stats st;
		tid[i] = (intptr_t)th_fetch(t[i]);
		th_task_stats(t[i], &st);
		assert_int_equal(st.kernel_tid, tid[i]);
		assert_int_equal(st.runs, 1);
		assert_int_not_equal(tid[i], (intptr_t)syscall(SYS_gettid));
		for (int w = 0; w < th_nworkers(); w++)
			assert_int_not_equal(tid[i], th_worker_tid(w));
		for (int j = 0; j < i; j++)
			assert_int_not_equal(tid[i], tid[j]);
		th_task_free(t[i]);
	}
	th_runtime_stop();
}

static void *yield_ten_times(void *arg)
{
	(void)arg;
	for (int i = 0; i < 10; i++)
		th_yield();
	return th_self_task();
}

/* th_yield in a kthread task is sched_yield(), counted like a green yield;
 * th_self_task is the task, th_self_worker -1 (it is no worker). */
static void yield_is_counted_and_self_task_is_the_task(void **state)
{
	(void)state;
	start();
	th_task *t = th_spawn(yield_ten_times, NULL);
	assert_ptr_equal(th_fetch(t), t);
	struct th_task_stats st;
	th_task_stats(t, &st);
	assert_int_equal(st.yields, 10);
	assert_int_equal(st.runs, 1);
	assert_int_equal(st.worker_hops, 0);
	assert_int_not_equal(st.kernel_tid, 0);
	th_task_free(t);
	th_runtime_stop();
}

static th_mutex mu = TH_MUTEX_INIT;
static long counter;

static void *child_value(void *arg)
{
	return (void *)((intptr_t)arg + 1);
}

/* Blocking calls block the thread: a task fetches its child, and many
 * tasks share a task-aware mutex and finish in a group. */
static void *fetch_child_then_count(void *arg)
{
	th_task *c = th_spawn(child_value, arg);
	intptr_t v = (intptr_t)th_fetch(c);
	th_task_free(c);
	for (int i = 0; i < 100; i++) {
		th_mutex_lock(&mu);
		counter += 1;
		th_mutex_unlock(&mu);
	}
	return (void *)v;
}

static void blocking_calls_block_the_thread(void **state)
{
	(void)state;
	start();
	counter = 0;
	th_task *t[20];
	for (intptr_t i = 0; i < 20; i++)
		t[i] = th_spawn(fetch_child_then_count, (void *)i);
	for (intptr_t i = 0; i < 20; i++) {
		assert_int_equal((intptr_t)th_fetch(t[i]), i + 1);
		th_task_free(t[i]);
	}
	th_runtime_stop();
	assert_int_equal(counter, 20 * 100);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(every_task_runs_on_its_own_kernel_tid),
		cmocka_unit_test(yield_is_counted_and_self_task_is_the_task),
		cmocka_unit_test(blocking_calls_block_the_thread),
	};
	return cmocka_run_group_tests_name("policy_kthread", tests, NULL, NULL);
}
