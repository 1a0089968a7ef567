/* run_read.c — the one reader of run and report JSON: every field of run_schema.h is checked
 * (present when it must be, of its kind, in its range) and copied into the structs of run.h,
 * so that a hostile report.json is refused in one line and the renderers trust what passed. */
#include "report/run.h"

#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "record.h"
#include "report/report.h"
#include "report/run_fields.h"
#include "report/stats.h"
#include "taskhop.h"

/* Why the bounds: renderers size loops and allocations from these numbers (a CPU number
 * makes as many trace tracks, a worker number indexes per-worker rows), cast them to
 * integers and paste strings into gnuplot scripts and terminals. Counters and ids stay
 * below 2^53, where a double is exact; CPUs below what the recorder can see. */
#define MAX_EXACT 9007199254740992.0
#define MAX_SECONDS 1e9
#define MAX_NAME 64
#define MAX_POLICIES REPORT_MAX_POLICIES
#define MAX_MEANS 10

struct rctx {
	char where[64];
	char *err;
	size_t errlen;
	double workers; /* worker_count of the run being read */
	size_t index;   /* of the worker being read */
	bool partial;   /* run_read_partial: missing fields read as null */
};

/* "run 2 task 3: " + what. Returns -1. */
static int fail(struct rctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(struct rctx *c, const char *fmt, ...)
{
	char what[256];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	snprintf(c->err, c->errlen, "%s: %s", c->where, what);
	return -1;
}

/* "run 2 task 3 has no 'completion_s'" */
static int missing(struct rctx *c, const char *field)
{
	snprintf(c->err, c->errlen, "%s has no '%s'", c->where, field);
	return -1;
}

/* The range of a number of this kind: [lo, hi], whole or not. */
static void kind_range(const struct rctx *c, enum run_kind k, double *lo, double *hi, bool *whole)
{
	*whole = true;
	switch (k) {
	case RUN_KIND_SIZE: *lo = 0, *hi = 9e15, *whole = false; break;
	case RUN_KIND_SECS: *lo = 0, *hi = MAX_SECONDS, *whole = false; break;
	case RUN_KIND_TIME: *lo = -MAX_SECONDS, *hi = MAX_SECONDS, *whole = false; break;
	case RUN_KIND_WORKER: *lo = -1, *hi = c->workers - 1; break;
	case RUN_KIND_WINDEX: *lo = *hi = (double)c->index; break;
	case RUN_KIND_WCOUNT: *lo = 1, *hi = TH_MAX_WORKERS; break;
	case RUN_KIND_TID: *lo = 0, *hi = 4294967295.0; break;
	case RUN_KIND_CPU: *lo = -1, *hi = TH_REC_MAX_CPUS - 1; break;
	case RUN_KIND_CPUS: *lo = 0, *hi = TH_REC_MAX_CPUS - 1; break;
	case RUN_KIND_END: *lo = 0, *hi = 2; break;
	case RUN_KIND_MEANS: *lo = 0, *hi = 1, *whole = false; break;
	default: *lo = 0, *hi = MAX_EXACT; break; /* COUNT, HIST */
	}
}

/* A number in [lo, hi] (whole when whole is set), or null when nullable (then NAN). v may
 * be an array item (field names it in the message). */
static int read_range(struct rctx *c, const struct json *v, const char *field, bool nullable,
		      bool whole, double lo, double hi, double *out)
{
	char range[128], got[64];
	*out = NAN;
	if (v && json_is_null(v) && nullable)
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
	*out = x;
	return 0;
}

/* A number of kind k (its range: kind_range). */
static int read_number(struct rctx *c, const struct json *v, const char *field, enum run_kind k,
		       bool nullable, double *out)
{
	double lo, hi;
	bool whole;
	kind_range(c, k, &lo, &hi, &whole);
	return read_range(c, v, field, nullable, whole, lo, hi, out);
}

/* Names (workload, policy, label) go into tables, gnuplot titles and file headers: short,
 * no control characters. Free text (summary, command) may span lines. */
static int read_text(struct rctx *c, const struct json *v, const char *field, bool name,
		     const char **out)
{
	if (!v || json_type_of(v) != JSON_STR)
		return fail(c, "'%s' must be a string", field);
	const char *s = json_str_of(v);
	if (name && strlen(s) > MAX_NAME)
		return fail(c, "'%s' is longer than %d characters", field, MAX_NAME);
	for (const unsigned char *p = (const unsigned char *)s; *p; p++)
		if ((*p < 0x20 || *p == 0x7f) && (name || (*p != '\n' && *p != '\t')))
			return fail(c, "'%s' contains a control character", field);
	*out = s;
	return 0;
}

/* An array of numbers of kind k (CPUS, HIST, MEANS), at most max items. */
static int read_nums(struct rctx *c, const struct json *v, const char *field, enum run_kind k,
		     bool nullable, struct run_nums *out)
{
	*out = (struct run_nums){ 0 };
	if (v && json_is_null(v) && nullable)
		return 0;
	if (!v || json_type_of(v) != JSON_ARR)
		return fail(c, "'%s' must be an array", field);
	size_t n = json_len(v);
	if (k == RUN_KIND_HIST && n > STATS_LOG2_SLOTS)
		return fail(c, "'%s' has more than %d slots", field, STATS_LOG2_SLOTS);
	if (k == RUN_KIND_MEANS && n > MAX_MEANS)
		return fail(c, "'%s' has more than %d entries", field, MAX_MEANS);
	double *x = malloc((n ? n : 1) * sizeof(*x));
	if (!x)
		return fail(c, "out of memory");
	for (size_t i = 0; i < n; i++)
		if (read_number(c, json_at(v, i), field, k, false, &x[i])) {
			free(x);
			return -1;
		}
	*out = (struct run_nums){ x, n, true };
	return 0;
}

/* options: names; anything but an array reads as none (as it always has). */
static int read_names(struct rctx *c, const struct json *v, const char *field, struct run_names *out)
{
	size_t n = json_type_of(v) == JSON_ARR ? json_len(v) : 0;
	const char **s = calloc(n ? n : 1, sizeof(*s));
	*out = (struct run_names){ s, 0 };
	if (!s)
		return fail(c, "out of memory");
	for (size_t i = 0; i < n; i++)
		if (read_text(c, json_at(v, i), field, true, &s[i]))
			return -1;
	out->n = n;
	return 0;
}

/* One field of a table (not a nested part) into the struct at base. */
static int read_field(struct rctx *c, const struct json *o, const struct run_field *f, void *base)
{
	const struct json *v = json_get(o, f->key);
	char *at = (char *)base + f->off;
	bool nullable = f->need != RUN_NEED_REQ;
	if (run_kind_is_number(f->kind)) {
		*(double *)at = NAN;
		return v ? read_number(c, v, f->key, f->kind, nullable, (double *)at) : 0;
	}
	switch (f->kind) {
	case RUN_KIND_NAME:
	case RUN_KIND_TEXT:
		*(const char **)at = NULL;
		if (!v || (json_is_null(v) && nullable))
			return 0;
		return read_text(c, v, f->key, f->kind == RUN_KIND_NAME, (const char **)at);
	case RUN_KIND_BOOL:
		*(int *)at = -1;
		if (!v || (json_is_null(v) && nullable))
			return 0;
		if (json_type_of(v) != JSON_BOOL)
			return fail(c, "'%s' must be true or false", f->key);
		*(int *)at = json_bool_of(v);
		return 0;
	case RUN_KIND_CPUS:
	case RUN_KIND_HIST:
	case RUN_KIND_MEANS:
		/* an array may be null only where a number may */
		*(struct run_nums *)at = (struct run_nums){ 0 };
		return v ? read_nums(c, v, f->key, f->kind, f->need == RUN_NEED_NUL || f->need == RUN_NEED_OPT,
				     (struct run_nums *)at) : 0;
	case RUN_KIND_NAMES: return read_names(c, v, f->key, (struct run_names *)at);
	case RUN_KIND_SEED: {
		struct run_seed *s = (struct run_seed *)at;
		*s = (struct run_seed){ 0 };
		/* null: a recording of another program (taskhop record) has no run seed */
		if (!v || json_is_null(v))
			return 0;
		if (!json_as_u64(v, &s->v))
			return fail(c, "'%s' must be a whole number in [0, 2^64-1] or null", f->key);
		s->known = true;
		return 0;
	}
	case RUN_KIND_JSON: *(const struct json **)at = v; return 0;
	default: return 0; /* nested parts: their own readers */
	}
}

/* Every REQ and NUL field is present (first), then each field in table order. */
static int read_fields(struct rctx *c, const struct json *o, const struct run_fields *t, void *base)
{
	if (!o || json_type_of(o) != JSON_OBJ) {
		snprintf(c->err, c->errlen, "%s is not an object", c->where);
		return -1;
	}
	for (size_t i = 0; i < t->n && !c->partial; i++)
		if (t->f[i].need <= RUN_NEED_NUL && !json_get(o, t->f[i].key))
			return missing(c, t->f[i].key);
	for (size_t i = 0; i < t->n; i++)
		if (read_field(c, o, &t->f[i], base))
			return -1;
	return 0;
}

static int read_task(struct rctx *c, const struct json *o, struct run_task *t)
{
	memset(t, 0, sizeof(*t));
	t->json = o;
	if (read_fields(c, o, &run_fields_task, t))
		return -1;
	/* a task hops between workers only when it runs again */
	if (t->worker_hops > t->runs)
		return fail(c, "'worker_hops' exceeds 'runs'");
	if (t->max_runq_wait_ns > t->runq_wait_ns)
		return fail(c, "'max_runq_wait_ns' exceeds 'runq_wait_ns'");
	return 0;
}

/* Timeline rows: arrays of the columns of cols, each of its kind. */
static int read_rows(struct rctx *c, const struct json *rows, const char *field,
		     const struct run_columns *cols, struct run_rows *out)
{
	*out = (struct run_rows){ 0 };
	if (!rows || json_type_of(rows) != JSON_ARR)
		return fail(c, "'%s' must be an array", field);
	size_t n = json_len(rows);
	double *x = malloc((n ? n : 1) * cols->n * sizeof(*x));
	if (!x)
		return fail(c, "out of memory");
	out->v = x;
	for (size_t i = 0; i < n; i++) {
		const struct json *r = json_at(rows, i);
		if (json_type_of(r) != JSON_ARR || json_len(r) != cols->n)
			return fail(c, "'%s' rows must be arrays of %zu numbers", field, cols->n);
		for (size_t k = 0; k < cols->n; k++)
			if (read_number(c, json_at(r, k), field, cols->kind[k], false, &x[i * cols->n + k]))
				return -1;
	}
	out->n = n;
	return 0;
}

/* run_ends: one of a fixed set of words per run, as many as runs. */
static int read_ends(struct rctx *c, const struct json *ends, size_t nruns, struct run_ends *out)
{
	*out = (struct run_ends){ 0 };
	if (!ends || json_type_of(ends) != JSON_ARR)
		return fail(c, "'timeline run_ends' must be an array");
	if (json_len(ends) != nruns)
		return fail(c, "'timeline run_ends' must have one entry per timeline run");
	unsigned char *e = malloc(nruns ? nruns : 1);
	if (!e)
		return fail(c, "out of memory");
	out->v = e;
	for (size_t i = 0; i < nruns; i++) {
		const struct json *w = json_at(ends, i);
		const char *s = json_type_of(w) == JSON_STR ? json_str_of(w) : "";
		int k = 0;
		while (k < RUN_END_COUNT && strcmp(run_end_words[k], s) != 0)
			k++;
		if (k == RUN_END_COUNT)
			return fail(c, "'timeline run_ends' entries must be yield, block, done, preempt or unknown");
		e[i] = (unsigned char)k;
	}
	out->n = nruns;
	out->known = true;
	return 0;
}

static int read_timeline(struct rctx *c, const struct json *tl, struct run_timeline *t)
{
	memset(t, 0, sizeof(*t));
	t->dropped_runs = NAN;
	if (!tl || json_is_null(tl))
		return 0;
	if (json_type_of(tl) != JSON_OBJ)
		return fail(c, "'timeline' must be an object");
	t->known = true;
	const struct json *v;
	if ((v = json_get(tl, TH_TIMELINE_KEY(runs))) &&
	    read_rows(c, v, "timeline runs", &run_cols_run, &t->runs))
		return -1;
	if ((v = json_get(tl, TH_TIMELINE_KEY(migrations))) &&
	    read_rows(c, v, "timeline migrations", &run_cols_migration, &t->migrations))
		return -1;
	if ((v = json_get(tl, TH_TIMELINE_KEY(oncpu))) &&
	    read_rows(c, v, "timeline oncpu", &run_cols_oncpu, &t->oncpu))
		return -1;
	if ((v = json_get(tl, TH_TIMELINE_KEY(run_ends))) && read_ends(c, v, t->runs.n, &t->run_ends))
		return -1;
	if ((v = json_get(tl, TH_TIMELINE_KEY(dropped_runs))) &&
	    read_number(c, v, "timeline dropped_runs", RUN_KIND_COUNT, true, &t->dropped_runs))
		return -1;
	return 0;
}

static int read_bpf(struct rctx *c, const struct json *b, struct run_bpf *out)
{
	/* the whole object is named in the message: an old report's bpf may be anything */
	const struct json *en = json_get(b, run_fields_bpf.f[0].key); /* "enabled", first */
	if (json_type_of(b) != JSON_OBJ || json_type_of(en) != JSON_BOOL)
		return fail(c, "'bpf' must be {\"enabled\": true|false, ...}");
	return read_fields(c, b, &run_fields_bpf, out);
}

static int read_parts(struct rctx *c, const struct json *o, struct run *r)
{
	const struct json *tasks = json_get(o, TH_RUN_KEY(tasks)), *ws = json_get(o, TH_RUN_KEY(workers));
	size_t i0 = r->index + 1;
	if ((json_type_of(tasks) != JSON_ARR && (tasks || !c->partial)) ||
	    (json_type_of(ws) != JSON_ARR && (ws || !c->partial)))
		return fail(c, "'tasks' and 'workers' must be arrays");
	if (read_fields(c, o, &run_fields_run, r) ||
	    ((json_get(o, TH_RUN_KEY(bpf)) || !c->partial) && read_bpf(c, json_get(o, TH_RUN_KEY(bpf)), &r->bpf)))
		return -1;
	c->workers = isnan(r->worker_count) ? TH_MAX_WORKERS : r->worker_count;
	if (!c->partial && json_len(ws) != (size_t)r->worker_count)
		return fail(c, "'workers' must have one entry per worker (worker_count)");
	if (read_timeline(c, json_get(o, TH_RUN_KEY(timeline)), &r->timeline))
		return -1;
	r->tasks = calloc(json_len(tasks) ? json_len(tasks) : 1, sizeof(*r->tasks));
	r->workers = calloc(json_len(ws) ? json_len(ws) : 1, sizeof(*r->workers));
	if (!r->tasks || !r->workers)
		return fail(c, "out of memory");
	for (size_t k = 0; k < json_len(tasks); k++, r->ntasks++) {
		snprintf(c->where, sizeof(c->where), "run %zu task %zu", i0, k + 1);
		if (read_task(c, json_at(tasks, k), &r->tasks[k])) {
			run_task_clear(&r->tasks[k]); /* frees what it had read */
			return -1;
		}
	}
	for (size_t k = 0; k < json_len(ws); k++, r->nworkers++) {
		snprintf(c->where, sizeof(c->where), "run %zu worker %zu", i0, k);
		c->index = k;
		if (read_fields(c, json_at(ws, k), &run_fields_worker, &r->workers[k]))
			return -1;
	}
	return 0;
}

static int read_run(struct rctx *c, const struct json *o, size_t index, struct run *r)
{
	memset(r, 0, sizeof(*r));
	r->json = o;
	r->index = index;
	c->workers = 1;
	snprintf(c->where, sizeof(c->where), "run %zu", index + 1);
	if (!o || json_type_of(o) != JSON_OBJ) {
		snprintf(c->err, c->errlen, "%s is not an object", c->where);
		return -1;
	}
	/* every required field first, so that a file missing one says so */
	for (size_t i = 0; i < run_fields_run.n && !c->partial; i++)
		if (run_fields_run.f[i].need <= RUN_NEED_NUL && !json_get(o, run_fields_run.f[i].key))
			return missing(c, run_fields_run.f[i].key);
	if (read_parts(c, o, r)) {
		run_release(r);
		memset(r, 0, sizeof(*r));
		return -1;
	}
	/* partial: what must be there and is not still reads as something to print */
	if (!r->workload)
		r->workload = "?";
	if (!r->policy)
		r->policy = "?";
	for (size_t i = 0; i < r->ntasks; i++)
		if (!r->tasks[i].label)
			r->tasks[i].label = "";
	return 0;
}

int run_read(const struct json *run, size_t index, struct run *r, char *err, size_t errlen)
{
	struct rctx c = { .err = err, .errlen = errlen, .workers = 1 };
	return read_run(&c, run, index, r);
}

int run_read_partial(const struct json *run, struct run *r, char *err, size_t errlen)
{
	struct rctx c = { .err = err, .errlen = errlen, .workers = 1, .partial = true };
	return read_run(&c, run, 0, r);
}

/* ---- a report ---------------------------------------------------------------- */

/* The report's own strings: workload, options and the machine it ran on. */
static int read_header(struct rctx *c, const struct json *report, struct report_view *v)
{
	snprintf(c->where, sizeof(c->where), "report");
	const struct json *m = json_get(report, "machine"), *x;
	static const struct run_field
		wl = { "workload", RUN_NEED_OPT, RUN_KIND_NAME, offsetof(struct report_view, workload) },
		cmd = { "command", RUN_NEED_OPT, RUN_KIND_TEXT, offsetof(struct report_view, command) },
		kern = { "kernel", RUN_NEED_OPT, RUN_KIND_TEXT, offsetof(struct report_view, kernel) },
		model = { "cpu_model", RUN_NEED_OPT, RUN_KIND_TEXT, offsetof(struct report_view, cpu_model) },
		opts = { "options", RUN_NEED_OPT, RUN_KIND_NAMES, offsetof(struct report_view, options) };
	v->cpus = v->loadavg_1min = NAN;
	if (read_field(c, report, &wl, v) || read_field(c, report, &cmd, v) ||
	    read_field(c, m, &kern, v) || read_field(c, m, &model, v) ||
	    ((x = json_get(m, "cpus")) && read_range(c, x, "cpus", true, true, 0, TH_REC_MAX_CPUS, &v->cpus)) ||
	    read_field(c, report, &opts, v))
		return -1;
	x = json_get(m, "loadavg_1min");
	v->loadavg_1min = json_is_num(x) ? json_num_of(x) : NAN;
	x = json_get(report, "interrupted");
	v->interrupted = x && json_bool_of(x);
	return 0;
}

/* timeline_seed: a seed, "all" or "median"; timeline_color: "worker" or "cpu". */
static int read_timeline_choice(const struct json *report, struct report_view *v, char *err,
				size_t errlen)
{
	const struct json *ts = json_get(report, "timeline_seed");
	v->timeline_mode = REPORT_PICK_MEDIAN;
	if (json_type_of(ts) == JSON_STR && strcmp(json_str_of(ts), "all") == 0)
		v->timeline_mode = REPORT_PICK_ALL;
	else if (json_is_num(ts) && json_as_u64(ts, &v->timeline_seed))
		v->timeline_mode = REPORT_PICK_SEED;
	else if (ts && !json_is_null(ts) &&
		 !(json_type_of(ts) == JSON_STR && strcmp(json_str_of(ts), "median") == 0)) {
		snprintf(err, errlen, "'timeline_seed' must be a seed, \"all\" or \"median\"");
		return -1;
	}
	const struct json *tc = json_get(report, "timeline_color");
	const char *s = json_type_of(tc) == JSON_STR ? json_str_of(tc) : NULL;
	if (tc && !json_is_null(tc) && !(s && (strcmp(s, "worker") == 0 || strcmp(s, "cpu") == 0))) {
		snprintf(err, errlen, "'timeline_color' must be \"worker\" or \"cpu\"");
		return -1;
	}
	v->colour_by_cpu = s && strcmp(s, "cpu") == 0;
	return 0;
}

/* Distinct policies over the runs: each is a table row, a figure series and a trace process. */
static int check_policy_count(struct rctx *c, const struct report_view *v)
{
	const char *seen[MAX_POLICIES];
	int n = 0;
	for (size_t i = 0; i < v->nruns; i++) {
		const char *p = v->runs[i].policy;
		int k = 0;
		while (k < n && strcmp(seen[k], p) != 0)
			k++;
		if (k < n)
			continue;
		if (n == MAX_POLICIES) {
			snprintf(c->err, c->errlen, "run %zu: more than %d policies in one report", i + 1,
				 MAX_POLICIES);
			return -1;
		}
		seen[n++] = p;
	}
	return 0;
}

static int read_report(struct rctx *c, const struct json *report, struct report_view *v)
{
	if (!report || json_type_of(report) != JSON_OBJ || (!json_get(report, "taskhop_report") && !c->partial)) {
		snprintf(c->err, c->errlen, "not a taskhop report (no 'taskhop_report' member)");
		return -1;
	}
	const struct json *runs = json_get(report, "runs");
	if (!runs || json_type_of(runs) != JSON_ARR) {
		snprintf(c->err, c->errlen, "the report has no 'runs' array");
		return -1;
	}
	if (read_header(c, report, v) || read_timeline_choice(report, v, c->err, c->errlen))
		return -1;
	v->runs = calloc(json_len(runs) ? json_len(runs) : 1, sizeof(*v->runs));
	if (!v->runs) {
		snprintf(c->err, c->errlen, "out of memory");
		return -1;
	}
	for (size_t i = 0; i < json_len(runs); i++, v->nruns++)
		if (read_run(c, json_at(runs, i), i, &v->runs[i]))
			return -1;
	return check_policy_count(c, v);
}

static int view_read(struct rctx *c, const struct json *report, struct report_view *v)
{
	memset(v, 0, sizeof(*v));
	v->json = report;
	if (read_report(c, report, v)) {
		report_view_free(v);
		return -1;
	}
	return 0;
}

int report_view_read(const struct json *report, struct report_view *v, char *err, size_t errlen)
{
	struct rctx c = { .err = err, .errlen = errlen, .workers = 1 };
	return view_read(&c, report, v);
}

int report_view_read_partial(const struct json *report, struct report_view *v, char *err,
			     size_t errlen)
{
	struct rctx c = { .err = err, .errlen = errlen, .workers = 1, .partial = true };
	return view_read(&c, report, v);
}

void report_view_free(struct report_view *v)
{
	for (size_t i = 0; v->runs && i < v->nruns; i++)
		run_release(&v->runs[i]);
	free(v->runs);
	free((void *)v->options.v);
	memset(v, 0, sizeof(*v));
}

int report_validate(const struct json *report, char *err, size_t errlen)
{
	struct report_view v;
	if (report_view_read(report, &v, err, errlen))
		return -1;
	report_view_free(&v);
	return 0;
}
