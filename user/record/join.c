/* join.c — the recorder's analysis (join.h): joins runs with their worker threads'
 * kernel intervals, by thread and time, into per-run CPUs and per-task / per-worker
 * figures. A function of its input only: no BPF, no runtime, no recorder state. */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "join.h"
#include "keysort.h"
#include "taskhop.h"
#include "taskhop_abi.h"

void rec_collected_init(struct rec_collected *c)
{
	c->runs = (struct vec)VEC(struct th_rec_run);
	c->uruns = (struct vec)VEC(struct rec_usdt_run);
	c->ivals = (struct vec)VEC(struct rec_ival);
	c->migs = (struct vec)VEC(struct th_rec_migration);
	c->spawns = (struct vec)VEC(struct rec_spawn);
	c->wstart = (struct vec)VEC(struct rec_worker_start);
	c->binds = (struct vec)VEC(struct rec_bind);
}

void rec_collected_free(struct rec_collected *c)
{
	vec_free(&c->runs);
	vec_free(&c->uruns);
	vec_free(&c->ivals);
	vec_free(&c->migs);
	vec_free(&c->spawns);
	vec_free(&c->wstart);
	vec_free(&c->binds);
}

void rec_joined_free(struct rec_joined *j)
{
	vec_free(&j->runs);
	vec_free(&j->tasks);
	vec_free(&j->workers);
	vec_free(&j->ivals);
	vec_free(&j->migs);
}

/* ---- sorting helpers ---------------------------------------------------------- */

/* qsort, but fine with an empty (NULL) array */
static void sort_n(void *p, size_t n, size_t size, int (*cmp)(const void *, const void *))
{
	if (n > 1)
		qsort(p, n, size, cmp);
}

#define CMP(a, b) ((a) < (b) ? -1 : (a) > (b))

static int ival_cmp(const void *x, const void *y)
{
	const struct rec_ival *a = x, *b = y;
	int c = CMP(a->pid, b->pid);
	if (!c) c = CMP(a->tid, b->tid);
	if (!c) c = CMP(a->end, b->end);
	return c;
}

static int run_thread_cmp(const void *x, const void *y)
{
	const struct th_rec_run *a = x, *b = y;
	int c = CMP(a->pid, b->pid);
	if (!c) c = CMP(a->tid, b->tid);
	if (!c) c = CMP(a->start_ns, b->start_ns);
	return c;
}

static int urun_task_cmp(const void *x, const void *y)
{
	const struct rec_usdt_run *a = x, *b = y;
	int c = CMP(a->pid, b->pid);
	if (!c) c = CMP(a->task_id, b->task_id);
	if (!c) c = CMP(a->start, b->start);
	return c;
}

static int task_cmp(const void *x, const void *y)
{
	const struct th_rec_task *a = x, *b = y;
	int c = CMP(a->pid, b->pid);
	return c ? c : CMP(a->task_id, b->task_id);
}

static int worker_cmp(const void *x, const void *y)
{
	const struct th_rec_worker *a = x, *b = y;
	int c = CMP(a->pid, b->pid);
	if (!c) c = CMP((unsigned)a->worker, (unsigned)b->worker); /* -1 (spares, kthread tasks) last */
	if (!c) c = CMP((unsigned)a->thread, (unsigned)b->thread); /* spares by index */
	if (!c) c = CMP(a->tid, b->tid);
	return c;
}

/* 1 if p[0..n) is in cmp's order already (then sorting it again is wasted time). */
static int is_sorted(const void *p, size_t n, size_t size, int (*cmp)(const void *, const void *))
{
	for (size_t i = 1; i < n; i++)
		if (cmp((const char *)p + (i - 1) * size, (const char *)p + i * size) > 0)
			return 0;
	return 1;
}

/* ---- who is who ------------------------------------------------------------------- */

static const struct rec_proc *proc_of(const struct rec_scope *s, int pid)
{
	for (int i = 0; i < s->nprocs; i++)
		if (s->procs[i].pid == pid)
			return &s->procs[i];
	return NULL;
}

