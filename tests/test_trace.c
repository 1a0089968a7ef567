/* test_trace.c — trace.json of a real recorded compare is a trace Perfetto draws as it
 * means: every event on a named track of a named process, no two slices on a track
 * overlapping without nesting, slices carrying task / run / how it ended / run-queue wait,
 * and the drawn run (median, or --timeline-seed) named. Also that the checker used here
 * catches what it must (a partial overlap, an unnamed track). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "lib/need_bpf.h"
#include "lib/run_cli.h"
#include "report/json.h"
#include "report/report.h"

/* ---- the checker ------------------------------------------------------------------ */

struct track_key {
	double pid, tid;
};

struct span {
	double pid, tid;
	int64_t s, e; /* ns */
};

static bool named(const struct track_key *k, size_t n, double pid, double tid)
{
	for (size_t i = 0; i < n; i++)
		if (k[i].pid == pid && k[i].tid == tid)
			return true;
	return false;
}

static int by_track_start_longest(const void *a, const void *b)
{
	const struct span *x = a, *y = b;
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	if (x->s != y->s)
		return x->s < y->s ? -1 : 1;
	return x->e > y->e ? -1 : x->e < y->e;
}

/* Slices of one track must nest or follow each other: with the slices sorted by start
 * (the longer first), each must end by the end of every open slice it starts inside. */
static const char *partial_overlap(struct span *sp, size_t n, char *why, size_t len)
{
	qsort(sp, n, sizeof(*sp), by_track_start_longest);
	int64_t *open = malloc((n ? n : 1) * sizeof(*open));
	size_t depth = 0;
	for (size_t i = 0; i < n; i++) {
		if (i && (sp[i].pid != sp[i - 1].pid || sp[i].tid != sp[i - 1].tid))
			depth = 0;
		while (depth && open[depth - 1] <= sp[i].s)
			depth--;
		if (depth && sp[i].e > open[depth - 1]) {
			snprintf(why, len, "pid %.0f tid %.0f: slice [%lld, %lld] ns overlaps one ending at %lld",
				 sp[i].pid, sp[i].tid, (long long)sp[i].s, (long long)sp[i].e,
				 (long long)open[depth - 1]);
			free(open);
			return why;
		}
		open[depth++] = sp[i].e;
	}
	free(open);
	return NULL;
}

/* The args every slice that stands for CPU time (a task run, an on-CPU interval) carries. */
static const char *missing_run_args(const struct json *e, bool bpf)
{
	const struct json *a = json_get(e, "args");
	if (json_type_of(a) != JSON_OBJ)
		return "no args";
	const char *name = json_get_str(e, "name", "");
	if (!strcmp(name, "runnable") || !strcmp(name, "preempted") || !strcmp(name, "blocked"))
		return json_is_num(json_get(a, "tid")) ? NULL : "a thread state without its tid";
	if (!json_is_num(json_get(a, "task")))
		return "no task";
	if (!json_is_num(json_get(a, "run")) && !json_is_num(json_get(a, "interval")))
		return "no run (or interval) number";
	if (json_type_of(json_get(a, "ended")) != JSON_STR)
		return "no reason it ended";
	if (!json_get(a, "runq_wait_before_us") || (bpf && !json_is_num(json_get(a, "runq_wait_before_us"))))
		return "no run-queue wait before it";
	return NULL;
}

