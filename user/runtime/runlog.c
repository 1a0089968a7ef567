/* runlog.c — the run logs' in-process drainer: moves each worker's ring (in the
 * run-log area, area.c) into its kept log, and the th_run_log calls, which date
 * the kept runs' counter stamps when they are read. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "bigbuf.h"
#include "core.h"
#include "runlog.h"
#include "stampmap.h"

/* What this process keeps of one worker's runs. */
struct kept_log {
	struct th_bigbuf buf;        /* copied runs in log order (struct th_run_record) */
	size_t n, dated;             /* runs, of which [0, dated) dated */
	uint64_t last_ns;            /* the end of the last run dated */
	uint64_t dropped_base;       /* the ring's dropped at the last clear */
	uint64_t lost_drained;       /* runs drained with no memory left to keep them */
	uint64_t bad;                /* runs naming no worker or thread of ours (never, but checked) */
};

/* One drain at a time, and none once the runtime is stopping: the recorder's
 * poller drains from its own thread, which may race with th_runtime_stop. */
static pthread_mutex_t drain_lock = PTHREAD_MUTEX_INITIALIZER;
static struct th_runtime *live_rt;          /* under drain_lock */
static struct kept_log *kept;               /* under drain_lock: one per worker */
static struct th_stamp_map stamp_map;       /* under drain_lock: every drain's anchor */

size_t th__runlog_copy(const struct th_area_run *ring, uint64_t mask, uint64_t tail, uint64_t head,
		       uint32_t nworkers, uint32_t nthreads, struct th_run_record *out, uint64_t *bad)
{
	size_t n = 0;
	for (uint64_t i = tail; i != head; i++) {
		struct th_area_run r = ring[i & mask];
		if (r.worker >= nworkers || r.thread >= nthreads) {
			(*bad)++;
			continue;
		}
		out[n++] = (struct th_run_record){
			.task_id = r.task_id, .start_ns = r.start, .end_ns = r.end, .worker = r.worker,
			.why = r.why, .thread = r.thread, .reserved = r.flags,
		};
	}
	return n;
}

static uint64_t max_u64(uint64_t a, uint64_t b)
{
	return a > b ? a : b;
}

/* A worker's runs follow each other, so their times never go back: an end
 * dated by the kernel (an activation's block) or a stamp read on another CPU
 * may sit a few ns off the map's next date, and is moved up to it. */
void th__runlog_date(struct th_run_record *runs, size_t n, const struct th_stamp_map *map,
		     uint64_t *last_ns)
{
	for (size_t i = 0; i < n; i++) {
		struct th_run_record *r = &runs[i];
		r->start_ns = max_u64(th__stamp_map_ns(map, r->start_ns), *last_ns);
		if (!(r->reserved & TH_AREA_RUN_END_NS))
			r->end_ns = th__stamp_map_ns(map, r->end_ns);
		r->end_ns = max_u64(r->end_ns, r->start_ns);
		*last_ns = r->end_ns;
		r->reserved = 0;
	}
}

void th__runlog_attach(struct th_runtime *rt)
{
	struct kept_log *k = calloc((size_t)rt->nworkers, sizeof(*k));
	pthread_mutex_lock(&drain_lock);
	live_rt = k ? rt : NULL; /* no memory: th_run_log finds nothing, as if never logged */
	kept = k;
	/* the first anchor: runs stamped before the first drain are interpolated too */
	struct th_stamp_anchor a;
	th__stamp_anchor(&a);
	th__stamp_map_reset(&stamp_map);
	(void)th__stamp_map_add(&stamp_map, &a); /* no memory: drains fail the same way */
	pthread_mutex_unlock(&drain_lock);
}

void th__runlog_detach(struct th_runtime *rt)
{
	pthread_mutex_lock(&drain_lock);
	if (live_rt == rt || !live_rt) {
		for (int i = 0; kept && i < rt->nworkers; i++)
			th__bigbuf_free(&kept[i].buf);
		free(kept);
		kept = NULL;
		live_rt = NULL;
	}
	pthread_mutex_unlock(&drain_lock);
}

static struct th_run_record *runs_of(struct kept_log *k)
{
	return k->buf.p;
}

/* Moves the runs published up to head h into k, undated: dating is deferred to
 * the reader (th_run_log), so that a drain is a copy and keeps up with workers
 * that switch every 30 ns. */
