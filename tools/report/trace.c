/* trace.c — trace.json in Chrome trace-event format (opens in Perfetto / chrome://tracing).
 * One process per drawn run (trace_pick.c chooses them), with named tracks only:
 *   CPU c        the kernel's on-CPU intervals of the run's threads (sched_switch)
 *   thread T     each runtime thread's state: running, runnable (woken, waiting for a
 *                CPU), preempted (switched out still runnable), blocked (off CPU, not
 *                runnable: a system call, a page fault, the runtime's idle wait)
 *   worker w     the task runs the worker did (run log or USDT)
 *   task N       the runs of one task, with worker hops and CPU migrations marked
 * A track is a flat sequence: slices on it never overlap (what Perfetto needs); one that
 * would (an estimated interval start, a clock step) is clipped, and counted in the
 * process's "clipped_slices" arg. Times are whole nanoseconds, written in microseconds. */
#include "report/report.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Track ids inside a run's process, in the order Perfetto lists them (it sorts threads by
 * tid): CPUs, other threads' migrations, workers, threads, tasks. Doubles: task ids are
 * validated below 2^53, where an int would wrap. */
#define TID_CPU 1.0
#define TID_MIGRATIONS 1500.0
#define TID_WORKER 2000.0
#define TID_THREAD 10000.0
#define TID_TASK 1e9

/* A slice waiting for its track to be sorted and clipped. */
struct pending {
	double tid;
	int64_t s, e; /* ns from the run's t0 */
	char name[96];
	struct json *args;
};

struct run_ctx {
	struct json *ev;
	int pid;
	struct pending *p;
	size_t n, cap;
	struct json *names; /* "tid" text -> track name, emitted as thread_name at the end */
	size_t clipped;
	bool oom;
};

static int64_t ns_of(double s)
{
	return (int64_t)llround(s * 1e9);
}

static void name_track(struct run_ctx *c, double tid, const char *name)
{
	char key[32];
	snprintf(key, sizeof(key), "%.0f", tid);
	if (!json_get(c->names, key))
		json_set_str(c->names, key, name);
}

/* Queues a slice on a named track; takes args. */
static void add_slice(struct run_ctx *c, double tid, int64_t s, int64_t e, const char *name,
		      struct json *args)
{
	if (c->n == c->cap) {
		size_t cap = c->cap ? 2 * c->cap : 1024;
		struct pending *p = realloc(c->p, cap * sizeof(*p));
		if (!p) {
			c->oom = true;
			json_free(args);
			return;
		}
		c->p = p;
		c->cap = cap;
	}
	struct pending *q = &c->p[c->n++];
	*q = (struct pending){ .tid = tid, .s = s, .e = e > s ? e : s, .args = args };
	snprintf(q->name, sizeof(q->name), "%s", name);
}

static void add_instant(struct run_ctx *c, double tid, int64_t t, const char *name)
{
	struct json *e = json_obj();
	json_set_str(e, "name", name);
	json_set_str(e, "ph", "i");
	json_set_str(e, "s", "t");
	json_set_num(e, "pid", c->pid);
	json_set_num(e, "tid", tid);
	json_set_num(e, "ts", (double)t / 1e3);
	json_push(c->ev, e);
}

static int by_track_then_start(const void *a, const void *b)
{
	const struct pending *x = a, *y = b;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	if (x->s != y->s)
		return x->s < y->s ? -1 : 1;
	/* the shorter first: a zero-length slice stays, touching the one after it */
	return x->e < y->e ? -1 : x->e > y->e;
}

/* Sorts the slices per track, clips what overlaps the previous slice, writes them. */
static void flush_slices(struct run_ctx *c)
{
	if (c->n > 1)
		qsort(c->p, c->n, sizeof(*c->p), by_track_then_start);
	int64_t prev_end = 0;
	for (size_t i = 0; i < c->n; i++) {
		struct pending *q = &c->p[i];
		bool first = i == 0 || c->p[i - 1].tid != q->tid;
		if (!first && q->s < prev_end) {
			c->clipped++;
			if (q->e <= prev_end) {
				json_free(q->args);
				continue;
			}
			q->s = prev_end;
		}
		prev_end = q->e;
		struct json *e = json_obj();
		json_set_str(e, "name", q->name);
		json_set_str(e, "ph", "X");
		json_set_num(e, "pid", c->pid);
		json_set_num(e, "tid", q->tid);
		json_set_num(e, "ts", (double)q->s / 1e3);
		json_set_num(e, "dur", (double)(q->e - q->s) / 1e3);
		json_set(e, "args", q->args);
		json_push(c->ev, e);
	}
	c->n = 0;
}

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