/* The runtime thread index of (pid, tid) when the process's thread table is known, or -1. */
static int thread_of(const struct rec_scope *s, int pid, int tid)
{
	const struct rec_proc *p = proc_of(s, pid);
	if (p && p->thread_tids)
		for (int i = 0; i < p->nthreads; i++)
			if (p->thread_tids[i] == tid)
				return i;
	return -1;
}

/* The worker a thread started serving; -1 for spare threads, which serve whichever
 * worker they take over (activations). uruns must be sorted (by task) already: the
 * first task_run on a thread names its worker. */
static int worker_of(const struct rec_scope *s, const struct rec_collected *c, int pid, int tid)
{
	int thread = thread_of(s, pid, tid);
	if (thread >= 0)
		return thread < proc_of(s, pid)->nworkers ? thread : -1;
	for (size_t i = 0; i < c->wstart.n; i++) {
		const struct rec_worker_start *w = VAT(c->wstart, struct rec_worker_start, i);
		if (w->pid == pid && w->tid == tid)
			return w->worker;
	}
	/* attached after worker_start (-p): the worker task_run names on this thread */
	for (size_t i = 0; i < c->uruns.n; i++) {
		const struct rec_usdt_run *u = VAT(c->uruns, struct rec_usdt_run, i);
		if (u->pid == pid && u->tid == tid)
			return u->worker;
	}
	return -1;
}

/* ---- runs: from the run logs, from USDT, from kthread bindings ------------------ */

/* What the join computes starts from nothing, whatever a collector left there. */
static void clear_joined_fields(struct vec *runs)
{
	for (size_t i = 0; i < runs->n; i++) {
		struct th_rec_run *x = VAT(*runs, struct th_rec_run, i);
		x->cpu = x->usdt_cpu = -1;
		x->usdt_ts_ns = x->on_cpu_ns = x->runq_wait_ns = x->runq_wait_end_ns = 0;
	}
}

/* USDT runs of one task [i, j) when it has logged runs from keys[k] on: the i-th USDT
 * run of a task cross-checks its i-th logged run. */
static void cross_check(struct vec *runs, const struct task_key *keys, size_t k, size_t nlog,
			const struct rec_usdt_run *u, size_t i, size_t j)
{
	for (size_t m = i; m < j; m++) {
		size_t kk = k + (m - i);
		if (kk >= nlog || keys[kk].pid != u[i].pid || keys[kk].task != u[i].task_id)
			return;
		struct th_rec_run *x = VAT(*runs, struct th_rec_run, keys[kk].idx);
		x->usdt_cpu = u[m].cpu;
		x->usdt_ts_ns = u[m].start;
	}
}

/* Logged runs and USDT runs into one array. A process with a run log: the USDT runs of
 * a logged task cross-check its logged runs; USDT runs of tasks with no logged run
 * (kthread policy) become runs of their own. Other processes: every USDT run is a run.
 * Sorts c->uruns by (pid, task, start). */
