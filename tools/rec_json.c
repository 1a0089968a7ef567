/* rec_json.c — a recording's kernel figures in the run-JSON vocabulary (tasks[], workers[],
 * timeline), and the whole run JSON of a process that `taskhop record` followed. */
#include "rec_json.h"

#include <string.h>

#include "report/report.h"
#include "report/stats.h"
#include "taskhop.h"

static struct json *num_or_null(bool have, double x)
{
	return have ? json_num(x) : json_null();
}

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
static struct json *hist_json(const double *count)
{
	int last = -1;
	for (int i = 0; i < STATS_LOG2_SLOTS; i++)
		if (count[i] > 0)
			last = i;
	struct json *a = json_arr();
	for (int i = 0; i <= last; i++)
		json_push(a, json_num(count[i]));
	return a;
}

void rec_json_task_slices(struct json *o, struct th_record *rec, const struct th_rec_task *rt,
			  uint64_t t0)
{
	size_t n = 0;
	const struct th_rec_run *rr = rt && rec ? th_record_runs(rec, &n) : NULL;
	if (!rr) {
		json_set_null(o, "max_runq_wait_ns");
		json_set_null(o, "max_runq_wait_at_s");
		json_set_null(o, "runq_wait_hist_us");
		json_set_null(o, "on_cpu_hist_us");
		return;
	}
	json_set_num(o, "max_runq_wait_ns", (double)rt->max_runq_wait_ns);
	json_set(o, "max_runq_wait_at_s",
		 num_or_null(rt->max_runq_wait_ns > 0, rel_s(rt->max_runq_wait_at_ns, t0)));
	double wait[STATS_LOG2_SLOTS] = { 0 }, on[STATS_LOG2_SLOTS] = { 0 };
	for (size_t i = first_run_of(rr, n, rt->pid, rt->task_id);
	     i < n && rr[i].pid == rt->pid && rr[i].task_id == rt->task_id; i++) {
		wait[stats_log2_slot((double)rr[i].runq_wait_ns / 1e3)]++;
		on[stats_log2_slot((double)rr[i].on_cpu_ns / 1e3)]++;
	}
	json_set(o, "runq_wait_hist_us", hist_json(wait));
	json_set(o, "on_cpu_hist_us", hist_json(on));
}

void rec_json_task_kernel(struct json *o, const struct th_rec_task *rt)
{
	const struct th_rec_task z = { 0 };
	const struct th_rec_task *k = rt ? rt : &z;
	json_set(o, "cpu_migrations", num_or_null(rt != NULL, (double)k->cpu_migrations));
	json_set(o, "cpu_migrations_kernel", num_or_null(rt != NULL, (double)k->cpu_migrations_kernel));
	json_set(o, "worker_cpu_changes", num_or_null(rt != NULL, (double)k->worker_cpu_changes));
	if (rt) {
		struct json *cpus = json_arr();
		for (int c = 0; c < TH_REC_MAX_CPUS; c++)
			if (rt->cpu_mask[c / 64] >> (c % 64) & 1)
				json_push(cpus, json_num(c));
		json_set(o, "cpus_visited", cpus);
	} else {
		json_set_null(o, "cpus_visited");
	}
	json_set(o, "on_cpu_ns", num_or_null(rt != NULL, (double)k->on_cpu_ns));
	json_set(o, "runq_wait_ns", num_or_null(rt != NULL, (double)k->runq_wait_ns));
	json_set(o, "preemptions", num_or_null(rt != NULL, (double)k->preemptions));
	json_set(o, "kernel_blocked_ns", num_or_null(rt != NULL, (double)k->kernel_blocked_ns));
	json_set(o, "kernel_blocks", num_or_null(rt != NULL, (double)k->kernel_blocks));
}