static void flush_names(struct run_ctx *c)
{
	for (size_t i = 0; i < json_len(c->names); i++)
		json_push(c->ev, meta("thread_name", c->pid, strtod(json_key_at(c->names, i), NULL),
				      json_str_of(json_at(c->names, i))));
}

/* ---- kernel side: CPU tracks and thread states ----------------------------------- */

/* oncpu rows: [tid, worker, cpu, start_s, end_s, runq_wait_s, end, task] (rec_json.h) */
enum { OC_TID, OC_WORKER, OC_CPU, OC_START, OC_END, OC_WAIT, OC_ENDED, OC_TASK, OC_COLS };

static double col(const struct json *row, int k)
{
	return json_num_of(json_at(row, (size_t)k));
}

static const char *ended_word(int end)
{
	return end == 1 ? "preempted" : end == 2 ? "recording stopped" : "blocked";
}

struct row_ref {
	double key1, key2;
	size_t i;
};

static int by_keys(const void *a, const void *b)
{
	const struct row_ref *x = a, *y = b;
	if (x->key1 != y->key1)
		return x->key1 < y->key1 ? -1 : 1;
	if (x->key2 != y->key2)
		return x->key2 < y->key2 ? -1 : 1;
	return x->i < y->i ? -1 : x->i > y->i;
}

/* Row indices sorted by (column k1, column k2); NULL on out of memory. */
static struct row_ref *sorted_rows(const struct json *rows, int k1, int k2)
{
	size_t n = json_len(rows);
	struct row_ref *r = malloc((n ? n : 1) * sizeof(*r));
	if (!r)
		return NULL;
	for (size_t i = 0; i < n; i++)
		r[i] = (struct row_ref){ col(json_at(rows, i), k1), col(json_at(rows, i), k2), i };
	if (n > 1)
		qsort(r, n, sizeof(*r), by_keys);
	return r;
}

static struct json *interval_args(const struct json *row, size_t number)
{
	struct json *a = json_obj();
	json_set_num(a, "tid", col(row, OC_TID));
	json_set_num(a, "worker", col(row, OC_WORKER));
	json_set_num(a, "cpu", col(row, OC_CPU));
	json_set_num(a, "interval", (double)number);
	json_set_num(a, "task", col(row, OC_TASK)); /* current at switch-out, 0 none */
	json_set_str(a, "ended", ended_word((int)col(row, OC_ENDED)));
	json_set_num(a, "runq_wait_before_us", col(row, OC_WAIT) * 1e6);
	return a;
}

static void thread_track_name(char *buf, size_t len, const struct json *row)
{
	int w = (int)col(row, OC_WORKER);
	if (w >= 0)
		snprintf(buf, len, "worker %d thread (tid %.0f)", w, col(row, OC_TID));
	else
		snprintf(buf, len, "thread %.0f (not a worker's)", col(row, OC_TID));
}

/* A thread state's args: the thread, and the on-CPU interval the state led to. */
static struct json *state_args(const struct json *row, size_t number, bool wait)
{
	struct json *a = json_obj();
	json_set_num(a, "tid", col(row, OC_TID));
	json_set_num(a, "worker", col(row, OC_WORKER));
	json_set_num(a, "before_interval", (double)number);
	if (wait)
		json_set_num(a, "runq_wait_us", col(row, OC_WAIT) * 1e6);
	return a;
}

/* The off-CPU stretch before interval `number` (row) of a thread whose previous interval
 * is prev (NULL: its first one): preempted, or blocked then runnable (run-queue wait). */
