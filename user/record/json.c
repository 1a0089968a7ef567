/* json.c — writes a recording as JSON for library users (th_record_write_json): tasks,
 * workers, runs (with CPUs) and kernel migrations. Where a value is one the run JSON also
 * has, its name comes from run_schema.h (the run's task and worker fields, the columns of
 * its timeline rows); the rest is the recording's own: absolute times in ns (a run counts
 * seconds from its t0), pids, USDT figures. schema taskhop-recording/1. */
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>

#include "record_int.h"
#include "run_schema.h"
#include "taskhop.h"

void th_record_window(struct th_record *r, uint64_t *start_ns, uint64_t *stop_ns)
{
	*start_ns = r->t_start;
	*stop_ns = r->stopped ? r->t_stop : 0;
}

static void cpus(FILE *f, const struct th_rec_task *t)
{
	fputc('[', f);
	int first = 1;
	for (int c = 0; c < TH_REC_MAX_CPUS; c++)
		if (t->cpu_mask[c / 64] & (1ull << (c % 64))) {
			fprintf(f, "%s%d", first ? "" : ",", c);
			first = 0;
		}
	fputc(']', f);
}

/* `, "key": value` (sep "" for an object's first member). */
static void u64_member(FILE *f, const char *sep, const char *key, uint64_t v)
{
	fprintf(f, "%s\"%s\": %" PRIu64, sep, key, v);
}

static void int_member(FILE *f, const char *sep, const char *key, int v)
{
	fprintf(f, "%s\"%s\": %d", sep, key, v);
}

/* One thread's kernel figures; `index` is its worker (workers[]) or thread index (threads[]).
 * The names are the run JSON's worker fields (run_schema.h) where the value is the same;
 * off_cpu_ns and switches are the recording's own. */
static void thread_json(FILE *f, size_t k, const struct th_rec_worker *w, int index)
{
	fprintf(f, "%s\n    {", k ? "," : "");
	int_member(f, "", "pid", w->pid);
	int_member(f, ", ", TH_WORKER_KEY(index), index);
	int_member(f, ", ", TH_WORKER_KEY(tid), w->tid);
	int_member(f, ", ", TH_WORKER_KEY(host_tid), w->host_tid);
	u64_member(f, ", ", TH_WORKER_KEY(cpu_migrations), w->cpu_migrations);
	u64_member(f, ", ", TH_WORKER_KEY(preemptions), w->preemptions);
	u64_member(f, ", ", TH_WORKER_KEY(on_cpu_ns), w->on_cpu_ns);
	u64_member(f, ", ", "off_cpu_ns", w->off_cpu_ns);
	u64_member(f, ", ", TH_WORKER_KEY(runq_wait_ns), w->runq_wait_ns);
	u64_member(f, ", ", "switches", w->switches);
	u64_member(f, ", ", TH_WORKER_KEY(kernel_blocked_ns), w->kernel_blocked_ns);
	u64_member(f, ", ", TH_WORKER_KEY(kernel_blocks), w->kernel_blocks);
	fputc('}', f);
}

/* One task: the run JSON's task fields (run_schema.h) under their names; its time of
 * largest wait is absolute (max_runq_wait_at_ns), where a run says seconds from its t0. */
static void task_json(FILE *f, size_t i, const struct th_rec_task *t, bool usdt)
{
	fprintf(f, "%s\n    {", i ? "," : "");
	int_member(f, "", "pid", t->pid);
	u64_member(f, ", ", TH_TASK_KEY(id), t->task_id);
	u64_member(f, ", ", TH_TASK_KEY(runs), t->runs);
	u64_member(f, ", ", TH_TASK_KEY(yields), t->yields);
	u64_member(f, ", ", TH_TASK_KEY(worker_hops), t->worker_hops);
	u64_member(f, ", ", TH_TASK_KEY(cpu_migrations), t->cpu_migrations);
	u64_member(f, ", ", TH_TASK_KEY(cpu_migrations_kernel), t->cpu_migrations_kernel);
	u64_member(f, ", ", TH_TASK_KEY(worker_cpu_changes), t->worker_cpu_changes);
	fprintf(f, ", \"%s\": ", TH_TASK_KEY(cpus_visited));
	cpus(f, t);
	u64_member(f, ", ", TH_TASK_KEY(on_cpu_ns), t->on_cpu_ns);
	u64_member(f, ", ", TH_TASK_KEY(runq_wait_ns), t->runq_wait_ns);
	u64_member(f, ", ", TH_TASK_KEY(preemptions), t->preemptions);
	u64_member(f, ", ", TH_TASK_KEY(kernel_blocked_ns), t->kernel_blocked_ns);
	u64_member(f, ", ", TH_TASK_KEY(kernel_blocks), t->kernel_blocks);
	u64_member(f, ", ", TH_TASK_KEY(max_runq_wait_ns), t->max_runq_wait_ns);
	u64_member(f, ", ", "max_runq_wait_at_ns", t->max_runq_wait_at_ns);
	if (usdt) {
		u64_member(f, ", ", "usdt_runs", t->usdt_runs);
		u64_member(f, ", ", "usdt_worker_hops", t->usdt_worker_hops);
	}
	fputc('}', f);
}

