/* run_write.c — the one writer of run JSON: a struct run (filled by `run`, `record` and
 * `compare`) becomes JSON field by field from the lists of run_schema.h, and the structs'
 * life cycle (empty runs, timeline rows, freeing). */
#include "report/run.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/report.h"
#include "report/run_fields.h"
#include "report/stats.h"

/* Every field of a table to its empty value: numbers NAN, flags null, pointers NULL. */
static void clear_fields(const struct run_fields *t, void *base)
{
	for (size_t i = 0; i < t->n; i++) {
		char *at = (char *)base + t->f[i].off;
		if (run_kind_is_number(t->f[i].kind))
			*(double *)at = NAN;
		else if (t->f[i].kind == RUN_KIND_BOOL)
			*(int *)at = -1;
	}
}

static void free_nums(const struct run_fields *t, void *base)
{
	for (size_t i = 0; i < t->n; i++) {
		enum run_kind k = t->f[i].kind;
		if (k == RUN_KIND_CPUS || k == RUN_KIND_HIST || k == RUN_KIND_MEANS)
			free((void *)((struct run_nums *)((char *)base + t->f[i].off))->v);
	}
}

void run_task_clear(struct run_task *t)
{
	free_nums(&run_fields_task, t);
	memset(t, 0, sizeof(*t));
	clear_fields(&run_fields_task, t);
}

void run_worker_clear(struct run_worker *w)
{
	memset(w, 0, sizeof(*w));
	clear_fields(&run_fields_worker, w);
}

static void run_clear(struct run *r)
{
	memset(r, 0, sizeof(*r));
	clear_fields(&run_fields_run, r);
	clear_fields(&run_fields_bpf, &r->bpf);
	r->timeline.dropped_runs = NAN;
}

struct run *run_new(size_t ntasks, size_t nworkers)
{
	struct run *r = malloc(sizeof(*r));
	if (!r)
		return NULL;
	run_clear(r);
	r->tasks = calloc(ntasks ? ntasks : 1, sizeof(*r->tasks));
	r->workers = calloc(nworkers ? nworkers : 1, sizeof(*r->workers));
	if (!r->tasks || !r->workers) {
		run_free(r);
		return NULL;
	}
	r->ntasks = ntasks;
	r->nworkers = nworkers;
	r->worker_count = (double)nworkers;
	for (size_t i = 0; i < ntasks; i++)
		run_task_clear(&r->tasks[i]);
	for (size_t i = 0; i < nworkers; i++)
		run_worker_clear(&r->workers[i]);
	return r;
}

double *run_nums_dup(const double *v, size_t n)
{
	double *x = malloc((n ? n : 1) * sizeof(*x));
	if (x && n)
		memcpy(x, v, n * sizeof(*x));
	return x;
}

void run_release(struct run *r)
{
	if (!r)
		return;
	for (size_t i = 0; r->tasks && i < r->ntasks; i++)
		free_nums(&run_fields_task, &r->tasks[i]);
	free(r->tasks);
	free(r->workers);
	free((void *)r->options.v);
	free(r->timeline.runs.v);
	free(r->timeline.migrations.v);
	free(r->timeline.oncpu.v);
	free((void *)r->timeline.run_ends.v);
	run_clear(r);
}

void run_free(struct run *r)
{
	run_release(r);
	free(r);
}

const char *run_seed_text(char *buf, size_t len, const struct run *r)
{
	if (r->seed.known)
		snprintf(buf, len, "%llu", r->seed.v);
	else
		snprintf(buf, len, "-");
	return buf;
}

/* ---- timeline rows ---------------------------------------------------------------- */

/* Room for one more row of size bytes (capacities double; n is the count). */
static void *grow(struct run_rows *rows, size_t size)
{
	size_t n = rows->n;
	if ((n & (n - 1)) == 0) { /* 0, 1, 2, 4, ...: full, double it */
		void *v = realloc(rows->v, (n ? 2 * n : 1) * size);
		if (!v)
			return NULL;
		rows->v = v;
	}
	return (char *)rows->v + n * size;
}