static size_t drain_one(struct th_runtime *rt, struct th_runlog *l, struct kept_log *k, uint64_t h)
{
	uint64_t t = atomic_load_explicit(&l->tail, memory_order_relaxed);
	size_t n = (size_t)(h - t);
	if (n == 0 || n > l->mask + 1)
		return 0; /* nothing, or a torn head: the next drain sees it whole */
	if (th__bigbuf_reserve(&k->buf, (k->n + n) * sizeof(struct th_run_record)) != 0) {
		k->lost_drained += n;
	} else {
		k->n += th__runlog_copy(l->ring, l->mask, t, h, (uint32_t)rt->nworkers,
					(uint32_t)rt->nthreads, runs_of(k) + k->n, &k->bad);
	}
	/* release: the producer reuses these cells only after our copies */
	atomic_store_explicit(&l->tail, h, memory_order_release);
	return n;
}

/* The heads are read before the anchor is taken, so every stamp moved is
 * older than the anchor (up to the counters' skew between CPUs) and dated by
 * interpolation between two anchors: the same stamp gets the same date
 * whichever drain moves it. */
static size_t drain_locked(struct th_runtime *rt)
{
	enum { HEADS_ON_STACK = 64 };
	uint64_t heads_here[HEADS_ON_STACK], *heads = heads_here;
	if (rt->nworkers > HEADS_ON_STACK && !(heads = malloc((size_t)rt->nworkers * sizeof(*heads))))
		return 0; /* no memory: the runs stay in the rings for a later drain */
	for (int i = 0; i < rt->nworkers; i++)
		heads[i] = atomic_load_explicit(&rt->workers[i].log->head, memory_order_acquire);
	struct th_stamp_anchor now;
	th__stamp_anchor(&now);
	size_t moved = 0;
	if (th__stamp_map_add(&stamp_map, &now) == 0)
		for (int i = 0; i < rt->nworkers; i++)
			moved += drain_one(rt, rt->workers[i].log, &kept[i], heads[i]);
	if (heads != heads_here)
		free(heads);
	return moved;
}

static int logging(const struct th_runtime *rt)
{
	return rt && rt->area && __atomic_load_n(&rt->area->owner, __ATOMIC_ACQUIRE) == rt->area->pid;
}

size_t th_run_log_drain(void)
{
	pthread_mutex_lock(&drain_lock);
	size_t moved = logging(live_rt) ? drain_locked(live_rt) : 0;
	pthread_mutex_unlock(&drain_lock);
	return moved;
}

static uint64_t dropped_of(const struct th_runlog *l, const struct kept_log *k)
{
	return atomic_load_explicit(&((struct th_runlog *)l)->dropped, memory_order_relaxed) - k->dropped_base +
	       k->lost_drained + k->bad;
}

uint64_t th_run_log_dropped(void)
{
	uint64_t d = 0;
	pthread_mutex_lock(&drain_lock);
	for (int i = 0; logging(live_rt) && i < live_rt->nworkers; i++)
		d += dropped_of(live_rt->workers[i].log, &kept[i]);
	pthread_mutex_unlock(&drain_lock);
	return d;
}

const struct th_run_record *th_run_log(int worker, size_t *n, uint64_t *dropped)
{
	const struct th_run_record *out = NULL;
	*n = 0;
	if (dropped)
		*dropped = 0;
	pthread_mutex_lock(&drain_lock);
	struct th_runtime *rt = live_rt;
	if (logging(rt) && worker >= 0 && worker < rt->nworkers) {
		drain_locked(rt);
		struct kept_log *k = &kept[worker];
		th__runlog_date(runs_of(k) + k->dated, k->n - k->dated, &stamp_map, &k->last_ns);
		k->dated = k->n;
		*n = k->n;
		if (dropped)
			*dropped = dropped_of(rt->workers[worker].log, k);
		out = runs_of(k);
	}
	pthread_mutex_unlock(&drain_lock);
	return out;
}

void th_run_log_clear(void)
{
	pthread_mutex_lock(&drain_lock);
	for (int i = 0; logging(live_rt) && i < live_rt->nworkers; i++) {
		struct th_runlog *l = live_rt->workers[i].log;
		struct kept_log *k = &kept[i];
		atomic_store_explicit(&l->tail, atomic_load_explicit(&l->head, memory_order_acquire),
				      memory_order_release);
		k->n = k->dated = 0;
		k->dropped_base = atomic_load_explicit(&l->dropped, memory_order_relaxed);
		k->lost_drained = k->bad = 0;
	}
	pthread_mutex_unlock(&drain_lock);
}
