/* runlog.h — a worker's run log: a single-producer ring of task runs stamped with
 * the raw counter, in the run-log area (bpf/taskhop_abi.h) that a drainer in this
 * process (runlog.c) or in another one (a recorder attached by pid) empties while
 * tasks run; the area itself is made by area.c. */
#ifndef TASKHOP_RUNLOG_H
#define TASKHOP_RUNLOG_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "taskhop.h"
#include "taskhop_abi.h"
#include "tscclock.h"

/* Why a ring: the log used to be a fixed array read only when no task ran, so
 * a long run silently lost everything past its capacity. Now the thread
 * serving the worker appends (a few stores, no syscall, never a wait) and a
 * drain moves records out while tasks run. When the drain falls behind and
 * the ring is full, the new run is counted in `dropped` and not written: the
 * producer never waits, and never overwrites a record a drain may be copying.
 *
 * Why the producer's fields sit inside the shared struct th_area_log: the
 * switch path reads `on` and writes `head` through the one pointer it already
 * had (w->log), in one cache line. The private words (ring, mask, tail_seen)
 * live in that line's padding; a drainer in another process ignores them.
 *
 * Why ring_mapped: a recorder that attaches by pid makes the ring's pages
 * exist, but this process still maps each one in on its first store, a minor
 * fault every 128 runs (2,051 in an attached 2e6-yield loop here, 27 ns a
 * yield on average). So the first push that finds the ring's pages unmapped
 * maps them all with one madvise (th__runlog_map_ring). It rides on the
 * full-ring check: an unmapped ring's tail_seen says "full", so the common
 * path tests nothing more. */
struct th_runlog {
	_Atomic uint64_t head;       /* runs written; release-stored after the record */
	_Atomic uint64_t dropped;    /* runs not written: the ring was full */
	_Atomic uint32_t on;         /* set by the drainer: log runs */
	uint32_t pad0;
	struct th_area_run *ring;    /* this process's address of the worker's ring */
	uint64_t mask;               /* capacity - 1, a power of two */
	uint64_t tail_seen;          /* the producer's last look at tail */
	uint32_t ring_mapped;        /* the producer mapped the ring's pages in */
	uint32_t pad1a;
	uint64_t pad1b;
	_Atomic uint64_t tail;       /* the drainer's line */
	uint64_t pad2[7];
};

_Static_assert(sizeof(struct th_runlog) == sizeof(struct th_area_log), "run log = area log");
_Static_assert(offsetof(struct th_runlog, head) == offsetof(struct th_area_log, head), "head");
_Static_assert(offsetof(struct th_runlog, dropped) == offsetof(struct th_area_log, dropped), "dropped");
_Static_assert(offsetof(struct th_runlog, on) == offsetof(struct th_area_log, on), "on");
_Static_assert(offsetof(struct th_runlog, tail) == offsetof(struct th_area_log, tail), "tail");
_Static_assert(sizeof(struct th_area_log) == 128, "two cache lines");
_Static_assert(sizeof(struct th_area_run) == 32, "half a cache line");

/* Is a drainer taking this worker's runs? One load from the line push writes. */
static inline int th__runlog_on(const struct th_runlog *l)
{
	return (int)atomic_load_explicit(&((struct th_runlog *)l)->on, memory_order_relaxed);
}

/* Maps the ring's pages into this process, once (see ring_mapped). */
void th__runlog_map_ring(struct th_runlog *l);

/* Appends r (stamps from th__stamp) unless the ring is full. */
static inline void th__runlog_push(struct th_runlog *l, const struct th_area_run *r)
{
	uint64_t h = atomic_load_explicit(&l->head, memory_order_relaxed);
	if (__builtin_expect(h - l->tail_seen > l->mask, 0)) {
		if (__builtin_expect(!l->ring_mapped, 0))
			th__runlog_map_ring(l);
		l->tail_seen = atomic_load_explicit(&l->tail, memory_order_acquire);
		if (h - l->tail_seen > l->mask) {
			atomic_store_explicit(&l->dropped,
					      atomic_load_explicit(&l->dropped, memory_order_relaxed) + 1,
					      memory_order_relaxed);
			return;
		}
	}
	/* Field by field, not `= *r`: a struct copy was built on the stack by
	 * narrow stores and read back by 16-byte loads, which the CPU cannot
	 * forward (a stall on every recorded switch). */
	struct th_area_run *d = &l->ring[h & l->mask];
	d->task_id = r->task_id;
	d->start = r->start;
	d->end = r->end;
	d->worker = r->worker;
	d->thread = r->thread;
	d->why = r->why;
	d->flags = r->flags;
	d->pad = 0;
	atomic_store_explicit(&l->head, h + 1, memory_order_release);
}

struct th_runtime;
struct th_stamp_map;

/* ---- the area (area.c) ---- */
/* Maps the run-log area for rt's workers and points each worker's log at its
 * line; logging starts on when cfg.run_log_cap is set (this process drains).
 * -1 with th_last_error set. */
int th__area_create(struct th_runtime *rt);
void th__area_destroy(struct th_runtime *rt);
/* Thread `thread` of rt started with kernel tid `tid`: published for drainers. */
void th__area_set_tid(struct th_runtime *rt, int thread, int tid);
/* Makes size bytes at mem (page-aligned, shared) ready for the workers' stores
 * without changing them: populated, and each page stored to once. */
void th__area_touch(void *mem, size_t size);

/* ---- another process's area (area_reader.c, th_area_* in taskhop.h) ---- */
struct th_area;
/* Checks `size` bytes at mem as process pid's area and reads it from then on:
 * 0 and *out set, or -1 (th_last_error). unmap: th_area_close unmaps mem.
 * th_area_open's second half; the fuzz target's entry. */
int th__area_adopt(void *mem, size_t size, pid_t pid, bool unmap, struct th_area **out);

/* ---- draining (runlog.c) ---- */
/* Runtime start/stop: the in-process drain may run only between the two. */
void th__runlog_attach(struct th_runtime *rt);
void th__runlog_detach(struct th_runtime *rt);

/* Copies the runs [tail, head) of a ring of mask + 1 records into out (room
 * for head - tail), as public records with raw stamps (dated later by
 * th__runlog_date). A run naming a worker >= nworkers or a thread >=
 * nthreads is hostile or torn: it is skipped and counted in *bad. Returns the
 * number written to out. */
size_t th__runlog_copy(const struct th_area_run *ring, uint64_t mask, uint64_t tail, uint64_t head,
		       uint32_t nworkers, uint32_t nthreads, struct th_run_record *out, uint64_t *bad);
struct th_runpack;
/* Moves the runs [tail, head) of one worker's ring into pack: copied (as
 * th__runlog_copy), dated (as th__runlog_date) and packed, a batch at a time
 * through the stack, so that a drain writes a few bytes of new memory per run.
 * Returns the runs packed; those that found no memory are added to *lost. */
size_t th__runlog_pack(const struct th_area_run *ring, uint64_t mask, uint64_t tail, uint64_t head,
		       uint32_t nworkers, uint32_t nthreads, const struct th_stamp_map *map, uint64_t *last_ns,
		       struct th_runpack *pack, uint64_t *bad, uint64_t *lost);
/* Dates n copied runs of one worker, in log order, through map: their times
 * never go back (*last_ns carries the previous run's end across calls). */
void th__runlog_date(struct th_run_record *runs, size_t n, const struct th_stamp_map *map,
		     uint64_t *last_ns);

#endif