int run_push_tl_run(struct run *r, const struct run_tl_run *row, enum run_end end)
{
	struct run_timeline *t = &r->timeline;
	struct run_rows ends = { (void *)t->run_ends.v, t->run_ends.n };
	struct run_tl_run *slot = grow(&t->runs, sizeof(*row));
	unsigned char *e = slot ? grow(&ends, 1) : NULL;
	t->run_ends.v = ends.v;
	if (!e)
		return -1;
	*slot = *row;
	*e = (unsigned char)end;
	t->runs.n++;
	t->run_ends.n++;
	t->known = t->run_ends.known = true;
	return 0;
}

static int push_row(struct run_timeline *t, struct run_rows *rows, const void *row, size_t size)
{
	void *slot = grow(rows, size);
	if (!slot)
		return -1;
	memcpy(slot, row, size);
	rows->n++;
	t->known = true;
	return 0;
}

int run_push_tl_migration(struct run *r, const struct run_tl_migration *row)
{
	return push_row(&r->timeline, &r->timeline.migrations, row, sizeof(*row));
}

int run_push_tl_oncpu(struct run *r, const struct run_tl_oncpu *row)
{
	return push_row(&r->timeline, &r->timeline.oncpu, row, sizeof(*row));
}

/* ---- derived figures -------------------------------------------------------------- */

void run_derive(struct run *r)
{
	size_t n = r->ntasks;
	double *work = calloc(n ? n : 1, sizeof(*work));
	double sum = 0, span = 0;
	bool work_known = n > 0;
	for (size_t i = 0; i < n; i++) {
		double c = isnan(r->tasks[i].completion_s) ? 0 : r->tasks[i].completion_s;
		sum += c;
		span = c > span ? c : span;
		work[i] = isnan(r->tasks[i].work_s) ? -1 : r->tasks[i].work_s;
		if (work[i] < 0)
			work_known = false;
	}
	/* No tasks (a serial baseline): there is no completion time to report. */
	r->mean_completion_s = n ? sum / (double)n : NAN;
	r->makespan_s = n ? span : NAN;
	r->ideal_mean_completion_s = work_known && work
		? spt_mean_completion(work, (int)n, (int)r->worker_count, NULL) : NAN;
	free(work);
}

/* ---- JSON ------------------------------------------------------------------------- */

static struct json *nums_json(const struct run_nums *x)
{
	if (!x->known)
		return json_null();
	struct json *a = json_arr();
	for (size_t i = 0; i < x->n; i++)
		json_push(a, json_num(x->v[i]));
	return a;
}

static struct json *rows_json(const struct run_rows *rows, size_t ncol)
{
	struct json *a = json_arr();
	const double *x = rows->v;
	for (size_t i = 0; i < rows->n; i++) {
		struct json *row = json_arr();
		for (size_t k = 0; k < ncol; k++)
			json_push(row, json_num(x[i * ncol + k]));
		json_push(a, row);
	}
	return a;
}

static struct json *timeline_json(const struct run_timeline *t)
{
	if (!t->known)
		return json_null();
	struct json *o = json_obj();
	json_set(o, TH_TIMELINE_KEY(runs), rows_json(&t->runs, run_cols_run.n));
	if (t->run_ends.known) { /* one per run (a file read without them has none) */
		struct json *ends = json_arr();
		for (size_t i = 0; i < t->run_ends.n; i++)
			json_push(ends, json_str(run_end_words[t->run_ends.v[i] < RUN_END_COUNT
							       ? t->run_ends.v[i] : RUN_END_unknown]));
		json_set(o, TH_TIMELINE_KEY(run_ends), ends);
	}
	json_set(o, TH_TIMELINE_KEY(migrations), rows_json(&t->migrations, run_cols_migration.n));
	if (t->oncpu.n)
		json_set(o, TH_TIMELINE_KEY(oncpu), rows_json(&t->oncpu, run_cols_oncpu.n));
	if (!isnan(t->dropped_runs))
		json_set_num(o, TH_TIMELINE_KEY(dropped_runs), t->dropped_runs);
	return o;
}

static struct json *fields_json(const struct run_fields *t, const void *base);

