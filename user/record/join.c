/* join.c — turns the recorder's raw material (kernel on-CPU intervals, migrations, run
 * logs, USDT events) into per-run CPUs and per-task / per-worker figures. */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "record_int.h"
#include "taskhop.h"

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

static int is_self(struct th_record *r, int pid)
{
	for (int i = 0; i < r->ntg; i++)
		if (r->tg[i].pid == pid)
			return r->tg[i].self;
	return 0;
}

/* ---- runs: from the run logs, from USDT, from kthread bindings ------------------ */

/* Index of the first run of (pid, task) in runs sorted by (pid, task, start). */
struct task_key { int pid; uint64_t task; uint64_t start; size_t idx; };

static int tkey_cmp(const void *x, const void *y)
{
	const struct task_key *a = x, *b = y;
	int c = CMP(a->pid, b->pid);
	if (!c) c = CMP(a->task, b->task);
	if (!c) c = CMP(a->start, b->start);
	return c;
}

/* Self target with USDT: the i-th USDT run of a task is its i-th logged run; USDT runs
 * of tasks with no logged run (kthread policy) become runs of their own. Other
 * targets: every USDT run is a run. */
static int build_runs(struct th_record *r)
{
	size_t nlog = r->runs.n, nu = r->uruns.n;
	struct task_key *keys = calloc(nlog + 1, sizeof(*keys));
	if (!keys)
		return -1;
	for (size_t i = 0; i < nlog; i++) {
		struct th_rec_run *x = VAT(r->runs, struct th_rec_run, i);
		keys[i] = (struct task_key){ x->pid, x->task_id, x->start_ns, i };
	}
	sort_n(keys, nlog, sizeof(*keys), tkey_cmp);
	sort_n(r->uruns.p, nu, sizeof(struct rec_usdt_run), urun_task_cmp);
	size_t k = 0;
	for (size_t i = 0; i < nu;) {
		struct rec_usdt_run *u = VAT(r->uruns, struct rec_usdt_run, i);
		size_t j = i;
		while (j < nu && VAT(r->uruns, struct rec_usdt_run, j)->pid == u->pid &&
		       VAT(r->uruns, struct rec_usdt_run, j)->task_id == u->task_id)
			j++;
		while (k < nlog && (keys[k].pid < u->pid || (keys[k].pid == u->pid && keys[k].task < u->task_id)))
			k++;
		int logged = is_self(r, u->pid) && k < nlog && keys[k].pid == u->pid &&
			     keys[k].task == u->task_id;
		for (size_t m = i; m < j; m++) {
			struct rec_usdt_run *v = VAT(r->uruns, struct rec_usdt_run, m);
			if (logged) {
				size_t kk = k + (m - i);
				if (kk < nlog && keys[kk].pid == u->pid && keys[kk].task == u->task_id) {
					struct th_rec_run *x = VAT(r->runs, struct th_rec_run, keys[kk].idx);
					x->usdt_cpu = v->cpu;
					x->usdt_ts_ns = v->start;
				}
				continue;
			}
			struct th_rec_run *x = vec_push(&r->runs);
			if (!x) {
				free(keys);
				return -1;
			}
			*x = (struct th_rec_run){ .pid = v->pid, .task_id = v->task_id, .worker = v->worker,
						  .tid = v->tid, .cpu = -1, .usdt_cpu = v->cpu,
						  .start_ns = v->start, .end_ns = v->open ? r->t_stop : v->end,
						  .usdt_ts_ns = v->start, .why = v->open ? 0 : v->why };
		}
		i = j;
	}
	free(keys);
	for (size_t i = 0; i < r->runs.n; i++) {
		struct th_rec_run *b = vec_push(&r->base_runs);
		if (!b)
			return -1;
		*b = *VAT(r->runs, struct th_rec_run, i);
	}
	r->runs_built = 1;
	return 0;
}

/* kthread tasks bound with th_record_bind_thread and not seen by USDT: one run that
 * covers the recording, on their own thread. */
