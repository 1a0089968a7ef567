/* trace.c — trace.json in Chrome trace-event format (opens in Perfetto / chrome://tracing):
 * per run, one track per CPU (kernel data), per worker and per task, with migration markers. */
#include "report/report.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Track ids inside a run's process: CPUs, then workers, then tasks, so Perfetto lists them
 * top-down in that order (it sorts threads by tid when no sort index is given). Track ids
 * are doubles: task ids are validated below 2^53, where an int would wrap. */
#define TID_CPU 1000
#define TID_WORKER 2000
#define TID_TASK 3000

static struct json *meta(const char *what, int pid, double tid, const char *name)
{
	struct json *e = json_obj(), *args = json_obj();
	json_set_str(e, "name", what);
	json_set_str(e, "ph", "M");
	json_set_num(e, "pid", pid);
	if (tid >= 0)
		json_set_num(e, "tid", tid);
	json_set_str(args, "name", name);
	json_set(e, "args", args);
	return e;
}

static struct json *slice(const char *name, int pid, double tid, double ts_us, double dur_us)
{
	struct json *e = json_obj();
	json_set_str(e, "name", name);
	json_set_str(e, "ph", "X");
	json_set_num(e, "pid", pid);
	json_set_num(e, "tid", tid);
	json_set_num(e, "ts", ts_us);
	json_set_num(e, "dur", dur_us > 0 ? dur_us : 0.001);
	return e;
}

static struct json *instant(const char *name, int pid, double tid, double ts_us)
{
	struct json *e = json_obj();
	json_set_str(e, "name", name);
	json_set_str(e, "ph", "i");
	json_set_str(e, "s", "t");
	json_set_num(e, "pid", pid);
	json_set_num(e, "tid", tid);
	json_set_num(e, "ts", ts_us);
	return e;
}

/* Rows sorted by (task id, position): each row's previous run of the same task is its
 * neighbour, found in O(n log n) instead of a scan back per row. */
struct row_ref {
	double id;
	size_t i;
};

static int by_id_then_index(const void *a, const void *b)
{
	const struct row_ref *x = a, *y = b;
	if (x->id != y->id)
		return x->id < y->id ? -1 : 1;
	return x->i < y->i ? -1 : x->i > y->i;
}

/* prev[i]: index of the previous row of the same task, or SIZE_MAX. NULL on out of memory. */
static size_t *previous_runs(const struct json *rows)
{
	size_t n = json_len(rows);
	struct row_ref *ref = malloc((n ? n : 1) * sizeof(*ref));
	size_t *prev = malloc((n ? n : 1) * sizeof(*prev));
	if (!ref || !prev) {
		free(ref);
		free(prev);
		return NULL;
	}
	for (size_t i = 0; i < n; i++)
		ref[i] = (struct row_ref){ json_num_of(json_at(json_at(rows, i), 0)), i };
	qsort(ref, n, sizeof(*ref), by_id_then_index);
	for (size_t k = 0; k < n; k++)
		prev[ref[k].i] = k > 0 && ref[k - 1].id == ref[k].id ? ref[k - 1].i : SIZE_MAX;
	free(ref);
	return prev;
}