static void off_cpu_states(struct run_ctx *c, double tid, const struct json *prev,
			   const struct json *row, size_t number)
{
	int64_t s = ns_of(col(row, OC_START)), w = ns_of(col(row, OC_WAIT));
	if (prev && (int)col(prev, OC_ENDED) == 1) {
		add_slice(c, tid, ns_of(col(prev, OC_END)), s, "preempted", state_args(row, number, true));
		return;
	}
	if (prev && s - w > ns_of(col(prev, OC_END)))
		add_slice(c, tid, ns_of(col(prev, OC_END)), s - w, "blocked", state_args(row, number, false));
	if (w > 0)
		add_slice(c, tid, s - w, s, "runnable", state_args(row, number, true));
}

/* CPU tracks and one state track per thread, from the timeline's "oncpu" rows. */
static void add_kernel_tracks(struct run_ctx *c, const struct json *oncpu)
{
	struct row_ref *r = sorted_rows(oncpu, OC_TID, OC_START);
	if (!r) {
		c->oom = true;
		return;
	}
	char name[96];
	double track = TID_THREAD - 1;
	size_t number = 0;
	for (size_t k = 0; k < json_len(oncpu); k++) {
		const struct json *row = json_at(oncpu, r[k].i);
		const struct json *prev = k && r[k - 1].key1 == r[k].key1 ? json_at(oncpu, r[k - 1].i) : NULL;
		if (!prev) {
			track++;
			number = 0;
			thread_track_name(name, sizeof(name), row);
			name_track(c, track, name);
		}
		int64_t s = ns_of(col(row, OC_START)), e = ns_of(col(row, OC_END));
		off_cpu_states(c, track, prev, row, ++number);
		add_slice(c, track, s, e, "running", interval_args(row, number));
		int w = (int)col(row, OC_WORKER), cpu = (int)col(row, OC_CPU);
		snprintf(name, sizeof(name), "CPU %d", cpu);
		name_track(c, TID_CPU + cpu, name);
		if (w >= 0)
			snprintf(name, sizeof(name), "worker %d (tid %.0f)", w, col(row, OC_TID));
		else
			snprintf(name, sizeof(name), "thread %.0f", col(row, OC_TID));
		add_slice(c, TID_CPU + cpu, s, e, name, interval_args(row, number));
	}
	free(r);
}

/* ---- runtime side: task runs per worker and per task ------------------------------ */

/* runs rows: [task_id, worker, cpu, start_s, end_s] */
enum { RU_TASK, RU_WORKER, RU_CPU, RU_START, RU_END };

/* Kernel run-queue wait charged to each run, as the recorder charges a task's
 * runq_wait_ns: an on-CPU interval's wait goes to the first run of its worker that ends
 * at or after the interval's start, if that run started before the interval ended.
 * The worker's thread is workers[w].tid (a spare taking a worker over is not followed).
 * NULL: no kernel intervals (or out of memory); else one value per run, in seconds. */
static double *runq_wait_per_run(const struct json *run, const struct json *runs,
				 const struct json *oncpu, const struct row_ref *by_worker)
{
	size_t n = json_len(runs);
	if (!json_len(oncpu))
		return NULL;
	double *wait = calloc(n ? n : 1, sizeof(*wait));
	struct row_ref *iv = sorted_rows(oncpu, OC_TID, OC_START);
	if (!wait || !iv) {
		free(wait);
		free(iv);
		return NULL;
	}
	const struct json *workers = json_get(run, "workers");
	for (size_t lo = 0, hi; lo < n; lo = hi) {
		double w = col(json_at(runs, by_worker[lo].i), RU_WORKER);
		for (hi = lo; hi < n && col(json_at(runs, by_worker[hi].i), RU_WORKER) == w; hi++)
			;
		double tid = w >= 0 ? json_get_num(json_at(workers, (size_t)w), "tid", -1) : -1;
		size_t k = lo;
		for (size_t j = 0; j < json_len(oncpu); j++) {
			const struct json *row = json_at(oncpu, iv[j].i);
			if (iv[j].key1 != tid || col(row, OC_WAIT) <= 0)
				continue;
			while (k < hi && col(json_at(runs, by_worker[k].i), RU_END) < col(row, OC_START))
				k++;
			if (k < hi && col(json_at(runs, by_worker[k].i), RU_START) <= col(row, OC_END))
				wait[by_worker[k].i] += col(row, OC_WAIT);
		}
	}
	free(iv);
	return wait;
}

