/* test_record_stream.c — the streamed run logs at scale: a million runs per worker are
 * all kept, recorded in process and from another process (through its run-log area),
 * and a drain that falls behind loses an exact, reported number of runs, never more. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "lib/need_bpf.h"
#include "record.h"
#include "taskhop.h"

#define TASKS_PER_WORKER 2
#define NTASKS (2 * TASKS_PER_WORKER)

static struct th_record *cur_rec; /* closed by the teardown if a test fails midway */

static int teardown(void **state)
{
	(void)state;
	if (cur_rec) {
		th_record_close(cur_rec);
		cur_rec = NULL;
	}
	if (th_nworkers() > 0)
		th_runtime_stop();
	return 0;
}

struct job {
	long yields;
	int spin; /* iterations of work between yields */
};

/* A task of the workload: work, yield, again. The work (~1 us) keeps the rate of runs
 * below what a drain moves even on a loaded machine, and the switches a small part of
 * the workers' time. */
static void *worker_task(void *arg)
{
	const struct job *j = arg;
	for (long i = 0; i < j->yields; i++) {
		for (volatile int k = 0; k < j->spin; k++)
			;
		th_yield();
	}
	return NULL;
}

/* Rings of a million runs: a drain may pause for a second (a page fault costs up to
 * 80 us on the VMs this runs on, and a loaded machine delays the drainer) */
#define BIG_RING ((size_t)1 << 20)

static void start_runtime(size_t run_log_cap, size_t run_log_ring)
{
	struct th_config cfg;
	th_config_default(&cfg);
	cfg.policy = "sticky";
	cfg.workers = 2;
	cfg.run_log_cap = run_log_cap;
	cfg.run_log_ring = run_log_ring;
	assert_int_equal(th_runtime_start(&cfg), 0);
}

struct task_runs {
	uint64_t id, runs;
};

/* Runs the workload: TASKS_PER_WORKER tasks pinned on each worker; their ids and runs. */
static void run_workload(const struct job *j, struct task_runs out[NTASKS])
{
	th_task *t[NTASKS];
	for (int i = 0; i < NTASKS; i++)
		t[i] = th_spawn_on(i % 2, worker_task, (void *)j);
	for (int i = 0; i < NTASKS; i++) {
		struct th_task_stats st;
		th_wait(t[i]);
		th_task_stats(t[i], &st);
		out[i] = (struct task_runs){ st.id, st.runs };
		th_task_free(t[i]);
	}
}

/* The child of the by-pid tests: its own runtime (no run log of its own), the
 * workload when the parent says go, then (id, runs) of each task on `up`. */
static void child_main(const struct job *j, size_t ring, int up, int go)
{
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	alarm(120);
	start_runtime(0, ring);
	char c = 'r';
	if (write(up, &c, 1) != 1 || read(go, &c, 1) != 1)
		_exit(2);
	struct task_runs tr[NTASKS];
	run_workload(j, tr);
	th_runtime_stop();
	_exit(write(up, tr, sizeof(tr)) == sizeof(tr) ? 0 : 3);
}

struct recorded {
	pid_t pid;
	struct task_runs tasks[NTASKS];
};

/* Records the workload, in process (by_pid false) or in a child through its area. */
static struct th_record *record_workload(const struct job *j, bool by_pid, size_t ring,
					 int drain_stall_ms, struct recorded *out)
{
	struct th_record_opts o;
	th_record_opts_default(&o);
	o.drain_stall_ms = drain_stall_ms;
	struct th_record *r = cur_rec = th_record_open(&o);
	assert_non_null(r);
	int up[2], go[2];
	if (by_pid) {
		assert_int_equal(pipe(up), 0);
		assert_int_equal(pipe(go), 0);
		fflush(NULL);
		out->pid = fork();
		assert_true(out->pid >= 0);
		if (out->pid == 0)
			child_main(j, ring, up[1], go[0]);
		char c;
		assert_int_equal(read(up[0], &c, 1), 1); /* its runtime runs */
		assert_int_equal(th_record_attach_pid(r, out->pid), 0);
		assert_string_equal(th_record_source(r, out->pid), "its run-log area (shared memory)");
	} else {
		out->pid = 0;
		start_runtime(ring, 0);
		assert_int_equal(th_record_attach_self(r), 0);
	}
	if (th_record_start(r) != 0)
		fail_msg("%s", th_record_error());
	usleep(50000); /* the poller's first drain (of nothing) is behind us */
	if (by_pid) {
		assert_int_equal(write(go[1], "g", 1), 1);
		assert_int_equal(read(up[0], out->tasks, sizeof(out->tasks)), (ssize_t)sizeof(out->tasks));
		int st;
		assert_int_equal(waitpid(out->pid, &st, 0), out->pid);
		assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
		close(up[0]);
		close(up[1]);
		close(go[0]);
		close(go[1]);
	} else {
		run_workload(j, out->tasks);
	}
	assert_int_equal(th_record_stop(r), 0);
	return r;
}