/* NULL when trace holds Perfetto's rules and ours, else what broke (in why). */
static const char *trace_problem(const struct json *trace, bool bpf, char *why, size_t len)
{
	const struct json *ev = json_get(trace, "traceEvents");
	size_t n = json_len(ev), nk = 0, np = 0, ns = 0;
	struct track_key *k = calloc(n + 1, sizeof(*k)), *procs = calloc(n + 1, sizeof(*procs));
	struct span *sp = calloc(n + 1, sizeof(*sp));
	const char *bad = NULL;
	for (size_t i = 0; i < n; i++) {
		const struct json *e = json_at(ev, i);
		const char *name = json_get_str(e, "name", "");
		if (strcmp(json_get_str(e, "ph", ""), "M"))
			continue;
		const char *label = json_get_str(json_get(e, "args"), "name", "");
		if (!strcmp(name, "thread_name") && *label)
			k[nk++] = (struct track_key){ json_get_num(e, "pid", -1), json_get_num(e, "tid", -1) };
		else if (!strcmp(name, "process_name") && *label)
			procs[np++] = (struct track_key){ json_get_num(e, "pid", -1), 0 };
	}
	for (size_t i = 0; i < n && !bad; i++) {
		const struct json *e = json_at(ev, i);
		const char *ph = json_get_str(e, "ph", "");
		double pid = json_get_num(e, "pid", -1), tid = json_get_num(e, "tid", -1);
		if (!strcmp(ph, "M"))
			continue;
		if (!named(k, nk, pid, tid) || !named(procs, np, pid, 0)) {
			snprintf(why, len, "event '%s' on pid %.0f tid %.0f: no thread_name/process_name",
				 json_get_str(e, "name", ""), pid, tid);
			bad = why;
		} else if (!strcmp(ph, "X")) {
			const char *miss = missing_run_args(e, bpf);
			if (miss) {
				snprintf(why, len, "slice '%s' on pid %.0f tid %.0f: %s",
					 json_get_str(e, "name", ""), pid, tid, miss);
				bad = why;
			}
			int64_t s = llround(json_get_num(e, "ts", 0) * 1e3);
			sp[ns++] = (struct span){ pid, tid, s, s + llround(json_get_num(e, "dur", 0) * 1e3) };
		}
	}
	if (!bad)
		bad = partial_overlap(sp, ns, why, len);
	free(k);
	free(procs);
	free(sp);
	return bad;
}

static struct json *parse(const char *text)
{
	char err[256];
	struct json *j = json_parse(text, strlen(text), err, sizeof(err));
	if (!j)
		fail_msg("%s", err);
	return j;
}

#define META "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":1,\"args\":{\"name\":\"p\"}}," \
	     "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":1,\"tid\":7,\"args\":{\"name\":\"t\"}},"
#define ARGS "\"args\":{\"task\":1,\"run\":1,\"ended\":\"yield\",\"runq_wait_before_us\":0}"

/* The checker is what the real-trace tests rely on: it must fail where Perfetto would. */
static void checker_catches_partial_overlap_and_unnamed_tracks(void **state)
{
	(void)state;
	char why[256];
	struct json *ok = parse("{\"traceEvents\":[" META
				"{\"ph\":\"X\",\"name\":\"a\",\"pid\":1,\"tid\":7,\"ts\":0,\"dur\":10," ARGS "},"
				"{\"ph\":\"X\",\"name\":\"b\",\"pid\":1,\"tid\":7,\"ts\":2,\"dur\":3," ARGS "},"
				"{\"ph\":\"X\",\"name\":\"c\",\"pid\":1,\"tid\":7,\"ts\":10,\"dur\":1," ARGS "}]}");
	assert_null(trace_problem(ok, true, why, sizeof(why))); /* nested and adjacent: fine */
	struct json *overlap = parse("{\"traceEvents\":[" META
				     "{\"ph\":\"X\",\"name\":\"a\",\"pid\":1,\"tid\":7,\"ts\":0,\"dur\":10," ARGS "},"
				     "{\"ph\":\"X\",\"name\":\"b\",\"pid\":1,\"tid\":7,\"ts\":5,\"dur\":10," ARGS "}]}");
	assert_non_null(strstr(trace_problem(overlap, true, why, sizeof(why)), "overlaps"));
	struct json *unnamed = parse("{\"traceEvents\":[" META
				     "{\"ph\":\"i\",\"s\":\"t\",\"name\":\"x\",\"pid\":1,\"tid\":8,\"ts\":0}]}");
	assert_non_null(strstr(trace_problem(unnamed, true, why, sizeof(why)), "no thread_name"));
	struct json *bare = parse("{\"traceEvents\":[" META
				  "{\"ph\":\"X\",\"name\":\"a\",\"pid\":1,\"tid\":7,\"ts\":0,\"dur\":1}]}");
	assert_non_null(strstr(trace_problem(bare, true, why, sizeof(why)), "no args"));
	json_free(ok);
	json_free(overlap);
	json_free(unnamed);
	json_free(bare);
}

