/* test_record.c — the BPF recorder: cross-path reconciliation (run log + kernel intervals
 * vs USDT) on a darts workload for every policy, migrations, namespaces, errors, CLI. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/capability.h>
#include <sys/sdt.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "cmd.h"
#include "lib/need_bpf.h"
#include "lib/rec_darts.h"
#include "record.h"
#include "report/json.h"
#include "taskhop.h"

static char self_exe[4096];


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

static struct th_record *record_self(bool usdt)
{
	struct th_record_opts o;
	th_record_opts_default(&o);
	o.usdt = usdt;
	struct th_record *r = th_record_open(&o);
	assert_non_null(r);
	cur_rec = r;
	if (th_record_attach_self(r) != 0 || th_record_start(r) != 0)
		fail_msg("recorder: %s", th_record_error());
	return r;
}

/* th_record_close, and the teardown has nothing more to close */
static void close_rec(struct th_record *r)
{
	th_record_close(r);
	if (r == cur_rec)
		cur_rec = NULL;
}

/* ---- smoke --------------------------------------------------------------- */

/* The default path (run log + slots + kernel intervals, no USDT) for one policy. */
static void default_path_sees_every_run(const char *policy)
{
	start_runtime(policy, 2, false);
	struct th_record *r = record_self(false);
	struct rec_darts d;
	th_task *tasks[REC_DARTS_MAX];
	rec_darts_default(&d);
	int n = rec_darts_run(&d, tasks);
	assert_int_equal(n, d.nshort + 1);
	assert_int_equal(rec_darts_bind_threads(r, tasks, n), 0); /* kthread policy */
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
	close_rec(r);
	th_runtime_stop();
}

static void darts_runs_are_all_seen_with_a_cpu(void **state)
{
	(void)state;
	NEED_BPF();
	for (const char *const *p = th_policy_names(); *p; p++)
		default_path_sees_every_run(*p);
}

/* ---- cross-path reconciliation --------------------------------------------- */

/* For one policy: runs and worker hops seen by the USDT probes equal the runtime's
 * counters, and the CPU the join gives each run is the CPU the USDT handler ran on. */
static void reconcile_policy(const char *policy)
{
	start_runtime(policy, 2, false);
	struct th_record *r = record_self(true);
	struct rec_darts d;
	th_task *tasks[REC_DARTS_MAX];
	rec_darts_default(&d);
	d.seed = 1000 + strlen(policy);
	int n = rec_darts_run(&d, tasks);
	assert_int_equal(n, d.nshort + 1);
	assert_int_equal(rec_darts_bind_threads(r, tasks, n), 0);
	assert_int_equal(th_record_stop(r), 0);

	uint64_t total_runs = 0;
	for (int i = 0; i < n; i++) {
		struct th_task_stats st;
		struct th_rec_task rt;
		th_task_stats(tasks[i], &st);
		assert_int_equal(th_record_task(r, 0, st.id, &rt), 0);
		assert_true(st.runs >= 1);
		assert_int_equal(rt.usdt_runs, st.runs);
		assert_int_equal(rt.usdt_worker_hops, st.worker_hops);
		assert_int_equal(rt.runs, st.runs);
		assert_int_equal(rt.worker_hops, st.worker_hops);
		assert_true(rt.on_cpu_ns > 0);
		total_runs += st.runs;
		th_task_free(tasks[i]);
	}
	size_t nr;
	const struct th_rec_run *runs = th_record_runs(r, &nr);
	size_t checked = 0, moved = 0;
	for (size_t i = 0; i < nr; i++) {
		assert_true(runs[i].usdt_ts_ns != 0);
		/* the kernel's intervals put the thread on the handler's CPU when it fired */
		int at_probe = th_record_cpu_at(r, 0, runs[i].tid, runs[i].usdt_ts_ns);
		if (at_probe != runs[i].usdt_cpu)
			print_message("%s: run %zu of task %" PRIu64 " (thread %d): its probe fired on CPU "
				      "%d, the kernel's intervals say %d (lost events: %" PRIu64 ")\n",
				      policy, i, runs[i].task_id, runs[i].tid, runs[i].usdt_cpu, at_probe,
				      th_record_lost_events(r));
		assert_int_equal(at_probe, runs[i].usdt_cpu);
		/* the run log's start is a few ns later: the join must give the same CPU,
		 * unless the kernel switched the thread out in between */
		if (th_record_cpu_at(r, 0, runs[i].tid, runs[i].start_ns) != at_probe) {
			moved++;
			continue;
		}
		assert_int_equal(runs[i].cpu, runs[i].usdt_cpu);
		checked++;
	}
	assert_int_equal(nr, total_runs);
	assert_int_equal(th_record_lost_events(r), 0);
	print_message("%-10s %zu runs: join CPU == USDT CPU for %zu, %zu switched out between probe and log\n",
		      policy, nr, checked, moved);
	close_rec(r);
	th_runtime_stop();
}

static void usdt_and_join_agree_on_darts_for_every_policy(void **state)
{
	(void)state;
	NEED_BPF();
	for (const char *const *p = th_policy_names(); *p; p++)
		reconcile_policy(*p);
}

/* ---- pinning and migrations ------------------------------------------------- */

static int nth_allowed_cpu(int n)
{
	cpu_set_t set;
	CPU_ZERO(&set);
	sched_getaffinity(0, sizeof(set), &set);
	for (int c = 0; c < CPU_SETSIZE; c++)
		if (CPU_ISSET(c, &set) && n-- == 0)
			return c;
	return -1;
}

