/* validate.c — checks a report read from a file before anything renders it: every field is
 * present, of its type and in the range it must have, so a hostile report.json is refused. */
#include "report/report.h"

#include <math.h>
#include <stdarg.h>
#include <string.h>

#include "record.h"
#include "report/stats.h"
#include "taskhop.h"

/* Why the bounds: renderers size loops and allocations from these numbers (a CPU number
 * makes as many trace tracks, a worker number indexes per-worker rows), cast them to
 * integers and paste strings into gnuplot scripts and terminals. Counters and ids stay
 * below 2^53, where a double is exact; CPUs below what the recorder can see. */
#define MAX_EXACT 9007199254740992.0
#define MAX_SECONDS 1e9
#define MAX_NAME 64
#define MAX_POLICIES 32
#define MAX_MEANS 10

struct vctx {
	char where[64];
	char *err;
	size_t errlen;
	double workers; /* worker_count of the run being checked */
};

/* "run 2 task 3: " + what. Returns -1. */
static int fail(struct vctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(struct vctx *c, const char *fmt, ...)
{
	char what[256];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	snprintf(c->err, c->errlen, "%s: %s", c->where, what);
	return -1;
}

/* A number in [lo, hi] (whole when whole is set), or null when nullable. v may be an
 * array item (field names it in the message). */
static int check_value(struct vctx *c, const struct json *v, const char *field, bool nullable,
		       bool whole, double lo, double hi)
{
	char range[128], got[64];
	if (json_is_null(v) && v && nullable)
		return 0;
	snprintf(range, sizeof(range), "%s in [%.17g, %.17g]", whole ? "a whole number" : "a number", lo, hi);
	if (!json_is_num(v))
		return fail(c, "'%s' must be %s", field, range);
	double x = json_num_of(v);
	if (!(x >= lo && x <= hi) || (whole && x != floor(x))) {
		json_num_text(v, got, sizeof(got));
		snprintf(range + strlen(range), sizeof(range) - strlen(range), ", not %s", got);
		return fail(c, "'%s' must be %s", field, range);
	}
	return 0;
}

/* "run 2 task 3 has no 'completion_s'" */
static int missing(struct vctx *c, const char *field)
{
	snprintf(c->err, c->errlen, "%s has no '%s'", c->where, field);
	return -1;
}

static int check_num(struct vctx *c, const struct json *o, const char *field, bool nullable,
		     bool whole, double lo, double hi)
{
	const struct json *v = json_get(o, field);
	if (!v)
		return missing(c, field);
	return check_value(c, v, field, nullable, whole, lo, hi);
}

/* Names (workload, policy, label) go into tables, gnuplot titles and file headers: short,
 * no control characters. Free text (summary, command) may span lines. */
static int check_text(struct vctx *c, const struct json *v, const char *field, bool name)
{
	if (!v || json_type_of(v) != JSON_STR)
		return fail(c, "'%s' must be a string", field);
	size_t len = strlen(json_str_of(v));
	if (name && len > MAX_NAME)
		return fail(c, "'%s' is longer than %d characters", field, MAX_NAME);
	for (const unsigned char *s = (const unsigned char *)json_str_of(v); *s; s++)
		if ((*s < 0x20 || *s == 0x7f) && (name || (*s != '\n' && *s != '\t')))
			return fail(c, "'%s' contains a control character", field);
	return 0;
}

static int check_opt_text(struct vctx *c, const struct json *o, const char *field, bool name)
{
	const struct json *v = json_get(o, field);
	return v && !json_is_null(v) ? check_text(c, v, field, name) : 0;
}

static int check_array(struct vctx *c, const struct json *v, const char *field, bool nullable)
{
	if (nullable && json_is_null(v) && v)
		return 0;
	if (!v || json_type_of(v) != JSON_ARR)
		return fail(c, "'%s' must be an array", field);
	return 0;
}

/* Optional (older reports lack them): a task's largest run-queue wait of one run, when it
 * ended, and the log2 histograms over its runs (counts per slot, at most all slots). */
static int check_task_slices(struct vctx *c, const struct json *t)
{
	static const char *const hists[] = { "runq_wait_hist_us", "on_cpu_hist_us", NULL };
	if ((json_get(t, "max_runq_wait_ns") &&
	     check_num(c, t, "max_runq_wait_ns", true, true, 0, MAX_EXACT)) ||
	    (json_get(t, "max_runq_wait_at_s") &&
	     check_num(c, t, "max_runq_wait_at_s", true, false, -MAX_SECONDS, MAX_SECONDS)))
		return -1;
	const struct json *max = json_get(t, "max_runq_wait_ns"), *sum = json_get(t, "runq_wait_ns");
	if (json_is_num(max) && json_is_num(sum) && json_num_of(max) > json_num_of(sum))
		return fail(c, "'max_runq_wait_ns' exceeds 'runq_wait_ns'");
	for (int i = 0; hists[i]; i++) {
		const struct json *h = json_get(t, hists[i]);
		if (!h)
			continue;
		if (check_array(c, h, hists[i], true))
			return -1;
		if (json_len(h) > STATS_LOG2_SLOTS)
			return fail(c, "'%s' has more than %d slots", hists[i], STATS_LOG2_SLOTS);
		for (size_t k = 0; k < json_len(h); k++)
			if (check_value(c, json_at(h, k), hists[i], false, true, 0, MAX_EXACT))
				return -1;
	}
	return 0;
}

static int check_task(struct vctx *c, const struct json *t)
{
	static const char *const counts[] = { "runs", "yields", "worker_hops", NULL };
	static const char *const kernel[] = { "cpu_migrations", "cpu_migrations_kernel", "on_cpu_ns",
					      "runq_wait_ns", "preemptions", NULL };
	static const char *const workers[] = { "spawn_worker", "first_worker", "last_worker", NULL };
	if (check_num(c, t, "id", false, true, 0, MAX_EXACT) || check_text(c, json_get(t, "label"), "label", true) ||
	    check_num(c, t, "n", true, false, 0, 9e15) ||
	    check_num(c, t, "completion_s", true, false, 0, MAX_SECONDS))
		return -1;
	for (int i = 0; workers[i]; i++)
		if (check_num(c, t, workers[i], false, true, -1, c->workers - 1))
			return -1;
	for (int i = 0; counts[i]; i++)
		if (check_num(c, t, counts[i], false, true, 0, MAX_EXACT))
			return -1;
	for (int i = 0; kernel[i]; i++)
		if (check_num(c, t, kernel[i], true, true, 0, MAX_EXACT))
			return -1;
	/* a task hops between workers only when it runs again */
	if (json_get_num(t, "worker_hops", 0) > json_get_num(t, "runs", 0))
		return fail(c, "'worker_hops' exceeds 'runs'");
	const struct json *cpus = json_get(t, "cpus_visited"), *means = json_get(t, "means");
	if (check_array(c, cpus, "cpus_visited", true))
		return -1;
	for (size_t i = 0; i < json_len(cpus); i++)
		if (check_value(c, json_at(cpus, i), "cpus_visited", false, true, 0, TH_REC_MAX_CPUS - 1))
			return -1;
	if ((json_get(t, "work_s") && check_num(c, t, "work_s", true, false, 0, MAX_SECONDS)) ||
	    check_task_slices(c, t))
		return -1;
	/* darts: one sample mean of uniform draws per cycle, 10 cycles */
	if (!means)
		return 0;
	if (check_array(c, means, "means", false))
		return -1;
	if (json_len(means) > MAX_MEANS)
		return fail(c, "'means' has more than %d entries", MAX_MEANS);
	for (size_t i = 0; i < json_len(means); i++)
		if (check_value(c, json_at(means, i), "means", false, false, 0, 1))
			return -1;
	return 0;
}

static int check_worker(struct vctx *c, const struct json *w, size_t index)
{
	static const char *const kernel[] = { "cpu_migrations", "preemptions", "on_cpu_ns",
					      "runq_wait_ns", NULL };
	if (check_num(c, w, "index", false, true, (double)index, (double)index) ||
	    check_num(c, w, "tid", false, true, 0, 4294967295.0) ||
	    check_num(c, w, "tasks_run", false, true, 0, MAX_EXACT))
		return -1;
	for (int i = 0; kernel[i]; i++)
		if (check_num(c, w, kernel[i], true, true, 0, MAX_EXACT))
			return -1;
	return 0;
}

/* Timeline rows of ncol numbers, column k of kind[k]: 'i' id or count, 'w' worker (-1
 * none), 'c' CPU (-1 unknown), 's' seconds, 'd' a duration (s >= 0), 't' thread id, 'e' an
 * on-CPU interval's end (0 blocked, 1 preempted, 2 recording stopped).
 * runs: [task_id, worker, cpu, start_s, end_s]; migrations: [ts_s, worker, task_id, from, to];
 * oncpu: [tid, worker, cpu, start_s, end_s, runq_wait_s, end, task_id]. */
static int check_timeline_rows(struct vctx *c, const struct json *rows, const char *field,
			       const char *kind)
{
	size_t ncol = strlen(kind);
	if (check_array(c, rows, field, false))
		return -1;
	for (size_t i = 0; i < json_len(rows); i++) {
		const struct json *r = json_at(rows, i);
		if (json_type_of(r) != JSON_ARR || json_len(r) != ncol)
			return fail(c, "'%s' rows must be arrays of %zu numbers", field, ncol);
		for (size_t k = 0; k < ncol; k++) {
			double lo = -MAX_SECONDS, hi = MAX_SECONDS;
			bool whole = kind[k] != 's' && kind[k] != 'd';
			if (kind[k] == 'i')
				lo = 0, hi = MAX_EXACT;
			else if (kind[k] == 'w')
				lo = -1, hi = c->workers - 1;
			else if (kind[k] == 'c')
				lo = -1, hi = TH_REC_MAX_CPUS - 1;
			else if (kind[k] == 'd')
				lo = 0;
			else if (kind[k] == 't')
				lo = 0, hi = 4294967295.0;
			else if (kind[k] == 'e')
				lo = 0, hi = 2;
			if (check_value(c, json_at(r, k), field, false, whole, lo, hi))
				return -1;
		}
	}
	return 0;
}

/* run_ends: one of a fixed set of words per run, as many as runs. */
static int check_run_ends(struct vctx *c, const struct json *ends, const struct json *runs)
{
	static const char *const words[] = { "yield", "block", "done", "preempt", "unknown", NULL };
	if (check_array(c, ends, "timeline run_ends", false))
		return -1;
	if (json_len(ends) != json_len(runs))
		return fail(c, "'timeline run_ends' must have one entry per timeline run");
	for (size_t i = 0; i < json_len(ends); i++) {
		const char *w = json_type_of(json_at(ends, i)) == JSON_STR ? json_str_of(json_at(ends, i)) : "";
		int k = 0;
		while (words[k] && strcmp(words[k], w) != 0)
			k++;
		if (!words[k])
			return fail(c, "'timeline run_ends' entries must be yield, block, done, preempt or unknown");
	}
	return 0;
}

static int check_timeline(struct vctx *c, const struct json *tl)
{
	if (!tl || json_is_null(tl))
		return 0;
	if (json_type_of(tl) != JSON_OBJ)
		return fail(c, "'timeline' must be an object");
	if (json_get(tl, "runs") && check_timeline_rows(c, json_get(tl, "runs"), "timeline runs", "iwcss"))
		return -1;
	if (json_get(tl, "migrations") &&
	    check_timeline_rows(c, json_get(tl, "migrations"), "timeline migrations", "swicc"))
		return -1;
	if (json_get(tl, "oncpu") &&
	    check_timeline_rows(c, json_get(tl, "oncpu"), "timeline oncpu", "twcssdei"))
		return -1;
	if (json_get(tl, "run_ends") && check_run_ends(c, json_get(tl, "run_ends"), json_get(tl, "runs")))
		return -1;
	return 0;
}

static int check_run(struct vctx *c, const struct json *run)
{
	static const char *const secs[] = { "wall_s", "mean_completion_s", "makespan_s",
					    "ideal_mean_completion_s", NULL };
	if (check_text(c, json_get(run, "workload"), "workload", true) ||
	    check_text(c, json_get(run, "policy"), "policy", true) ||
	    check_num(c, run, "worker_count", false, true, 1, TH_MAX_WORKERS) ||
	    check_opt_text(c, run, "summary", false) || check_opt_text(c, run, "command", false))
		return -1;
	const struct json *seed = json_get(run, "seed");
	unsigned long long s;
	/* null: a recording of another program (taskhop record) has no run seed */
	if (!(seed && json_is_null(seed)) && !json_as_u64(seed, &s))
		return fail(c, "'seed' must be a whole number in [0, 2^64-1] or null");
	for (int i = 0; secs[i]; i++)
		if (check_num(c, run, secs[i], true, false, 0, MAX_SECONDS))
			return -1;
	if (check_num(c, run, "peak_rss_kb", true, true, 0, MAX_EXACT) ||
	    (json_get(run, "cpu_s") && check_num(c, run, "cpu_s", true, false, 0, MAX_SECONDS)))
		return -1;
	const struct json *bpf = json_get(run, "bpf");
	if (!bpf || json_type_of(bpf) != JSON_OBJ || !json_get(bpf, "enabled") ||
	    json_type_of(json_get(bpf, "enabled")) != JSON_BOOL)
		return fail(c, "'bpf' must be {\"enabled\": true|false, ...}");
	if (json_get(bpf, "lost_events") && check_num(c, bpf, "lost_events", true, true, 0, MAX_EXACT))
		return -1;
	const struct json *opts = json_get(run, "options");
	for (size_t i = 0; i < json_len(opts); i++)
		if (check_text(c, json_at(opts, i), "options", true))
			return -1;
	c->workers = json_get_num(run, "worker_count", 1);
	const struct json *ws = json_get(run, "workers");
	if (json_len(ws) != (size_t)c->workers)
		return fail(c, "'workers' must have one entry per worker (worker_count)");
	return check_timeline(c, json_get(run, "timeline"));
}

static int check_fields(const struct json *o, const char *const *fields, struct vctx *c)
{
	if (!o || json_type_of(o) != JSON_OBJ) {
		snprintf(c->err, c->errlen, "%s is not an object", c->where);
		return -1;
	}
	for (int i = 0; fields[i]; i++)
		if (!json_get(o, fields[i]))
			return missing(c, fields[i]);
	return 0;
}

static int check_run_parts(struct vctx *c, const struct json *run, size_t r)
{
	const struct json *tasks = json_get(run, "tasks"), *ws = json_get(run, "workers");
	if (json_type_of(tasks) != JSON_ARR || json_type_of(ws) != JSON_ARR)
		return fail(c, "'tasks' and 'workers' must be arrays");
	if (check_run(c, run))
		return -1;
	for (size_t k = 0; k < json_len(tasks); k++) {
		snprintf(c->where, sizeof(c->where), "run %zu task %zu", r + 1, k + 1);
		if (check_fields(json_at(tasks, k), report_task_fields, c) || check_task(c, json_at(tasks, k)))
			return -1;
	}
	for (size_t k = 0; k < json_len(ws); k++) {
		snprintf(c->where, sizeof(c->where), "run %zu worker %zu", r + 1, k);
		if (check_fields(json_at(ws, k), report_worker_fields, c) || check_worker(c, json_at(ws, k), k))
			return -1;
	}
	return 0;
}

/* The report's own strings: workload, options and the machine it ran on. */
static int check_header(struct vctx *c, const struct json *report)
{
	snprintf(c->where, sizeof(c->where), "report");
	const struct json *m = json_get(report, "machine"), *opts = json_get(report, "options");
	if (check_opt_text(c, report, "workload", true) || check_opt_text(c, report, "command", false) ||
	    check_opt_text(c, m, "kernel", false) || check_opt_text(c, m, "cpu_model", false) ||
	    (json_get(m, "cpus") && check_num(c, m, "cpus", true, true, 0, TH_REC_MAX_CPUS)))
		return -1;
	for (size_t i = 0; i < json_len(opts); i++)
		if (check_text(c, json_at(opts, i), "options", true))
			return -1;
	return 0;
}

/* Distinct policies over the runs: each is a table row, a figure series and a trace process. */
static int check_policy_count(struct vctx *c, const struct json *runs)
{
	const char *seen[MAX_POLICIES];
	int n = 0;
	for (size_t i = 0; i < json_len(runs); i++) {
		const char *p = json_get_str(json_at(runs, i), "policy", "");
		int k = 0;
		while (k < n && strcmp(seen[k], p) != 0)
			k++;
		if (k < n)
			continue;
		if (n == MAX_POLICIES) {
			snprintf(c->err, c->errlen, "run %zu: more than %d policies in one report", i + 1, MAX_POLICIES);
			return -1;
		}
		seen[n++] = p;
	}
	return 0;
}

int report_validate(const struct json *report, char *err, size_t errlen)
{
	struct vctx c = { .err = err, .errlen = errlen, .workers = 1 };
	if (!report || json_type_of(report) != JSON_OBJ || !json_get(report, "taskhop_report")) {
		snprintf(err, errlen, "not a taskhop report (no 'taskhop_report' member)");
		return -1;
	}
	const struct json *runs = json_get(report, "runs");
	if (!runs || json_type_of(runs) != JSON_ARR) {
		snprintf(err, errlen, "the report has no 'runs' array");
		return -1;
	}
	if (check_header(&c, report))
		return -1;
	const struct json *ts = json_get(report, "timeline_seed");
	unsigned long long seed;
	if (ts && !json_is_null(ts) && !json_as_u64(ts, &seed) &&
	    !(json_type_of(ts) == JSON_STR && (strcmp(json_str_of(ts), "all") == 0 ||
					       strcmp(json_str_of(ts), "median") == 0))) {
		snprintf(err, errlen, "'timeline_seed' must be a seed, \"all\" or \"median\"");
		return -1;
	}
	const struct json *tc = json_get(report, "timeline_color");
	if (tc && !json_is_null(tc) &&
	    !(json_type_of(tc) == JSON_STR &&
	      (strcmp(json_str_of(tc), "worker") == 0 || strcmp(json_str_of(tc), "cpu") == 0))) {
		snprintf(err, errlen, "'timeline_color' must be \"worker\" or \"cpu\"");
		return -1;
	}
	for (size_t i = 0; i < json_len(runs); i++) {
		snprintf(c.where, sizeof(c.where), "run %zu", i + 1);
		if (check_fields(json_at(runs, i), report_run_fields, &c) ||
		    check_run_parts(&c, json_at(runs, i), i))
			return -1;
	}
	return check_policy_count(&c, runs);
}
