/* test_join.c — the recorder's join (user/record/join.c) as a pure function: hand-built
 * collections of runs, kernel intervals, migrations, USDT events and bindings in, the
 * per-task and per-worker figures a user reads out; then recordings captured as root
 * (tests/fixtures/join_*.txt) against the runtime's counters and the figures they had.
 * No BPF, no root, no runtime. */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "join.h"
#include "taskhop.h"
#include "taskhop_abi.h"

/* Process 100 is an in-process target: a run log, runtime threads 11 and 12 serving
 * workers 0 and 1. Process 200 is followed through USDT only. Times are ns. */
#define SELF 100
#define OTHER 200
#define T0 1000u
#define T1 100000u
static const int self_tids[] = { 11, 12 };
static const struct rec_proc procs[] = {
	{ .pid = SELF, .run_log = 1, .thread_tids = self_tids, .nthreads = 2, .nworkers = 2 },
	{ .pid = OTHER },
};
static const struct rec_scope scope = { T0, T1, procs, 2 };

static struct rec_collected col;
static struct rec_joined out;

static int setup(void **state)
{
	(void)state;
	rec_collected_init(&col);
	memset(&out, 0, sizeof(out));
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	rec_collected_free(&col);
	rec_joined_free(&out);
	return 0;
}

/* ---- building a collection, as a collector would -------------------------------- */

static void add_run(int tid, uint64_t task, int worker, uint64_t start, uint64_t end, uint32_t why)
{
	struct th_rec_run *x = vec_push(&col.runs);
	assert_non_null(x);
	*x = (struct th_rec_run){ .pid = SELF, .task_id = task, .worker = worker, .tid = tid,
				  .start_ns = start, .end_ns = end, .why = why };
}

static void add_ival(int pid, int tid, int cpu, uint64_t start, uint64_t end, uint64_t wait,
		     uint32_t flags, uint64_t task)
{
	struct rec_ival *v = vec_push(&col.ivals);
	assert_non_null(v);
	*v = (struct rec_ival){ .pid = pid, .tid = tid, .cpu = cpu, .host_tid = tid, .flags = flags,
				.start = start, .end = end, .wait_ns = wait, .task_id = task };
}

static void add_mig(int tid, int from, int to, uint64_t ts)
{
	struct th_rec_migration *m = vec_push(&col.migs);
	assert_non_null(m);
	*m = (struct th_rec_migration){ .pid = SELF, .tid = tid, .worker = -7, .orig_cpu = from,
					.dest_cpu = to, .ts_ns = ts };
}

static void add_usdt_run(int pid, int tid, int worker, int cpu, uint64_t task, uint64_t start,
			 uint64_t end, uint32_t why)
{
	struct rec_usdt_run *u = vec_push(&col.uruns);
	assert_non_null(u);
	*u = (struct rec_usdt_run){ .pid = pid, .tid = tid, .worker = worker, .cpu = cpu,
				    .task_id = task, .start = start, .end = end, .open = end == 0,
				    .why = why };
}

static void add_bind(uint64_t task, int tid)
{
	struct rec_bind *b = vec_push(&col.binds);
	assert_non_null(b);
	*b = (struct rec_bind){ .pid = SELF, .task_id = task, .tid = tid };
}

static void join(void)
{
	assert_int_equal(rec_join(&scope, &col, &out), 0);
}

static const struct th_rec_task *task(int pid, uint64_t id)
{
	for (size_t i = 0; i < out.tasks.n; i++) {
		const struct th_rec_task *t = VAT(out.tasks, struct th_rec_task, i);
		if (t->pid == pid && t->task_id == id)
			return t;
	}
	fail_msg("task %llu of pid %d not in the join's output", (unsigned long long)id, pid);
	return NULL;
}

static const struct th_rec_worker *thread(int pid, int tid)
{
	for (size_t i = 0; i < out.workers.n; i++) {
		const struct th_rec_worker *w = VAT(out.workers, struct th_rec_worker, i);
		if (w->pid == pid && w->tid == tid)
			return w;
	}
	fail_msg("thread %d of pid %d not in the join's output", tid, pid);
	return NULL;
}

static int has_thread(int pid, int tid)
{
	for (size_t i = 0; i < out.workers.n; i++) {
		const struct th_rec_worker *w = VAT(out.workers, struct th_rec_worker, i);
		if (w->pid == pid && w->tid == tid)
			return 1;
	}
	return 0;
}

/* ---- on-CPU time ------------------------------------------------------------------ */

/* A task's on-CPU time is the overlap of its runs with its worker thread's intervals;
 * the worker's is the intervals', inside the recording. */