static void pinned_sticky_run_has_no_cpu_migrations(void **state)
{
	(void)state;
	NEED_BPF();
	start_runtime("sticky", 2, true);
	struct th_record *r = record_self(false);
	struct rec_darts d;
	th_task *tasks[REC_DARTS_MAX];
	rec_darts_default(&d);
	int n = rec_darts_run(&d, tasks);
	assert_int_equal(th_record_stop(r), 0);
	for (int i = 0; i < n; i++) {
		struct th_task_stats st;
		struct th_rec_task rt;
		th_task_stats(tasks[i], &st);
		assert_int_equal(th_record_task(r, 0, st.id, &rt), 0);
		assert_int_equal(rt.cpu_migrations, 0);
		assert_int_equal(rt.cpu_migrations_kernel, 0);
		assert_int_equal(rt.ncpus_visited, 1);
		assert_int_equal(rt.first_cpu, nth_allowed_cpu(st.first_worker));
		th_task_free(tasks[i]);
	}
	for (int w = 0; w < 2; w++) {
		struct th_rec_worker rw;
		assert_int_equal(th_record_worker(r, 0, w, &rw), 0);
		assert_int_equal(rw.cpu_migrations, 0);
		assert_true(rw.switches >= 1);
	}
	size_t nr;
	const struct th_rec_run *runs = th_record_runs(r, &nr);
	for (size_t i = 0; i < nr; i++)
		assert_int_equal(runs[i].cpu, nth_allowed_cpu(runs[i].worker));
	close_rec(r);
	th_runtime_stop();
}

struct mover {
	int from, to;
	uint64_t id;
};

/* Runs on a worker: moves its own worker thread to another CPU, as an admin's taskset
 * or the kernel's balancer would, while this task is the one running. */
static void *move_my_worker(void *p)
{
	struct mover *m = p;
	cpu_set_t set, all;
	m->id = th_task_id(th_self_task());
	sched_getaffinity(0, sizeof(all), &all);
	m->from = sched_getcpu();
	m->to = -1;
	for (int c = 0; c < CPU_SETSIZE && m->to < 0; c++)
		if (CPU_ISSET(c, &all) && c != m->from)
			m->to = c;
	CPU_ZERO(&set);
	CPU_SET(m->to, &set);
	sched_setaffinity(0, sizeof(set), &set);
	while (sched_getcpu() != m->to)
		; /* the move is done before sched_setaffinity returns; this only makes sure */
	for (volatile int i = 0; i < 1000000; i++)
		;
	sched_setaffinity(0, sizeof(all), &all);
	return NULL;
}

static void forced_worker_migration_is_charged_to_the_running_task(void **state)
{
	(void)state;
	NEED_BPF();
	if (nth_allowed_cpu(1) < 0) {
		print_message("skipped: needs 2 CPUs\n");
		skip();
	}
	start_runtime("sticky", 2, false);
	struct th_record *r = record_self(false);
	struct mover m = { 0 };
	th_task *t = th_spawn_on(1, move_my_worker, &m);
	th_wait(t);
	th_task_free(t);
	assert_int_equal(th_record_stop(r), 0);

	struct th_rec_task rt;
	assert_int_equal(th_record_task(r, 0, m.id, &rt), 0);
	assert_true(rt.cpu_migrations_kernel >= 1);
	/* a kernel migration of the idle worker just before the task began is charged to it
	 * too (the next task to run there), but changes no CPU between its own stretches */
	assert_true(rt.cpu_migrations >= rt.worker_cpu_changes);
	assert_true(rt.worker_cpu_changes >= 1);
	assert_true(rt.cpu_mask[m.from / 64] & (1ull << (m.from % 64)));
	assert_true(rt.cpu_mask[m.to / 64] & (1ull << (m.to % 64)));
	/* every kernel migration of worker 1 while the task ran names the task; the worker
	 * may also be moved before or after it (then idle: task 0), under a loaded machine */
	size_t nr, nm, found = 0, during = 0;
	uint64_t s0 = 0, e0 = 0;
	const struct th_rec_run *runs = th_record_runs(r, &nr);
	for (size_t i = 0; i < nr; i++)
		if (runs[i].task_id == m.id) {
			s0 = runs[i].start_ns;
			e0 = runs[i].end_ns;
		}
	assert_true(e0 > s0);
	const struct th_rec_migration *mig = th_record_migrations(r, &nm);
	for (size_t i = 0; i < nm; i++) {
		if (mig[i].worker != 1 || mig[i].ts_ns < s0 || mig[i].ts_ns > e0)
			continue;
		during++;
		assert_int_equal(mig[i].task_id, m.id);
		found += mig[i].orig_cpu == m.from && mig[i].dest_cpu == m.to;
	}
	assert_true(found >= 1);
	print_message("  %zu kernel migration(s) of worker 1 during the task, all charged to it\n", during);
	struct th_rec_worker rw;
	assert_int_equal(th_record_worker(r, 0, 1, &rw), 0);
	assert_true(rw.cpu_migrations >= 1);
	close_rec(r);
	th_runtime_stop();
}

/* A thread spinning on the CPU of worker 0 until told to stop. */
static _Atomic int hog_stop;
static void *hog(void *arg)
{
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(*(int *)arg, &set);
	pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
	while (!atomic_load(&hog_stop))
		;
	return NULL;
}

