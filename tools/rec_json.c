/* rec_json.c — a recording's kernel figures as run fields (tasks, workers, timeline), and
 * the whole run of a process that `taskhop record` followed, written by the run writer. */
#include "rec_json.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "report/report.h"
#include "report/stats.h"
#include "taskhop.h"

static double rel_s(uint64_t ns, uint64_t t0)
{
	return ((double)ns - (double)t0) / 1e9;
}

/* Index of the first run of (pid, task) in runs sorted by (pid, task, start). */
static size_t first_run_of(const struct th_rec_run *rr, size_t n, int pid, uint64_t task)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (rr[mid].pid < pid || (rr[mid].pid == pid && rr[mid].task_id < task))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Counts up to the last non-empty slot (an empty histogram is []). */
static int hist_nums(const double *count, struct run_nums *out)
{
	size_t n = 0;
	for (int i = 0; i < STATS_LOG2_SLOTS; i++)
		if (count[i] > 0)
			n = (size_t)i + 1;
	out->v = run_nums_dup(count, n);
	out->n = n;
	out->known = out->v != NULL;
	return out->v ? 0 : -1;
}

int rec_run_task_slices(struct run_task *o, struct th_record *rec, const struct th_rec_task *rt,
			uint64_t t0)
{
	size_t n = 0;
	const struct th_rec_run *rr = rt && rec ? th_record_runs(rec, &n) : NULL;
	if (!rr)
		return 0; /* all null */
	o->max_runq_wait_ns = (double)rt->max_runq_wait_ns;
	o->max_runq_wait_at_s = rt->max_runq_wait_ns > 0 ? rel_s(rt->max_runq_wait_at_ns, t0) : NAN;
	double wait[STATS_LOG2_SLOTS] = { 0 }, on[STATS_LOG2_SLOTS] = { 0 };
	for (size_t i = first_run_of(rr, n, rt->pid, rt->task_id);
	     i < n && rr[i].pid == rt->pid && rr[i].task_id == rt->task_id; i++) {
		wait[stats_log2_slot((double)rr[i].runq_wait_ns / 1e3)]++;
		on[stats_log2_slot((double)rr[i].on_cpu_ns / 1e3)]++;
	}
	return hist_nums(wait, &o->runq_wait_hist_us) | hist_nums(on, &o->on_cpu_hist_us);
}

int rec_run_task_kernel(struct run_task *o, const struct th_rec_task *rt)
{
	if (!rt)
		return 0; /* all null */
	o->cpu_migrations = (double)rt->cpu_migrations;
	o->cpu_migrations_kernel = (double)rt->cpu_migrations_kernel;
	o->worker_cpu_changes = (double)rt->worker_cpu_changes;
	double cpus[TH_REC_MAX_CPUS];
	size_t n = 0;
	for (int c = 0; c < TH_REC_MAX_CPUS; c++)
		if (rt->cpu_mask[c / 64] >> (c % 64) & 1)
			cpus[n++] = c;
	o->cpus_visited = (struct run_nums){ run_nums_dup(cpus, n), n, true };
	o->on_cpu_ns = (double)rt->on_cpu_ns;
	o->runq_wait_ns = (double)rt->runq_wait_ns;
	o->preemptions = (double)rt->preemptions;
	o->kernel_blocked_ns = (double)rt->kernel_blocked_ns;
	o->kernel_blocks = (double)rt->kernel_blocks;
	return o->cpus_visited.v ? 0 : -1;
}

void rec_run_worker_kernel(struct run_worker *o, const struct th_rec_worker *rw)
{
	if (!rw)
		return; /* all null */
	o->cpu_migrations = (double)rw->cpu_migrations;
	o->preemptions = (double)rw->preemptions;
	o->on_cpu_ns = (double)rw->on_cpu_ns;
	o->runq_wait_ns = (double)rw->runq_wait_ns;
	o->kernel_blocked_ns = (double)rw->kernel_blocked_ns;
	o->kernel_blocks = (double)rw->kernel_blocks;
	/* differs from tid only under a PID namespace; 0 = not seen by the kernel side */
	o->host_tid = rw->host_tid ? rw->host_tid : NAN;
}

enum run_end rec_run_end(uint32_t why)
{
	switch (why) {
	case TH_WHY_YIELD: return RUN_END_yield;
	case TH_WHY_BLOCK: return RUN_END_block;
	case TH_WHY_DONE: return RUN_END_done;
	case TH_WHY_PREEMPT: return RUN_END_preempt;
	default: return RUN_END_unknown; /* still running at stop, or not logged */
	}
}

/* The worker a followed thread started serving, -1 for spares and kthread-task threads. */
static int worker_of_thread(const struct th_rec_worker *ws, size_t nw, int pid, int tid)
{
	for (size_t i = 0; ws && i < nw; i++)
		if (ws[i].pid == pid && ws[i].tid == tid)
			return ws[i].worker;
	return -1;
}

/* Every kernel on-CPU interval of a followed thread; end 0 = left the CPU not runnable
 * (blocked, slept, exited), 1 = preempted (still runnable), 2 = still on it when
 * recording stopped. */
static int push_oncpu(struct th_record *rec, int pid, uint64_t t0, struct run *r)
{
	size_t nw = 0;
	const struct th_rec_worker *ws = th_record_workers(rec, &nw);
	uint64_t t_start, t_stop;
	th_record_window(rec, &t_start, &t_stop);
	struct th_rec_oncpu o;
	for (size_t i = 0; th_record_oncpu(rec, i, &o) == 0; i++) {
		if (pid && o.pid != pid)
			continue;
		struct run_tl_oncpu row = {
			.tid = o.tid, .worker = worker_of_thread(ws, nw, o.pid, o.tid), .cpu = o.cpu,
			.start_s = rel_s(o.start_ns, t0), .end_s = rel_s(o.end_ns, t0),
			.runq_wait_s = (double)o.wait_ns / 1e9,
			.end = o.end_ns >= t_stop ? 2 : (o.flags & TH_EVF_PREEMPTED) ? 1 : 0,
			.task = (double)o.task_id,
		};
		if (run_push_tl_oncpu(r, &row))
			return -1;
	}
	return 0;
}

