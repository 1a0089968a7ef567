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

#include "report/run.h"

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

/* A column of a row struct (all doubles) by its member: COL(struct run_tl_oncpu, tid). */
#define COL(type, member) (offsetof(type, member) / sizeof(double))

/* Indices of n rows of ncol doubles sorted by (column k1, column k2); NULL on OOM. */
static struct row_ref *sorted_rows(const void *rows, size_t n, size_t ncol, size_t k1, size_t k2)
{
	const double *x = rows;
	struct row_ref *r = malloc((n ? n : 1) * sizeof(*r));
	if (!r)
		return NULL;
	for (size_t i = 0; i < n; i++)
		r[i] = (struct row_ref){ x[i * ncol + k1], x[i * ncol + k2], i };
	if (n > 1)
		qsort(r, n, sizeof(*r), by_keys);
	return r;
}

#define ONCPU_COLS (sizeof(struct run_tl_oncpu) / sizeof(double))
#define RUN_COLS (sizeof(struct run_tl_run) / sizeof(double))

static struct json *interval_args(const struct run_tl_oncpu *row, size_t number)
{
	struct json *a = json_obj();
	json_set_num(a, "tid", row->tid);
	json_set_num(a, "worker", row->worker);
	json_set_num(a, "cpu", row->cpu);
	json_set_num(a, "interval", (double)number);
	json_set_num(a, "task", row->task); /* current at switch-out, 0 none */
	json_set_str(a, "ended", ended_word((int)row->end));
	json_set_num(a, "runq_wait_before_us", row->runq_wait_s * 1e6);
	return a;
}

static void thread_track_name(char *buf, size_t len, const struct run_tl_oncpu *row)
{
	int w = (int)row->worker;
	if (w >= 0)
		snprintf(buf, len, "worker %d thread (tid %.0f)", w, row->tid);
	else
		snprintf(buf, len, "thread %.0f (not a worker's)", row->tid);
}

/* A thread state's args: the thread, and the on-CPU interval the state led to. */
static struct json *state_args(const struct run_tl_oncpu *row, size_t number, bool wait)
{
	struct json *a = json_obj();
	json_set_num(a, "tid", row->tid);
	json_set_num(a, "worker", row->worker);
	json_set_num(a, "before_interval", (double)number);
	if (wait)
		json_set_num(a, "runq_wait_us", row->runq_wait_s * 1e6);
	return a;
}

/* The off-CPU stretch before interval `number` (row) of a thread whose previous interval
 * is prev (NULL: its first one): preempted, or blocked then runnable (run-queue wait). */
static void off_cpu_states(struct run_ctx *c, double tid, const struct run_tl_oncpu *prev,
			   const struct run_tl_oncpu *row, size_t number)
{
	int64_t s = ns_of(row->start_s), w = ns_of(row->runq_wait_s);
	if (prev && (int)prev->end == 1) {
		add_slice(c, tid, ns_of(prev->end_s), s, "preempted", state_args(row, number, true));
		return;
	}
	if (prev && s - w > ns_of(prev->end_s))
		add_slice(c, tid, ns_of(prev->end_s), s - w, "blocked", state_args(row, number, false));
	if (w > 0)
		add_slice(c, tid, s - w, s, "runnable", state_args(row, number, true));
}

/* CPU tracks and one state track per thread, from the timeline's "oncpu" rows. */
static void add_kernel_tracks(struct run_ctx *c, const struct run *run)
{
	const struct run_tl_oncpu *oncpu = run_tl_oncpu(run);
	size_t n = run->timeline.oncpu.n;
	struct row_ref *r = sorted_rows(oncpu, n, ONCPU_COLS, COL(struct run_tl_oncpu, tid),
					COL(struct run_tl_oncpu, start_s));
	if (!r) {
		c->oom = true;
		return;
	}
	char name[96];
	double track = TID_THREAD - 1;
	size_t number = 0;
	for (size_t k = 0; k < n; k++) {
		const struct run_tl_oncpu *row = &oncpu[r[k].i];
		const struct run_tl_oncpu *prev = k && r[k - 1].key1 == r[k].key1 ? &oncpu[r[k - 1].i] : NULL;
		if (!prev) {
			track++;
			number = 0;
			thread_track_name(name, sizeof(name), row);
			name_track(c, track, name);
		}
		int64_t s = ns_of(row->start_s), e = ns_of(row->end_s);
		off_cpu_states(c, track, prev, row, ++number);
		add_slice(c, track, s, e, "running", interval_args(row, number));
		int w = (int)row->worker, cpu = (int)row->cpu;
		snprintf(name, sizeof(name), "CPU %d", cpu);
		name_track(c, TID_CPU + cpu, name);
		if (w >= 0)
			snprintf(name, sizeof(name), "worker %d (tid %.0f)", w, row->tid);
		else
			snprintf(name, sizeof(name), "thread %.0f", row->tid);
		add_slice(c, TID_CPU + cpu, s, e, name, interval_args(row, number));
	}
	free(r);
}