static void on_cpu_time_is_the_overlap_of_runs_and_intervals(void **state)
{
	(void)state;
	add_run(11, 7, 0, 2000, 5000, TH_WHY_YIELD);
	add_run(11, 8, 0, 5000, 6000, TH_WHY_DONE);
	add_ival(SELF, 11, 0, 1500, 4000, 0, 0, 7); /* off CPU 4000..4500, blocked */
	add_ival(SELF, 11, 0, 4500, 6000, 0, 0, 8);
	join();
	assert_int_equal(task(SELF, 7)->on_cpu_ns, (4000 - 2000) + (5000 - 4500));
	assert_int_equal(task(SELF, 8)->on_cpu_ns, 6000 - 5000);
	assert_int_equal(task(SELF, 7)->first_cpu, 0);
	const struct th_rec_worker *w = thread(SELF, 11);
	assert_int_equal(w->worker, 0);
	assert_int_equal(w->thread, 0);
	assert_int_equal(w->on_cpu_ns, (4000 - 1500) + (6000 - 4500));
	assert_int_equal(w->switches, 2);
	assert_int_equal(w->off_cpu_ns, (T1 - 1500) - w->on_cpu_ns);
	/* every run got the CPU it started on */
	for (size_t i = 0; i < out.runs.n; i++)
		assert_int_equal(VAT(out.runs, struct th_rec_run, i)->cpu, 0);
}

/* An interval that began before the recording (start unknown) counts from its start. */
static void an_interval_open_at_the_start_counts_from_the_recording_start(void **state)
{
	(void)state;
	add_run(11, 7, 0, 500, 3000, TH_WHY_DONE);
	add_ival(SELF, 11, 1, 0, 3000, 400, TH_EVF_START_UNKNOWN, 7);
	join();
	assert_int_equal(task(SELF, 7)->on_cpu_ns, 3000 - T0);
	assert_int_equal(task(SELF, 7)->runq_wait_ns, 0); /* no wait before the recording */
	assert_int_equal(thread(SELF, 11)->on_cpu_ns, 3000 - T0);
}

/* ---- worker hops, yields, done ---------------------------------------------------- */

static void worker_hops_count_runs_on_another_worker_than_the_previous(void **state)
{
	(void)state;
	add_run(11, 7, 0, 2000, 3000, TH_WHY_YIELD);
	add_run(12, 7, 1, 4000, 5000, TH_WHY_YIELD);
	add_run(12, 7, 1, 6000, 7000, TH_WHY_YIELD);
	add_run(11, 7, 0, 8000, 9000, TH_WHY_DONE);
	add_ival(SELF, 11, 0, 1500, 9500, 0, 0, 0);
	add_ival(SELF, 12, 1, 3500, 7500, 0, 0, 0);
	join();
	const struct th_rec_task *t = task(SELF, 7);
	assert_int_equal(t->runs, 4);
	assert_int_equal(t->worker_hops, 2);
	assert_int_equal(t->yields, 3);
	assert_int_equal(t->first_worker, 0);
	assert_int_equal(t->last_worker, 0);
	assert_int_equal(t->done_ns, 9000);
	assert_int_equal(t->on_cpu_ns, 4 * 1000);
	/* one CPU per worker thread: the task went 0, 1, 1, 0 */
	assert_int_equal(t->cpu_migrations, 2);
	assert_int_equal(t->worker_cpu_changes, 0); /* each change came with a worker change */
	assert_int_equal(t->ncpus_visited, 2);
	assert_int_equal(t->cpu_migrations_kernel, 0);
}

/* A switch that reached no BPF program leaves a gap the recorder dates from the kernel's
 * CPU-time count, which leaves out interrupts: the estimated start is late, the estimated
 * end early. A run that began in such a gap was on that interval's CPU; one in a gap
 * between two exactly dated intervals (the thread was off CPU) gets no CPU. */
static void a_run_in_an_undated_gap_gets_the_cpu_of_the_estimated_side(void **state)
{
	(void)state;
	add_run(11, 7, 0, 2000, 2500, TH_WHY_YIELD); /* before a late-dated start on CPU 1 */
	add_run(11, 8, 0, 5200, 5400, TH_WHY_YIELD); /* after an early-dated end on CPU 0 */
	add_run(11, 9, 0, 8000, 8200, TH_WHY_DONE);  /* between two exact intervals */
	add_ival(SELF, 11, 0, 1000, 1800, 0, 0, 0);
	add_ival(SELF, 11, 1, 2600, 4000, 0, TH_EVF_START_EST, 0);
	add_ival(SELF, 11, 0, 4500, 5000, 0, TH_EVF_END_EST, 0);
	add_ival(SELF, 11, 1, 6000, 7000, 0, 0, 0);
	add_ival(SELF, 11, 1, 9000, 9500, 0, 0, 0);
	join();
	assert_int_equal(out.runs.n, 3);
	assert_int_equal(VAT(out.runs, struct th_rec_run, 0)->cpu, 1);
	assert_int_equal(VAT(out.runs, struct th_rec_run, 1)->cpu, 0);
	assert_int_equal(VAT(out.runs, struct th_rec_run, 2)->cpu, -1);
	assert_int_equal(task(SELF, 7)->ncpus_visited, 1);
	const struct rec_ival *iv = out.ivals.p;
	assert_int_equal(rec_gap_cpu(iv, 0, out.ivals.n, 1, 2100), 1);
	assert_int_equal(rec_gap_cpu(iv, 0, out.ivals.n, 3, 5300), 0);
	assert_int_equal(rec_gap_cpu(iv, 0, out.ivals.n, 4, 8100), -1);
}