static struct json *run_args(const struct json *row, size_t number, const char *ended,
			     const double *wait, size_t i)
{
	struct json *a = json_obj();
	json_set_num(a, "task", col(row, RU_TASK));
	json_set_num(a, "run", (double)number);
	json_set_num(a, "worker", col(row, RU_WORKER));
	json_set_num(a, "cpu", col(row, RU_CPU));
	json_set_str(a, "ended", ended);
	if (wait)
		json_set_num(a, "runq_wait_before_us", wait[i] * 1e6);
	else
		json_set_null(a, "runq_wait_before_us"); /* recorded without BPF */
	return a;
}

/* Hop and CPU-migration markers between a task's consecutive runs prev -> row. */
static void mark_moves(struct run_ctx *c, double tid, const struct json *prev, const struct json *row)
{
	char name[96];
	int pw = (int)col(prev, RU_WORKER), w = (int)col(row, RU_WORKER);
	int pc = (int)col(prev, RU_CPU), cpu = (int)col(row, RU_CPU);
	int64_t t = ns_of(col(row, RU_START));
	if (pw != w) {
		snprintf(name, sizeof(name), "hop: worker %d -> %d", pw, w);
		add_instant(c, tid, t, name);
	}
	if (pc >= 0 && cpu >= 0 && pc != cpu) {
		snprintf(name, sizeof(name), "CPU migration %d -> %d", pc, cpu);
		add_instant(c, tid, t, name);
	}
}

static void add_task_runs(struct run_ctx *c, const struct json *run, const struct json *tl)
{
	const struct json *runs = json_get(tl, "runs"), *ends = json_get(tl, "run_ends");
	struct row_ref *by_task = sorted_rows(runs, RU_TASK, RU_START);
	struct row_ref *by_worker = sorted_rows(runs, RU_WORKER, RU_START);
	double *wait = by_worker ? runq_wait_per_run(run, runs, json_get(tl, "oncpu"), by_worker) : NULL;
	if (!by_task || !by_worker) {
		c->oom = true;
		goto out;
	}
	char name[96], label[96];
	size_t number = 0;
	for (size_t k = 0; k < json_len(runs); k++) {
		size_t i = by_task[k].i;
		const struct json *row = json_at(runs, i);
		const struct json *prev = k && by_task[k - 1].key1 == by_task[k].key1 ? json_at(runs, by_task[k - 1].i) : NULL;
		double id = col(row, RU_TASK), track = TID_TASK + id;
		int w = (int)col(row, RU_WORKER), cpu = (int)col(row, RU_CPU);
		const char *ended = json_len(ends) == json_len(runs) ? json_str_of(json_at(ends, i)) : "unknown";
		int64_t s = ns_of(col(row, RU_START)), e = ns_of(col(row, RU_END));
		number = prev ? number + 1 : 1;
		snprintf(label, sizeof(label), "task %.0f", id);
		name_track(c, track, label);
		if (cpu >= 0)
			snprintf(name, sizeof(name), "worker %d, CPU %d", w, cpu);
		else
			snprintf(name, sizeof(name), "worker %d", w);
		add_slice(c, track, s, e, name, run_args(row, number, ended, wait, i));
		if (w >= 0) { /* worker -1: a kthread-policy task on its own thread, no worker's */
			snprintf(name, sizeof(name), "worker %d: task runs", w);
			name_track(c, TID_WORKER + w, name);
			add_slice(c, TID_WORKER + w, s, e, label, run_args(row, number, ended, wait, i));
		}
		if (prev)
			mark_moves(c, track, prev, row);
	}
out:
	free(by_task);
	free(by_worker);
	free(wait);
}

/* migrations rows: [ts_s, worker, task_id, from, to] (the kernel moved a thread) */
static void add_migrations(struct run_ctx *c, const struct json *migs)
{
	char name[128];
	for (size_t i = 0; i < json_len(migs); i++) {
		const struct json *m = json_at(migs, i);
		int w = (int)col(m, 1);
		double track = w >= 0 ? TID_WORKER + w : TID_MIGRATIONS;
		if (w >= 0) {
			snprintf(name, sizeof(name), "worker %d: task runs", w);
			name_track(c, track, name);
		} else {
			name_track(c, track, "kernel migrations of other threads");
		}
		snprintf(name, sizeof(name), "kernel moved worker %d: CPU %.0f -> %.0f (task %.0f)", w,
			 col(m, 3), col(m, 4), col(m, 2));
		add_instant(c, track, ns_of(col(m, 0)), name);
	}
}

