/* test_policy.c — what every migration policy must get right: the list, the
 * error for an unknown name, a million tasks and nested spawn all computed correctly. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "taskhop.h"

/* TSan slows every switch, atomic and thread start by 10-50x; ASan makes a
 * thread start ~1 ms (shadow and signal stacks for each). */
#if defined(__SANITIZE_THREAD__)
#define TSAN 1
#else
#define TSAN 0
#endif
#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
#define SAN 1
#else
#define SAN 0
#endif

static const char *const all_policies[] = { "sticky", "shared", "steal", "multiqueue", "fcfs", "kthread",
					    "feedback" };
#define NPOL (sizeof(all_policies) / sizeof(all_policies[0]))

static void start(const char *policy, int workers)
{
	struct th_config cfg;
	th_config_default(&cfg);
	cfg.policy = policy;
	cfg.workers = workers;
	cfg.seed = 7;
	if (th_runtime_start(&cfg) != 0)
		fail_msg("th_runtime_start(%s): %s", policy, th_last_error());
}

static void every_policy_is_listed_with_a_description(void **state)
{
	(void)state;
	const char *const *names = th_policy_names();
	for (size_t p = 0; p < NPOL; p++) {
		bool found = false;
		for (size_t i = 0; names[i]; i++)
			found |= !strcmp(names[i], all_policies[p]);
		if (!found)
			fail_msg("policy '%s' missing from th_policy_names()", all_policies[p]);
		assert_non_null(th_policy_description(all_policies[p]));
	}
	assert_null(th_policy_description("no-such-policy"));
}

static void unknown_policy_fails_at_start_with_the_list(void **state)
{
	(void)state;
	struct th_config cfg;
	th_config_default(&cfg);
	cfg.policy = "stael";
	assert_int_equal(th_runtime_start(&cfg), -1);
	const char *e = th_last_error();
	assert_non_null(strstr(e, "stael"));
	assert_non_null(strstr(e, "steal")); /* names what exists */
	assert_non_null(strstr(e, "multiqueue"));
	/* and the runtime still starts afterwards with a good name */
	start("steal", 2);
	th_runtime_stop();
}

/* ---- a million tasks ---------------------------------------------------- */

static void *triple_plus_one(void *arg)
{
	return (void *)((intptr_t)arg * 3 + 1);
}

/* Spawned from the main thread in batches (a task's memory lives until its
 * fetch), each result checked, so a lost, duplicated or mixed-up task shows. */
static void million_tasks(const char *policy, long n)
{
	enum { BATCH = 1000 };
	/* qemu-user (make test-arm64) starts a thread orders of magnitude slower
	 * than the kernel alone (its translation state is per thread): a thread per
	 * task gets 1e3 there, enough to start, finish and free each many times over */
	if (getenv("TASKHOP_TEST_EMULATED") && strcmp(policy, "kthread") == 0 && n > 1000)
		n = 1000;
	uint64_t t0 = th_now_ns();
	start(policy, 2);
	th_task *t[BATCH];
	for (long base = 0; base < n; base += BATCH) {
		for (long i = 0; i < BATCH; i++) {
			t[i] = th_spawn(triple_plus_one, (void *)(intptr_t)(base + i));
			if (!t[i])
				fail_msg("%s: th_spawn: %s", policy, th_last_error());
		}
		for (long i = 0; i < BATCH; i++) {
			intptr_t r = (intptr_t)th_fetch(t[i]);
			if (r != (base + i) * 3 + 1)
				fail_msg("%s: task %ld returned %ld", policy, base + i, (long)r);
			th_task_free(t[i]);
		}
	}
	th_runtime_stop();
	print_message("%s: %ld tasks in %.1f s\n", policy, n, (th_now_ns() - t0) / 1e9);
}

/* 1e6 tasks; under TSan 1e5 per policy, and under either sanitizer 1e4 for
 * kthread (a thread per task), so `make test SAN=...` stays within minutes. */