/* ---- CPU migrations while running a task ------------------------------------------- */

/* The kernel moves the worker thread from CPU 0 to CPU 1 in the middle of a run: one
 * CPU migration of the task, on the same thread, charged to it as a kernel migration. */
static void a_kernel_migration_during_a_run_is_the_tasks(void **state)
{
	(void)state;
	add_run(11, 7, 0, 2000, 8000, TH_WHY_DONE);
	add_ival(SELF, 11, 0, 1500, 4000, 0, TH_EVF_PREEMPTED, 7);
	add_mig(11, 0, 1, 4100);
	add_ival(SELF, 11, 1, 4200, 8500, 200, 0, 7);
	join();
	const struct th_rec_task *t = task(SELF, 7);
	assert_int_equal(t->cpu_migrations, 1);
	assert_int_equal(t->worker_cpu_changes, 1);
	assert_int_equal(t->cpu_migrations_kernel, 1);
	assert_int_equal(t->ncpus_visited, 2);
	assert_int_equal(t->first_cpu, 0);
	assert_int_equal(t->last_cpu, 1);
	char buf[32];
	assert_string_equal(th_rec_cpu_list(t, buf, sizeof(buf)), "0,1");
	assert_int_equal(thread(SELF, 11)->cpu_migrations, 1);
	/* the migration names its thread's worker */
	assert_int_equal(out.migs.n, 1);
	assert_int_equal(VAT(out.migs, struct th_rec_migration, 0)->worker, 0);
}

/* Between two runs a migration goes to the next run on the thread; after the last run
 * to none: each migration is charged once at most. */
static void a_kernel_migration_between_runs_goes_to_the_next_run(void **state)
{
	(void)state;
	add_run(11, 7, 0, 2000, 3000, TH_WHY_DONE);
	add_run(11, 8, 0, 5000, 6000, TH_WHY_DONE);
	add_ival(SELF, 11, 0, 1500, 3500, 0, 0, 0);
	add_mig(11, 0, 1, 4000);
	add_ival(SELF, 11, 1, 4500, 6500, 0, 0, 0);
	add_mig(11, 1, 0, 7000); /* after its last run */
	add_ival(SELF, 11, 0, 7500, 8000, 0, 0, 0);
	join();
	assert_int_equal(task(SELF, 7)->cpu_migrations_kernel, 0);
	assert_int_equal(task(SELF, 8)->cpu_migrations_kernel, 1);
	assert_int_equal(task(SELF, 8)->cpu_migrations, 0); /* it never changed CPU itself */
	assert_int_equal(thread(SELF, 11)->cpu_migrations, 2);
}

/* ---- run-queue waits and preemptions ----------------------------------------------- */

/* Preempted inside a run and back on a CPU after waiting 200 ns: one preemption and the
 * wait are the task's; the wait before its first interval is charged to it as well. */
static void preemption_and_run_queue_waits_are_charged_to_the_running_task(void **state)
{
	(void)state;
	add_run(11, 7, 0, 2000, 8000, TH_WHY_DONE);
	add_ival(SELF, 11, 0, 1500, 4000, 300, TH_EVF_PREEMPTED, 7); /* woken at 1200 */
	add_ival(SELF, 11, 0, 4200, 8500, 200, 0, 7);
	join();
	const struct th_rec_task *t = task(SELF, 7);
	assert_int_equal(t->preemptions, 1);
	assert_int_equal(t->runq_wait_ns, 300 + 200);
	/* its largest delay is its one run's waits, dated by the end of the longest one */
	assert_int_equal(t->max_runq_wait_ns, 500);
	assert_int_equal(t->max_runq_wait_at_ns, 1500);
	assert_int_equal(t->kernel_blocks, 0);
	const struct th_rec_worker *w = thread(SELF, 11);
	assert_int_equal(w->preemptions, 1);
	assert_int_equal(w->runq_wait_ns, 500);
	const struct th_rec_run *x = VAT(out.runs, struct th_rec_run, 0);
	assert_int_equal(x->runq_wait_ns, 500);
	assert_int_equal(x->runq_wait_end_ns, 1500);
}

/* A preemption at the very end of a run is the runtime's switch, not the task's. */
static void a_preemption_at_a_runs_end_is_not_the_tasks(void **state)
{
	(void)state;
	add_run(11, 7, 0, 2000, 4000, TH_WHY_YIELD);
	add_ival(SELF, 11, 0, 1500, 4000, 0, TH_EVF_PREEMPTED, 7);
	add_ival(SELF, 11, 0, 4300, 5000, 300, 0, 0);
	join();
	assert_int_equal(task(SELF, 7)->preemptions, 0);
	assert_int_equal(thread(SELF, 11)->preemptions, 1);
}