/* ---- runs -------------------------------------------------------------------------- */

/* One run as one trace process, named after its workload, policy, seed and why it was
 * drawn; its args say where the CPU tracks come from and what was clipped. */
static size_t add_run(struct json *ev, const struct json *run, int pid, const char *why)
{
	char name[320], seed[32];
	const struct json *tl = json_get(run, "timeline");
	struct run_ctx c = { .ev = ev, .pid = pid, .names = json_obj() };
	snprintf(name, sizeof(name), "%s: %s, seed %s (%s)", json_get_str(run, "workload", "?"),
		 json_get_str(run, "policy", "?"), json_num_text(json_get(run, "seed"), seed, sizeof(seed)),
		 why);
	json_push(ev, meta("process_name", pid, -1, name));
	add_kernel_tracks(&c, json_get(tl, "oncpu"));
	add_task_runs(&c, run, tl);
	add_migrations(&c, json_get(tl, "migrations"));
	flush_slices(&c);
	flush_names(&c);
	struct json *e = json_obj(), *a = json_obj();
	json_set_str(e, "name", "process_labels");
	json_set_str(e, "ph", "M");
	json_set_num(e, "pid", pid);
	snprintf(name, sizeof(name), "CPU tracks: %s; clipped slices: %zu%s",
		 json_len(json_get(tl, "oncpu")) ? "the kernel's on-CPU intervals" : "none (no BPF recording)",
		 c.clipped, c.oom ? "; out of memory: incomplete" : "");
	json_set_str(a, "labels", name);
	json_set(e, "args", a);
	json_push(ev, e);
	free(c.p);
	json_free(c.names);
	return c.clipped;
}

/* Draws run as process pid and returns its entry in the trace's "runs_drawn": {pid,
 * policy, seed, repeat, why, clipped_slices}. */
static struct json *draw(struct json *ev, int pid, const struct json *run, const char *why)
{
	struct json *d = json_obj();
	json_set_num(d, "pid", pid);
	json_set_str(d, "policy", json_get_str(run, "policy", "?"));
	json_set(d, "seed", json_clone(json_get(run, "seed")));
	json_set_num(d, "repeat", json_get_num(run, "repeat", 1));
	json_set_str(d, "why", why);
	json_set_num(d, "clipped_slices", (double)add_run(ev, run, pid, why));
	return d;
}

struct json *report_trace(const struct json *report)
{
	struct json *root = json_obj(), *ev = json_arr(), *list = json_arr();
	report_stamp(root, REPORT_SCHEMA_TRACE);
	const struct json *runs = json_get(report, "runs"), *pols = json_get(report, "policies");
	unsigned long long seed = 0;
	int mode = report_timeline_mode(report, &seed), pid = 1;
	char why[128];
	for (size_t p = 0; p < json_len(pols); p++) {
		const char *pol = json_key_at(pols, p);
		for (size_t r = 0; mode == REPORT_PICK_ALL && r < json_len(runs); r++) {
			const struct json *run = json_at(runs, r);
			if (strcmp(json_get_str(run, "policy", ""), pol) != 0)
				continue;
			snprintf(why, sizeof(why), "repeat %.0f, every run drawn (--timeline-seed all)",
				 json_get_num(run, "repeat", 1));
			json_push(list, draw(ev, pid++, run, why));
		}
		const struct json *run = mode == REPORT_PICK_ALL ? NULL : report_timeline_run(report, pol, why, sizeof(why));
		if (run)
			json_push(list, draw(ev, pid++, run, why));
	}
	if (mode == REPORT_PICK_SEED)
		json_set_u64(root, "timeline_seed", seed);
	else
		json_set_str(root, "timeline_seed", mode == REPORT_PICK_ALL ? "all" : "median");
	json_set(root, "runs_drawn", list);
	json_set(root, "traceEvents", ev);
	json_set_str(root, "displayTimeUnit", "ms");
	return root;
}