/* ---- runtime side: task runs per worker and per task ------------------------------ */

/* Kernel run-queue wait charged to each run, as the recorder charges a task's
 * runq_wait_ns: an on-CPU interval's wait goes to the first run of its worker that ends
 * at or after the interval's start, if that run started before the interval ended.
 * The worker's thread is workers[w].tid (a spare taking a worker over is not followed).
 * NULL: no kernel intervals (or out of memory); else one value per run, in seconds. */
static double *runq_wait_per_run(const struct run *run, const struct row_ref *by_worker)
{
	const struct run_tl_run *runs = run_tl_runs(run);
	const struct run_tl_oncpu *oncpu = run_tl_oncpu(run);
	size_t n = run->timeline.runs.n, no = run->timeline.oncpu.n;
	if (!no)
		return NULL;
	double *wait = calloc(n ? n : 1, sizeof(*wait));
	struct row_ref *iv = sorted_rows(oncpu, no, ONCPU_COLS, COL(struct run_tl_oncpu, tid),
					 COL(struct run_tl_oncpu, start_s));
	if (!wait || !iv) {
		free(wait);
		free(iv);
		return NULL;
	}
	for (size_t lo = 0, hi; lo < n; lo = hi) {
		double w = runs[by_worker[lo].i].worker;
		for (hi = lo; hi < n && runs[by_worker[hi].i].worker == w; hi++)
			;
		/* worker numbers are checked below worker_count, the length of workers[] */
		double tid = w >= 0 && (size_t)w < run->nworkers ? run->workers[(size_t)w].tid : -1;
		size_t k = lo;
		for (size_t j = 0; j < no; j++) {
			const struct run_tl_oncpu *row = &oncpu[iv[j].i];
			if (iv[j].key1 != tid || row->runq_wait_s <= 0)
				continue;
			while (k < hi && runs[by_worker[k].i].end_s < row->start_s)
				k++;
			if (k < hi && runs[by_worker[k].i].start_s <= row->end_s)
				wait[by_worker[k].i] += row->runq_wait_s;
		}
	}
	free(iv);
	return wait;
}

static struct json *run_args(const struct run_tl_run *row, size_t number, const char *ended,
			     const double *wait, size_t i)
{
	struct json *a = json_obj();
	json_set_num(a, "task", row->task);
	json_set_num(a, "run", (double)number);
	json_set_num(a, "worker", row->worker);
	json_set_num(a, "cpu", row->cpu);
	json_set_str(a, "ended", ended);
	if (wait)
		json_set_num(a, "runq_wait_before_us", wait[i] * 1e6);
	else
		json_set_null(a, "runq_wait_before_us"); /* recorded without BPF */
	return a;
}

/* Hop and CPU-migration markers between a task's consecutive runs prev -> row. */
static void mark_moves(struct run_ctx *c, double tid, const struct run_tl_run *prev,
		       const struct run_tl_run *row)
{
	char name[96];
	int pw = (int)prev->worker, w = (int)row->worker;
	int pc = (int)prev->cpu, cpu = (int)row->cpu;
	int64_t t = ns_of(row->start_s);
	if (pw != w) {
		snprintf(name, sizeof(name), "hop: worker %d -> %d", pw, w);
		add_instant(c, tid, t, name);
	}
	if (pc >= 0 && cpu >= 0 && pc != cpu) {
		snprintf(name, sizeof(name), "CPU migration %d -> %d", pc, cpu);
		add_instant(c, tid, t, name);
	}
}

