/* test_record_activations.c — the recorder with activations on: runs that a spare
 * thread did after taking a worker over are joined with that spare's kernel intervals. */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "lib/need_bpf.h"
#include "record.h"
#include "taskhop.h"

#define COMPUTES 20
#define COMPUTE_CPU_NS (2 * 1000000L) /* each: 2 ms of its own CPU time */
#define BLOCK_NS (50 * 1000000L)

static struct th_record *cur_rec;

static int teardown(void **state)
{
	(void)state;
	th_record_close(cur_rec);
	cur_rec = NULL;
	if (th_nworkers() > 0)
		th_runtime_stop();
	return 0;
}

static uint64_t thread_cpu_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Spins for COMPUTE_CPU_NS of its thread's CPU time, never yielding: one run on one
 * thread, whose CPU clock is then the task's own on-CPU time. Returns it. */
static void *compute(void *arg)
{
	uint64_t *cpu = arg, t0 = thread_cpu_ns(), t;
	while ((t = thread_cpu_ns()) - t0 < COMPUTE_CPU_NS)
		;
	*cpu = t - t0;
	return NULL;
}

struct blocker_arg {
	th_task *computes[COMPUTES];
	uint64_t cpu[COMPUTES];
};

/* Queues the compute tasks behind itself on the only worker, then sleeps inside
 * th_blocking_begin/end: the worker is handed to the spare at once, and from then on
 * the spare is the only thread serving it, so every compute task runs on the spare. */
static void *blocker(void *p)
{
	struct blocker_arg *a = p;
	for (int i = 0; i < COMPUTES; i++)
		a->computes[i] = th_spawn(compute, &a->cpu[i]);
	th_blocking_begin();
	struct timespec ts = { 0, BLOCK_NS };
	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
	th_blocking_end();
	return NULL;
}

/* A task that never yields: the kernel saw its thread on a CPU during its run for at
 * least as long as the thread's CPU clock advanced inside it (the clock leaves out
 * interrupt and hypervisor steal time, the kernel's intervals do not), and for no
 * longer than the run lasted. Paired with a thread that was asleep meanwhile, it
 * would have none. */
static void assert_on_cpu_matches_own_clock(const struct th_rec_task *rt, uint64_t own,
					    uint64_t run_ns)
{
	char cpus[256];
	if (rt->ncpus_visited == 0 || rt->on_cpu_ns < own - own / 20 || rt->on_cpu_ns > run_ns)
		fail_msg("task %" PRIu64 ": kernel on-CPU %.3f ms on CPUs [%s], its own clock %.3f ms, "
			 "its run %.3f ms", rt->task_id, rt->on_cpu_ns / 1e6,
			 th_rec_cpu_list(rt, cpus, sizeof(cpus)), own / 1e6, run_ns / 1e6);
}

/* Occurrences of `key` in text[from, to). */
static int count_between(const char *from, const char *to, const char *key)
{
	int n = 0;
	for (const char *p = from; (p = strstr(p, key)) && p < to; p++)
		n++;
	return n;
}

/* Per thread: worker 0 stays the thread that started serving it, the spare has an entry
 * of its own (worker -1, thread 1), and the tasks' on-CPU time fits in the threads'.
 * The JSON keeps workers[] one entry per worker and lists both threads in threads[]. */
static void check_threads(int first_tid, int spare_tid)
{
	struct th_rec_worker w0;
	assert_int_equal(th_record_worker(cur_rec, 0, 0, &w0), 0);
	assert_int_equal(w0.tid, first_tid);
	assert_int_equal(w0.thread, 0);
	size_t nw, nt;
	const struct th_rec_worker *w = th_record_workers(cur_rec, &nw);
	const struct th_rec_task *t = th_record_tasks(cur_rec, &nt);
	uint64_t thread_sum = 0, task_sum = 0;
	int spare_seen = 0;
	for (size_t i = 0; i < nw; i++) {
		thread_sum += w[i].on_cpu_ns;
		if (w[i].tid == spare_tid) {
			spare_seen = 1;
			assert_int_equal(w[i].worker, -1);
			assert_int_equal(w[i].thread, 1);
			assert_true(w[i].on_cpu_ns >= (uint64_t)COMPUTES * COMPUTE_CPU_NS * 95 / 100);
		}
	}
	assert_true(spare_seen);
	for (size_t i = 0; i < nt; i++)
		task_sum += t[i].on_cpu_ns;
	if (task_sum > thread_sum)
		fail_msg("tasks on a CPU %.3f ms in all, the runtime's threads only %.3f ms",
			 task_sum / 1e6, thread_sum / 1e6);
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	assert_int_equal(th_record_write_json(cur_rec, f), 0);
	fclose(f);
	const char *ws = strstr(buf, "\"workers\": ["), *ts = strstr(buf, "\"threads\": [");
	const char *rs = strstr(buf, "\"runs\": [");
	assert_true(ws && ts && rs && ws < ts && ts < rs);
	assert_int_equal(count_between(ws, ts, "\"index\""), 1);
	assert_int_equal(count_between(ts, rs, "\"index\""), 2);
	char want[64];
	snprintf(want, sizeof(want), "\"index\": 1, \"tid\": %d,", spare_tid);
	assert_true(count_between(ts, rs, want) == 1);
	free(buf);
}