/* Task labels by id: tasks sorted by id, looked up by bisection. */
static const char *task_label(const struct json *tasks, const struct row_ref *sorted, double id)
{
	size_t lo = 0, hi = json_len(tasks);
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (sorted[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < json_len(tasks) && sorted[lo].id == id)
		return json_get_str(json_at(tasks, sorted[lo].i), "label", "");
	return "";
}

/* One run as one trace process. The timeline's rows are
 * runs: [task_id, worker, cpu (-1 unknown), start_s, end_s] in start order per worker,
 * migrations: [ts_s, worker, task_id, orig_cpu, dest_cpu] (kernel moved the worker). */
static void add_run(struct json *ev, const struct json *run, int pid)
{
	char name[160];
	char seed[32];
	snprintf(name, sizeof(name), "%s: %s, seed %s", json_get_str(run, "workload", "?"),
		 json_get_str(run, "policy", "?"), json_num_text(json_get(run, "seed"), seed, sizeof(seed)));
	json_push(ev, meta("process_name", pid, -1, name));
	const struct json *tl = json_get(run, "timeline");
	const struct json *rows = json_get(tl, "runs");
	int maxcpu = -1, maxw = -1;
	for (size_t i = 0; i < json_len(rows); i++) {
		const struct json *r = json_at(rows, i);
		int w = (int)json_num_of(json_at(r, 1)), c = (int)json_num_of(json_at(r, 2));
		maxw = w > maxw ? w : maxw;
		maxcpu = c > maxcpu ? c : maxcpu;
	}
	for (int c = 0; c <= maxcpu; c++) {
		snprintf(name, sizeof(name), "CPU %d", c);
		json_push(ev, meta("thread_name", pid, TID_CPU + c, name));
	}
	for (int w = 0; w <= maxw; w++) {
		snprintf(name, sizeof(name), "worker %d", w);
		json_push(ev, meta("thread_name", pid, TID_WORKER + w, name));
	}
	const struct json *tasks = json_get(run, "tasks");
	size_t nt = json_len(tasks);
	struct row_ref *sorted = malloc((nt ? nt : 1) * sizeof(*sorted));
	size_t *prev = previous_runs(rows);
	if (!sorted || !prev) {
		free(sorted);
		free(prev);
		return;
	}
	for (size_t i = 0; i < nt; i++) {
		const struct json *t = json_at(tasks, i);
		double id = json_get_num(t, "id", 0);
		sorted[i] = (struct row_ref){ id, i };
		snprintf(name, sizeof(name), "task %.0f %s", id, json_get_str(t, "label", ""));
		json_push(ev, meta("thread_name", pid, TID_TASK + id, name));
	}
	qsort(sorted, nt, sizeof(*sorted), by_id_then_index);
	/* Per task: previous run's worker and CPU, to mark hops and migrations. */
	for (size_t i = 0; i < json_len(rows); i++) {
		const struct json *r = json_at(rows, i);
		double id = json_num_of(json_at(r, 0));
		int w = (int)json_num_of(json_at(r, 1)), c = (int)json_num_of(json_at(r, 2));
		double ts = json_num_of(json_at(r, 3)) * 1e6, dur = (json_num_of(json_at(r, 4)) - json_num_of(json_at(r, 3))) * 1e6;
		snprintf(name, sizeof(name), "task %.0f %s", id, task_label(tasks, sorted, id));
		json_push(ev, slice(name, pid, TID_WORKER + w, ts, dur));
		if (c >= 0)
			json_push(ev, slice(name, pid, TID_CPU + c, ts, dur));
		if (c >= 0)
			snprintf(name, sizeof(name), "worker %d, CPU %d", w, c);
		else
			snprintf(name, sizeof(name), "worker %d", w);
		json_push(ev, slice(name, pid, TID_TASK + id, ts, dur));
		if (prev[i] == SIZE_MAX)
			continue;
		const struct json *p = json_at(rows, prev[i]);
		int pw = (int)json_num_of(json_at(p, 1)), pc = (int)json_num_of(json_at(p, 2));
		if (pw != w) {
			snprintf(name, sizeof(name), "hop: worker %d -> %d", pw, w);
			json_push(ev, instant(name, pid, TID_TASK + id, ts));
		}
		if (pc >= 0 && c >= 0 && pc != c) {
			snprintf(name, sizeof(name), "CPU migration %d -> %d", pc, c);
			json_push(ev, instant(name, pid, TID_TASK + id, ts));
		}
	}
	free(sorted);
	free(prev);
	const struct json *migs = json_get(tl, "migrations");
	for (size_t i = 0; i < json_len(migs); i++) {
		const struct json *m = json_at(migs, i);
		int w = (int)json_num_of(json_at(m, 1));
		snprintf(name, sizeof(name), "kernel moved worker %d: CPU %.0f -> %.0f (task %.0f)", w,
			 json_num_of(json_at(m, 3)), json_num_of(json_at(m, 4)), json_num_of(json_at(m, 2)));
		json_push(ev, instant(name, pid, w >= 0 ? TID_WORKER + w : TID_TASK + json_num_of(json_at(m, 2)),
				      json_num_of(json_at(m, 0)) * 1e6));
	}
}

static bool timeline_ok(const struct json *run)
{
	const struct json *rows = json_get(json_get(run, "timeline"), "runs");
	for (size_t i = 0; i < json_len(rows); i++) {
		const struct json *r = json_at(rows, i);
		if (json_len(r) < 5)
			return false;
		for (size_t k = 0; k < 5; k++)
			if (!json_is_num(json_at(r, k)))
				return false;
	}
	const struct json *migs = json_get(json_get(run, "timeline"), "migrations");
	for (size_t i = 0; i < json_len(migs); i++)
		for (size_t k = 0; k < 5; k++)
			if (!json_is_num(json_at(json_at(migs, i), k)))
				return false;
	return true;
}

struct json *report_trace(const struct json *report)
{
	struct json *root = json_obj(), *ev = json_arr();
	report_stamp(root, REPORT_SCHEMA_TRACE);
	const struct json *runs = json_get(report, "runs"), *pols = json_get(report, "policies");
	int pid = 1;
	for (size_t p = 0; p < json_len(pols); p++) {
		for (size_t r = 0; r < json_len(runs); r++) {
			const struct json *run = json_at(runs, r);
			if (strcmp(json_get_str(run, "policy", ""), json_key_at(pols, p)) != 0)
				continue;
			if (timeline_ok(run))
				add_run(ev, run, pid++);
			break;
		}
	}
	json_set(root, "traceEvents", ev);
	json_set_str(root, "displayTimeUnit", "ms");
	return root;
}