/* A wait longer than the gap since the previous interval is cut to that gap. */
static void a_wait_never_overlaps_the_previous_interval(void **state)
{
	(void)state;
	add_run(11, 7, 0, 2000, 6000, TH_WHY_DONE);
	add_ival(SELF, 11, 0, 2000, 4000, 0, TH_EVF_PREEMPTED, 7);
	add_ival(SELF, 11, 0, 4100, 6000, 5000, 0, 7);
	join();
	assert_int_equal(task(SELF, 7)->runq_wait_ns, 100);
	const struct th_rec_worker *w = thread(SELF, 11);
	assert_true(w->on_cpu_ns + w->runq_wait_ns <= T1 - T0);
}

/* Switched out not runnable inside a run, woken 500 ns later: blocked in the kernel. */
static void a_block_inside_a_run_is_kernel_blocked_time(void **state)
{
	(void)state;
	add_run(11, 7, 0, 2000, 8000, TH_WHY_DONE);
	add_ival(SELF, 11, 0, 1500, 4000, 0, 0, 7);
	add_ival(SELF, 11, 1, 4700, 8500, 200, 0, 7); /* woken at 4500 */
	join();
	assert_int_equal(task(SELF, 7)->kernel_blocks, 1);
	assert_int_equal(task(SELF, 7)->kernel_blocked_ns, 500);
	assert_int_equal(thread(SELF, 11)->kernel_blocked_ns, 500);
}

/* ---- streamed pieces ------------------------------------------------------------------ */

/* The same recording collected in two orders: runs first and their intervals drained
 * later, out of order, vs intervals first. The figures do not depend on the order. */
static void fill_streamed(int intervals_first)
{
	if (intervals_first) {
		add_ival(SELF, 11, 0, 1500, 4000, 100, TH_EVF_PREEMPTED, 7);
		add_ival(SELF, 11, 1, 4300, 9000, 300, 0, 0);
		add_ival(SELF, 12, 1, 1200, 4100, 0, 0, 0);
	}
	add_run(12, 8, 1, 1300, 4000, TH_WHY_DONE);
	add_run(11, 7, 0, 2000, 3000, TH_WHY_YIELD);
	add_run(11, 7, 0, 3200, 5000, TH_WHY_DONE);
	if (!intervals_first) {
		add_ival(SELF, 12, 1, 1200, 4100, 0, 0, 0);
		add_ival(SELF, 11, 1, 4300, 9000, 300, 0, 0); /* the later one first */
		add_ival(SELF, 11, 0, 1500, 4000, 100, TH_EVF_PREEMPTED, 7);
	}
}

static void a_run_whose_intervals_arrive_later_is_joined_as_any(void **state)
{
	(void)state;
	fill_streamed(0);
	join();
	struct th_rec_task late7 = *task(SELF, 7), late8 = *task(SELF, 8);
	rec_joined_free(&out);
	rec_collected_free(&col);
	rec_collected_init(&col);
	fill_streamed(1);
	join();
	assert_memory_equal(&late7, task(SELF, 7), sizeof(late7));
	assert_memory_equal(&late8, task(SELF, 8), sizeof(late8));
	/* and the figures themselves */
	assert_int_equal(late7.runs, 2);
	assert_int_equal(late7.on_cpu_ns, (3000 - 2000) + (4000 - 3200) + (5000 - 4300));
	assert_int_equal(late7.preemptions, 1);
	assert_int_equal(late7.runq_wait_ns, 100 + 300);
	assert_int_equal(late7.cpu_migrations, 1);
	assert_int_equal(late7.cpu_migrations_kernel, 0); /* no migration event came */
	assert_int_equal(late8.on_cpu_ns, 4000 - 1300);
}

/* ---- bindings (kthread policy) --------------------------------------------------------- */

/* A task that ran as its own kernel thread, bound before the join: the thread's
 * intervals over the whole recording are its figures. */
static void a_thread_bound_before_the_join_is_its_tasks(void **state)
{
	(void)state;
	add_bind(42, 20);
	add_ival(SELF, 20, 1, 3000, 5000, 0, TH_EVF_PREEMPTED, 0);
	add_ival(SELF, 20, 0, 6000, 7000, 250, 0, 0);
	join();
	const struct th_rec_task *t = task(SELF, 42);
	assert_int_equal(t->runs, 1);
	assert_int_equal(t->on_cpu_ns, 2000 + 1000);
	assert_int_equal(t->preemptions, 1);
	assert_int_equal(t->runq_wait_ns, 250);
	assert_int_equal(t->cpu_migrations, 1);
	assert_int_equal(t->first_worker, -1);
	const struct th_rec_worker *w = thread(SELF, 20);
	assert_int_equal(w->worker, -1);
	assert_int_equal(w->thread, -1);
	assert_int_equal(w->on_cpu_ns, 3000);
}

static void an_unbound_thread_is_nobodys(void **state)
{
	(void)state;
	add_ival(SELF, 20, 1, 3000, 5000, 0, 0, 0);
	join();
	assert_int_equal(out.tasks.n, 0);
	assert_false(has_thread(SELF, 20));
}