static bool in_table(const struct run_fields *t, const char *key)
{
	for (size_t i = 0; i < t->n; i++)
		if (strcmp(t->f[i].key, key) == 0)
			return true;
	return false;
}

/* The members of src (a run or task as read) that the table does not list, as they are:
 * a workload's own figures, so that reading and writing again loses nothing. */
static void copy_unknown(struct json *o, const struct json *src, const struct run_fields *t)
{
	for (size_t i = 0; i < json_len(src) && json_type_of(src) == JSON_OBJ; i++) {
		const char *k = json_key_at(src, i);
		if (!in_table(t, k) && !json_get(o, k))
			json_set(o, k, json_clone(json_at(src, i)));
	}
}

static struct json *tasks_json(const struct run *r)
{
	struct json *a = json_arr();
	for (size_t i = 0; i < r->ntasks; i++) {
		const struct run_task *t = &r->tasks[i];
		struct json *o = fields_json(&run_fields_task, t);
		for (size_t k = 0; t->extra && k < json_len(t->extra); k++)
			json_set(o, json_key_at(t->extra, k), json_clone(json_at(t->extra, k)));
		copy_unknown(o, t->json, &run_fields_task);
		json_push(a, o);
	}
	return a;
}

/* One field's value, or NULL to leave it out (EXT and unknown). */
static struct json *field_json(const struct run_field *f, const void *base)
{
	const char *at = (const char *)base + f->off;
	const struct run *r = base;
	bool ext = f->need == RUN_NEED_EXT;
	if (run_kind_is_number(f->kind)) {
		double x = *(const double *)at;
		return isnan(x) ? (ext ? NULL : json_null()) : json_num(x);
	}
	switch (f->kind) {
	case RUN_KIND_NAME:
	case RUN_KIND_TEXT: {
		const char *s = *(const char *const *)at;
		return s ? json_str(s) : ext ? NULL : json_null();
	}
	case RUN_KIND_BOOL: {
		int b = *(const int *)at;
		return b >= 0 ? json_bool(b) : ext ? NULL : json_null();
	}
	case RUN_KIND_CPUS:
	case RUN_KIND_HIST:
	case RUN_KIND_MEANS: {
		const struct run_nums *x = (const struct run_nums *)at;
		return x->known || !ext ? nums_json(x) : NULL;
	}
	case RUN_KIND_NAMES: {
		const struct run_names *x = (const struct run_names *)at;
		struct json *a = json_arr();
		for (size_t i = 0; i < x->n; i++)
			json_push(a, json_str(x->v[i]));
		return a;
	}
	case RUN_KIND_SEED: {
		const struct run_seed *s = (const struct run_seed *)at;
		return s->known ? json_u64(s->v) : json_null();
	}
	case RUN_KIND_JSON: {
		const struct json *v = *(const struct json *const *)at;
		return v ? json_clone(v) : NULL;
	}
	case RUN_KIND_TASKS: return tasks_json(r);
	case RUN_KIND_WORKERS: {
		struct json *a = json_arr();
		for (size_t i = 0; i < r->nworkers; i++)
			json_push(a, fields_json(&run_fields_worker, &r->workers[i]));
		return a;
	}
	case RUN_KIND_BPF: return fields_json(&run_fields_bpf, at);
	case RUN_KIND_TIMELINE: return timeline_json((const struct run_timeline *)at);
	default: return NULL;
	}
}

static struct json *set_fields(struct json *o, const struct run_fields *t, const void *base)
{
	for (size_t i = 0; i < t->n; i++) {
		struct json *v = field_json(&t->f[i], base);
		if (v)
			json_set(o, t->f[i].key, v);
	}
	return o;
}

static struct json *fields_json(const struct run_fields *t, const void *base)
{
	return set_fields(json_obj(), t, base);
}

struct json *run_to_json(const struct run *r)
{
	struct json *o = json_obj();
	report_stamp(o, REPORT_SCHEMA_RUN);
	set_fields(o, &run_fields_run, r);
	copy_unknown(o, r->json, &run_fields_run);
	return o;
}
