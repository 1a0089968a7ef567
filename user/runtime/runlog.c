/* runlog.c — the run logs' consumer side: the drain that moves each worker's ring
 * into its kept log and dates the counter stamps, and the th_run_log calls. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "core.h"
#include "runlog.h"
#include "stampmap.h"

/* One drain at a time, and none once the runtime is stopping: the recorder's
 * poller drains from its own thread, which may race with th_runtime_stop. */
static pthread_mutex_t drain_lock = PTHREAD_MUTEX_INITIALIZER;
static struct th_runtime *live_rt;          /* under drain_lock */
static struct th_stamp_map stamp_map;      /* under drain_lock: every drain's anchor */

static size_t pow2_at_least(size_t n)
{
	size_t c = 1;
	while (c < n && c < ((size_t)1 << 40))
		c <<= 1;
	return c;
}

struct th_runlog *th__runlog_new(size_t cap)
{
	struct th_runlog *l = aligned_alloc(64, (sizeof(*l) + 63) / 64 * 64);
	if (!l)
		return NULL;
	memset(l, 0, sizeof(*l));
	size_t c = pow2_at_least(cap);
	l->ring = malloc(c * sizeof(*l->ring));
	if (!l->ring) {
		free(l);
		return NULL;
	}
	/* Touched now, not by the first lap of runs: a page fault on the switch path
	 * (one per 128 runs, a few us each on this VM) was an eighth of a recorded
	 * yield, and it is the recorder perturbing what it records. */
	memset(l->ring, 0, c * sizeof(*l->ring));
	l->mask = c - 1;
	return l;
}

void th__runlog_free(struct th_runlog *l)
{
	if (!l)
		return;
	free(l->ring);
	free(l->kept);
	free(l);
}

void th__runlog_attach(struct th_runtime *rt)
{
	pthread_mutex_lock(&drain_lock);
	live_rt = rt;
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
	if (live_rt == rt)
		live_rt = NULL;
	pthread_mutex_unlock(&drain_lock);
}

static int keep_room(struct th_runlog *l, size_t more)
{
	if (l->kept_n + more <= l->kept_cap)
		return 0;
	size_t cap = l->kept_cap ? l->kept_cap : 1024;
	while (cap < l->kept_n + more)
		cap *= 2;
	struct th_run_record *k = realloc(l->kept, cap * sizeof(*k));
	if (!k)
		return -1;
	l->kept = k;
	l->kept_cap = cap;
	return 0;
}

static uint64_t max_u64(uint64_t a, uint64_t b)
{
	return a > b ? a : b;
}

/* Moves the runs published up to head h into kept, dated through the stamp
 * map. A worker's runs follow each other, so their times never go back: an
 * end dated by the kernel (an activation's block) or a stamp read on another
 * CPU may sit a few ns off the map's next date, and is moved up to it. */
static size_t drain_one(struct th_runlog *l, uint64_t h)
{
	uint64_t t = atomic_load_explicit(&l->tail, memory_order_relaxed);
	size_t n = (size_t)(h - t);
	if (n == 0)
		return 0;
	if (keep_room(l, n) != 0) {
		l->lost_drained += n;
		atomic_store_explicit(&l->tail, h, memory_order_release);
		return 0;
	}
	for (uint64_t i = t; i < h; i++) {
		struct th_run_record r = l->ring[i & l->mask];
		r.start_ns = max_u64(th__stamp_map_ns(&stamp_map, r.start_ns), l->last_ns);
		if (!(r.reserved & TH_RUNLOG_END_NS))
			r.end_ns = th__stamp_map_ns(&stamp_map, r.end_ns);
		r.end_ns = max_u64(r.end_ns, r.start_ns);
		l->last_ns = r.end_ns;
		r.reserved = 0;
		l->kept[l->kept_n++] = r;
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
		heads[i] = rt->workers[i].log ? atomic_load_explicit(&rt->workers[i].log->head, memory_order_acquire) : 0;
	struct th_stamp_anchor now;
	th__stamp_anchor(&now);
	size_t moved = 0;
	if (th__stamp_map_add(&stamp_map, &now) == 0)
		for (int i = 0; i < rt->nworkers; i++)
			if (rt->workers[i].log)
				moved += drain_one(rt->workers[i].log, heads[i]);
	if (heads != heads_here)
		free(heads);
	return moved;
}

size_t th_run_log_drain(void)
{
	pthread_mutex_lock(&drain_lock);
	size_t moved = live_rt ? drain_locked(live_rt) : 0;
	pthread_mutex_unlock(&drain_lock);
	return moved;
}

static uint64_t dropped_of(const struct th_runlog *l)
{
	return atomic_load_explicit(&l->dropped, memory_order_relaxed) - l->dropped_base + l->lost_drained;
}

uint64_t th_run_log_dropped(void)
{
	uint64_t d = 0;
	pthread_mutex_lock(&drain_lock);
	for (int i = 0; live_rt && i < live_rt->nworkers; i++)
		if (live_rt->workers[i].log)
			d += dropped_of(live_rt->workers[i].log);
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
	if (rt && worker >= 0 && worker < rt->nworkers && rt->workers[worker].log) {
		drain_locked(rt);
		struct th_runlog *l = rt->workers[worker].log;
		*n = l->kept_n;
		if (dropped)
			*dropped = dropped_of(l);
		out = l->kept;
	}
	pthread_mutex_unlock(&drain_lock);
	return out;
}

void th_run_log_clear(void)
{
	pthread_mutex_lock(&drain_lock);
	for (int i = 0; live_rt && i < live_rt->nworkers; i++) {
		struct th_runlog *l = live_rt->workers[i].log;
		if (!l)
			continue;
		atomic_store_explicit(&l->tail, atomic_load_explicit(&l->head, memory_order_acquire),
				      memory_order_release);
		l->kept_n = 0;
		l->dropped_base = atomic_load_explicit(&l->dropped, memory_order_relaxed);
		l->lost_drained = 0;
	}
	pthread_mutex_unlock(&drain_lock);
}