static int add_binds(struct th_record *r)
{
	r->runs.n = 0; /* rebuilt from the base runs: bindings may come after a first query */
	for (size_t i = 0; i < r->base_runs.n; i++) {
		struct th_rec_run *x = vec_push(&r->runs);
		if (!x)
			return -1;
		*x = *VAT(r->base_runs, struct th_rec_run, i);
	}
	for (size_t i = 0; i < r->binds.n; i++) {
		struct th_rec_run *b = VAT(r->binds, struct th_rec_run, i);
		int seen = 0;
		for (size_t j = 0; j < r->base_runs.n && !seen; j++) {
			struct th_rec_run *x = VAT(r->base_runs, struct th_rec_run, j);
			seen = x->pid == b->pid && x->task_id == b->task_id;
		}
		if (seen)
			continue;
		struct th_rec_run *x = vec_push(&r->runs);
		if (!x)
			return -1;
		*x = (struct th_rec_run){ .pid = b->pid, .task_id = b->task_id, .worker = -1, .tid = b->tid,
					  .cpu = -1, .usdt_cpu = -1, .start_ns = r->t_start,
					  .end_ns = r->t_stop };
	}
	return 0;
}

/* ---- the join ---------------------------------------------------------------------- */

struct run_acc {
	uint64_t on_ns, wait_ns, preempt;
	uint64_t wait_max, wait_end; /* its largest single wait and when that wait ended */
	uint64_t blocked_ns, blocks; /* switch-outs not runnable during the run */
	uint64_t kmig;               /* kernel migrations of its thread charged to it */
};

/* One stretch of a task on one CPU, in time order per task: the CPU sequence. */
struct seg {
	int pid, tid, cpu;
	uint64_t task, t;
};

static int seg_cmp(const void *x, const void *y)
{
	const struct seg *a = x, *b = y;
	int c = CMP(a->pid, b->pid);
	if (!c) c = CMP(a->task, b->task);
	if (!c) c = CMP(a->t, b->t);
	return c;
}

/* First interval index in [lo, hi) whose end >= ts (intervals of one thread). */
static size_t first_ending_after(const struct rec_ival *iv, size_t lo, size_t hi, uint64_t ts)
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

/* After the sort by (thread, end), before any use of `start`: gives every interval a start, and makes a thread's
 * intervals and run-queue waits disjoint, since a thread is on one CPU at a time and
 * waits only while off it. An unknown start (on a CPU when recording began) becomes
 * the recording's start only for a thread's first interval; later ones cannot start
 * before the previous interval ended. Waits are cut to the time since the previous
 * interval (or the recording's start). So per thread, on-CPU + run-queue wait never
 * exceed the time it was followed, whatever the kernel side missed. */
static void settle_intervals(struct th_record *r)
{
	struct rec_ival *iv = r->ivals.p;
	for (size_t i = 0; i < r->ivals.n; i++) {
		int first = i == 0 || iv[i - 1].pid != iv[i].pid || iv[i - 1].tid != iv[i].tid;
		uint64_t floor = first ? r->t_start : iv[i - 1].end;
		uint64_t s = (iv[i].flags & TH_EVF_START_UNKNOWN) || !iv[i].start ? floor : iv[i].start;
		if (!first && s < floor) /* overlaps the previous one: cannot be */
			s = floor;
		iv[i].start = s < iv[i].end ? s : iv[i].end;
		/* what is before the recording or before the previous interval is not a wait */
		uint64_t room = iv[i].start > floor ? iv[i].start - floor : 0;
		if (first && iv[i].start < r->t_start)
			room = 0;
		if (iv[i].wait_ns > room)
			iv[i].wait_ns = room;
	}
}