#define MILLION_TEST(pol, san_n)                                         \
	static void million_tasks_correct_##pol(void **state)            \
	{                                                                \
		(void)state;                                             \
		million_tasks(#pol, san_n);                              \
	}
MILLION_TEST(sticky, TSAN ? 100000 : 1000000)
MILLION_TEST(shared, TSAN ? 100000 : 1000000)
MILLION_TEST(steal, TSAN ? 100000 : 1000000)
MILLION_TEST(multiqueue, TSAN ? 100000 : 1000000)
MILLION_TEST(fcfs, TSAN ? 100000 : 1000000)
MILLION_TEST(feedback, TSAN ? 100000 : 1000000)
MILLION_TEST(kthread, SAN ? 10000 : 1000000)

/* ---- nested spawn ------------------------------------------------------- */

/* fib with one branch spawned and the other computed here: a tree of tasks
 * that wait on their children, so workers block and wake all the way down. */
static void *fib(void *arg)
{
	intptr_t n = (intptr_t)arg;
	if (n < 2)
		return (void *)n;
	th_task *a = th_spawn(fib, (void *)(n - 1));
	if (!a)
		return (void *)-1000000;
	intptr_t b = (intptr_t)fib((void *)(n - 2));
	intptr_t r = (intptr_t)th_fetch(a) + b;
	th_task_free(a);
	return (void *)r;
}

static void nested_fib(const char *policy, intptr_t n, intptr_t expect)
{
	uint64_t t0 = th_now_ns();
	start(policy, 2);
	th_task *root = th_spawn(fib, (void *)n);
	assert_non_null(root);
	assert_int_equal((intptr_t)th_fetch(root), expect);
	th_task_free(root);
	th_runtime_stop();
	print_message("%s: nested fib(%ld) in %.1f s\n", policy, (long)n, (th_now_ns() - t0) / 1e9);
}

static intptr_t fib_serial(intptr_t n)
{
	intptr_t a = 0, b = 1;
	while (n--) {
		intptr_t c = a + b;
		a = b, b = c;
	}
	return a;
}

/* fib(20) is 10945 tasks; kthread gets fib(15) (986 threads, mostly alive at
 * once, each parent waiting on its child). Under TSan fib(16): breadth-first
 * policies keep thousands of stacks alive there, each a slow TSan mapping. */
#define NESTED_TEST(pol, n)                                           \
	static void nested_spawn_correct_##pol(void **state)         \
	{                                                             \
		(void)state;                                          \
		nested_fib(#pol, n, fib_serial(n));                   \
	}
NESTED_TEST(sticky, TSAN ? 16 : 20)
NESTED_TEST(shared, TSAN ? 16 : 20)
NESTED_TEST(steal, TSAN ? 16 : 20)
NESTED_TEST(multiqueue, TSAN ? 16 : 20)
NESTED_TEST(fcfs, TSAN ? 16 : 20)
NESTED_TEST(feedback, TSAN ? 16 : 20)
NESTED_TEST(kthread, 15)

/* ---- groups and yields -------------------------------------------------- */

static _Atomic long group_sum;

static void *add_after_yields(void *arg)
{
	for (int i = 0; i < 5; i++)
		th_yield();
	atomic_fetch_add(&group_sum, (intptr_t)arg);
	return NULL;
}

/* @sync with tasks that yield: every policy must bring each one back and
 * have th_group_wait return only when all are done. */
static void group_of_yielding_tasks_completes(void **state)
{
	(void)state;
	for (size_t p = 0; p < NPOL; p++) {
		start(all_policies[p], 2);
		atomic_store(&group_sum, 0);
		th_group g;
		th_group_init(&g);
		for (intptr_t i = 1; i <= 200; i++)
			th_group_spawn(&g, add_after_yields, (void *)i);
		th_group_wait(&g);
		if (atomic_load(&group_sum) != 200 * 201 / 2)
			fail_msg("%s: group sum %ld", all_policies[p], atomic_load(&group_sum));
		th_runtime_stop();
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(every_policy_is_listed_with_a_description),
		cmocka_unit_test(unknown_policy_fails_at_start_with_the_list),
		cmocka_unit_test(million_tasks_correct_sticky),
		cmocka_unit_test(million_tasks_correct_shared),
		cmocka_unit_test(million_tasks_correct_steal),
		cmocka_unit_test(million_tasks_correct_multiqueue),
		cmocka_unit_test(million_tasks_correct_fcfs),
		cmocka_unit_test(million_tasks_correct_feedback),
		cmocka_unit_test(million_tasks_correct_kthread),
		cmocka_unit_test(nested_spawn_correct_sticky),
		cmocka_unit_test(nested_spawn_correct_shared),
		cmocka_unit_test(nested_spawn_correct_steal),
		cmocka_unit_test(nested_spawn_correct_multiqueue),
		cmocka_unit_test(nested_spawn_correct_fcfs),
		cmocka_unit_test(nested_spawn_correct_feedback),
		cmocka_unit_test(nested_spawn_correct_kthread),
		cmocka_unit_test(group_of_yielding_tasks_completes),
	};
	return cmocka_run_group_tests_name("policy", tests, NULL, NULL);
}