static int build_runs(const struct rec_scope *s, struct rec_collected *c, struct vec *runs)
{
	size_t nlog = runs->n, nu = c->uruns.n;
	if (nu == 0)
		return 0; /* no USDT runs: nothing to cross-check or to add */
	struct task_key *keys = calloc(nlog + 1, sizeof(*keys));
	if (!keys)
		return -1;
	for (size_t i = 0; i < nlog; i++) {
		struct th_rec_run *x = VAT(*runs, struct th_rec_run, i);
		keys[i] = (struct task_key){ x->pid, x->task_id, x->start_ns, i };
	}
	if (rec_sort_task_keys(keys, nlog) != 0) {
		free(keys);
		return -1;
	}
	sort_n(c->uruns.p, nu, sizeof(struct rec_usdt_run), urun_task_cmp);
	const struct rec_usdt_run *u = c->uruns.p;
	size_t k = 0;
	for (size_t i = 0; i < nu;) {
		size_t j = i;
		while (j < nu && u[j].pid == u[i].pid && u[j].task_id == u[i].task_id)
			j++;
		while (k < nlog && (keys[k].pid < u[i].pid ||
				    (keys[k].pid == u[i].pid && keys[k].task < u[i].task_id)))
			k++;
		const struct rec_proc *p = proc_of(s, u[i].pid);
		if (p && p->run_log && k < nlog && keys[k].pid == u[i].pid && keys[k].task == u[i].task_id) {
			cross_check(runs, keys, k, nlog, u, i, j);
			i = j;
			continue;
		}
		for (; i < j; i++) {
			struct th_rec_run *x = vec_push(runs);
			if (!x) {
				free(keys);
				return -1;
			}
			*x = (struct th_rec_run){ .pid = u[i].pid, .task_id = u[i].task_id,
						  .worker = u[i].worker, .tid = u[i].tid, .cpu = -1,
						  .usdt_cpu = u[i].cpu, .start_ns = u[i].start,
						  .end_ns = u[i].open ? s->t_stop : u[i].end,
						  .usdt_ts_ns = u[i].start, .why = u[i].open ? 0 : u[i].why };
		}
	}
	free(keys);
	return 0;
}

/* kthread tasks bound with th_record_bind_thread and not seen otherwise: one run that
 * covers the recording, on their own thread. */
static int add_binds(const struct rec_scope *s, const struct rec_collected *c, struct vec *runs)
{
	size_t seen_n = runs->n; /* the runs seen: logged or USDT */
	for (size_t i = 0; i < c->binds.n; i++) {
		const struct rec_bind *b = VAT(c->binds, struct rec_bind, i);
		int seen = 0;
		for (size_t j = 0; j < seen_n && !seen; j++) {
			const struct th_rec_run *x = VAT(*runs, struct th_rec_run, j);
			seen = x->pid == b->pid && x->task_id == b->task_id;
		}
		if (seen)
			continue;
		struct th_rec_run *x = vec_push(runs);
		if (!x)
			return -1;
		*x = (struct th_rec_run){ .pid = b->pid, .task_id = b->task_id, .worker = -1, .tid = b->tid,
					  .cpu = -1, .usdt_cpu = -1, .start_ns = s->t_start,
					  .end_ns = s->t_stop };
	}
	return 0;
}

/* ---- intervals --------------------------------------------------------------------- */

