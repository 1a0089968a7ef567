/* test_record_max_wait.c — the recorder's per-run figures: each run of a task carries its
 * on-CPU time and run-queue wait, and a task's largest scheduling delay is the largest of
 * its runs' waits, dated when that wait ended (a real darts run, recorded with BPF). */
#define _GNU_SOURCE
#include <inttypes.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "lib/hogs.h"
#include "lib/need_bpf.h"
#include "lib/rec_darts.h"
#include "record.h"
#include "taskhop.h"

static struct th_record *cur_rec;

static int teardown(void **state)
{
	(void)state;
	hogs_stop();
	th_record_close(cur_rec);
	cur_rec = NULL;
	if (th_nworkers() > 0)
		th_runtime_stop();
	return 0;
}

/* Records rec_darts on 2 workers with two spinning processes beside them (not followed),
 * so that the workers wait in run queues. Returns the number of tasks. */
static int record_darts_under_load(th_task **tasks)
{
	struct th_config cfg;
	th_config_default(&cfg);
	cfg.policy = "shared";
	cfg.workers = 2;
	cfg.run_log_cap = 1 << 16;
	assert_int_equal(th_runtime_start(&cfg), 0);
	cur_rec = th_record_open(NULL);
	assert_non_null(cur_rec);
	if (th_record_attach_self(cur_rec) != 0 || th_record_start(cur_rec) != 0)
		fail_msg("recorder: %s", th_record_error());
	hogs_start();
	struct rec_darts d;
	rec_darts_default(&d);
	int n = rec_darts_run(&d, tasks);
	assert_true(n > 0);
	assert_int_equal(th_record_stop(cur_rec), 0);
	return n;
}

static void max_runq_wait_is_the_largest_wait_of_one_recorded_run(void **state)
{
	(void)state;
	NEED_BPF();
	th_task *tasks[REC_DARTS_MAX];
	int n = record_darts_under_load(tasks);
	size_t nr;
	const struct th_rec_run *runs = th_record_runs(cur_rec, &nr);
	assert_non_null(runs);
	uint64_t waited = 0;
	for (int i = 0; i < n; i++) {
		struct th_task_stats st;
		struct th_rec_task rt;
		th_task_stats(tasks[i], &st);
		assert_int_equal(th_record_task(cur_rec, 0, st.id, &rt), 0);
		uint64_t max = 0, at = 0, wait_sum = 0, on_sum = 0, seen = 0;
		for (size_t k = 0; k < nr; k++) {
			if (runs[k].task_id != st.id)
				continue;
			seen++;
			wait_sum += runs[k].runq_wait_ns;
			on_sum += runs[k].on_cpu_ns;
			if (runs[k].runq_wait_ns > max) {
				max = runs[k].runq_wait_ns;
				at = runs[k].runq_wait_end_ns;
			}
		}
		assert_int_equal(seen, rt.runs);
		/* the runs' figures add up to the task's */
		assert_int_equal(wait_sum, rt.runq_wait_ns);
		assert_int_equal(on_sum, rt.on_cpu_ns);
		assert_int_equal(rt.max_runq_wait_ns, max);
		assert_int_equal(rt.max_runq_wait_at_ns, at);
		if (max) { /* dated inside the recording */
			uint64_t t0, t1;
			th_record_window(cur_rec, &t0, &t1);
			assert_true(at >= t0 && at <= t1);
		}
		waited += max > 0;
	}
	print_message("  %" PRIu64 " of %d tasks waited in a run queue\n", waited, n);
	/* two spinning processes on the workers' CPUs: some run waited */
	assert_true(waited > 0);
	for (int i = 0; i < n; i++)
		th_task_free(tasks[i]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(max_runq_wait_is_the_largest_wait_of_one_recorded_run, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