static void add_task_runs(struct run_ctx *c, const struct run *run)
{
	const struct run_tl_run *runs = run_tl_runs(run);
	const struct run_ends *ends = &run->timeline.run_ends;
	size_t n = run->timeline.runs.n;
	struct row_ref *by_task = sorted_rows(runs, n, RUN_COLS, COL(struct run_tl_run, task),
					      COL(struct run_tl_run, start_s));
	struct row_ref *by_worker = sorted_rows(runs, n, RUN_COLS, COL(struct run_tl_run, worker),
						COL(struct run_tl_run, start_s));
	double *wait = by_worker ? runq_wait_per_run(run, by_worker) : NULL;
	if (!by_task || !by_worker) {
		c->oom = true;
		goto out;
	}
	char name[96], label[96];
	size_t number = 0;
	for (size_t k = 0; k < n; k++) {
		size_t i = by_task[k].i;
		const struct run_tl_run *row = &runs[i];
		const struct run_tl_run *prev = k && by_task[k - 1].key1 == by_task[k].key1 ? &runs[by_task[k - 1].i] : NULL;
		double id = row->task, track = TID_TASK + id;
		int w = (int)row->worker, cpu = (int)row->cpu;
		const char *ended = run_end_words[ends->n == n ? ends->v[i] : RUN_END_unknown];
		int64_t s = ns_of(row->start_s), e = ns_of(row->end_s);
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

/* The kernel moved a thread: an instant on its worker's track. */
static void add_migrations(struct run_ctx *c, const struct run *run)
{
	const struct run_tl_migration *migs = run_tl_migrations(run);
	char name[128];
	for (size_t i = 0; i < run->timeline.migrations.n; i++) {
		const struct run_tl_migration *m = &migs[i];
		int w = (int)m->worker;
		double track = w >= 0 ? TID_WORKER + w : TID_MIGRATIONS;
		if (w >= 0) {
			snprintf(name, sizeof(name), "worker %d: task runs", w);
			name_track(c, track, name);
		} else {
			name_track(c, track, "kernel migrations of other threads");
		}
		snprintf(name, sizeof(name), "kernel moved worker %d: CPU %.0f -> %.0f (task %.0f)", w,
			 m->from_cpu, m->to_cpu, m->task);
		add_instant(c, track, ns_of(m->ts_s), name);
	}
}

/* ---- runs -------------------------------------------------------------------------- */

/* One run as one trace process, named after its workload, policy, seed and why it was
 * drawn; its args say where the CPU tracks come from and what was clipped. */
static size_t add_run(struct json *ev, const struct run *run, int pid, const char *why)
{
	char name[320], seed[32];
	struct run_ctx c = { .ev = ev, .pid = pid, .names = json_obj() };
	snprintf(name, sizeof(name), "%s: %s, seed %s (%s)", run->workload, run->policy,
		 run_seed_text(seed, sizeof(seed), run), why);
	json_push(ev, meta("process_name", pid, -1, name));
	add_kernel_tracks(&c, run);
	add_task_runs(&c, run);
	add_migrations(&c, run);
	flush_slices(&c);
	flush_names(&c);
	struct json *e = json_obj(), *a = json_obj();
	json_set_str(e, "name", "process_labels");
	json_set_str(e, "ph", "M");
	json_set_num(e, "pid", pid);
	snprintf(name, sizeof(name), "CPU tracks: %s; clipped slices: %zu%s",
		 run->timeline.oncpu.n ? "the kernel's on-CPU intervals" : "none (no BPF recording)",
		 c.clipped, c.oom ? "; out of memory: incomplete" : "");
	json_set_str(a, "labels", name);
	json_set(e, "args", a);
	json_push(ev, e);
	free(c.p);
	json_free(c.names);
	return c.clipped;
}

static double repeat_of(const struct run *run)
{
	return isnan(run->repeat) ? 1 : run->repeat;
}

/* Draws run as process pid and returns its entry in the trace's "runs_drawn": {pid,
 * policy, seed, repeat, why, clipped_slices}. */
static struct json *draw(struct json *ev, int pid, const struct run *run, const char *why)
{
	struct json *d = json_obj();
	json_set_num(d, "pid", pid);
	json_set_str(d, "policy", run->policy);
	if (run->seed.known)
		json_set_u64(d, "seed", run->seed.v);
	else
		json_set_null(d, "seed");
	json_set_num(d, "repeat", repeat_of(run));
	json_set_str(d, "why", why);
	json_set_num(d, "clipped_slices", (double)add_run(ev, run, pid, why));
	return d;
}

struct json *report_trace_of(const struct report_view *v)
{
	struct json *root = json_obj(), *ev = json_arr(), *list = json_arr();
	report_stamp(root, REPORT_SCHEMA_TRACE);
	const struct json *pols = json_get(v->json, "policies");
	int mode = v->timeline_mode, pid = 1;
	char why[128];
	for (size_t p = 0; p < json_len(pols); p++) {
		const char *pol = json_key_at(pols, p);
		for (size_t r = 0; mode == REPORT_PICK_ALL && r < v->nruns; r++) {
			const struct run *run = &v->runs[r];
			if (strcmp(run->policy, pol) != 0)
				continue;
			snprintf(why, sizeof(why), "repeat %.0f, every run drawn (--timeline-seed all)",
				 repeat_of(run));
			json_push(list, draw(ev, pid++, run, why));
		}
		const struct run *run = mode == REPORT_PICK_ALL ? NULL : report_timeline_run(v, pol, why, sizeof(why));
		if (run)
			json_push(list, draw(ev, pid++, run, why));
	}
	if (mode == REPORT_PICK_SEED)
		json_set_u64(root, "timeline_seed", v->timeline_seed);
	else
		json_set_str(root, "timeline_seed", mode == REPORT_PICK_ALL ? "all" : "median");
	json_set(root, "runs_drawn", list);
	json_set(root, "traceEvents", ev);
	json_set_str(root, "displayTimeUnit", "ms");
	return root;
}

struct json *report_trace(const struct json *report)
{
	struct report_view v;
	char err[256];
	if (report_view_read_partial(report, &v, err, sizeof(err)))
		return NULL;
	struct json *t = report_trace_of(&v);
	report_view_free(&v);
	return t;
}