/* One task run, as the run JSON's timeline "runs" row names its columns (task, worker,
 * cpu); its times are absolute nanoseconds (a row: seconds from t0), with the thread and
 * the kernel figures of the run. */
static void run_json(FILE *f, size_t i, const struct th_rec_run *x)
{
	fprintf(f, "%s\n    {", i ? "," : "");
	int_member(f, "", "pid", x->pid);
	u64_member(f, ", ", TH_TL_RUN_KEY(task), x->task_id);
	int_member(f, ", ", TH_TL_RUN_KEY(worker), x->worker);
	int_member(f, ", ", TH_WORKER_KEY(tid), x->tid);
	int_member(f, ", ", TH_TL_RUN_KEY(cpu), x->cpu);
	int_member(f, ", ", "usdt_cpu", x->usdt_cpu);
	u64_member(f, ", ", "start_ns", x->start_ns);
	u64_member(f, ", ", "end_ns", x->end_ns);
	u64_member(f, ", ", TH_TASK_KEY(on_cpu_ns), x->on_cpu_ns);
	u64_member(f, ", ", TH_TASK_KEY(runq_wait_ns), x->runq_wait_ns);
	fputc('}', f);
}

/* A kernel migration, as the timeline "migrations" row names its columns. */
static void migration_json(FILE *f, size_t i, const struct th_rec_migration *m)
{
	fprintf(f, "%s\n    {", i ? "," : "");
	int_member(f, "", "pid", m->pid);
	int_member(f, ", ", TH_WORKER_KEY(tid), m->tid);
	int_member(f, ", ", TH_TL_MIGRATION_KEY(worker), m->worker);
	u64_member(f, ", ", TH_TL_MIGRATION_KEY(task), m->task_id);
	int_member(f, ", ", TH_TL_MIGRATION_KEY(from_cpu), m->orig_cpu);
	int_member(f, ", ", TH_TL_MIGRATION_KEY(to_cpu), m->dest_cpu);
	u64_member(f, ", ", "ts_ns", m->ts_ns);
	fputc('}', f);
}

int th_record_write_json(struct th_record *r, FILE *f)
{
	size_t nt, nw, nr, nm;
	const struct th_rec_task *t = th_record_tasks(r, &nt);
	const struct th_rec_worker *w = th_record_workers(r, &nw);
	const struct th_rec_run *x = th_record_runs(r, &nr);
	const struct th_rec_migration *m = th_record_migrations(r, &nm);
	if (!t && nt) /* analysis failed */
		return -1;
	if (rec_analyse(r) != 0)
		return -1;
	fprintf(f, "{\n  \"taskhop_version\": \"%s\",\n  \"schema\": \"taskhop-recording/1\",\n",
		TASKHOP_VERSION);
	fprintf(f, "  \"lost_events\": %" PRIu64 ",\n  \"dropped_runs\": %" PRIu64
		   ",\n  \"tracepoints\": \"%s\",\n  \"usdt\": %s,\n  \"duration_ns\": %" PRIu64
		   ",\n  \"pids\": [",
		th_record_lost_events(r), r->dropped_runs, r->raw_tp ? "raw_tp" : "tp_btf",
		r->use_usdt ? "true" : "false", r->t_stop - r->t_start);
	for (int i = 0; i < r->ntg; i++)
		fprintf(f, "%s%d", i ? ", " : "", (int)r->tg[i].pid);
	fputs("],\n  \"tasks\": [", f);
	for (size_t i = 0; i < nt; i++)
		task_json(f, i, &t[i], r->use_usdt);
	/* workers[]: one entry per worker (the thread that started serving it) and per
	 * kthread-task thread; threads[]: the self target's runtime threads, spares too */
	fputs("\n  ],\n  \"workers\": [", f);
	for (size_t i = 0, k = 0; i < nw; i++)
		if (w[i].worker >= 0 || w[i].thread < 0)
			thread_json(f, k++, &w[i], w[i].worker);
	fputs("\n  ],\n  \"threads\": [", f);
	for (size_t i = 0, k = 0; i < nw; i++)
		if (w[i].thread >= 0)
			thread_json(f, k++, &w[i], w[i].thread);
	fputs("\n  ],\n  \"runs\": [", f);
	for (size_t i = 0; i < nr; i++)
		run_json(f, i, &x[i]);
	fputs("\n  ],\n  \"migrations\": [", f);
	for (size_t i = 0; i < nm; i++)
		migration_json(f, i, &m[i]);
	fputs("\n  ]\n}\n", f);
	return ferror(f) ? -1 : 0;
}
