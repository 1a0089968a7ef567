/* test_record.c — the BPF recorder: cross-path reconciliation (run log + kernel intervals
 * vs USDT) on a darts workload for every policy, migrations, namespaces, errors, CLI. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "cmd.h"
#include "lib/rec_darts.h"
#include "record.h"
#include "taskhop.h"

static char self_exe[4096];

/* BPF tests run only with privileges; with TASKHOP_REQUIRE_BPF=1 a skip is a failure. */
static int need_bpf(void)
{
	const char *why = th_record_unavailable();
	if (!why)
		return 1;
	if (getenv("TASKHOP_REQUIRE_BPF") && strcmp(getenv("TASKHOP_REQUIRE_BPF"), "0") != 0)
		fail_msg("TASKHOP_REQUIRE_BPF=1 but BPF is not usable: %s", why);
	print_message("skipped: %s\n", why);
	return 0;
}
#define NEED_BPF() do { if (!need_bpf()) { skip(); return; } } while (0)

static void start_runtime(const char *policy, int workers, bool pin)
{
	struct th_config cfg;
	th_config_default(&cfg);
	cfg.policy = policy;
	cfg.workers = workers;
	cfg.pin = pin;
	cfg.run_log_cap = 1 << 16;
	assert_int_equal(th_runtime_start(&cfg), 0);
}

static struct th_record *record_self(bool usdt)
{
	struct th_record_opts o;
	th_record_opts_default(&o);
	o.usdt = usdt;
	struct th_record *r = th_record_open(&o);
	assert_non_null(r);
	if (th_record_attach_self(r) != 0 || th_record_start(r) != 0)
		fail_msg("recorder: %s", th_record_error());
	return r;
}

/* ---- smoke --------------------------------------------------------------- */

static void darts_runs_are_all_seen_with_a_cpu(void **state)
{
	(void)state;
	NEED_BPF();
	start_runtime("sticky", 2, false);
	struct th_record *r = record_self(false);
	struct rec_darts d;
	th_task *tasks[REC_DARTS_MAX];
	rec_darts_default(&d);
	int n = rec_darts_run(&d, tasks);
	assert_int_equal(n, d.nshort + 1);
	assert_int_equal(th_record_stop(r), 0);
	for (int i = 0; i < n; i++) {
		struct th_task_stats st;
		struct th_rec_task rt;
		th_task_stats(tasks[i], &st);
		assert_int_equal(th_record_task(r, 0, st.id, &rt), 0);
		assert_int_equal(rt.runs, st.runs);
		assert_int_equal(rt.worker_hops, st.worker_hops);
		assert_true(rt.on_cpu_ns > 0);
		assert_true(rt.ncpus_visited >= 1);
		th_task_free(tasks[i]);
	}
	size_t nr;
	const struct th_rec_run *runs = th_record_runs(r, &nr);
	for (size_t i = 0; i < nr; i++)
		assert_true(runs[i].cpu >= 0);
	assert_int_equal(th_record_lost_events(r), 0);
	th_record_close(r);
	th_runtime_stop();
}

int main(int argc, char **argv)
{
	ssize_t n = readlink("/proc/self/exe", self_exe, sizeof(self_exe) - 1);
	self_exe[n > 0 ? n : 0] = 0;
	(void)argc;
	(void)argv;
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(darts_runs_are_all_seen_with_a_cpu),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