static void *spin_task(void *arg)
{
	volatile uint64_t x = 0;
	for (uint64_t i = 0; i < *(uint64_t *)arg; i++)
		x += i;
	return NULL;
}

/* Two CPU-bound threads on one CPU: the scheduler must time-slice them, so the worker is
 * preempted while the task runs, and waits on the run queue while it is its task. */
static void preemptions_and_runq_wait_are_charged_to_the_running_task(void **state)
{
	(void)state;
	NEED_BPF();
	start_runtime("sticky", 1, true);
	int cpu = nth_allowed_cpu(0);
	pthread_t h;
	atomic_store(&hog_stop, 0);
	assert_int_equal(pthread_create(&h, NULL, hog, &cpu), 0);
	struct th_record *r = record_self(false);
	uint64_t iters = 400000000; /* some hundreds of ms: many scheduler slices */
	th_task *t = th_spawn_on(0, spin_task, &iters);
	th_wait(t);
	assert_int_equal(th_record_stop(r), 0);
	atomic_store(&hog_stop, 1);
	pthread_join(h, NULL);
	struct th_task_stats st;
	struct th_rec_task rt;
	struct th_rec_worker rw;
	th_task_stats(t, &st);
	th_task_free(t);
	assert_int_equal(th_record_task(r, 0, st.id, &rt), 0);
	assert_int_equal(th_record_worker(r, 0, 0, &rw), 0);
	print_message("  task: %" PRIu64 " preemptions, %.1f ms run-queue wait, %.1f ms on CPU\n",
		      rt.preemptions, rt.runq_wait_ns / 1e6, rt.on_cpu_ns / 1e6);
	assert_true(rt.preemptions >= 1);
	assert_true(rt.runq_wait_ns > 0);
	assert_true(rt.preemptions <= rw.preemptions);
	assert_true(rt.runq_wait_ns <= rw.runq_wait_ns);
	assert_true(rt.on_cpu_ns <= rw.on_cpu_ns);
	assert_int_equal(rt.cpu_migrations, 0); /* pinned */
	close_rec(r);
	th_runtime_stop();
}

/* ---- lost events ---------------------------------------------------------------- */

static void a_full_ring_buffer_is_counted_in_lost_events(void **state)
{
	(void)state;
	NEED_BPF();
	start_runtime("sticky", 1, false);
	struct th_record_opts o;
	th_record_opts_default(&o);
	o.usdt = true;
	o.ringbuf_bytes = 4096; /* room for ~40 records; drained every 20 ms */
	struct th_record *r = cur_rec = th_record_open(&o);
	if (th_record_attach_self(r) != 0 || th_record_start(r) != 0)
		fail_msg("%s", th_record_error());
	/* 20000 probe hits (about a microsecond or more each) between two drains */
	for (int i = 0; i < 20000; i++)
		DTRACE_PROBE1(taskhop, worker_park, 99);
	assert_int_equal(th_record_stop(r), 0);
	uint64_t lost = th_record_lost_events(r);
	print_message("  4 KiB ring buffer: %" PRIu64 " of 20000+ events lost\n", lost);
	assert_true(lost > 0);
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	assert_int_equal(th_record_write_json(r, f), 0);
	fclose(f);
	char want[64];
	snprintf(want, sizeof(want), "\"lost_events\": %" PRIu64 ",", lost);
	assert_non_null(strstr(buf, want));
	free(buf);
	close_rec(r);
	th_runtime_stop();
}

/* ---- the raw_tp twins ------------------------------------------------------- */

static void raw_tp_twins_give_the_same_join(void **state)
{
	(void)state;
	NEED_BPF();
	setenv("TASKHOP_REC_FORCE_RAW_TP", "1", 1);
	start_runtime("shared", 2, false);
	struct th_record *r = record_self(true);
	unsetenv("TASKHOP_REC_FORCE_RAW_TP");
	struct rec_darts d;
	th_task *tasks[REC_DARTS_MAX];
	rec_darts_default(&d);
	int n = rec_darts_run(&d, tasks);
	assert_int_equal(th_record_stop(r), 0);
	for (int i = 0; i < n; i++) {
		struct th_task_stats st;
		struct th_rec_task rt;
		th_task_stats(tasks[i], &st);
		assert_int_equal(th_record_task(r, 0, st.id, &rt), 0);
		assert_int_equal(rt.usdt_runs, st.runs);
		assert_true(rt.on_cpu_ns > 0);
		th_task_free(tasks[i]);
	}
	size_t nr;
	const struct th_rec_run *runs = th_record_runs(r, &nr);
	for (size_t i = 0; i < nr; i++)
		assert_int_equal(th_record_cpu_at(r, 0, runs[i].tid, runs[i].usdt_ts_ns), runs[i].usdt_cpu);
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	assert_int_equal(th_record_write_json(r, f), 0);
	fclose(f);
	assert_non_null(strstr(buf, "\"tracepoints\": \"raw_tp\""));
	free(buf);
	close_rec(r);
	th_runtime_stop();
}

/* ---- other processes: record -- CMD, several at once ------------------------- */

