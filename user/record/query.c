/* query.c — the recording's figures as th_record_* calls return them: the join's
 * output, ready from th_record_stop on (record.h). */
#include <stdio.h>

#include "record_int.h"

static int pid_or_first(struct th_record *r, int pid)
{
	return pid ? pid : (r->ntg ? r->tg[0].pid : 0);
}

int th_record_task(struct th_record *r, int pid, uint64_t task_id, struct th_rec_task *out)
{
	if (rec_analyse(r) != 0)
		return -1;
	const struct th_rec_task *t = rec_joined_task(&r->res, pid_or_first(r, pid), task_id);
	if (!t) {
		rec_set_error("task %llu was not seen", (unsigned long long)task_id);
		return -1;
	}
	*out = *t;
	return 0;
}

const struct th_rec_task *th_record_tasks(struct th_record *r, size_t *n)
{
	*n = 0;
	if (rec_analyse(r) != 0)
		return NULL;
	*n = r->res.tasks.n;
	return r->res.tasks.p;
}

int th_record_worker(struct th_record *r, int pid, int worker, struct th_rec_worker *out)
{
	if (rec_analyse(r) != 0)
		return -1;
	pid = pid_or_first(r, pid);
	for (size_t i = 0; i < r->res.workers.n; i++) {
		struct th_rec_worker *w = VAT(r->res.workers, struct th_rec_worker, i);
		if (w->pid == pid && w->worker == worker) {
			*out = *w;
			return 0;
		}
	}
	rec_set_error("worker %d of pid %d was not seen", worker, pid);
	return -1;
}

const struct th_rec_worker *th_record_workers(struct th_record *r, size_t *n)
{
	*n = 0;
	if (rec_analyse(r) != 0)
		return NULL;
	*n = r->res.workers.n;
	return r->res.workers.p;
}

const struct th_rec_run *th_record_runs(struct th_record *r, size_t *n)
{
	*n = 0;
	if (rec_analyse(r) != 0)
		return NULL;
	*n = r->res.runs.n;
	return r->res.runs.p;
}

const struct th_rec_migration *th_record_migrations(struct th_record *r, size_t *n)
{
	*n = 0;
	if (rec_analyse(r) != 0)
		return NULL;
	*n = r->res.migs.n;
	return r->res.migs.p;
}

int th_record_oncpu(struct th_record *r, size_t i, struct th_rec_oncpu *out)
{
	if (rec_analyse(r) != 0 || i >= r->res.ivals.n)
		return -1;
	const struct rec_ival *v = VAT(r->res.ivals, struct rec_ival, i);
	*out = (struct th_rec_oncpu){ .pid = v->pid, .tid = v->tid, .cpu = v->cpu, .flags = v->flags,
				      .start_ns = v->start, .end_ns = v->end, .wait_ns = v->wait_ns,
				      .task_id = v->task_id };
	return 0;
}

int th_record_cpu_at(struct th_record *r, int pid, int tid, uint64_t ts)
{
	if (rec_analyse(r) != 0)
		return -1;
	pid = pid_or_first(r, pid);
	struct rec_ival *iv = r->res.ivals.p;
	/* intervals are sorted by (pid, tid, end): find the thread's, then the one holding ts */
	size_t lo = 0, hi = r->res.ivals.n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (iv[mid].pid < pid || (iv[mid].pid == pid && iv[mid].tid < tid))
			lo = mid + 1;
		else
			hi = mid;
	}
	size_t end = lo;
	while (end < r->res.ivals.n && iv[end].pid == pid && iv[end].tid == tid)
		end++;
	size_t i = rec_first_ending_after(iv, lo, end, ts);
	if (i < end && iv[i].start <= ts)
		return iv[i].cpu;
	return rec_gap_cpu(iv, lo, end, i, ts);
}

char *th_rec_cpu_list(const struct th_rec_task *t, char *buf, size_t len)
{
	size_t o = 0;
	if (len)
		buf[0] = 0;
	for (int c = 0; c < TH_REC_MAX_CPUS && o + 1 < len; c++)
		if (t->cpu_mask[c / 64] & (1ull << (c % 64))) {
			int n = snprintf(buf + o, len - o, "%s%d", o ? "," : "", c);
			if (n < 0 || (size_t)n >= len - o)
				break;
			o += (size_t)n;
		}
	return buf;
}