/* A binding for a task the run log saw changes nothing: its runs stand. */
static void a_binding_of_a_logged_task_adds_no_run(void **state)
{
	(void)state;
	add_run(11, 7, 0, 2000, 3000, TH_WHY_DONE);
	add_ival(SELF, 11, 0, 1500, 3500, 0, 0, 0);
	add_bind(7, 20);
	join();
	assert_int_equal(task(SELF, 7)->runs, 1);
	assert_int_equal(out.runs.n, 1);
}

/* ---- USDT ------------------------------------------------------------------------------- */

/* In process, USDT runs cross-check the logged ones (and give their CPU as the probe saw
 * it); for a process without a run log they are the runs, an open one ends at stop. */
static void usdt_runs_cross_check_logged_runs_and_stand_in_for_missing_ones(void **state)
{
	(void)state;
	add_run(11, 7, 0, 2000, 3000, TH_WHY_YIELD);
	add_run(12, 7, 1, 4000, 5000, TH_WHY_DONE);
	add_ival(SELF, 11, 0, 1500, 3500, 0, 0, 0);
	add_ival(SELF, 12, 1, 3500, 5500, 0, 0, 0);
	add_usdt_run(SELF, 12, 1, 1, 7, 4001, 4999, TH_WHY_DONE); /* arrives first */
	add_usdt_run(SELF, 11, 0, 0, 7, 2001, 2999, TH_WHY_YIELD);
	struct rec_worker_start *ws = vec_push(&col.wstart);
	assert_non_null(ws);
	*ws = (struct rec_worker_start){ .pid = OTHER, .worker = 3, .tid = 31 };
	add_usdt_run(OTHER, 31, 3, 1, 9, 2000, 4000, TH_WHY_YIELD);
	add_usdt_run(OTHER, 31, 3, 1, 9, 6000, 0, 0); /* still running at stop */
	add_ival(OTHER, 31, 1, 1000, 8000, 0, 0, 0);
	join();
	const struct th_rec_task *t = task(SELF, 7);
	assert_int_equal(t->runs, 2);
	assert_int_equal(t->usdt_runs, 2);
	assert_int_equal(t->usdt_worker_hops, 1);
	const struct th_rec_run *x = VAT(out.runs, struct th_rec_run, 0);
	assert_int_equal(x->task_id, 7);
	assert_int_equal(x->usdt_cpu, 0);
	assert_int_equal(x->usdt_ts_ns, 2001);
	const struct th_rec_task *o = task(OTHER, 9);
	assert_int_equal(o->runs, 2);
	assert_int_equal(o->on_cpu_ns, 2000 + (8000 - 6000));
	assert_int_equal(thread(OTHER, 31)->worker, 3);
	assert_int_equal(thread(OTHER, 31)->thread, -1);
	const struct th_rec_run *last = VAT(out.runs, struct th_rec_run, out.runs.n - 1);
	assert_int_equal(last->end_ns, T1);
}

/* ---- the output ---------------------------------------------------------------------- */

/* The big arrays move into the output, which is sorted for lookups and timelines. */
static void the_output_is_sorted_and_takes_the_collected_arrays(void **state)
{
	(void)state;
	add_run(12, 9, 1, 5000, 6000, TH_WHY_DONE);
	add_run(11, 7, 0, 3000, 4000, TH_WHY_DONE);
	add_run(11, 8, 0, 2000, 2500, TH_WHY_DONE);
	add_ival(SELF, 12, 1, 4000, 7000, 0, 0, 0);
	add_ival(SELF, 11, 0, 1500, 4500, 0, 0, 0);
	join();
	assert_int_equal(col.runs.n + col.ivals.n + col.migs.n, 0);
	assert_int_equal(out.tasks.n, 3);
	for (size_t i = 1; i < out.tasks.n; i++)
		assert_true(VAT(out.tasks, struct th_rec_task, i - 1)->task_id <
			    VAT(out.tasks, struct th_rec_task, i)->task_id);
	assert_int_equal(VAT(out.runs, struct th_rec_run, 0)->task_id, 7);
	const struct rec_ival *v = out.ivals.p;
	assert_true(v[0].tid == 11 && v[1].tid == 12);
	assert_int_equal(out.workers.n, 2);
	assert_int_equal(VAT(out.workers, struct th_rec_worker, 0)->worker, 0);
	assert_int_equal(VAT(out.workers, struct th_rec_worker, 1)->worker, 1);
}

/* ---- captured recordings ------------------------------------------------------------ */

#ifndef TH_FIXTURES
#define TH_FIXTURES "tests/fixtures"
#endif

/* What a fixture holds besides the collection: its processes and the runtime's own
 * counters per task (th_task_stats at capture time). */
#define FX_PROCS 4
#define FX_TIDS 64
#define FX_TASKS 64
struct fixture {
	struct rec_scope scope;
	struct rec_proc procs[FX_PROCS];
	int tids[FX_PROCS][FX_TIDS];
	int ncounters;
	struct { uint64_t task, runs, hops; } counters[FX_TASKS];
};
static struct fixture fx;