/* `test_record --rec-workload [hold]`: the small program the CLI tests record. */
static int child_workload(int argc, char **argv)
{
	struct th_config cfg;
	th_config_default(&cfg);
	cfg.workers = 2;
	if (th_runtime_start(&cfg) != 0)
		return 3;
	struct rec_darts d;
	th_task *tasks[REC_DARTS_MAX];
	rec_darts_default(&d);
	if (argc > 3 && strcmp(argv[2], "hold") == 0) {
		/* A test that fails before it kills us must not leave us spinning:
		 * die with the parent, and after two minutes in any case. */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		alarm(120);
		/* rounds until killed; after each, creates file argv[3] if it is missing */
		for (int round = 0;; round++) {
			int n = rec_darts_run(&d, tasks);
			for (int i = 0; i < n; i++)
				th_task_free(tasks[i]);
			if (access(argv[3], F_OK) != 0) { /* (re)created after each round */
				FILE *f = fopen(argv[3], "w");
				if (f)
					fclose(f);
			}
		}
	}
	int n = rec_darts_run(&d, tasks);
	for (int i = 0; i < n; i++)
		th_task_free(tasks[i]);
	th_runtime_stop();
	return n == d.nshort + 1 ? 0 : 4;
}

static void check_child_tasks(struct th_record *r, pid_t pid)
{
	size_t nt, mine = 0;
	const struct th_rec_task *t = th_record_tasks(r, &nt);
	struct rec_darts d;
	rec_darts_default(&d);
	for (size_t i = 0; i < nt; i++) {
		if (t[i].pid != pid)
			continue;
		mine++;
		assert_int_equal(t[i].runs, (uint64_t)d.yields + 1);
		assert_int_equal(t[i].usdt_runs, t[i].runs);
		assert_true(t[i].on_cpu_ns > 0);
		assert_true(t[i].ncpus_visited >= 1);
	}
	assert_int_equal(mine, (size_t)d.nshort + 1);
}

static void record_command_sees_its_tasks(void **state)
{
	(void)state;
	NEED_BPF();
	char *argv[] = { self_exe, "--rec-workload", NULL };
	struct th_record *r = cur_rec = th_record_open(NULL);
	pid_t child;
	assert_int_equal(th_record_attach_command(r, argv, &child), 0);
	if (th_record_start(r) != 0)
		fail_msg("%s", th_record_error());
	int st = th_record_wait_child(r, NULL);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	assert_int_equal(th_record_stop(r), 0);
	check_child_tasks(r, child);
	size_t nw;
	const struct th_rec_worker *w = th_record_workers(r, &nw);
	assert_int_equal(nw, 2);
	for (size_t i = 0; i < nw; i++)
		assert_int_equal(w[i].worker, (int)i); /* learned from worker_start */
	assert_int_equal(th_record_lost_events(r), 0);
	close_rec(r);
}

static void wait_for_file(const char *path)
{
	for (int i = 0; i < 60000 && access(path, F_OK) != 0; i++)
		usleep(1000);
	assert_int_equal(access(path, F_OK), 0);
}

/* -p: the runs come from the process's run-log area (no uprobe); with usdt, the
 * probes are attached as well and count the same runs per task. */
static void record_pid(bool usdt)
{
	char marker[128];
	snprintf(marker, sizeof(marker), "/tmp/taskhop-recp-%d.round", (int)getpid());
	unlink(marker);
	fflush(NULL);
	pid_t child = fork();
	assert_true(child >= 0);
	if (child == 0) {
		execl(self_exe, self_exe, "--rec-workload", "hold", marker, (char *)NULL);
		_exit(127);
	}
	wait_for_file(marker); /* its runtime runs: the workers started before we attach */
	struct th_record_opts o;
	th_record_opts_default(&o);
	o.usdt = usdt;
	struct th_record *r = cur_rec = th_record_open(&o);
	assert_int_equal(th_record_attach_pid(r, child), 0);
	assert_string_equal(th_record_source(r, child), "its run-log area (shared memory)");
	if (th_record_start(r) != 0)
		fail_msg("%s", th_record_error());
	for (int i = 0; i < 2; i++) { /* the second round begins after the attach */
		unlink(marker);
		wait_for_file(marker);
	}
	assert_int_equal(th_record_stop(r), 0);
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	unlink(marker);
	size_t nt, full = 0;
	const struct th_rec_task *t = th_record_tasks(r, &nt);
	for (size_t i = 0; i < nt; i++)
		full += t[i].runs == 11 && t[i].usdt_runs == (usdt ? 11 : 0) && t[i].on_cpu_ns > 0;
	assert_true(full >= 21);
	assert_int_equal(th_record_dropped_runs(r), 0);
	for (int w = 0; w < 2; w++) { /* worker indexes learned from task_run */
		struct th_rec_worker rw;
		assert_int_equal(th_record_worker(r, child, w, &rw), 0);
		assert_true(rw.switches > 0);
	}
	close_rec(r);
}

static void record_pid_follows_a_running_process(void **state)
{
	(void)state;
	NEED_BPF();
	record_pid(false);
}

static void record_pid_usdt_counts_the_runs_the_area_logs(void **state)
{
	(void)state;
	NEED_BPF();
	record_pid(true);
}

static void one_recording_follows_several_processes(void **state)
{
	(void)state;
	NEED_BPF();
	char *argv[] = { self_exe, "--rec-workload", NULL };
	struct th_record *r = cur_rec = th_record_open(NULL);
	pid_t a, b;
	assert_int_equal(th_record_attach_command(r, argv, &a), 0);
	assert_int_equal(th_record_attach_command(r, argv, &b), 0);
	if (th_record_start(r) != 0)
		fail_msg("%s", th_record_error());
	assert_true(th_record_wait_child(r, NULL) >= 0);
	assert_true(th_record_wait_child(r, NULL) >= 0);
	assert_int_equal(th_record_stop(r), 0);
	check_child_tasks(r, a);
	check_child_tasks(r, b);
	close_rec(r);
}