/* Joins the runs of one thread [rlo, rhi) with its intervals [ilo, ihi). */
static int join_thread(struct th_rec_run *runs, struct run_acc *acc, size_t rlo, size_t rhi,
		       const struct rec_ival *iv, size_t ilo, size_t ihi, struct vec *segs)
{
	for (size_t k = rlo; k < rhi; k++) {
		struct th_rec_run *x = &runs[k];
		uint64_t s = x->start_ns, e = x->end_ns;
		x->cpu = -1;
		for (size_t i = first_ending_after(iv, ilo, ihi, s); i < ihi; i++) {
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
			*g = (struct seg){ x->pid, x->tid, iv[i].cpu, x->task_id, a };
		}
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

/* Each kernel migration of a thread that ran tasks goes to one run: the run going on
 * when it happened, else the thread's next run; none after its last. Runs are sorted
 * by (pid, tid, start) and do not overlap on a thread. */
static void charge_migrations(struct th_record *r, struct run_acc *acc)
{
	const struct th_rec_run *runs = r->runs.p;
	size_t n = r->runs.n;
	for (size_t i = 0; i < r->migs.n; i++) {
		const struct th_rec_migration *m = VAT(r->migs, struct th_rec_migration, i);
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

/* The self target's runtime thread with this tid, or -1. */
static int thread_of(struct th_record *r, int pid, int tid)
{
	if (is_self(r, pid))
		for (int i = 0; i < r->nself; i++)
			if (r->self_tids[i] == tid)
				return i;
	return -1;
}

/* The worker a thread started serving; -1 for the self target's spare threads, which
 * serve whichever worker they take over (activations). */
static int worker_of(struct th_record *r, int pid, int tid)
{
	int thread = thread_of(r, pid, tid);
	if (thread >= 0)
		return thread < r->nself_workers ? thread : -1;
	for (size_t i = 0; i < r->wstart.n; i++) {
		struct th_rec_worker *w = VAT(r->wstart, struct th_rec_worker, i);
		if (w->pid == pid && w->tid == tid)
			return w->worker;
	}
	/* attached after worker_start (-p): the worker task_run names on this thread */
	for (size_t i = 0; i < r->uruns.n; i++) {
		struct rec_usdt_run *u = VAT(r->uruns, struct rec_usdt_run, i);
		if (u->pid == pid && u->tid == tid)
			return u->worker;
	}
	return -1;
}

static struct th_rec_task *task_entry(struct th_record *r, int pid, uint64_t id)
{
	if (r->tasks.n) {
		struct th_rec_task *t = VAT(r->tasks, struct th_rec_task, r->tasks.n - 1);
		if (t->pid == pid && t->task_id == id)
			return t;
	}
	struct th_rec_task *t = vec_push(&r->tasks);
	if (t) {
		t->pid = pid;
		t->task_id = id;
		t->first_cpu = t->last_cpu = -1;
		t->first_worker = t->last_worker = t->spawn_worker = -1;
	}
	return t;
}

static int task_cmp(const void *x, const void *y)
{
	const struct th_rec_task *a = x, *b = y;
	int c = CMP(a->pid, b->pid);
	return c ? c : CMP(a->task_id, b->task_id);
}

static int run_task_cmp(const void *x, const void *y)
{
	const struct th_rec_run *a = x, *b = y;
	int c = CMP(a->pid, b->pid);
	if (!c) c = CMP(a->task_id, b->task_id);
	if (!c) c = CMP(a->start_ns, b->start_ns);
	return c;
}

static struct th_rec_task *find_task(struct th_record *r, int pid, uint64_t id)
{
	struct th_rec_task key = { .pid = pid, .task_id = id };
	return r->tasks.n ? bsearch(&key, r->tasks.p, r->tasks.n, sizeof(key), task_cmp) : NULL;
}

/* Per task: runs, hops, CPU sequence (total and kernel-caused changes), CPUs. */
static int task_figures(struct th_record *r, struct run_acc *acc, struct vec *segs)
{
	struct th_rec_run *runs = r->runs.p;
	/* runs are sorted by thread here; acc follows them. Fold acc into the runs' order
	 * by task without losing the pairing: sort an index. */
	size_t n = r->runs.n;
	struct task_key *idx = calloc(n + 1, sizeof(*idx));
	if (!idx)
		return -1;
	for (size_t i = 0; i < n; i++)
		idx[i] = (struct task_key){ runs[i].pid, runs[i].task_id, runs[i].start_ns, i };
	sort_n(idx, n, sizeof(*idx), tkey_cmp);
	int prev_worker = -1;
	for (size_t i = 0; i < n; i++) {
		struct th_rec_run *x = &runs[idx[i].idx];
		struct th_rec_task *t = task_entry(r, x->pid, x->task_id);
		if (!t) {
			free(idx);
			return -1;
		}
		if (t->runs && x->worker != prev_worker)
			t->worker_hops++;
		if (!t->runs)
			t->first_worker = x->worker;
		t->last_worker = prev_worker = x->worker;
		t->runs++;
		t->yields += x->why == TH_WHY_YIELD;
		t->done_ns = x->why == TH_WHY_DONE ? x->end_ns : 0;
		const struct run_acc *a = &acc[idx[i].idx];
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
	free(idx);
	sort_n(segs->p, segs->n, sizeof(struct seg), seg_cmp);
	for (size_t i = 0; i < segs->n; i++) {
		struct seg *g = VAT(*segs, struct seg, i);
		struct th_rec_task *t = find_task(r, g->pid, g->task);
		if (!t || g->cpu < 0 || g->cpu >= TH_REC_MAX_CPUS)
			continue;
		if (i > 0) {
			struct seg *p = VAT(*segs, struct seg, i - 1);
			if (p->pid == g->pid && p->task == g->task && p->cpu != g->cpu) {
				t->cpu_migrations++;
				if (p->tid == g->tid) /* same worker thread: the kernel moved it */
					t->worker_cpu_changes++;
			}
		}
		if (!(t->cpu_mask[g->cpu / 64] & (1ull << (g->cpu % 64)))) {
			t->cpu_mask[g->cpu / 64] |= 1ull << (g->cpu % 64);
			t->ncpus_visited++;
		}
		if (t->first_cpu < 0)
			t->first_cpu = g->cpu;
		t->last_cpu = g->cpu;
	}
	for (size_t i = 0; i < r->spawns.n; i++) {
		struct rec_spawn *sp = VAT(r->spawns, struct rec_spawn, i);
		struct th_rec_task *t = find_task(r, sp->pid, sp->task_id);
		if (t)
			t->spawn_worker = sp->worker;
	}
	/* the USDT cross-check: runs and worker hops as the probes saw them */
	struct rec_usdt_run *u = r->uruns.p;
	for (size_t i = 0; i < r->uruns.n; i++) {
		struct th_rec_task *t = find_task(r, u[i].pid, u[i].task_id);
		if (!t)
			continue;
		if (t->usdt_runs && u[i].worker != u[i - 1].worker)
			t->usdt_worker_hops++;
		t->usdt_runs++;
	}
	return 0;
}

static int worker_figures(struct th_record *r, const struct run_acc *acc)
{
	struct rec_ival *iv = r->ivals.p;
	struct th_rec_run *runs = r->runs.p;
	for (size_t i = 0; i < r->ivals.n;) {
		size_t j = i;
		while (j < r->ivals.n && iv[j].pid == iv[i].pid && iv[j].tid == iv[i].tid)
			j++;
		int w = worker_of(r, iv[i].pid, iv[i].tid);
		int thread = thread_of(r, iv[i].pid, iv[i].tid);
		int has_runs = 0;
		uint64_t blocked_ns = 0, blocks = 0;
		for (size_t k = 0; k < r->runs.n; k++)
			if (runs[k].pid == iv[i].pid && runs[k].tid == iv[i].tid) {
				has_runs = 1;
				blocked_ns += acc[k].blocked_ns;
				blocks += acc[k].blocks;
			}
		if (w >= 0 || thread >= 0 || has_runs) {
			struct th_rec_worker *x = vec_push(&r->workers);
			if (!x)
				return -1;
			x->pid = iv[i].pid;
			x->tid = iv[i].tid;
			x->worker = w;
			x->thread = thread;
			x->kernel_blocked_ns = blocked_ns;
			x->kernel_blocks = blocks;
			uint64_t first = r->t_stop;
			for (size_t k = i; k < j; k++) {
				uint64_t s = iv[k].start, e = iv[k].end;
				/* the wait just before the interval, inside the recording only */
				uint64_t ws = s - iv[k].wait_ns, we = s;
				ws = ws < r->t_start ? r->t_start : ws;
				we = we > r->t_stop ? r->t_stop : we;
				s = s < r->t_start ? r->t_start : s;
				e = e > r->t_stop ? r->t_stop : e;
				first = s < first ? s : first;
				if (iv[k].host_tid)
					x->host_tid = iv[k].host_tid;
				x->on_cpu_ns += e > s ? e - s : 0;
				x->switches++;
				x->runq_wait_ns += we > ws ? we - ws : 0;
				x->preemptions += !!(iv[k].flags & TH_EVF_PREEMPTED);
				if (k > i && iv[k].cpu != iv[k - 1].cpu)
					x->cpu_migrations++;
			}
			uint64_t span = r->t_stop > first ? r->t_stop - first : 0;
			x->off_cpu_ns = span > x->on_cpu_ns ? span - x->on_cpu_ns : 0;
		}
		i = j;
	}
	return 0;
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

void rec_free_results(struct th_record *r)
{
	vec_free(&r->tasks);
	vec_free(&r->workers);
}

int rec_analyse(struct th_record *r)
{
	if (!r->stopped) {
		rec_set_error("results are ready after th_record_stop");
		return -1;
	}
	if (r->analysed)
		return 0;
	rec_free_results(r);
	if (!r->runs_built) {
		if (build_runs(r) != 0)
			goto oom;
		sort_n(r->ivals.p, r->ivals.n, sizeof(struct rec_ival), ival_cmp);
		settle_intervals(r);
		for (size_t i = 0; i < r->migs.n; i++) {
			struct th_rec_migration *m = VAT(r->migs, struct th_rec_migration, i);
			m->worker = worker_of(r, m->pid, m->tid);
		}
	}
	if (add_binds(r) != 0)
		goto oom;
	sort_n(r->runs.p, r->runs.n, sizeof(struct th_rec_run), run_thread_cmp);
	struct run_acc *acc = calloc(r->runs.n + 1, sizeof(*acc));
	struct vec segs = VEC(struct seg);
	if (!acc)
		goto oom;
	struct th_rec_run *runs = r->runs.p;
	struct rec_ival *iv = r->ivals.p;
	size_t ii = 0;
	for (size_t k = 0; k < r->runs.n;) {
		size_t kk = k;
		while (kk < r->runs.n && runs[kk].pid == runs[k].pid && runs[kk].tid == runs[k].tid)
			kk++;
		while (ii < r->ivals.n && (iv[ii].pid < runs[k].pid ||
					   (iv[ii].pid == runs[k].pid && iv[ii].tid < runs[k].tid)))
			ii++;
		size_t ij = ii;
		while (ij < r->ivals.n && iv[ij].pid == runs[k].pid && iv[ij].tid == runs[k].tid)
			ij++;
		if (join_thread(runs, acc, k, kk, iv, ii, ij, &segs) != 0) {
			free(acc);
			vec_free(&segs);
			goto oom;
		}
		charge_blocks(runs, acc, k, kk, iv, ii, ij);
		k = kk;
	}
	charge_migrations(r, acc);
	int rc = task_figures(r, acc, &segs);
	if (rc == 0)
		rc = worker_figures(r, acc);
	free(acc);
	vec_free(&segs);
	if (rc != 0)
		goto oom;
	sort_n(r->tasks.p, r->tasks.n, sizeof(struct th_rec_task), task_cmp);
	sort_n(r->workers.p, r->workers.n, sizeof(struct th_rec_worker), worker_cmp);
	/* timelines want runs in time order */
	sort_n(r->runs.p, r->runs.n, sizeof(struct th_rec_run), run_task_cmp);
	r->analysed = 1;
	return 0;
oom:
	rec_set_error("out of memory while joining the recording");
	return -1;
}

/* ---- queries ----------------------------------------------------------------------- */

static int pid_or_first(struct th_record *r, int pid)
{
	return pid ? pid : (r->ntg ? r->tg[0].pid : 0);
}

int th_record_task(struct th_record *r, int pid, uint64_t task_id, struct th_rec_task *out)
{
	if (rec_analyse(r) != 0)
		return -1;
	struct th_rec_task *t = find_task(r, pid_or_first(r, pid), task_id);
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
	*n = r->tasks.n;
	return r->tasks.p;
}

int th_record_worker(struct th_record *r, int pid, int worker, struct th_rec_worker *out)
{
	if (rec_analyse(r) != 0)
		return -1;
	pid = pid_or_first(r, pid);
	for (size_t i = 0; i < r->workers.n; i++) {
		struct th_rec_worker *w = VAT(r->workers, struct th_rec_worker, i);
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
	*n = r->workers.n;
	return r->workers.p;
}

const struct th_rec_run *th_record_runs(struct th_record *r, size_t *n)
{
	*n = 0;
	if (rec_analyse(r) != 0)
		return NULL;
	*n = r->runs.n;
	return r->runs.p;
}

const struct th_rec_migration *th_record_migrations(struct th_record *r, size_t *n)
{
	*n = 0;
	if (rec_analyse(r) != 0)
		return NULL;
	*n = r->migs.n;
	return r->migs.p;
}

int th_record_oncpu(struct th_record *r, size_t i, struct th_rec_oncpu *out)
{
	if (rec_analyse(r) != 0 || i >= r->ivals.n)
		return -1;
	const struct rec_ival *v = VAT(r->ivals, struct rec_ival, i);
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
	struct rec_ival *iv = r->ivals.p;
	/* intervals are sorted by (pid, tid, end): find the thread's, then the one holding ts */
	size_t lo = 0, hi = r->ivals.n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (iv[mid].pid < pid || (iv[mid].pid == pid && iv[mid].tid < tid))
			lo = mid + 1;
		else
			hi = mid;
	}
	size_t end = lo;
	while (end < r->ivals.n && iv[end].pid == pid && iv[end].tid == tid)
		end++;
	size_t i = first_ending_after(iv, lo, end, ts);
	if (i < end && iv[i].start <= ts)
		return iv[i].cpu;
	return -1;
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