static void start_one_worker_explicit(void)
{
	struct th_config cfg;
	th_config_default(&cfg);
	cfg.policy = "steal";
	cfg.workers = 1;
	cfg.activations = TH_ACT_EXPLICIT;
	cfg.run_log_cap = 1 << 12;
	assert_int_equal(th_runtime_start(&cfg), 0);
	assert_int_equal(th_nthreads(), 2);
}

/* No privileges needed: the run log names the thread of each run. The blocker's run
 * up to th_blocking_begin was its own thread's (0), closed by the takeover; everything
 * after it ran on the spare (1), which serves worker 0 from then on. */
static void run_log_names_the_thread_that_ran_each_run(void **state)
{
	(void)state;
	start_one_worker_explicit();
	struct blocker_arg a = { 0 };
	th_task *b = th_spawn(blocker, &a);
	th_wait(b);
	for (int i = 0; i < COMPUTES; i++)
		th_wait(a.computes[i]);
	struct th_task_stats bs;
	th_task_stats(b, &bs);
	assert_int_equal(bs.activations, 1);
	size_t n;
	uint64_t dropped;
	const struct th_run_record *log = th_run_log(0, &n, &dropped);
	assert_int_equal(dropped, 0);
	assert_int_equal(n, COMPUTES + 2);
	int blocker_runs = 0;
	for (size_t i = 0; i < n; i++) {
		assert_int_equal(log[i].worker, 0);
		if (log[i].task_id == bs.id && blocker_runs++ == 0) {
			assert_int_equal(log[i].why, TH_WHY_BLOCK);
			assert_int_equal(log[i].thread, 0);
		} else {
			assert_int_equal(log[i].thread, 1);
		}
	}
	assert_int_equal(blocker_runs, 2);
	for (int i = 0; i < COMPUTES; i++)
		th_task_free(a.computes[i]);
	th_task_free(b);
}

static void runs_of_a_spare_thread_get_the_spare_threads_kernel_figures(void **state)
{
	(void)state;
	NEED_BPF();
	start_one_worker_explicit();
	int spare_tid = th_thread_tid(1);
	struct th_record_opts o;
	th_record_opts_default(&o);
	o.usdt = true;
	cur_rec = th_record_open(&o);
	assert_non_null(cur_rec);
	if (th_record_attach_self(cur_rec) != 0 || th_record_start(cur_rec) != 0)
		fail_msg("recorder: %s", th_record_error());

	struct blocker_arg a = { 0 };
	th_task *b = th_spawn(blocker, &a);
	th_wait(b);
	for (int i = 0; i < COMPUTES; i++)
		th_wait(a.computes[i]);
	assert_int_equal(th_record_stop(cur_rec), 0);
	assert_int_equal(th_record_lost_events(cur_rec), 0);
	assert_int_equal(th_record_dropped_runs(cur_rec), 0);
	struct th_task_stats bs;
	th_task_stats(b, &bs);
	assert_int_equal(bs.activations, 1);

	size_t nr;
	const struct th_rec_run *runs = th_record_runs(cur_rec, &nr);
	int on_spare = 0;
	for (int i = 0; i < COMPUTES; i++) {
		struct th_task_stats st;
		struct th_rec_task rt;
		th_task_stats(a.computes[i], &st);
		assert_int_equal(th_record_task(cur_rec, 0, st.id, &rt), 0);
		assert_int_equal(rt.runs, 1);
		assert_int_equal(rt.usdt_runs, st.runs);
		uint64_t run_ns = 0;
		for (size_t k = 0; k < nr; k++)
			if (runs[k].task_id == st.id) {
				on_spare += runs[k].tid == spare_tid;
				run_ns += runs[k].end_ns - runs[k].start_ns;
			}
		assert_on_cpu_matches_own_clock(&rt, a.cpu[i], run_ns);
		th_task_free(a.computes[i]);
	}
	assert_int_equal(on_spare, COMPUTES);
	struct th_rec_task brt;
	assert_int_equal(th_record_task(cur_rec, 0, bs.id, &brt), 0);
	assert_int_equal(brt.usdt_runs, bs.runs);
	assert_int_equal(brt.runs, bs.runs);
	th_task_free(b);
	/* the USDT cross-check: each run's thread, as the join has it, was on the CPU
	 * where the task_run probe fired, when it fired */
	for (size_t k = 0; k < nr; k++) {
		assert_true(runs[k].usdt_ts_ns != 0);
		assert_int_equal(th_record_cpu_at(cur_rec, 0, runs[k].tid, runs[k].usdt_ts_ns),
				 runs[k].usdt_cpu);
	}
	check_threads(th_thread_tid(0), spare_tid);
	print_message("%zu runs, %d compute tasks on the spare thread, all with their kernel figures\n",
		      nr, on_spare);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(run_log_names_the_thread_that_ran_each_run, teardown),
		cmocka_unit_test_teardown(runs_of_a_spare_thread_get_the_spare_threads_kernel_figures,
					  teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