/* ---- PID namespaces ---------------------------------------------------------- */

/* `test_record --rec-ns`: records itself (pinned sticky, deterministic figures) and a
 * command, and prints the figures that must not depend on the PID namespace. */
/* The initial PID namespace has a fixed inode (PROC_PID_INIT_INO); any other one,
 * unshare's or a container's, numbers threads differently from the kernel. */
static bool in_child_pid_namespace(void)
{
	struct stat st;
	return stat("/proc/self/ns/pid", &st) == 0 && st.st_ino != 0xEFFFFFFCu;
}

static int child_ns_report(void)
{
	struct th_config cfg;
	th_config_default(&cfg);
	cfg.policy = "sticky";
	cfg.workers = 2;
	cfg.pin = true;
	cfg.run_log_cap = 1 << 16;
	if (th_runtime_start(&cfg) != 0)
		return 3;
	struct th_record_opts o;
	th_record_opts_default(&o);
	o.usdt = true;
	struct th_record *r = th_record_open(&o);
	if (!r || th_record_attach_self(r) != 0 || th_record_start(r) != 0) {
		fprintf(stderr, "recorder: %s\n", th_record_error());
		return 4;
	}
	struct rec_darts d;
	th_task *tasks[REC_DARTS_MAX];
	rec_darts_default(&d);
	int n = rec_darts_run(&d, tasks);
	th_record_stop(r);
	for (int i = 0; i < n; i++) {
		struct th_task_stats st;
		struct th_rec_task rt = { 0 };
		th_task_stats(tasks[i], &st);
		th_record_task(r, 0, st.id, &rt);
		printf("task %d runs %" PRIu64 " hops %" PRIu64 " usdt_runs %" PRIu64 " usdt_hops %" PRIu64
		       " migr %" PRIu64 " migr_k %" PRIu64 " ncpus %d on_cpu %d\n", i, rt.runs,
		       rt.worker_hops, rt.usdt_runs, rt.usdt_worker_hops, rt.cpu_migrations,
		       rt.cpu_migrations_kernel, rt.ncpus_visited, rt.on_cpu_ns > 0);
		th_task_free(tasks[i]);
	}
	/* host_tid: the thread's id outside the namespace, so a different number inside one */
	bool nested = in_child_pid_namespace();
	for (int w = 0; w < 2; w++) {
		struct th_rec_worker rw = { 0 };
		th_record_worker(r, 0, w, &rw);
		bool ok = rw.host_tid > 0 && (nested ? rw.host_tid != rw.tid : rw.host_tid == rw.tid);
		printf("worker %d host_tid %s\n", w, ok ? "ok" : "wrong");
	}
	size_t nr, cpu_known = 0;
	const struct th_rec_run *runs = th_record_runs(r, &nr);
	for (size_t i = 0; i < nr; i++) {
		bool same = runs[i].cpu >= 0 && runs[i].cpu == runs[i].usdt_cpu;
		cpu_known += same;
		if (!same) /* on stderr: the comparison of stdout inside and outside stays exact */
			fprintf(stderr, "rec-ns: task %" PRIu64 " worker %d run [%" PRIu64 ", %" PRIu64
				"] usdt at %" PRIu64 ": join cpu %d, usdt cpu %d\n", runs[i].task_id,
				runs[i].worker, runs[i].start_ns, runs[i].end_ns, runs[i].usdt_ts_ns,
				runs[i].cpu, runs[i].usdt_cpu);
	}
	printf("runs %zu with_cpu %zu lost %" PRIu64 "\n", nr, cpu_known, th_record_lost_events(r));
	fprintf(stderr, "rec-ns: pid %d\n", (int)getpid());
	close_rec(r);
	th_runtime_stop();

	/* and another process, through USDT only */
	char *argv[] = { self_exe, "--rec-workload", NULL };
	pid_t child;
	r = th_record_open(NULL);
	if (th_record_attach_command(r, argv, &child) != 0 || th_record_start(r) != 0) {
		fprintf(stderr, "recorder: %s\n", th_record_error());
		return 5;
	}
	th_record_wait_child(r, NULL);
	th_record_stop(r);
	size_t nt, seen = 0;
	const struct th_rec_task *t = th_record_tasks(r, &nt);
	for (size_t i = 0; i < nt; i++)
		seen += t[i].pid == child && t[i].runs == (uint64_t)d.yields + 1 && t[i].on_cpu_ns > 0;
	printf("command tasks %zu\n", seen);
	close_rec(r);
	return 0;
}

static char *run_capture(const char *cmd)
{
	FILE *p = popen(cmd, "r");
	assert_non_null(p);
	char *buf = calloc(1, 1 << 16);
	size_t n = fread(buf, 1, (1 << 16) - 1, p);
	buf[n] = 0;
	int st = pclose(p);
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
		fail_msg("'%s' failed (status %d):\n%s", cmd, st, buf);
	return buf;
}

