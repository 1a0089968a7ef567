/* test_join.c — the recorder's join (user/record/join.c) as a pure function: hand-built
 * collections of runs, kernel intervals, migrations, USDT events and bindings in, the
 * per-task and per-worker figures a user reads out. No BPF, no root, no runtime. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
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

int main(void)
{
	const struct CMUnitTest tests[] = {
#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
		T(on_cpu_time_is_the_overlap_of_runs_and_intervals),
		T(an_interval_open_at_the_start_counts_from_the_recording_start),
		T(worker_hops_count_runs_on_another_worker_than_the_previous),
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
#undef T
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