int rec_run_timeline(struct th_record *rec, int pid, uint64_t t0, struct run *r)
{
	size_t n = 0;
	const struct th_rec_run *rr = th_record_runs(rec, &n);
	for (size_t i = 0; rr && i < n; i++) {
		if ((pid && rr[i].pid != pid) || (rr[i].worker < 0 && rr[i].task_id == 0))
			continue;
		struct run_tl_run row = { (double)rr[i].task_id, rr[i].worker, rr[i].cpu,
					  rel_s(rr[i].start_ns, t0), rel_s(rr[i].end_ns, t0) };
		if (run_push_tl_run(r, &row, rec_run_end(rr[i].why)))
			return -1;
	}
	const struct th_rec_migration *m = th_record_migrations(rec, &n);
	for (size_t i = 0; m && i < n; i++) {
		if (pid && m[i].pid != pid)
			continue;
		struct run_tl_migration row = { rel_s(m[i].ts_ns, t0), m[i].worker, (double)m[i].task_id,
						m[i].orig_cpu, m[i].dest_cpu };
		if (run_push_tl_migration(r, &row))
			return -1;
	}
	r->timeline.known = r->timeline.run_ends.known = true; /* none is still a list */
	return push_oncpu(rec, pid, t0, r);
}

/* A task of the recording as a run task: what the runtime's counters would say, from the
 * runs seen (run log or USDT), plus the kernel figures. */
static int fill_task(struct run_task *o, struct th_record *rec, const struct th_rec_task *t,
		     uint64_t t0)
{
	o->id = (double)t->task_id;
	o->label = "task";
	o->spawn_worker = t->spawn_worker;
	o->first_worker = t->first_worker;
	o->last_worker = t->last_worker;
	/* from the start of the recording (a command: just before its exec) */
	o->completion_s = t->done_ns > t0 ? rel_s(t->done_ns, t0) : NAN;
	o->runs = (double)t->runs;
	o->yields = (double)t->yields;
	o->worker_hops = (double)t->worker_hops;
	o->work_s = (double)t->on_cpu_ns / 1e9; /* SPT input: its CPU time */
	return rec_run_task_kernel(o, t) | rec_run_task_slices(o, rec, t, t0);
}

static void fill_worker(struct run_worker *o, struct th_record *rec, const struct th_rec_worker *w)
{
	size_t n, ran = 0;
	const struct th_rec_run *rr = th_record_runs(rec, &n);
	for (size_t i = 0; rr && i < n; i++)
		ran += rr[i].pid == w->pid && rr[i].tid == w->tid;
	o->index = w->worker;
	o->tid = w->tid;
	rec_run_worker_kernel(o, w);
	o->tasks_run = (double)ran;
}

/* The followed process's tasks and workers (a worker: the thread that started serving it). */
static struct run *run_of(struct th_record *rec, const struct rec_target_info *t, uint64_t t0)
{
	size_t nt, nw, ntasks = 0, nworkers = 0;
	const struct th_rec_task *tasks = th_record_tasks(rec, &nt);
	const struct th_rec_worker *ws = th_record_workers(rec, &nw);
	for (size_t i = 0; tasks && i < nt; i++)
		ntasks += tasks[i].pid == t->pid && tasks[i].task_id;
	for (size_t i = 0; ws && i < nw; i++)
		nworkers += ws[i].pid == t->pid && ws[i].worker >= 0;
	struct run *r = run_new(ntasks, nworkers);
	int rc = r ? 0 : -1;
	for (size_t i = 0, k = 0; r && tasks && i < nt; i++)
		if (tasks[i].pid == t->pid && tasks[i].task_id)
			rc |= fill_task(&r->tasks[k++], rec, &tasks[i], t0);
	for (size_t i = 0, k = 0; r && ws && i < nw; i++)
		if (ws[i].pid == t->pid && ws[i].worker >= 0)
			fill_worker(&r->workers[k++], rec, &ws[i]);
	if (rc) {
		run_free(r);
		return NULL;
	}
	return r;
}

struct json *rec_json_run(struct th_record *rec, const struct rec_target_info *t)
{
	uint64_t t0, t1;
	th_record_window(rec, &t0, &t1);
	struct run *r = run_of(rec, t, t0);
	if (!r || rec_run_timeline(rec, t->pid, t0, r)) {
		run_free(r);
		return NULL;
	}
	struct json *info = json_obj(), *machine = report_machine(), *extra = json_obj();
	r->workload = t->name;
	r->policy = "unknown"; /* the process does not publish it */
	r->bpf.enabled = 1;
	r->bpf.lost_events = (double)th_record_lost_events(rec);
	r->bpf.dropped_runs = r->timeline.dropped_runs = (double)th_record_dropped_runs(rec);
	r->wall_s = rel_s(t1, t0);
	r->extra = extra;
	r->summary = "";
	r->command = t->command;
	r->machine = machine;
	json_set_num(info, "pid", t->pid);
	json_set_str(info, "attached_at", t->attached_at);
	json_set_num(info, "duration_s", rel_s(t1, t0));
	r->recording = info;
	run_derive(r);
	struct json *j = run_to_json(r);
	json_free(info);
	json_free(machine);
	json_free(extra);
	run_free(r);
	return j;
}