static void figures_are_the_same_inside_a_pid_namespace(void **state)
{
	(void)state;
	NEED_BPF();
	if (system("unshare --pid --fork --mount-proc true >/dev/null 2>&1") != 0) {
		if (getenv("TASKHOP_REQUIRE_BPF"))
			fail_msg("unshare --pid --fork --mount-proc does not work here");
		print_message("skipped: unshare --pid --fork --mount-proc does not work here\n");
		skip();
	}
	char cmd[8192];
	snprintf(cmd, sizeof(cmd), "'%s' --rec-ns", self_exe);
	char *outside = run_capture(cmd);
	snprintf(cmd, sizeof(cmd), "unshare --pid --fork --mount-proc '%s' --rec-ns",
		 self_exe);
	char *inside = run_capture(cmd);
	struct rec_darts d;
	rec_darts_default(&d);
	/* the figures mean something: every task seen by both paths, with CPU time */
	char line[256];
	snprintf(line, sizeof(line), "task 0 runs %d hops 0 usdt_runs %d usdt_hops 0 migr 0 migr_k 0 ncpus 1 on_cpu 1\n",
		 d.yields + 1, d.yields + 1);
	assert_non_null(strstr(outside, line));
	snprintf(line, sizeof(line), "runs %d with_cpu %d lost 0\n", (d.nshort + 1) * (d.yields + 1),
		 (d.nshort + 1) * (d.yields + 1));
	assert_non_null(strstr(outside, line));
	snprintf(line, sizeof(line), "command tasks %d\n", d.nshort + 1);
	assert_non_null(strstr(outside, line));
	assert_non_null(strstr(outside, "worker 0 host_tid ok\nworker 1 host_tid ok\n"));
	assert_string_equal(inside, outside);
	free(outside);
	free(inside);
}

/* ---- errors -------------------------------------------------------------------- */

/* Runs fn in a child process; returns its exit status (0 = all its checks passed). */
static int in_child(int (*fn)(void))
{
	fflush(NULL);
	pid_t p = fork();
	assert_true(p >= 0);
	if (p == 0) {
		int rc = fn();
		fflush(NULL);
		_exit(rc);
	}
	int st;
	waitpid(p, &st, 0);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 100 + WTERMSIG(st);
}

/* A copy of this binary that user nobody can run: the checkout itself may sit
 * in a directory only root can enter (mktemp -d makes it 0700). */
static char unpriv_dir[64], unpriv_exe[128];

static void make_unprivileged_copy(void)
{
	snprintf(unpriv_dir, sizeof(unpriv_dir), "/tmp/taskhop-unpriv-XXXXXX");
	assert_non_null(mkdtemp(unpriv_dir));
	assert_int_equal(chmod(unpriv_dir, 0755), 0);
	snprintf(unpriv_exe, sizeof(unpriv_exe), "%s/test_record", unpriv_dir);
	char cmd[4400];
	snprintf(cmd, sizeof(cmd), "cp '%s' '%s' && chmod 0755 '%s'", self_exe, unpriv_exe, unpriv_exe);
	assert_int_equal(system(cmd), 0);
}

static void remove_unprivileged_copy(void)
{
	unlink(unpriv_exe);
	rmdir(unpriv_dir);
}

static int unprivileged_child(void)
{
	if (geteuid() == 0 && (setresgid(65534, 65534, 65534) != 0 || setresuid(65534, 65534, 65534) != 0))
		return 10;
	const char *why = th_record_unavailable();
	printf("  without privileges: %s\n", why ? why : "(none)");
	if (!why || !strstr(why, "run as root, or use --no-bpf"))
		return 11;
	char *argv[] = { geteuid() == 65534 ? unpriv_exe : self_exe, "--rec-workload", NULL };
	struct th_record *r = th_record_open(NULL);
	if (th_record_attach_command(r, argv, NULL) != 0)
		return 12;
	if (th_record_start(r) == 0 || !strstr(th_record_error(), "run as root, or use --no-bpf"))
		return 13;
	th_record_close(r); /* releases and reaps the held command */
	return 0;
}

static void without_privileges_the_error_says_run_as_root_or_no_bpf(void **state)
{
	(void)state;
	make_unprivileged_copy();
	int rc = in_child(unprivileged_child);
	remove_unprivileged_copy();
	assert_int_equal(rc, 0);
}

static int set_caps(uint64_t mask)
{
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct d[2] = { { 0 } };
	d[0].effective = d[0].permitted = (uint32_t)mask;
	d[1].effective = d[1].permitted = (uint32_t)(mask >> 32);
	return (int)syscall(SYS_capset, &h, d);
}

/* CAP_BPF + CAP_PERFMON: the default in-process path works; USDT is refused by name. */
static int bpf_perfmon_child(void)
{
	if (set_caps((1ull << 39) | (1ull << 38)) != 0)
		return 20;
	if (th_record_unavailable())
		return 21;
	struct th_config cfg;
	th_config_default(&cfg);
	cfg.workers = 2;
	cfg.run_log_cap = 1 << 16;
	if (th_runtime_start(&cfg) != 0)
		return 26;
	struct th_record_opts o;
	th_record_opts_default(&o);
	o.usdt = true;
	struct th_record *r = th_record_open(&o);
	th_record_attach_self(r);
	if (th_record_start(r) == 0)
		return 22;
	printf("  with CAP_BPF+CAP_PERFMON and --usdt: %s\n", th_record_error());
	if (!strstr(th_record_error(), "CAP_SYS_ADMIN") || !strstr(th_record_error(), "without --usdt"))
		return 23;
	close_rec(r);
	r = th_record_open(NULL);
	th_record_attach_self(r);
	if (th_record_start(r) != 0) {
		printf("  with CAP_BPF+CAP_PERFMON: %s\n", th_record_error());
		return 24;
	}
	struct rec_darts d;
	th_task *tasks[REC_DARTS_MAX];
	rec_darts_default(&d);
	int n = rec_darts_run(&d, tasks);
	th_record_stop(r);
	for (int i = 0; i < n; i++) {
		struct th_task_stats st;
		struct th_rec_task rt;
		th_task_stats(tasks[i], &st);
		if (th_record_task(r, 0, st.id, &rt) != 0 || rt.on_cpu_ns == 0 || rt.runs != st.runs)
			return 25;
	}
	close_rec(r);
	return 0;
}