static uint64_t runs_of(const struct recorded *x)
{
	uint64_t n = 0;
	for (int i = 0; i < NTASKS; i++)
		n += x->tasks[i].runs;
	return n;
}

/* Every run kept, and the tasks' on-CPU time covers the workers'. */
static void check_all_kept(struct th_record *r, const struct recorded *x)
{
	if (th_record_dropped_runs(r))
		fail_msg("%llu of %llu runs dropped", (unsigned long long)th_record_dropped_runs(r),
			 (unsigned long long)runs_of(x));
	assert_int_equal(th_record_lost_events(r), 0);
	uint64_t task_on = 0, worker_on = 0;
	for (int i = 0; i < NTASKS; i++) {
		struct th_rec_task rt;
		assert_int_equal(th_record_task(r, x->pid, x->tasks[i].id, &rt), 0);
		assert_int_equal(rt.runs, x->tasks[i].runs);
		task_on += rt.on_cpu_ns;
	}
	size_t nw;
	const struct th_rec_worker *w = th_record_workers(r, &nw);
	for (size_t i = 0; i < nw; i++)
		if (w[i].pid == (x->pid ? x->pid : getpid()) && w[i].worker >= 0)
			worker_on += w[i].on_cpu_ns;
	print_message("  %llu runs kept; tasks on a CPU %.3f s of the workers' %.3f s (%.2f %%)\n",
		      (unsigned long long)runs_of(x), task_on / 1e9, worker_on / 1e9,
		      worker_on ? 100.0 * (double)task_on / (double)worker_on : 0.0);
	assert_true(worker_on > 0);
	assert_true((double)task_on >= 0.99 * (double)worker_on);
}

static const struct job million = { .yields = 500000, .spin = 300 };

static void a_million_runs_per_worker_in_process_are_all_kept(void **state)
{
	(void)state;
	NEED_BPF();
	struct recorded x;
	struct th_record *r = record_workload(&million, false, BIG_RING, 0, &x);
	assert_true(runs_of(&x) >= 2000000);
	check_all_kept(r, &x);
}

static void a_million_runs_per_worker_of_another_process_are_all_kept(void **state)
{
	(void)state;
	NEED_BPF();
	struct recorded x;
	struct th_record *r = record_workload(&million, true, BIG_RING, 0, &x);
	assert_true(runs_of(&x) >= 2000000);
	check_all_kept(r, &x);
}

/* A drain that does not come while 10,000 runs go by: each worker's ring keeps its
 * first `cap` runs; every other run is counted, none is made up. */
static void check_stalled(struct th_record *r, const struct recorded *x, uint64_t cap)
{
	uint64_t kept = 0;
	for (int i = 0; i < NTASKS; i++) {
		struct th_rec_task rt;
		if (th_record_task(r, x->pid, x->tasks[i].id, &rt) == 0)
			kept += rt.runs;
	}
	uint64_t dropped = th_record_dropped_runs(r);
	print_message("  %llu runs: %llu kept, %llu dropped\n", (unsigned long long)runs_of(x),
		      (unsigned long long)kept, (unsigned long long)dropped);
	assert_int_equal(kept, 2 * cap);
	assert_int_equal(kept + dropped, runs_of(x));
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	assert_int_equal(th_record_write_json(r, f), 0);
	fclose(f);
	char want[64];
	snprintf(want, sizeof(want), "\"dropped_runs\": %llu", (unsigned long long)dropped);
	if (!strstr(buf, want))
		fail_msg("the recording's JSON does not say %s", want);
	free(buf);
}

static const struct job ten_thousand = { .yields = 2500, .spin = 0 };

static void a_stalled_drain_in_process_counts_exactly_what_it_lost(void **state)
{
	(void)state;
	NEED_BPF();
	struct recorded x;
	struct th_record *r = record_workload(&ten_thousand, false, 1024, 1500, &x);
	check_stalled(r, &x, 1024);
}

static void a_stalled_drain_of_another_process_counts_exactly_what_it_lost(void **state)
{
	(void)state;
	NEED_BPF();
	struct recorded x;
	struct th_record *r = record_workload(&ten_thousand, true, 1024, 1500, &x);
	check_stalled(r, &x, 1024);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(a_million_runs_per_worker_in_process_are_all_kept, teardown),
		cmocka_unit_test_teardown(a_million_runs_per_worker_of_another_process_are_all_kept, teardown),
		cmocka_unit_test_teardown(a_stalled_drain_in_process_counts_exactly_what_it_lost, teardown),
		cmocka_unit_test_teardown(a_stalled_drain_of_another_process_counts_exactly_what_it_lost, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