/* A report of one run of `policy` with these timeline rows (JSON text). */
static struct json *one_run_report(const char *policy, const char *runs, const char *oncpu)
{
	char text[2048];
	snprintf(text, sizeof(text),
		 "{\"policies\":{\"%s\":{}},\"runs\":[{\"policy\":\"%s\",\"seed\":1,"
		 "\"mean_completion_s\":1,\"workers\":[{\"tid\":11}],\"timeline\":{\"runs\":%s,"
		 "\"oncpu\":%s}}]}", policy, policy, runs, oncpu);
	return parse(text);
}

/* The trace of report r (freed), checked by the rules above, with `clipped` slices cut. */
static struct json *traced(struct json *r, double clipped)
{
	char why[256];
	struct json *trace = report_trace(r);
	json_free(r);
	const char *bad = trace_problem(trace, false, why, sizeof(why));
	if (bad)
		fail_msg("%s", bad);
	assert_true(json_get_num(json_at(json_get(trace, "runs_drawn"), 0), "clipped_slices", -1) == clipped);
	return trace;
}

/* kthread: each task runs on its own thread at the same time as the others (worker -1);
 * their runs go to their task tracks only, not to one shared track where they overlap. */
static void kthread_tasks_running_at_once_share_no_track(void **state)
{
	(void)state;
	struct json *r = one_run_report("kthread", "[[1,-1,0,0,1],[2,-1,1,0,1],[3,-1,0,0.5,1.5]]",
					"[[21,-1,0,0,1,0,0,1],[22,-1,1,0,1,0,0,2]]");
	json_free(traced(r, 0));
}

/* Two threads' intervals that overlap on one CPU (an estimated start): the later one is
 * cut to start when the earlier ends, and the trace counts it. */
static void overlapping_intervals_on_a_cpu_are_clipped_and_counted(void **state)
{
	(void)state;
	struct json *r = one_run_report("steal", "[[1,0,0,0,0.3]]",
					"[[11,0,0,0,0.3,0,0,1],[12,-1,0,0.2,0.5,0,0,0]]");
	struct json *trace = traced(r, 1);
	const struct json *ev = json_get(trace, "traceEvents");
	int cut = 0;
	for (size_t i = 0; i < json_len(ev); i++) {
		const struct json *e = json_at(ev, i);
		cut += !strcmp(json_get_str(e, "name", ""), "thread 12") && json_get_num(e, "ts", 0) == 3e5 &&
		       json_get_num(e, "dur", 0) == 2e5;
	}
	assert_int_equal(cut, 1);
	json_free(trace);
}

/* ---- a real recorded compare ------------------------------------------------------ */

static char dir[] = "/tmp/th_trace_XXXXXX";

static int record_compare(void **state)
{
	(void)state;
	if (th_record_unavailable())
		return 0; /* the tests skip (or fail under TASKHOP_REQUIRE_BPF) by themselves */
	if (!mkdtemp(dir))
		return -1;
	struct result *r = run_taskhop("compare", "darts", "--policies", "sticky,shared", "--repeat", "3",
				       "--workers", "2", "--large", "1e7", "--small", "1e5", "--out", dir,
				       NULL);
	int rc = r->status;
	if (rc)
		fprintf(stderr, "compare failed (%d): %s\n", rc, r->err);
	free(r);
	return rc ? -1 : 0;
}

static int remove_compare(void **state)
{
	(void)state;
	char cmd[200];
	if (strcmp(dir, "/tmp/th_trace_XXXXXX") != 0) {
		snprintf(cmd, sizeof(cmd), "rm -rf '%s' '%s-seed' '%s-all'", dir, dir, dir);
		return system(cmd) == 0 ? 0 : -1;
	}
	return 0;
}

static struct json *load(const char *d, const char *file)
{
	char path[300], err[256];
	snprintf(path, sizeof(path), "%s/%s", d, file);
	struct json *j = json_parse_file(path, err, sizeof(err));
	if (!j)
		fail_msg("%s", err);
	return j;
}

static void expect_perfetto_rules(const struct json *trace)
{
	char why[512];
	const char *bad = trace_problem(trace, true, why, sizeof(why));
	if (bad)
		fail_msg("%s", bad);
	assert_string_equal(json_get_str(trace, "schema", ""), "taskhop-trace/2");
}