size_t rec_first_ending_after(const struct rec_ival *iv, size_t lo, size_t hi, uint64_t ts)
{
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (iv[mid].end < ts)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* An estimated start is at the latest the real one: the kernel's count of the thread's
 * CPU time leaves out the interrupts it took. An estimated end is at the earliest the
 * real one, for the same reason. The gap beside either may have been on that CPU. */
int rec_gap_cpu(const struct rec_ival *iv, size_t lo, size_t hi, size_t i, uint64_t ts)
{
	if (i < hi && iv[i].start > ts && (iv[i].flags & TH_EVF_START_EST))
		return iv[i].cpu;
	if (i > lo && i <= hi && iv[i - 1].end < ts && (iv[i - 1].flags & TH_EVF_END_EST))
		return iv[i - 1].cpu;
	return -1;
}

/* After the sort by (thread, end), before any use of `start`: gives every interval a
 * start, and makes a thread's intervals and run-queue waits disjoint, since a thread is
 * on one CPU at a time and waits only while off it. An unknown start (on a CPU when
 * recording began) becomes the recording's start only for a thread's first interval;
 * later ones cannot start before the previous interval ended. Waits are cut to the time
 * since the previous interval (or the recording's start). So per thread, on-CPU +
 * run-queue wait never exceed the time it was followed, whatever the kernel side missed. */
static void settle_intervals(const struct rec_scope *s, struct vec *ivals)
{
	struct rec_ival *iv = ivals->p;
	for (size_t i = 0; i < ivals->n; i++) {
		int first = i == 0 || iv[i - 1].pid != iv[i].pid || iv[i - 1].tid != iv[i].tid;
		uint64_t floor = first ? s->t_start : iv[i - 1].end;
		uint64_t st = (iv[i].flags & TH_EVF_START_UNKNOWN) || !iv[i].start ? floor : iv[i].start;
		if (!first && st < floor) /* overlaps the previous one: cannot be */
			st = floor;
		iv[i].start = st < iv[i].end ? st : iv[i].end;
		/* what is before the recording or before the previous interval is not a wait */
		uint64_t room = iv[i].start > floor ? iv[i].start - floor : 0;
		if (first && iv[i].start < s->t_start)
			room = 0;
		if (iv[i].wait_ns > room)
			iv[i].wait_ns = room;
	}
}

/* ---- the join of one thread's runs with its intervals ------------------------------- */

struct run_acc {
	uint64_t on_ns, wait_ns, preempt;
	uint64_t wait_max, wait_end; /* its largest single wait and when that wait ended */
	uint64_t blocked_ns, blocks; /* switch-outs not runnable during the run */
	uint64_t kmig;               /* kernel migrations of its thread charged to it */
	size_t seg_lo, nsegs;        /* its stretches on a CPU: segs[seg_lo, seg_lo + nsegs) */
};

/* One stretch of a run on one CPU (an interval it overlaps), in time order within the
 * run: taken in task order, the CPU sequence of each task. */
struct seg {
	int tid, cpu;
};

/* Joins the runs of one thread [rlo, rhi) with its intervals [ilo, ihi). */
static int join_thread(struct th_rec_run *runs, struct run_acc *acc, size_t rlo, size_t rhi,
		       const struct rec_ival *iv, size_t ilo, size_t ihi, struct vec *segs)
{
	for (size_t k = rlo; k < rhi; k++) {
		struct th_rec_run *x = &runs[k];
		uint64_t s = x->start_ns, e = x->end_ns;
		x->cpu = -1;
		acc[k].seg_lo = segs->n;
		size_t first = rec_first_ending_after(iv, ilo, ihi, s);
		for (size_t i = first; i < ihi; i++) {
			uint64_t is = iv[i].start;
			if (is > e)
				break;
			uint64_t a = is > s ? is : s, b = iv[i].end < e ? iv[i].end : e;
			if (x->cpu < 0)
				x->cpu = iv[i].cpu; /* the interval holding the start, or the first after */
			acc[k].on_ns += b > a ? b - a : 0;
			if ((iv[i].flags & TH_EVF_PREEMPTED) && iv[i].end > s && iv[i].end < e)
				acc[k].preempt++;
			struct seg *g = vec_push(segs);
			if (!g)
				return -1;
			*g = (struct seg){ x->tid, iv[i].cpu };
		}
		if (x->cpu < 0 && (x->cpu = rec_gap_cpu(iv, ilo, ihi, first, s)) >= 0) {
			struct seg *g = vec_push(segs); /* a run inside an undated gap */
			if (!g)
				return -1;
			*g = (struct seg){ x->tid, x->cpu };
		}
		acc[k].nsegs = segs->n - acc[k].seg_lo;
	}
	/* Run-queue wait before an interval goes to the run current when the thread got the
	 * CPU back, or else to the first run the thread then started. */
	size_t k = rlo;
	for (size_t i = ilo; i < ihi; i++) {
		if (!iv[i].wait_ns)
			continue;
		uint64_t is = iv[i].start;
		while (k < rhi && runs[k].end_ns < is)
			k++;
		if (k < rhi && runs[k].start_ns <= iv[i].end) {
			acc[k].wait_ns += iv[i].wait_ns;
			if (iv[i].wait_ns > acc[k].wait_max) {
				acc[k].wait_max = iv[i].wait_ns;
				acc[k].wait_end = is;
			}
		}
	}
	return 0;
}

/* Blocks in the kernel of one thread, charged to its runs [rlo, rhi): a switch-out that
 * left the thread not runnable (no TH_EVF_PREEMPTED) strictly inside a run, while the
 * slot, when it says anything, names that run's task. The runtime's own idle futex wait
 * happens between runs, so it never counts. Blocked from the switch-out to the wakeup
 * (the next interval's start less its run-queue wait), at most to the run's end. A
 * thread that never came back on a CPU (it exited: a kthread-policy task's thread, or
 * still blocked when recording stopped) has no wakeup to date: not counted. */
static void charge_blocks(const struct th_rec_run *runs, struct run_acc *acc, size_t rlo,
			  size_t rhi, const struct rec_ival *iv, size_t ilo, size_t ihi)
{
	size_t k = rlo;
	for (size_t i = ilo; i + 1 < ihi; i++) {
		uint64_t out = iv[i].end;
		while (k < rhi && runs[k].end_ns <= out)
			k++;
		if (k == rhi)
			return;
		if ((iv[i].flags & TH_EVF_PREEMPTED) || runs[k].start_ns >= out ||
		    (iv[i].task_id && iv[i].task_id != runs[k].task_id))
			continue;
		uint64_t wake = iv[i + 1].start - iv[i + 1].wait_ns;
		if (wake > runs[k].end_ns)
			wake = runs[k].end_ns;
		acc[k].blocks++;
		acc[k].blocked_ns += wake > out ? wake - out : 0;
	}
}

/* Every thread's runs with its intervals; runs sorted by (pid, tid, start), intervals
 * by (pid, tid, end). */
static int join_threads(struct vec *runv, const struct vec *ivals, struct run_acc *acc,
			struct vec *segs)
{
	struct th_rec_run *runs = runv->p;
	const struct rec_ival *iv = ivals->p;
	size_t ii = 0;
	for (size_t k = 0; k < runv->n;) {
		size_t kk = k;
		while (kk < runv->n && runs[kk].pid == runs[k].pid && runs[kk].tid == runs[k].tid)
			kk++;
		while (ii < ivals->n && (iv[ii].pid < runs[k].pid ||
					 (iv[ii].pid == runs[k].pid && iv[ii].tid < runs[k].tid)))
			ii++;
		size_t ij = ii;
		while (ij < ivals->n && iv[ij].pid == runs[k].pid && iv[ij].tid == runs[k].tid)
			ij++;
		if (join_thread(runs, acc, k, kk, iv, ii, ij, segs) != 0)
			return -1;
		charge_blocks(runs, acc, k, kk, iv, ii, ij);
		k = kk;
	}
	return 0;
}

/* Each kernel migration of a thread that ran tasks goes to one run: the run going on
 * when it happened, else the thread's next run; none after its last. Runs are sorted
 * by (pid, tid, start) and do not overlap on a thread. */
static void charge_migrations(const struct vec *runv, const struct vec *migs, struct run_acc *acc)
{
	const struct th_rec_run *runs = runv->p;
	size_t n = runv->n;
	for (size_t i = 0; i < migs->n; i++) {
		const struct th_rec_migration *m = VAT(*migs, struct th_rec_migration, i);
		size_t lo = 0, hi = n;
		while (lo < hi) { /* first run of the thread ending at or after the migration */
			size_t mid = lo + (hi - lo) / 2;
			const struct th_rec_run *x = &runs[mid];
			int before = x->pid < m->pid || (x->pid == m->pid && (x->tid < m->tid ||
				     (x->tid == m->tid && x->end_ns < m->ts_ns)));
			if (before)
				lo = mid + 1;
			else
				hi = mid;
		}
		if (lo < n && runs[lo].pid == m->pid && runs[lo].tid == m->tid)
			acc[lo].kmig++;
	}
}

/* ---- per task ---------------------------------------------------------------------- */

static struct th_rec_task *task_entry(struct vec *tasks, int pid, uint64_t id)
{
	if (tasks->n) {
		struct th_rec_task *t = VAT(*tasks, struct th_rec_task, tasks->n - 1);
		if (t->pid == pid && t->task_id == id)
			return t;
	}
	struct th_rec_task *t = vec_push(tasks);
	if (t) {
		t->pid = pid;
		t->task_id = id;
		t->first_cpu = t->last_cpu = -1;
		t->first_worker = t->last_worker = t->spawn_worker = -1;
	}
	return t;
}

static struct th_rec_task *find_task(const struct vec *tasks, int pid, uint64_t id)
{
	struct th_rec_task key = { .pid = pid, .task_id = id };
	return tasks->n ? bsearch(&key, tasks->p, tasks->n, sizeof(key), task_cmp) : NULL;
}

const struct th_rec_task *rec_joined_task(const struct rec_joined *j, int pid, uint64_t id)
{
	return find_task(&j->tasks, pid, id);
}

/* One run's stretches on CPUs into its task's CPU sequence: migrations (and those where
 * its thread stayed the same: the kernel moved it), CPUs visited, first and last CPU.
 * *prev is the task's stretch before these (NULL: none yet). */
static void fold_run_segments(struct th_rec_task *t, const struct seg *g, size_t n,
			      const struct seg **prev)
{
	for (size_t i = 0; i < n; i++) {
		const struct seg *p = *prev;
		int cpu = g[i].cpu;
		*prev = &g[i]; /* the next stretch compares with this one, even if it is skipped */
		if (cpu < 0 || cpu >= TH_REC_MAX_CPUS)
			continue;
		if (p && p->cpu != cpu) {
			t->cpu_migrations++;
			if (p->tid == g[i].tid) /* same worker thread: the kernel moved it */
				t->worker_cpu_changes++;
		}
		if (!(t->cpu_mask[cpu / 64] & (1ull << (cpu % 64)))) {
			t->cpu_mask[cpu / 64] |= 1ull << (cpu % 64);
			t->ncpus_visited++;
		}
		if (t->first_cpu < 0)
			t->first_cpu = cpu;
		t->last_cpu = cpu;
	}
}

/* One run (in task order) into its task's entry, and the per-run sums into the run. */
static void fold_run(struct th_rec_task *t, struct th_rec_run *x, const struct run_acc *a,
		     int prev_worker)
{
	if (t->runs && x->worker != prev_worker)
		t->worker_hops++;
	if (!t->runs)
		t->first_worker = x->worker;
	t->last_worker = x->worker;
	t->runs++;
	t->yields += x->why == TH_WHY_YIELD;
	t->done_ns = x->why == TH_WHY_DONE ? x->end_ns : 0;
	t->on_cpu_ns += a->on_ns;
	t->runq_wait_ns += a->wait_ns;
	t->preemptions += a->preempt;
	t->kernel_blocked_ns += a->blocked_ns;
	t->kernel_blocks += a->blocks;
	t->cpu_migrations_kernel += a->kmig;
	x->on_cpu_ns = a->on_ns;
	x->runq_wait_ns = a->wait_ns;
	x->runq_wait_end_ns = a->wait_end;
	if (a->wait_ns > t->max_runq_wait_ns) { /* the first run wins a tie */
		t->max_runq_wait_ns = a->wait_ns;
		t->max_runq_wait_at_ns = a->wait_end;
	}
}

/* Runs in task order: the task entries (sorted by (pid, task), as they are made in
 * that order), runs, hops, yields, CPU sequences and the per-run sums. runs come sorted
 * by thread, with acc and the stretches in that order; they leave in task order, (pid,
 * task, start), as timelines want them, copied as they are folded: one pass that reads
 * each run once, where it is, and writes the new order in sequence. */
static int fold_runs(struct vec *runv, const struct run_acc *acc, const struct vec *segv,
		     struct vec *tasks)
{
	const struct th_rec_run *runs = runv->p;
	size_t n = runv->n;
	struct vec sorted = VEC(struct th_rec_run);
	struct task_key *idx = calloc(n + 1, sizeof(*idx));
	if (!idx || vec_reserve(&sorted, n) != 0) {
		free(idx);
		return -1;
	}
	for (size_t i = 0; i < n; i++)
		idx[i] = (struct task_key){ runs[i].pid, runs[i].task_id, runs[i].start_ns, i };
	if (rec_sort_task_keys(idx, n) != 0)
		goto oom;
	struct th_rec_run *dst = sorted.p;
	const struct seg *segs = segv->p, *prev_seg = NULL;
	struct th_rec_task *cur = NULL;
	int prev_worker = -1;
	for (size_t i = 0; i < n; i++) {
		struct th_rec_run *x = &dst[i];
		*x = runs[idx[i].idx];
		struct th_rec_task *t = task_entry(tasks, x->pid, x->task_id);
		if (!t)
			goto oom;
		if (t != cur)
			prev_seg = NULL;
		cur = t;
		const struct run_acc *a = &acc[idx[i].idx];
		fold_run(t, x, a, prev_worker);
		prev_worker = x->worker;
		fold_run_segments(t, segs + a->seg_lo, a->nsegs, &prev_seg);
	}
	free(idx);
	sorted.n = n;
	vec_free(runv);
	*runv = sorted;
	return 0;
oom:
	free(idx);
	vec_free(&sorted);
	return -1;
}

/* Who spawned each task, and the USDT cross-check: runs and worker hops as the probes
 * saw them (uruns sorted by task). */
static void fold_usdt(const struct rec_collected *c, const struct vec *tasks)
{
	for (size_t i = 0; i < c->spawns.n; i++) {
		const struct rec_spawn *sp = VAT(c->spawns, struct rec_spawn, i);
		struct th_rec_task *t = find_task(tasks, sp->pid, sp->task_id);
		if (t)
			t->spawn_worker = sp->worker;
	}
	const struct rec_usdt_run *u = c->uruns.p;
	for (size_t i = 0; i < c->uruns.n; i++) {
		struct th_rec_task *t = find_task(tasks, u[i].pid, u[i].task_id);
		if (!t)
			continue;
		if (t->usdt_runs && u[i].worker != u[i - 1].worker)
			t->usdt_worker_hops++;
		t->usdt_runs++;
	}
}

/* ---- per worker thread ------------------------------------------------------------- */

/* The figures of one thread from its intervals [i, j), clipped to the recording. */
static void thread_figures(const struct rec_scope *s, const struct rec_ival *iv, size_t i,
			   size_t j, struct th_rec_worker *x)
{
	uint64_t first = s->t_stop;
	for (size_t k = i; k < j; k++) {
		uint64_t st = iv[k].start, e = iv[k].end;
		/* the wait just before the interval, inside the recording only */
		uint64_t ws = st - iv[k].wait_ns, we = st;
		ws = ws < s->t_start ? s->t_start : ws;
		we = we > s->t_stop ? s->t_stop : we;
		st = st < s->t_start ? s->t_start : st;
		e = e > s->t_stop ? s->t_stop : e;
		first = st < first ? st : first;
		if (iv[k].host_tid)
			x->host_tid = iv[k].host_tid;
		x->on_cpu_ns += e > st ? e - st : 0;
		x->switches++;
		x->runq_wait_ns += we > ws ? we - ws : 0;
		x->preemptions += !!(iv[k].flags & TH_EVF_PREEMPTED);
		if (k > i && iv[k].cpu != iv[k - 1].cpu)
			x->cpu_migrations++;
	}
	uint64_t span = s->t_stop > first ? s->t_stop - first : 0;
	x->off_cpu_ns = span > x->on_cpu_ns ? span - x->on_cpu_ns : 0;
}

/* The first run of thread (pid, tid) in runs sorted by (pid, tid, start), or where it
 * would be. */
static size_t first_run_of(const struct vec *runv, int pid, int tid)
{
	const struct th_rec_run *runs = runv->p;
	size_t lo = 0, hi = runv->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (runs[mid].pid < pid || (runs[mid].pid == pid && runs[mid].tid < tid))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* An entry per followed thread that is a worker's, a runtime thread or ran a task. */
static int worker_figures(const struct rec_scope *s, const struct rec_collected *c,
			  const struct vec *runv, const struct run_acc *acc, const struct vec *ivals,
			  struct vec *workers)
{
	const struct rec_ival *iv = ivals->p;
	const struct th_rec_run *runs = runv->p;
	for (size_t i = 0; i < ivals->n;) {
		size_t j = i;
		while (j < ivals->n && iv[j].pid == iv[i].pid && iv[j].tid == iv[i].tid)
			j++;
		int w = worker_of(s, c, iv[i].pid, iv[i].tid);
		int thread = thread_of(s, iv[i].pid, iv[i].tid);
		int has_runs = 0;
		uint64_t blocked_ns = 0, blocks = 0;
		for (size_t k = first_run_of(runv, iv[i].pid, iv[i].tid);
		     k < runv->n && runs[k].pid == iv[i].pid && runs[k].tid == iv[i].tid; k++) {
			has_runs = 1;
			blocked_ns += acc[k].blocked_ns;
			blocks += acc[k].blocks;
		}
		if (w >= 0 || thread >= 0 || has_runs) {
			struct th_rec_worker *x = vec_push(workers);
			if (!x)
				return -1;
			x->pid = iv[i].pid;
			x->tid = iv[i].tid;
			x->worker = w;
			x->thread = thread;
			x->kernel_blocked_ns = blocked_ns;
			x->kernel_blocks = blocks;
			thread_figures(s, iv, i, j, x);
		}
		i = j;
	}
	return 0;
}

/* ---- the join ---------------------------------------------------------------------- */

/* The runs with their CPUs and figures, then workers and tasks, into out; the runs end
 * in task order. */
static int figures(const struct rec_scope *s, const struct rec_collected *c, struct rec_joined *out)
{
	sort_n(out->runs.p, out->runs.n, sizeof(struct th_rec_run), run_thread_cmp);
	struct run_acc *acc = calloc(out->runs.n + 1, sizeof(*acc));
	struct vec segs = VEC(struct seg);
	int rc = acc ? 0 : -1;
	if (rc == 0)
		rc = join_threads(&out->runs, &out->ivals, acc, &segs);
	if (rc == 0) {
		charge_migrations(&out->runs, &out->migs, acc);
		rc = worker_figures(s, c, &out->runs, acc, &out->ivals, &out->workers);
	}
	if (rc == 0)
		rc = fold_runs(&out->runs, acc, &segs, &out->tasks);
	if (rc == 0)
		fold_usdt(c, &out->tasks);
	free(acc);
	vec_free(&segs);
	return rc;
}

/* dst takes src's elements; src is left empty. */
static void vec_move(struct vec *dst, struct vec *src)
{
	*dst = *src;
	src->p = NULL;
	src->n = src->cap = src->mapped = 0;
}

int rec_join(const struct rec_scope *s, struct rec_collected *c, struct rec_joined *out)
{
	out->tasks = (struct vec)VEC(struct th_rec_task);
	out->workers = (struct vec)VEC(struct th_rec_worker);
	vec_move(&out->runs, &c->runs);
	vec_move(&out->ivals, &c->ivals);
	vec_move(&out->migs, &c->migs);
	clear_joined_fields(&out->runs);
	if (build_runs(s, c, &out->runs) != 0 || add_binds(s, c, &out->runs) != 0)
		goto oom;
	sort_n(out->ivals.p, out->ivals.n, sizeof(struct rec_ival), ival_cmp);
	settle_intervals(s, &out->ivals);
	for (size_t i = 0; i < out->migs.n; i++) {
		struct th_rec_migration *m = VAT(out->migs, struct th_rec_migration, i);
		m->worker = worker_of(s, c, m->pid, m->tid);
	}
	if (figures(s, c, out) != 0)
		goto oom;
	if (!is_sorted(out->tasks.p, out->tasks.n, sizeof(struct th_rec_task), task_cmp))
		sort_n(out->tasks.p, out->tasks.n, sizeof(struct th_rec_task), task_cmp);
	sort_n(out->workers.p, out->workers.n, sizeof(struct th_rec_worker), worker_cmp);
	return 0;
oom:
	rec_joined_free(out);
	return -1;
}