void rec_json_worker_kernel(struct json *o, const struct th_rec_worker *rw)
{
	const struct th_rec_worker z = { 0 };
	const struct th_rec_worker *k = rw ? rw : &z;
	json_set(o, "cpu_migrations", num_or_null(rw != NULL, (double)k->cpu_migrations));
	json_set(o, "preemptions", num_or_null(rw != NULL, (double)k->preemptions));
	json_set(o, "on_cpu_ns", num_or_null(rw != NULL, (double)k->on_cpu_ns));
	json_set(o, "runq_wait_ns", num_or_null(rw != NULL, (double)k->runq_wait_ns));
	json_set(o, "kernel_blocked_ns", num_or_null(rw != NULL, (double)k->kernel_blocked_ns));
	json_set(o, "kernel_blocks", num_or_null(rw != NULL, (double)k->kernel_blocks));
	/* differs from tid only under a PID namespace; 0 = not seen by the kernel side */
	json_set(o, "host_tid", num_or_null(rw && rw->host_tid, k->host_tid));
}


static void push_row(struct json *rows, const double *v, int n)
{
	struct json *r = json_arr();
	for (int i = 0; i < n; i++)
		json_push(r, json_num(v[i]));
	json_push(rows, r);
}

const char *rec_json_run_end(uint32_t why)
{
	switch (why) {
	case TH_WHY_YIELD: return "yield";
	case TH_WHY_BLOCK: return "block";
	case TH_WHY_DONE: return "done";
	case TH_WHY_PREEMPT: return "preempt";
	default: return "unknown"; /* still running at stop, or not logged */
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

/* oncpu: [tid, worker, cpu, start_s, end_s, runq_wait_s, end, task] per kernel on-CPU
 * interval of a followed thread; end 0 = left the CPU not runnable (blocked, slept,
 * exited), 1 = preempted (still runnable), 2 = still on it when recording stopped. */
static void push_oncpu(struct th_record *rec, int pid, uint64_t t0, struct json *rows)
{
	size_t nw = 0;
	const struct th_rec_worker *ws = th_record_workers(rec, &nw);
	uint64_t t_start, t_stop;
	th_record_window(rec, &t_start, &t_stop);
	struct th_rec_oncpu o;
	for (size_t i = 0; th_record_oncpu(rec, i, &o) == 0; i++) {
		if (pid && o.pid != pid)
			continue;
		int end = o.end_ns >= t_stop ? 2 : (o.flags & TH_EVF_PREEMPTED) ? 1 : 0;
		double v[] = { o.tid, worker_of_thread(ws, nw, o.pid, o.tid), o.cpu,
			       rel_s(o.start_ns, t0), rel_s(o.end_ns, t0), (double)o.wait_ns / 1e9,
			       end, (double)o.task_id };
		push_row(rows, v, 8);
	}
}

void rec_json_timeline(struct th_record *rec, int pid, uint64_t t0, struct json *tl)
{
	struct json *runs = json_arr(), *ends = json_arr(), *migrations = json_arr();
	struct json *oncpu = json_arr();
	size_t n = 0;
	const struct th_rec_run *rr = th_record_runs(rec, &n);
	for (size_t i = 0; rr && i < n; i++) {
		if ((pid && rr[i].pid != pid) || (rr[i].worker < 0 && rr[i].task_id == 0))
			continue;
		double v[] = { (double)rr[i].task_id, rr[i].worker, rr[i].cpu,
			       rel_s(rr[i].start_ns, t0), rel_s(rr[i].end_ns, t0) };
		push_row(runs, v, 5);
		json_push(ends, json_str(rec_json_run_end(rr[i].why)));
	}
	const struct th_rec_migration *m = th_record_migrations(rec, &n);
	for (size_t i = 0; m && i < n; i++) {
		if (pid && m[i].pid != pid)
			continue;
		double v[] = { rel_s(m[i].ts_ns, t0), m[i].worker, (double)m[i].task_id,
			       m[i].orig_cpu, m[i].dest_cpu };
		push_row(migrations, v, 5);
	}
	push_oncpu(rec, pid, t0, oncpu);
	json_set(tl, "runs", runs);
	json_set(tl, "run_ends", ends);
	json_set(tl, "migrations", migrations);
	json_set(tl, "oncpu", oncpu);
}

/* A task of the recording as a run-JSON task: what the runtime's counters would say,
 * from the runs seen (run log or USDT), plus the kernel figures. */
static struct json *task_json(struct th_record *rec, const struct th_rec_task *t, uint64_t t0)
{
	struct json *o = json_obj();
	json_set_num(o, "id", (double)t->task_id);
	json_set_str(o, "label", "task");
	json_set_null(o, "n");
	json_set_num(o, "spawn_worker", t->spawn_worker);
	json_set_num(o, "first_worker", t->first_worker);
	json_set_num(o, "last_worker", t->last_worker);
	/* from the start of the recording (a command: just before its exec) */
	json_set(o, "completion_s", num_or_null(t->done_ns > t0, rel_s(t->done_ns, t0)));
	json_set_num(o, "runs", (double)t->runs);
	json_set_num(o, "yields", (double)t->yields);
	json_set_num(o, "worker_hops", (double)t->worker_hops);
	rec_json_task_kernel(o, t);
	rec_json_task_slices(o, rec, t, t0);
	json_set_num(o, "work_s", (double)t->on_cpu_ns / 1e9); /* SPT input: its CPU time */
	return o;
}

static struct json *worker_json(struct th_record *rec, const struct th_rec_worker *w)
{
	struct json *o = json_obj();
	size_t n, ran = 0;
	const struct th_rec_run *rr = th_record_runs(rec, &n);
	for (size_t i = 0; rr && i < n; i++)
		ran += rr[i].pid == w->pid && rr[i].tid == w->tid;
	json_set_num(o, "index", w->worker);
	json_set_num(o, "tid", w->tid);
	rec_json_worker_kernel(o, w);
	json_set_num(o, "tasks_run", (double)ran);
	return o;
}

struct json *rec_json_run(struct th_record *rec, const struct rec_target_info *t)
{
	uint64_t t0, t1;
	size_t nt, nw;
	th_record_window(rec, &t0, &t1);
	const struct th_rec_task *tasks = th_record_tasks(rec, &nt);
	const struct th_rec_worker *ws = th_record_workers(rec, &nw);
	struct json *run = json_obj(), *bpf = json_obj(), *ta = json_arr(), *wa = json_arr();
	struct json *tl = json_obj(), *info = json_obj();
	report_stamp(run, REPORT_SCHEMA_RUN);
	json_set_str(run, "workload", t->name);
	json_set(run, "options", json_arr());
	json_set_str(run, "policy", "unknown"); /* the process does not publish it */
	int workers = 0;
	for (size_t i = 0; ws && i < nw; i++)
		if (ws[i].pid == t->pid && ws[i].worker >= 0) {
			workers++;
			json_push(wa, worker_json(rec, &ws[i]));
		}
	json_set_num(run, "worker_count", workers);
	json_set_null(run, "pin");
	json_set_null(run, "seed");
	json_set_bool(bpf, "enabled", true);
	json_set_num(bpf, "lost_events", (double)th_record_lost_events(rec));
	json_set_num(bpf, "dropped_runs", (double)th_record_dropped_runs(rec));
	json_set(run, "bpf", bpf);
	json_set_num(run, "wall_s", rel_s(t1, t0));
	json_set_null(run, "peak_rss_kb");
	for (size_t i = 0; tasks && i < nt; i++)
		if (tasks[i].pid == t->pid && tasks[i].task_id)
			json_push(ta, task_json(rec, &tasks[i], t0));
	json_set(run, "tasks", ta);
	json_set(run, "workers", wa);
	rec_json_timeline(rec, t->pid, t0, tl);
	json_set_num(tl, "dropped_runs", (double)th_record_dropped_runs(rec));
	json_set(run, "timeline", tl);
	json_set(run, "extra", json_obj());
	json_set_str(run, "summary", "");
	json_set_str(run, "command", t->command);
	json_set(run, "machine", report_machine());
	json_set_num(info, "pid", t->pid);
	json_set_str(info, "attached_at", t->attached_at);
	json_set_num(info, "duration_s", rel_s(t1, t0));
	json_set(run, "recording", info);
	report_run_derive(run);
	return run;
}