/* The lower median by mean completion of a policy's runs, as report.json has them. */
static double median_seed(const struct json *report, const char *policy)
{
	const struct json *runs = json_get(report, "runs");
	double mean[64], seed[64];
	int n = 0;
	for (size_t i = 0; i < json_len(runs) && n < 64; i++) {
		const struct json *run = json_at(runs, i);
		if (strcmp(json_get_str(run, "policy", ""), policy) == 0) {
			mean[n] = json_get_num(run, "mean_completion_s", 0);
			seed[n++] = json_get_num(run, "seed", -1);
		}
	}
	for (int i = 0; i < n; i++) /* rank of run i: runs before it in (mean, order) */
	{
		int below = 0;
		for (int j = 0; j < n; j++)
			below += mean[j] < mean[i] || (mean[j] == mean[i] && j < i);
		if (below == (n - 1) / 2)
			return seed[i];
	}
	return -1;
}

/* The process a drawn run became is named after it: "..., seed S (why)". */
static void expect_process_named(const struct json *trace, double pid, const char *policy, double seed)
{
	char want[96];
	snprintf(want, sizeof(want), ": %s, seed %.0f (", policy, seed);
	const struct json *ev = json_get(trace, "traceEvents");
	for (size_t i = 0; i < json_len(ev); i++) {
		const struct json *e = json_at(ev, i);
		if (!strcmp(json_get_str(e, "name", ""), "process_name") && json_get_num(e, "pid", -1) == pid) {
			assert_non_null(strstr(json_get_str(json_get(e, "args"), "name", ""), want));
			return;
		}
	}
	fail_msg("no process_name for pid %.0f", pid);
}

static size_t count_named(const struct json *trace, double pid, const char *name, double tid_min)
{
	const struct json *ev = json_get(trace, "traceEvents");
	size_t n = 0;
	for (size_t i = 0; i < json_len(ev); i++) {
		const struct json *e = json_at(ev, i);
		n += !strcmp(json_get_str(e, "ph", ""), "X") && json_get_num(e, "pid", -1) == pid &&
		     json_get_num(e, "tid", -1) >= tid_min && !strcmp(json_get_str(e, "name", ""), name);
	}
	return n;
}

/* What the thread-state and CPU tracks show comes from the kernel: every thread runs,
 * and each CPU slice is a thread's on-CPU interval. */
static void expect_kernel_tracks(const struct json *trace, double pid)
{
	const struct json *ev = json_get(trace, "traceEvents");
	size_t cpu_slices = 0;
	for (size_t i = 0; i < json_len(ev); i++) {
		const struct json *e = json_at(ev, i);
		if (!strcmp(json_get_str(e, "ph", ""), "X") && json_get_num(e, "pid", -1) == pid &&
		    json_get_num(e, "tid", -1) < 1500) /* CPU tracks (trace.c: TID_CPU + cpu) */
			cpu_slices += json_is_num(json_get(json_get(e, "args"), "interval"));
	}
	assert_true(cpu_slices > 0);
	assert_int_equal(count_named(trace, pid, "running", 10000), cpu_slices);
}

/* Each run's "runq_wait_before_us" is the kernel wait the recorder charged to it: over a
 * task's runs they add up to the task's runq_wait_ns. */
static void expect_waits_add_up(const struct json *trace, double pid, const struct json *run)
{
	const struct json *tasks = json_get(run, "tasks"), *ev = json_get(trace, "traceEvents");
	for (size_t t = 0; t < json_len(tasks); t++) {
		double id = json_get_num(json_at(tasks, t), "id", -1), sum = 0;
		for (size_t i = 0; i < json_len(ev); i++) {
			const struct json *e = json_at(ev, i);
			if (json_get_num(e, "pid", -1) == pid && json_get_num(e, "tid", -1) == 1e9 + id)
				sum += json_get_num(json_get(e, "args"), "runq_wait_before_us", 0);
		}
		double want = json_get_num(json_at(tasks, t), "runq_wait_ns", -1) / 1e3;
		if (fabs(sum - want) > 1)
			fail_msg("task %.0f: runs' waits add up to %.3f us, its runq_wait_ns says %.3f us", id,
				 sum, want);
	}
}