/* Up to max numbers of a line after its keyword: how many, or -1 on a bad number. */
static int numbers(const char *s, int64_t *v, int max)
{
	int n = 0;
	for (;;) {
		while (*s == ' ')
			s++;
		if (!*s || *s == '\n')
			return n;
		if (n == max)
			return -1;
		char *end;
		errno = 0;
		v[n++] = *s == '-' ? (int64_t)strtoll(s, &end, 10) : (int64_t)strtoull(s, &end, 10);
		if (errno || end == s || (*end && *end != ' ' && *end != '\n'))
			return -1;
		s = end;
	}
}

static int as_int(int64_t v, const char *path, int line)
{
	if (v < INT_MIN || v > INT_MAX)
		fail_msg("%s:%d: %" PRId64 " is out of range", path, line, v);
	return (int)v;
}

static void *push(struct vec *v)
{
	void *e = vec_push(v);
	assert_non_null(e);
	return e;
}

/* One line of a fixture into col / fx; the keyword says which array. */
static void fixture_line(const char *key, const int64_t *v, int n, const char *path, int line)
{
#define NEED(k) do { if (n != (k)) fail_msg("%s:%d: %s takes %d numbers, not %d", path, line, key, (k), n); } while (0)
#define I(k) as_int(v[k], path, line)
#define U(k) ((uint64_t)v[k])
	if (!strcmp(key, "window")) {
		NEED(2);
		fx.scope.t_start = U(0);
		fx.scope.t_stop = U(1);
	} else if (!strcmp(key, "proc")) {
		if (n < 4 || fx.scope.nprocs == FX_PROCS || v[2] < 0 || v[2] > FX_TIDS || n != 4 + v[2])
			fail_msg("%s:%d: proc: pid run_log nthreads nworkers tid...", path, line);
		int p = fx.scope.nprocs++;
		for (int i = 0; i < I(2); i++)
			fx.tids[p][i] = I(4 + i);
		fx.procs[p] = (struct rec_proc){ I(0), I(1), I(2) ? fx.tids[p] : NULL, I(2), I(3) };
	} else if (!strcmp(key, "run")) {
		NEED(7);
		*(struct th_rec_run *)push(&col.runs) = (struct th_rec_run){ .pid = I(0), .task_id = U(1),
			.worker = I(2), .tid = I(3), .start_ns = U(4), .end_ns = U(5), .why = (uint32_t)I(6) };
	} else if (!strcmp(key, "urun")) {
		NEED(9);
		*(struct rec_usdt_run *)push(&col.uruns) = (struct rec_usdt_run){ I(0), I(1), I(2), I(3),
			U(4), U(5), U(6), I(7), (uint32_t)I(8) };
	} else if (!strcmp(key, "ival")) {
		NEED(9);
		*(struct rec_ival *)push(&col.ivals) = (struct rec_ival){ .pid = I(0), .tid = I(1),
			.cpu = I(2), .host_tid = I(3), .flags = (uint32_t)I(4), .start = U(5), .end = U(6),
			.wait_ns = U(7), .task_id = U(8) };
	} else if (!strcmp(key, "mig")) {
		NEED(6);
		*(struct th_rec_migration *)push(&col.migs) = (struct th_rec_migration){ .pid = I(0),
			.tid = I(1), .orig_cpu = I(2), .dest_cpu = I(3), .ts_ns = U(4), .task_id = U(5) };
	} else if (!strcmp(key, "spawn")) {
		NEED(3);
		*(struct rec_spawn *)push(&col.spawns) = (struct rec_spawn){ I(0), I(1), U(2) };
	} else if (!strcmp(key, "wstart")) {
		NEED(3);
		*(struct rec_worker_start *)push(&col.wstart) = (struct rec_worker_start){ I(0), I(1), I(2) };
	} else if (!strcmp(key, "bind")) {
		NEED(3);
		*(struct rec_bind *)push(&col.binds) = (struct rec_bind){ I(0), U(1), I(2) };
	} else if (!strcmp(key, "counters")) {
		NEED(3);
		if (fx.ncounters == FX_TASKS)
			fail_msg("%s:%d: more than %d tasks", path, line, FX_TASKS);
		fx.counters[fx.ncounters].task = U(0);
		fx.counters[fx.ncounters].runs = U(1);
		fx.counters[fx.ncounters++].hops = U(2);
	} else {
		fail_msg("%s:%d: unknown line '%s'", path, line, key);
	}
#undef NEED
#undef I
#undef U
}

/* tests/fixtures/NAME, its path left in path[512]. */
static FILE *open_fixture(const char *name, char *path)
{
	snprintf(path, 512, "%s/%s", TH_FIXTURES, name);
	FILE *f = fopen(path, "r");
	if (!f)
		fail_msg("%s: %s", path, strerror(errno));
	return f;
}