static void with_bpf_caps_only_usdt_is_refused_naming_cap_sys_admin(void **state)
{
	(void)state;
	NEED_BPF();
	if (geteuid() != 0) {
		print_message("skipped: needs root to drop to CAP_BPF+CAP_PERFMON\n");
		skip();
	}
	assert_int_equal(in_child(bpf_perfmon_child), 0);
}

/* CAP_BPF + CAP_PERFMON: `taskhop record` cannot attach USDT; its error names root and
 * none of run's options (record has no --usdt and no --no-bpf). */
static char caps_err[64];

static int record_caps_child(void)
{
	if (set_caps((1ull << 39) | (1ull << 38)) != 0)
		return 30;
	int fd = open(caps_err, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (fd < 0 || dup2(fd, 2) < 0)
		return 31;
	char *argv[] = { "record", "-q", "--", self_exe, "--rec-workload", NULL };
	return cmd_record(5, argv) == 1 ? 0 : 32;
}

static void record_with_bpf_caps_only_names_root_not_run_options(void **state)
{
	(void)state;
	NEED_BPF();
	if (geteuid() != 0) {
		print_message("skipped: needs root to drop to CAP_BPF+CAP_PERFMON\n");
		skip();
	}
	snprintf(caps_err, sizeof(caps_err), "/tmp/taskhop-rec-caps-%d.err", (int)getpid());
	assert_int_equal(in_child(record_caps_child), 0);
	char buf[1024] = "";
	FILE *f = fopen(caps_err, "r");
	assert_non_null(f);
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	unlink(caps_err);
	buf[n] = 0;
	print_message("  record with CAP_BPF+CAP_PERFMON: %s", buf);
	if (!strstr(buf, "CAP_SYS_ADMIN: run as root\n") || strstr(buf, "--usdt") || strstr(buf, "--no-bpf"))
		fail_msg("unexpected: %s", buf);
}

static void without_btf_the_error_names_the_kernel_option(void **state)
{
	(void)state;
	setenv("TASKHOP_BTF_PATH", "/nonexistent/vmlinux", 1);
	const char *why = th_record_unavailable();
	unsetenv("TASKHOP_BTF_PATH");
	assert_non_null(why);
	print_message("  without BTF: %s\n", why);
	assert_non_null(strstr(why, "no BTF"));
	assert_non_null(strstr(why, "CONFIG_DEBUG_INFO_BTF=y; use --no-bpf"));
}

static void bad_targets_are_refused_with_one_line(void **state)
{
	(void)state;
	struct th_record *r = th_record_open(NULL);
	pid_t none = 4000000;
	while (kill(none, 0) == 0 || errno != ESRCH)
		none++;
	assert_int_equal(th_record_attach_pid(r, none), -1);
	char want[64];
	snprintf(want, sizeof(want), "no process with pid %d", (int)none);
	assert_string_equal(th_record_error(), want);

	int p[2];
	assert_int_equal(pipe2(p, O_CLOEXEC), 0);
	pid_t sleeper = fork();
	if (sleeper == 0) {
		execlp("sleep", "sleep", "30", (char *)NULL);
		_exit(127);
	}
	close(p[1]);
	char c;
	assert_int_equal(read(p[0], &c, 1), 0); /* EOF: the exec closed the other end */
	close(p[0]);
	assert_int_equal(th_record_attach_pid(r, sleeper), -1);
	print_message("  -p <sleep>: %s\n", th_record_error());
	assert_non_null(strstr(th_record_error(), "is not linked with libtaskhop"));
	kill(sleeper, SIGKILL);
	waitpid(sleeper, NULL, 0);

	char *tru[] = { "true", NULL };
	assert_int_equal(th_record_attach_command(r, tru, NULL), -1);
	assert_non_null(strstr(th_record_error(), "has no taskhop USDT probes: it is not linked with libtaskhop"));
	char *nope[] = { "no-such-command-taskhop", NULL };
	assert_int_equal(th_record_attach_command(r, nope, NULL), -1);
	assert_string_equal(th_record_error(), "cannot run 'no-such-command-taskhop': No such file or directory");
	assert_int_equal(th_record_start(r), -1);
	assert_non_null(strstr(th_record_error(), "nothing to record"));
	close_rec(r);
}

/* The figures are computed once, at stop, with the bindings given by then: a binding
 * after stop is refused in one line instead of being silently left out. */
static void a_binding_after_stop_is_refused_in_one_line(void **state)
{
	(void)state;
	NEED_BPF();
	start_runtime("shared", 1, false);
	struct th_record *r = record_self(false);
	assert_int_equal(th_record_bind_thread(r, 1, (int)gettid()), 0);
	assert_int_equal(th_record_stop(r), 0);
	assert_int_equal(th_record_bind_thread(r, 2, (int)gettid()), -1);
	print_message("  bind after stop: %s\n", th_record_error());
	assert_non_null(strstr(th_record_error(), "before th_record_stop"));
	struct th_rec_task t;
	assert_int_equal(th_record_task(r, 0, 1, &t), 0); /* bound before: joined */
	assert_int_equal(th_record_task(r, 0, 2, &t), -1);
	close_rec(r);
	th_runtime_stop();
}

/* ---- the subcommand ------------------------------------------------------------ */

static char ctrlc_json[256], ctrlc_marker[256];

static int ctrlc_child(void)
{
	char *argv[] = { "record", "-q", "-o", ctrlc_json, "--", self_exe, "--rec-workload", "hold",
			 ctrlc_marker, NULL };
	return cmd_record(9, argv);
}

static void ctrl_c_detaches_writes_the_recording_and_exits_0(void **state)
{
	(void)state;
	NEED_BPF();
	snprintf(ctrlc_json, sizeof(ctrlc_json), "/tmp/taskhop-rec-%d.json", (int)getpid());
	snprintf(ctrlc_marker, sizeof(ctrlc_marker), "/tmp/taskhop-rec-%d.started", (int)getpid());
	unlink(ctrlc_json);
	unlink(ctrlc_marker);
	fflush(NULL);
	pid_t rec = fork();
	assert_true(rec >= 0);
	if (rec == 0)
		_exit(ctrlc_child());
	/* the workload writes the marker after a full darts round under the recorder */
	for (int i = 0; i < 60000 && access(ctrlc_marker, F_OK) != 0; i++)
		usleep(1000);
	assert_int_equal(access(ctrlc_marker, F_OK), 0);
	kill(rec, SIGINT);
	int st;
	assert_int_equal(waitpid(rec, &st, 0), rec);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
	char err[256];
	struct json *run = json_parse_file(ctrlc_json, err, sizeof(err));
	if (!run)
		fail_msg("%s", err);
	assert_true(json_get_num(json_get(run, "bpf"), "lost_events", -1) == 0);
	const struct json *tasks = json_get(run, "tasks");
	int long_task = 0; /* the first round's long task */
	for (size_t i = 0; i < json_len(tasks); i++)
		long_task += json_get_num(json_at(tasks, i), "id", 0) == 21 &&
			     json_get_num(json_at(tasks, i), "runs", 0) == 11;
	assert_int_equal(long_task, 1);
	json_free(run);
	unlink(ctrlc_json);
	unlink(ctrlc_marker);
}

static void record_usage_errors_exit_2(void **state)
{
	(void)state;
	char *a[] = { "record", NULL };
	assert_int_equal(cmd_record(1, a), 2);
	char *b[] = { "record", "-p", "abc", NULL };
	assert_int_equal(cmd_record(3, b), 2);
	char *c[] = { "record", "-p", "1", "--", "true", NULL };
	assert_int_equal(cmd_record(5, c), 2);
}

int main(int argc, char **argv)
{
	ssize_t n = readlink("/proc/self/exe", self_exe, sizeof(self_exe) - 1);
	self_exe[n > 0 ? n : 0] = 0;
	if (argc > 1 && strcmp(argv[1], "--rec-workload") == 0)
		return child_workload(argc, argv);
	if (argc > 1 && strcmp(argv[1], "--rec-ns") == 0)
		return child_ns_report();
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(darts_runs_are_all_seen_with_a_cpu, teardown),
		cmocka_unit_test_teardown(usdt_and_join_agree_on_darts_for_every_policy, teardown),
		cmocka_unit_test_teardown(pinned_sticky_run_has_no_cpu_migrations, teardown),
		cmocka_unit_test_teardown(forced_worker_migration_is_charged_to_the_running_task, teardown),
		cmocka_unit_test_teardown(preemptions_and_runq_wait_are_charged_to_the_running_task, teardown),
		cmocka_unit_test_teardown(a_full_ring_buffer_is_counted_in_lost_events, teardown),
		cmocka_unit_test_teardown(raw_tp_twins_give_the_same_join, teardown),
		cmocka_unit_test_teardown(record_command_sees_its_tasks, teardown),
		cmocka_unit_test_teardown(record_pid_follows_a_running_process, teardown),
		cmocka_unit_test_teardown(record_pid_usdt_counts_the_runs_the_area_logs, teardown),
		cmocka_unit_test_teardown(one_recording_follows_several_processes, teardown),
		cmocka_unit_test_teardown(figures_are_the_same_inside_a_pid_namespace, teardown),
		cmocka_unit_test_teardown(without_privileges_the_error_says_run_as_root_or_no_bpf, teardown),
		cmocka_unit_test_teardown(with_bpf_caps_only_usdt_is_refused_naming_cap_sys_admin, teardown),
		cmocka_unit_test_teardown(record_with_bpf_caps_only_names_root_not_run_options, teardown),
		cmocka_unit_test_teardown(without_btf_the_error_names_the_kernel_option, teardown),
		cmocka_unit_test_teardown(bad_targets_are_refused_with_one_line, teardown),
		cmocka_unit_test_teardown(a_binding_after_stop_is_refused_in_one_line, teardown),
		cmocka_unit_test_teardown(ctrl_c_detaches_writes_the_recording_and_exits_0, teardown),
		cmocka_unit_test_teardown(record_usage_errors_exit_2, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
