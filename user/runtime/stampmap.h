/* stampmap.h — the run log's dating of counter stamps: one piecewise-linear map
 * from the counter to CLOCK_MONOTONIC through every drain's anchor; stampmap.c. */
#ifndef TASKHOP_STAMPMAP_H
#define TASKHOP_STAMPMAP_H

#include <stddef.h>
#include <stdint.h>

#include "tscclock.h"

/* Why one map for the whole recording: a run's end and the next run's start
 * (the same task on another worker, or the same counter reading on one
 * worker) are often converted by different drains. When each drain drew its
 * own line through its two anchors, the two lines disagreed on stamps outside
 * that segment, by the anchors' noise over the segment times the distance:
 * a stamp a few ms old converted through a drain's 10 us segment moved by
 * microseconds. Here a stamp between two anchors is interpolated between
 * them whichever drain converts it, so equal stamps get equal times and
 * ordered stamps ordered times. A stamp past the newest anchor (counters of
 * two CPUs differ by ~100 ns) is dated at that anchor: the next segment can
 * only date it later, never earlier. */
struct th_stamp_map {
	struct th_stamp_anchor *pt; /* anchors, both clocks increasing */
	size_t n, cap;
};

/* Forgets every anchor (the runtime starts). */
void th__stamp_map_reset(struct th_stamp_map *m);
/* Adds an anchor taken after every stamp it will date was taken; an anchor
 * not after the newest one on both clocks is skipped. -1: no memory. */
int th__stamp_map_add(struct th_stamp_map *m, const struct th_stamp_anchor *a);
/* CLOCK_MONOTONIC of `stamp` (a th__stamp); never decreases with the stamp. */
uint64_t th__stamp_map_ns(const struct th_stamp_map *m, uint64_t stamp);
/* The same date, for many stamps in a row against a map that does not change
 * meanwhile (a drain's batch): *seg remembers the last segment found and its
 * slope, so a stamp in it costs no search and no division (the division was
 * half of a drain's time). Start with seg zeroed. */
struct th_stamp_seg {
	struct th_stamp_anchor from;
	uint64_t to_ticks;
	double rate; /* 0: nothing remembered */
};
uint64_t th__stamp_map_ns_search(const struct th_stamp_map *m, struct th_stamp_seg *seg, uint64_t stamp);

/* The date of `stamp` on the line through anchor a at `rate` ns a tick. */
static inline uint64_t th__stamp_along(const struct th_stamp_anchor *a, double rate, uint64_t stamp)
{
	double ns = (double)a->ns + (double)(int64_t)(stamp - a->ticks) * rate;
	return ns > 0 ? (uint64_t)(ns + 0.5) : 0;
}

/* Inline where the stamp is in *seg (a drain's usual case); else the search. */
static inline uint64_t th__stamp_map_ns_near(const struct th_stamp_map *m, struct th_stamp_seg *seg,
					     uint64_t stamp)
{
	if (seg->rate > 0 && stamp >= seg->from.ticks && stamp < seg->to_ticks)
		return th__stamp_along(&seg->from, seg->rate, stamp);
	return th__stamp_map_ns_search(m, seg, stamp);
}
void th__stamp_map_free(struct th_stamp_map *m);

#endif