static void load_fixture(const char *name)
{
	char path[512];
	FILE *f = open_fixture(name, path);
	memset(&fx, 0, sizeof(fx));
	char *buf = NULL;
	size_t cap = 0;
	for (int line = 1; getline(&buf, &cap, f) > 0; line++) {
		char key[16];
		int off = 0;
		if (buf[0] == '#' || buf[0] == '\n' || sscanf(buf, "%15s%n", key, &off) != 1)
			continue;
		int64_t v[4 + FX_TIDS];
		int n = numbers(buf + off, v, 4 + FX_TIDS);
		if (n < 0)
			fail_msg("%s:%d: a bad number", path, line);
		fixture_line(key, v, n, path, line);
	}
	free(buf);
	fclose(f);
	fx.scope.procs = fx.procs;
	assert_true(fx.scope.nprocs > 0 && fx.scope.t_stop > fx.scope.t_start);
}

/* The join's output in the lines of tests/fixtures/join_*.expected. */
static char *print_joined(void)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	assert_non_null(f);
	for (size_t i = 0; i < out.tasks.n; i++) {
		const struct th_rec_task *t = VAT(out.tasks, struct th_rec_task, i);
		fprintf(f, "task %d %" PRIu64 " runs %" PRIu64 " hops %" PRIu64 " mig %" PRIu64 " kmig %" PRIu64
			" on %" PRIu64 " wait %" PRIu64 " pre %" PRIu64 " ncpu %d mask %" PRIx64 " fc %d lc %d"
			" ur %" PRIu64 " uh %" PRIu64 " kb %" PRIu64 " kbn %" PRIu64 " wcc %" PRIu64 " y %" PRIu64
			" fw %d lw %d sw %d done %" PRIu64 " mw %" PRIu64 " mwa %" PRIu64 "\n",
			t->pid, t->task_id, t->runs, t->worker_hops, t->cpu_migrations,
			t->cpu_migrations_kernel, t->on_cpu_ns, t->runq_wait_ns, t->preemptions,
			t->ncpus_visited, t->cpu_mask[0], t->first_cpu, t->last_cpu, t->usdt_runs,
			t->usdt_worker_hops, t->kernel_blocked_ns, t->kernel_blocks, t->worker_cpu_changes,
			t->yields, t->first_worker, t->last_worker, t->spawn_worker, t->done_ns,
			t->max_runq_wait_ns, t->max_runq_wait_at_ns);
	}
	for (size_t i = 0; i < out.workers.n; i++) {
		const struct th_rec_worker *w = VAT(out.workers, struct th_rec_worker, i);
		fprintf(f, "worker %d %d %d mig %" PRIu64 " pre %" PRIu64 " on %" PRIu64 " off %" PRIu64
			" wait %" PRIu64 " sw %" PRIu64 " host %d kb %" PRIu64 " %" PRIu64 " th %d\n",
			w->pid, w->worker, w->tid, w->cpu_migrations, w->preemptions, w->on_cpu_ns,
			w->off_cpu_ns, w->runq_wait_ns, w->switches, w->host_tid, w->kernel_blocked_ns,
			w->kernel_blocks, w->thread);
	}
	for (size_t i = 0; i < out.runs.n; i++) {
		const struct th_rec_run *x = VAT(out.runs, struct th_rec_run, i);
		fprintf(f, "run %d %" PRIu64 " w %d t %d cpu %d ucpu %d %" PRIu64 "-%" PRIu64 " uts %" PRIu64
			" why %u on %" PRIu64 " wait %" PRIu64 " we %" PRIu64 "\n",
			x->pid, x->task_id, x->worker, x->tid, x->cpu, x->usdt_cpu, x->start_ns, x->end_ns,
			x->usdt_ts_ns, x->why, x->on_cpu_ns, x->runq_wait_ns, x->runq_wait_end_ns);
	}
	for (size_t i = 0; i < out.migs.n; i++) {
		const struct th_rec_migration *m = VAT(out.migs, struct th_rec_migration, i);
		fprintf(f, "mig %d %d w %d %d->%d %" PRIu64 " task %" PRIu64 "\n", m->pid, m->tid,
			m->worker, m->orig_cpu, m->dest_cpu, m->ts_ns, m->task_id);
	}
	fclose(f);
	return text;
}

/* When a change to the join's figures is meant, TASKHOP_JOIN_REGEN=1 rewrites NAME. */
static void regenerate(const char *name, const char *got)
{
	char path[512];
	snprintf(path, sizeof(path), "%s/%s", TH_FIXTURES, name);
	FILE *f = fopen(path, "w");
	if (!f)
		fail_msg("%s: %s", path, strerror(errno));
	fprintf(f, "# what the join makes of the recording next to this file: tasks, worker threads,\n"
		   "# runs, migrations (rewritten by TASKHOP_JOIN_REGEN=1 build/tests/test_join)\n%s", got);
	fclose(f);
}

