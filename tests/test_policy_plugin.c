/* test_policy_plugin.c — policies loaded from shared objects: the example LIFO plugin
 * (build/examples/policy_lifo.so) runs yielding tasks newest first; bad plugins are
 * refused, and one that breaks the policy contract is caught by the runtime's checks. */
#define _GNU_SOURCE
#include <libgen.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <signal.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "core_check.h" /* TH_CHECKS: are the invariant checks compiled in? */
#include "lib/child.h"
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

static void *yield_once(void *arg)
{
	(void)arg;
	th_yield();
	return NULL;
}

static _Atomic int never;

static void *nothing(void *arg)
{
	return arg;
}

/* Spawns a task, which wakes the other worker, and keeps its own worker: the other
 * worker's pop meets this task, running. */
static void *spawn_and_stay(void *arg)
{
	(void)arg;
	th_task_free(th_spawn(nothing, NULL));
	while (!atomic_load(&never))
		;
	return NULL;
}

/* What the child runs: `workers` workers under `plugin`, one task running fn. It
 * must not come back; it says so on stderr if it does. No cmocka here: a failed
 * assertion would go on with the parent's tests in the child. */
struct under {
	const char *plugin;
	int workers;
	th_fn fn;
};

static void run_under(const void *arg)
{
	const struct under *u = arg;
	struct rlimit no_core = { 0, 0 };
	setrlimit(RLIMIT_CORE, &no_core); /* the abort is expected: no core file */
	alarm(120); /* a check that never fires must not hang the suite: SIGALRM fails it */
	struct th_config cfg;
	th_config_default(&cfg);
	cfg.policy = u->plugin;
	cfg.workers = u->workers;
	if (th_runtime_start(&cfg) != 0) {
		fprintf(stderr, "th_runtime_start(%s): %s\n", u->plugin, th_last_error());
		_exit(3);
	}
	th_wait(th_spawn(u->fn, NULL));
	fprintf(stderr, "the task ran to its end: nothing was caught\n");
}

/* run_under in a child, which must abort with `want` and `also` on its stderr. */
static void expect_abort(const char *plugin, int workers, th_fn fn, const char *want, const char *also)
{
	char out[4096] = "";
	int status = run_in_child(run_under, &(struct under){ plugin, workers, fn }, out, sizeof(out));
	if (status == -1 || !WIFSIGNALED(status) || WTERMSIG(status) != SIGABRT)
		fail_msg("the child should abort (SIGABRT), status 0x%x, stderr: %s", status, out);
	if (!strstr(out, want) || !strstr(out, also))
		fail_msg("stderr should say '%s' ... '%s', it says: %s", want, also, out);
}

static bool checks_compiled_in(void)
{
	if (!TH_CHECKS)
		print_message("skipped: the runtime's invariant checks are compiled out of the release "
			      "build; make DEBUG=1 or SAN=address|thread builds them in\n");
	return TH_CHECKS;
}

/* policy_pop_twice's pop forgets to unlink the task it returns. On two workers, the
 * task's spawn wakes the other worker (which one ran the task first varies), whose
 * pop hands out the task running on the first: debug and sanitizer builds abort,
 * naming the invariant. */
static void a_plugin_handing_out_a_running_task_aborts_on_the_invariant(void **state)
{
	(void)state;
	if (!checks_compiled_in())
		skip();
	expect_abort(built("plugins/policy_pop_twice.so"), 2, spawn_and_stay,
		     "taskhop: invariant broken: policy pop_twice handed task 1 to worker ", " while it is running");
}

/* On one worker, the same bug hands a yielding task its own turn back. */
static void a_plugin_handing_a_yielder_back_to_itself_aborts_on_the_invariant(void **state)
{
	(void)state;
	if (!checks_compiled_in())
		skip();
	expect_abort(built("plugins/policy_pop_twice.so"), 1, yield_once,
		     "taskhop: invariant broken: policy pop_twice handed task 1 back to its own yield", "");
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
		cmocka_unit_test(a_plugin_handing_out_a_running_task_aborts_on_the_invariant),
		cmocka_unit_test(a_plugin_handing_a_yielder_back_to_itself_aborts_on_the_invariant),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
