/* test_policy_multiqueue.c — Julia's multiqueue: its heap orders by key, sticky
 * tasks never hop, non-sticky tasks hop when one worker has all the work. */
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

#include "policy.h"
#include "mq_heap.h"

#if defined(__SANITIZE_THREAD__)
#define SCALE 10
#else
#define SCALE 1
#endif

/* Keys inserted in a scrambled order come out ascending, the top key the
 * other workers peek at without the lock always matching the real top. */
static void heap_pops_in_key_order(void **state)
{
	(void)state;
	enum { N = 1000 };
	struct mq_heap h;
	memset(&h, 0, sizeof(h));
	atomic_init(&h.top, MQ_EMPTY);
	struct th_task *t = calloc(N, sizeof(*t));
	assert_non_null(t);
	th_spin_lock(&h.lock); /* insert and pop are called with it held */
	for (uint64_t i = 0; i < N; i++) {
		t[i].policy_word = (i * 7919) % N; /* a permutation of 0..N-1 */
		assert_int_equal(mq_heap_insert(&h, &t[i]), 0);
	}
	for (uint64_t k = 0; k < N; k++) {
		assert_int_equal(atomic_load(&h.top), k);
		struct th_task *x = mq_heap_pop(&h);
		assert_non_null(x);
		assert_int_equal(x->policy_word, k);
	}
	assert_null(mq_heap_pop(&h));
	assert_int_equal(atomic_load(&h.top), MQ_EMPTY);
	th_spin_unlock(&h.lock);
	mq_heap_free(&h);
	free(t);
}

static void start(int workers)
{
	struct th_config cfg;
	th_config_default(&cfg);
	cfg.policy = "multiqueue";
	cfg.workers = workers;
	cfg.seed = 11;
	if (th_runtime_start(&cfg) != 0)
		fail_msg("th_runtime_start: %s", th_last_error());
}

static _Atomic double sink; /* keeps the loop from being optimised away */

/* Yield often, with a little work between yields so both workers are busy. */
static void *busy_yielder(void *arg)
{
	(void)arg;
	double x = 1.0;
	for (int i = 0; i < 200 / SCALE; i++) {
		for (int k = 0; k < 500; k++)
			x = x * 1.0000001 + 1e-9;
		th_yield();
	}
	atomic_store_explicit(&sink, x, memory_order_relaxed);
	return NULL;
}

/* Sticky tasks spread over both workers, yielding hundreds of times while
 * the multiqueue moves everything else around: each stays home. */
static void sticky_tasks_never_hop(void **state)
{
	(void)state;
	start(2);
	enum { N = 40 };
	th_task *t[N], *free_tasks[N];
	for (int i = 0; i < N; i++) {
		t[i] = th_spawn_on(i % 2, busy_yielder, NULL);
		free_tasks[i] = th_spawn(busy_yielder, NULL); /* migrating company */
	}
	for (int i = 0; i < N; i++) {
		struct th_task_stats st;
		th_wait(t[i]);
		th_task_stats(t[i], &st);
		assert_int_equal(st.worker_hops, 0);
		assert_int_equal(st.first_worker, i % 2);
		assert_int_equal(st.last_worker, i % 2);
		assert_true(st.runs > 100 / SCALE);
		th_wait(free_tasks[i]);
		th_task_free(t[i]);
		th_task_free(free_tasks[i]);
	}
	th_runtime_stop();
}

/* Every task starts on worker 0 (th_spawn_at); after its first yield it
 * goes into a random heap, so worker 1 picks some up: tasks hop. */
static void nonsticky_tasks_hop_under_imbalance(void **state)
{
	(void)state;
	start(2);
	enum { N = 40 };
	th_task *t[N];
	for (int i = 0; i < N; i++)
		t[i] = th_spawn_at(0, busy_yielder, NULL);
	uint64_t hops = 0, ran_on_1 = 0;
	for (int i = 0; i < N; i++) {
		struct th_task_stats st;
		th_wait(t[i]);
		th_task_stats(t[i], &st);
		assert_int_equal(st.first_worker, 0);
		hops += st.worker_hops;
		ran_on_1 += st.last_worker == 1 || st.worker_hops > 0;
		th_task_free(t[i]);
	}
	th_runtime_stop();
	print_message("multiqueue: %llu hops over %d tasks, %llu reached worker 1\n",
		      (unsigned long long)hops, N, (unsigned long long)ran_on_1);
	assert_true(hops > 0);
	assert_true(ran_on_1 > 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(heap_pops_in_key_order),
		cmocka_unit_test(sticky_tasks_never_hop),
		cmocka_unit_test(nonsticky_tasks_hop_under_imbalance),
	};
	return cmocka_run_group_tests_name("policy_multiqueue", tests, NULL, NULL);
}