/* Line by line against the expected file (its # lines aside): the first difference. */
static void assert_joined_as(const char *name)
{
	char *got = print_joined();
	if (getenv("TASKHOP_JOIN_REGEN")) {
		regenerate(name, got);
		free(got);
		return;
	}
	char path[512];
	FILE *f = open_fixture(name, path);
	char *at = got, *want = NULL;
	size_t cap = 0;
	int line = 0;
	while (getline(&want, &cap, f) > 0) {
		line++;
		if (want[0] == '#')
			continue;
		size_t n = strcspn(at, "\n");
		if (strncmp(at, want, n) != 0 || want[n] != '\n')
			fail_msg("%s:%d: expected\n  %sgot\n  %.*s", path, line, want, (int)n, at);
		at += at[n] ? n + 1 : n;
	}
	if (*at)
		fail_msg("%s: the join gave more lines, from: %.80s", path, at);
	free(want);
	free(got);
	fclose(f);
}

/* Every task's runs and worker hops as the runtime counted them while it ran. */
static void assert_counters_agree(void)
{
	assert_int_equal(out.tasks.n, (size_t)fx.ncounters);
	for (int i = 0; i < fx.ncounters; i++) {
		const struct th_rec_task *t = task(fx.procs[0].pid, fx.counters[i].task);
		assert_int_equal(t->runs, fx.counters[i].runs);
		assert_int_equal(t->worker_hops, fx.counters[i].hops);
	}
}

/* darts under steal with USDT on and two CPU hogs beside: preempted, waiting workers. */
static void a_captured_steal_recording_agrees_with_the_runtimes_counters(void **state)
{
	(void)state;
	load_fixture("join_steal.txt");
	assert_int_equal(rec_join(&fx.scope, &col, &out), 0);
	assert_counters_agree();
	uint64_t tasks_on = 0, workers_on = 0, preempted = 0;
	for (size_t i = 0; i < out.tasks.n; i++) {
		const struct th_rec_task *t = VAT(out.tasks, struct th_rec_task, i);
		assert_int_equal(t->usdt_runs, t->runs);
		tasks_on += t->on_cpu_ns;
		preempted += t->preemptions;
	}
	for (size_t i = 0; i < out.workers.n; i++)
		workers_on += VAT(out.workers, struct th_rec_worker, i)->on_cpu_ns;
	assert_true(tasks_on <= workers_on);
	assert_true(preempted > 0); /* else the hogs did nothing and this tests less */
	/* the CPU the join gives a run is the one its USDT probe fired on */
	for (size_t i = 0; i < out.runs.n; i++) {
		const struct th_rec_run *x = VAT(out.runs, struct th_rec_run, i);
		assert_true(x->cpu >= 0);
		assert_int_equal(x->cpu, x->usdt_cpu);
	}
}

static void a_captured_steal_recording_joins_as_before_the_split(void **state)
{
	(void)state;
	load_fixture("join_steal.txt");
	assert_int_equal(rec_join(&fx.scope, &col, &out), 0);
	assert_joined_as("join_steal.expected");
}

/* darts under kthread without USDT: each task known only by its bound thread. */
static void a_captured_kthread_recording_charges_each_task_its_thread(void **state)
{
	(void)state;
	load_fixture("join_kthread.txt");
	assert_true(col.binds.n > 0 && col.runs.n == 0);
	assert_int_equal(rec_join(&fx.scope, &col, &out), 0);
	assert_counters_agree();
	for (size_t i = 0; i < out.tasks.n; i++) {
		const struct th_rec_task *t = VAT(out.tasks, struct th_rec_task, i);
		assert_true(t->on_cpu_ns > 0);
		assert_int_equal(t->first_worker, -1);
	}
	assert_joined_as("join_kthread.expected");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
		T(on_cpu_time_is_the_overlap_of_runs_and_intervals),
		T(an_interval_open_at_the_start_counts_from_the_recording_start),
		T(worker_hops_count_runs_on_another_worker_than_the_previous),
		T(a_run_in_an_undated_gap_gets_the_cpu_of_the_estimated_side),
	T(a_kernel_migration_during_a_run_is_the_tasks),
		T(a_kernel_migration_between_runs_goes_to_the_next_run),
		T(preemption_and_run_queue_waits_are_charged_to_the_running_task),
		T(a_preemption_at_a_runs_end_is_not_the_tasks),
		T(a_wait_never_overlaps_the_previous_interval),
		T(a_block_inside_a_run_is_kernel_blocked_time),
		T(a_run_whose_intervals_arrive_later_is_joined_as_any),
		T(a_thread_bound_before_the_join_is_its_tasks),
		T(an_unbound_thread_is_nobodys),
		T(a_binding_of_a_logged_task_adds_no_run),
		T(usdt_runs_cross_check_logged_runs_and_stand_in_for_missing_ones),
		T(the_output_is_sorted_and_takes_the_collected_arrays),
		T(a_captured_steal_recording_agrees_with_the_runtimes_counters),
		T(a_captured_steal_recording_joins_as_before_the_split),
		T(a_captured_kthread_recording_charges_each_task_its_thread),
#undef T
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