static const struct json *run_with(const struct json *report, const char *policy, double seed)
{
	const struct json *runs = json_get(report, "runs");
	for (size_t i = 0; i < json_len(runs); i++)
		if (!strcmp(json_get_str(json_at(runs, i), "policy", ""), policy) &&
		    json_get_num(json_at(runs, i), "seed", -1) == seed)
			return json_at(runs, i);
	fail_msg("no %s run with seed %.0f", policy, seed);
	return NULL;
}

static void recorded_compare_traces_the_median_run_by_perfettos_rules(void **state)
{
	(void)state;
	NEED_BPF();
	struct json *report = load(dir, "report.json"), *trace = load(dir, "trace.json");
	expect_perfetto_rules(trace);
	assert_string_equal(json_get_str(trace, "timeline_seed", ""), "median");
	const struct json *drawn = json_get(trace, "runs_drawn");
	assert_int_equal(json_len(drawn), 2);
	for (size_t i = 0; i < 2; i++) {
		const struct json *d = json_at(drawn, i);
		const char *pol = json_get_str(d, "policy", "");
		double seed = json_get_num(d, "seed", -1), pid = json_get_num(d, "pid", -1);
		assert_true(seed == median_seed(report, pol));
		assert_non_null(strstr(json_get_str(d, "why", ""), "median run of 3"));
		expect_process_named(trace, pid, pol, seed);
		expect_kernel_tracks(trace, pid);
		expect_waits_add_up(trace, pid, run_with(report, pol, seed));
	}
	json_free(trace);
	json_free(report);
}

static void timeline_seed_picks_the_run_or_all_of_them(void **state)
{
	(void)state;
	NEED_BPF();
	char out[300];
	snprintf(out, sizeof(out), "%s-seed", dir);
	struct result *r = run_taskhop("report", dir, "--out", out, "--timeline-seed", "3", NULL);
	assert_int_equal(r->status, 0);
	free(r);
	struct json *trace = load(out, "trace.json");
	expect_perfetto_rules(trace);
	assert_int_equal((int)json_get_num(trace, "timeline_seed", -1), 3);
	const struct json *drawn = json_get(trace, "runs_drawn");
	assert_int_equal(json_len(drawn), 2);
	for (size_t i = 0; i < 2; i++) {
		const struct json *d = json_at(drawn, i);
		assert_int_equal((int)json_get_num(d, "seed", -1), 3);
		expect_process_named(trace, json_get_num(d, "pid", -1), json_get_str(d, "policy", ""), 3);
	}
	json_free(trace);
	snprintf(out, sizeof(out), "%s-all", dir);
	r = run_taskhop("report", dir, "--out", out, "--timeline-seed", "all", NULL);
	assert_int_equal(r->status, 0);
	free(r);
	trace = load(out, "trace.json");
	expect_perfetto_rules(trace);
	assert_string_equal(json_get_str(trace, "timeline_seed", ""), "all");
	assert_int_equal(json_len(json_get(trace, "runs_drawn")), 6);
	json_free(trace);
	expect_usage_error(run_taskhop("report", dir, "--out", out, "--timeline-seed", "9", NULL),
			   "has no run with that seed");
	expect_usage_error(run_taskhop("compare", "darts", "--repeat", "2", "--timeline-seed", "5", NULL),
			   "--timeline-seed must be a whole number in 1..2");
}

int main(void)
{
	const struct CMUnitTest unit[] = {
		cmocka_unit_test(checker_catches_partial_overlap_and_unnamed_tracks),
		cmocka_unit_test(kthread_tasks_running_at_once_share_no_track),
		cmocka_unit_test(overlapping_intervals_on_a_cpu_are_clipped_and_counted),
	};
	const struct CMUnitTest recorded[] = {
		cmocka_unit_test(recorded_compare_traces_the_median_run_by_perfettos_rules),
		cmocka_unit_test(timeline_seed_picks_the_run_or_all_of_them),
	};
	int failed = cmocka_run_group_tests(unit, NULL, NULL);
	return failed + cmocka_run_group_tests(recorded, record_compare, remove_compare);
}
