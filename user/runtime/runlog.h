/* runlog.h — a worker's run log: a single-producer ring of task runs stamped with
 * the raw counter, drained (and dated) by any thread while tasks run; runlog.c. */
#ifndef TASKHOP_RUNLOG_H
#define TASKHOP_RUNLOG_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "taskhop.h"

#define TH_RUNLOG_END_NS 1u /* ring record flag (in .reserved): end_ns is CLOCK_MONOTONIC already */

/* Why a ring: the log used to be a fixed array read only when no task ran, so
 * a long run silently lost everything past its capacity. Now the thread
 * serving the worker appends (a few stores, no syscall, never a wait) and a
 * drain moves records out while tasks run. When the drain falls behind and
 * the ring is full, the new run is counted in `dropped` and not written: the
 * producer never waits, and never overwrites a record a drain may be copying. */
struct th_runlog {
	/* producer: the thread serving the worker (one at a time) */
	_Atomic uint64_t head;       /* runs written; release-stored after the record */
	uint64_t tail_seen;          /* the producer's last look at tail */
	_Atomic uint64_t dropped;    /* runs not written: the ring was full */
	struct th_run_record *ring;  /* stamps in counter ticks (tscclock.h) */
	uint64_t mask;               /* capacity - 1, a power of two */
	/* consumer: the drain, under runlog.c's lock */
	_Atomic uint64_t tail __attribute__((aligned(64)));
	struct th_run_record *kept;  /* drained runs, dated, in log order */
	size_t kept_n, kept_cap;
	uint64_t dropped_base;       /* dropped at the last th_run_log_clear */
	uint64_t lost_drained;       /* runs drained with no memory left to keep them */
	uint64_t last_ns;            /* the end of the last run kept (dated) */
};

/* Appends r (stamps from th__stamp) unless the ring is full. */
static inline void th__runlog_push(struct th_runlog *l, const struct th_run_record *r)
{
	uint64_t h = atomic_load_explicit(&l->head, memory_order_relaxed);
	if (__builtin_expect(h - l->tail_seen > l->mask, 0)) {
		l->tail_seen = atomic_load_explicit(&l->tail, memory_order_acquire);
		if (h - l->tail_seen > l->mask) {
			atomic_store_explicit(&l->dropped,
					      atomic_load_explicit(&l->dropped, memory_order_relaxed) + 1,
					      memory_order_relaxed);
			return;
		}
	}
	l->ring[h & l->mask] = *r;
	atomic_store_explicit(&l->head, h + 1, memory_order_release);
}

struct th_runtime;
/* A ring of at least `cap` runs, or NULL (no memory). */
struct th_runlog *th__runlog_new(size_t cap);
/* Runtime start/stop: the drain may run only between the two. */
void th__runlog_attach(struct th_runtime *rt);
void th__runlog_detach(struct th_runtime *rt);
void th__runlog_free(struct th_runlog *l);

#endif
