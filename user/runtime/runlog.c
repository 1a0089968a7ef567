/* runlog.c — the run logs' in-process drainer: moves each worker's ring (in the
 * run-log area, area.c) into its kept log, dated and packed (runpack.h), and the
 * th_run_log calls, which unpack the kept runs when they are read. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "bigbuf.h"
#include "core.h"
#include "runlog.h"
#include "runpack.h"
#include "stampmap.h"

/* What this process keeps of one worker's runs. */
struct kept_log {
	struct th_runpack pack;      /* the runs drained, dated, packed (runpack.h) */
	struct th_runpack_cursor cur; /* how far th_run_log has unpacked them */
	struct th_bigbuf recs;       /* unpacked runs (struct th_run_record), cur.n of them */
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
 * may sit a few ns off the map's next date, and is moved up to it. A run's
 * start is almost always the counter reading that ended the run before (one
 * reading per switch): then its date is that end's, already moved up to
 * *last_ns, and the conversion (a third of a drain's time) is skipped. */
void th__runlog_date(struct th_run_record *runs, size_t n, const struct th_stamp_map *map,
		     uint64_t *last_ns)
{
	struct th_stamp_seg seg = { .rate = 0 };
	uint64_t last_end_stamp = 0; /* the run before's end as a stamp, 0: none */
	for (size_t i = 0; i < n; i++) {
		struct th_run_record *r = &runs[i];
		uint64_t end_stamp = r->reserved & TH_AREA_RUN_END_NS ? 0 : r->end_ns;
		if (r->start_ns && r->start_ns == last_end_stamp)
			r->start_ns = *last_ns;
		else
			r->start_ns = max_u64(th__stamp_map_ns_near(map, &seg, r->start_ns), *last_ns);
		if (end_stamp)
			r->end_ns = th__stamp_map_ns_near(map, &seg, end_stamp);
		r->end_ns = max_u64(r->end_ns, r->start_ns);
		*last_ns = r->end_ns;
		last_end_stamp = end_stamp;
		r->reserved = 0;
	}
}

size_t th__runlog_pack(const struct th_area_run *ring, uint64_t mask, uint64_t tail, uint64_t head,
		       uint32_t nworkers, uint32_t nthreads, const struct th_stamp_map *map, uint64_t *last_ns,
		       struct th_runpack *pack, uint64_t *bad, uint64_t *lost)
{
	enum { BATCH = 128 };
	struct th_run_record batch[BATCH];
	size_t packed = 0;
	for (uint64_t from = tail; from != head;) {
		uint64_t to = head - from > BATCH ? from + BATCH : head;
		size_t got = th__runlog_copy(ring, mask, from, to, nworkers, nthreads, batch, bad);
		th__runlog_date(batch, got, map, last_ns);
		if (th__runpack_put(pack, batch, got) != 0)
			*lost += got;
		else
			packed += got;
		from = to;
	}
	return packed;
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
		for (int i = 0; kept && i < rt->nworkers; i++) {
			th__runpack_free(&kept[i].pack);
			th__bigbuf_free(&kept[i].recs);
		}
		free(kept);
		kept = NULL;
		live_rt = NULL;
	}
	pthread_mutex_unlock(&drain_lock);
}

static struct th_run_record *runs_of(struct kept_log *k)
{
	return k->recs.p;
}

/* Moves the runs published up to head h into k, dated and packed (runpack.h
 * says why packed). */
static size_t drain_one(struct th_runtime *rt, struct th_runlog *l, struct kept_log *k, uint64_t h)
{
	uint64_t t = atomic_load_explicit(&l->tail, memory_order_relaxed);
	size_t n = (size_t)(h - t);
	if (n == 0 || n > l->mask + 1)
		return 0; /* nothing, or a torn head: the next drain sees it whole */
	th__runlog_pack(l->ring, l->mask, t, h, (uint32_t)rt->nworkers, (uint32_t)rt->nthreads, &stamp_map,
			&k->last_ns, &k->pack, &k->bad, &k->lost_drained);
	/* release: the producer reuses these cells only after our copies */
	atomic_store_explicit(&l->tail, h, memory_order_release);
	return n;
}

/* The heads are read before the anchor is taken, so every stamp moved is
 * older than the anchor (up to the counters' skew between CPUs) and dated by
 * interpolation between two anchors: the same stamp gets the same date
 * whichever drain moves it. Dating here, not when the log is read, also keeps
 * a long recording's stamps within the anchors the map still holds. */
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

/* The runs packed since the last call, unpacked after the others. With no
 * memory for them the runs already unpacked stay what th_run_log returns. */
static void unpack(struct kept_log *k)
{
	if (k->pack.n == k->cur.n || th__bigbuf_reserve(&k->recs, k->pack.n * sizeof(struct th_run_record)) != 0)
		return;
	size_t done = k->cur.n; /* th__runpack_get moves it on */
	th__runpack_get(&k->pack, &k->cur, runs_of(k) + done, k->pack.n - done);
}

size_t th_run_log_ring_runs(void)
{
	pthread_mutex_lock(&drain_lock);
	size_t runs = logging(live_rt) ? (size_t)live_rt->workers[0].log->mask + 1 : 0;
	pthread_mutex_unlock(&drain_lock);
	return runs;
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
		unpack(k);
		*n = k->cur.n;
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
		th__runpack_clear(&k->pack);
		memset(&k->cur, 0, sizeof(k->cur));
		k->dropped_base = atomic_load_explicit(&l->dropped, memory_order_relaxed);
		k->lost_drained = k->bad = 0;
	}
	pthread_mutex_unlock(&drain_lock);
}
