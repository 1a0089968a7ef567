/* test_policy_plugin.c — policies loaded from shared objects: the example LIFO plugin
 * (build/examples/policy_lifo.so) runs yielding tasks newest first; bad plugins are refused. */
#define _GNU_SOURCE
#include <libgen.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "taskhop.h"

/* Plugins are found next to this binary: build/tests/test_x -> build/examples/x.so. */
static const char *built(const char *rel)
{
	static char path[PATH_MAX];
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	assert_true(n > 0);
	exe[n] = 0;
	snprintf(path, sizeof(path), "%s/%s", dirname(exe), rel);
	return path;
}

static void start(const char *policy, int workers)
{
	struct th_config cfg;
	th_config_default(&cfg);
	cfg.policy = policy;
	cfg.workers = workers;
	if (th_runtime_start(&cfg) != 0)
		fail_msg("th_runtime_start(%s): %s", policy, th_last_error());
}

/* Darts-like tasks: each logs its number when a run of it begins, and yields twice. */
enum { NTASKS = 4, NYIELDS = 2, NRUNS = NTASKS * (NYIELDS + 1) };
static int order[NRUNS];
static _Atomic int norder;

static void *yielding(void *arg)
{
	for (int i = 0; i <= NYIELDS; i++) {
		if (i)
			th_yield();
		order[atomic_fetch_add(&norder, 1)] = (int)(intptr_t)arg;
	}
	return NULL;
}

/* On one worker, a parent spawns tasks 1..NTASKS, then waits: none runs before all are queued. */
static void *spawn_all(void *arg)
{
	(void)arg;
	th_group g = TH_GROUP_INIT;
	for (intptr_t i = 1; i <= NTASKS; i++)
		th_group_spawn(&g, yielding, (void *)i);
	th_group_wait(&g);
	return NULL;
}

static void run_order(const char *policy, char *out, size_t len)
{
	start(policy, 1);
	atomic_store(&norder, 0);
	th_task *t = th_spawn(spawn_all, NULL);
	th_wait(t);
	th_task_free(t);
	th_runtime_stop();
	assert_int_equal(atomic_load(&norder), NRUNS);
	size_t o = 0;
	for (int i = 0; i < NRUNS; i++)
		o += (size_t)snprintf(out + o, len - o, "%s%d", i ? " " : "", order[i]);
}

/* The newest task runs first; at a yield the yielder is the newest again, so two tasks
 * take turns while older ones wait. */
static void lifo_plugin_runs_the_newest_task_first(void **state)
{
	(void)state;
	char seen[64];
	start(built("../examples/policy_lifo.so"), 1);
	assert_string_equal(th_policy_name(), "lifo");
	th_runtime_stop();
	run_order(built("../examples/policy_lifo.so"), seen, sizeof(seen));
	assert_string_equal(seen, "4 3 4 3 4 3 2 1 2 1 2 1");
}

/* The control: the same tasks under the built-in FIFO take turns in spawn order. */
static void shared_fifo_runs_the_same_tasks_round_robin(void **state)
{
	(void)state;
	char seen[64];
	run_order("shared", seen, sizeof(seen));
	assert_string_equal(seen, "1 2 3 4 1 2 3 4 1 2 3 4");
}

static void *yield_and_report_worker(void *arg)
{
	(void)arg;
	for (int i = 0; i < 20; i++)
		th_yield();
	return (void *)(intptr_t)th_self_worker();
}

/* th_spawn_on tasks, yielding on 2 workers, never leave their worker under the plugin. */
static void lifo_plugin_keeps_sticky_tasks_on_their_worker(void **state)
{
	(void)state;
	start(built("../examples/policy_lifo.so"), 2);
	th_task *t[8];
	for (int i = 0; i < 8; i++)
		t[i] = i % 2 ? th_spawn_on(1, yield_and_report_worker, NULL) : th_spawn(yield_and_report_worker, NULL);
	for (int i = 0; i < 8; i++) {
		struct th_task_stats st;
		intptr_t w = (intptr_t)th_fetch(t[i]);
		th_task_stats(t[i], &st);
		if (i % 2) {
			assert_int_equal(w, 1);
			assert_int_equal(st.worker_hops, 0);
		}
		assert_int_equal(st.yields, 20);
		th_task_free(t[i]);
	}
	th_runtime_stop();
}

static void expect_refused(const char *policy, const char *msg)
{
	struct th_config cfg;
	th_config_default(&cfg);
	cfg.policy = policy;
	cfg.workers = 1;
	assert_int_equal(th_runtime_start(&cfg), -1);
	const char *err = th_last_error();
	if (!strstr(err, msg) || !strstr(err, policy) || strchr(err, '\n'))
		fail_msg("error '%s' should name %s and say '%s', on one line", err, policy, msg);
}

static void a_missing_plugin_is_refused_with_its_path(void **state)
{
	(void)state;
	expect_refused("./no/such/policy.so", "not found");
}

static void a_plugin_built_for_another_abi_is_refused(void **state)
{
	(void)state;
	expect_refused(built("plugins/policy_other_abi.so"), "built for policy ABI 2, this runtime has 1");
}

static void a_library_without_the_plugin_symbol_is_refused(void **state)
{
	(void)state;
	expect_refused(built("plugins/policy_no_symbol.so"), "exports no th_policy_plugin");
}

static void a_name_with_a_slash_or_ending_in_so_is_a_plugin(void **state)
{
	(void)state;
	assert_true(th_policy_is_plugin("./lifo.so"));
	assert_true(th_policy_is_plugin("/opt/p"));
	assert_true(th_policy_is_plugin("lifo.so"));
	assert_false(th_policy_is_plugin("shared"));
	assert_false(th_policy_is_plugin(".so"));
	assert_false(th_policy_is_plugin(""));
	assert_false(th_policy_is_plugin(NULL));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(lifo_plugin_runs_the_newest_task_first),
		cmocka_unit_test(shared_fifo_runs_the_same_tasks_round_robin),
		cmocka_unit_test(lifo_plugin_keeps_sticky_tasks_on_their_worker),
		cmocka_unit_test(a_missing_plugin_is_refused_with_its_path),
		cmocka_unit_test(a_plugin_built_for_another_abi_is_refused),
		cmocka_unit_test(a_library_without_the_plugin_symbol_is_refused),
		cmocka_unit_test(a_name_with_a_slash_or_ending_in_so_is_a_plugin),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
