/* stampmap.c — dates the run log's counter stamps on CLOCK_MONOTONIC through one
 * piecewise-linear map drawn through the drains' anchors (why: stampmap.h). */
#include <stdlib.h>
#include <string.h>

#include "stampmap.h"

/* A drain every millisecond adds 1,000 anchors a second (16 KB). Past this
 * many the older half goes: only a stamp older than the oldest anchor kept
 * (a run longer than half the history, ~30 s at that pace) is then dated by
 * extrapolation, along the slope of the whole history kept. */
#define MAX_ANCHORS 65536
#define FIRST_CAP 256

void th__stamp_map_reset(struct th_stamp_map *m)
{
	m->n = 0;
}

void th__stamp_map_free(struct th_stamp_map *m)
{
	free(m->pt);
	memset(m, 0, sizeof(*m));
}

static int make_room(struct th_stamp_map *m)
{
	if (m->n < m->cap)
		return 0;
	if (m->cap < MAX_ANCHORS) {
		size_t cap = m->cap ? m->cap * 2 : FIRST_CAP;
		struct th_stamp_anchor *pt = realloc(m->pt, cap * sizeof(*pt));
		if (pt) {
			m->pt = pt;
			m->cap = cap;
			return 0;
		}
	}
	if (m->n < 4)
		return -1;
	size_t drop = m->n / 2;
	memmove(m->pt, m->pt + drop, (m->n - drop) * sizeof(*m->pt));
	m->n -= drop;
	return 0;
}

int th__stamp_map_add(struct th_stamp_map *m, const struct th_stamp_anchor *a)
{
	if (m->n > 0) {
		const struct th_stamp_anchor *last = &m->pt[m->n - 1];
		/* the drain may run on a CPU whose counter reads a hair behind */
		if (a->ticks <= last->ticks || a->ns < last->ns)
			return 0;
	}
	if (make_room(m) != 0)
		return -1;
	m->pt[m->n++] = *a;
	return 0;
}

static double slope(const struct th_stamp_anchor *a, const struct th_stamp_anchor *b)
{
	return (double)(b->ns - a->ns) / (double)(b->ticks - a->ticks);
}

/* The last anchor at or before `stamp` (pt[0].ticks <= stamp < pt[n-1].ticks):
 * most stamps are recent, so the newest segment is tried first. */
static size_t segment_of(const struct th_stamp_map *m, uint64_t stamp)
{
	size_t lo = 0, hi = m->n - 1;
	if (stamp >= m->pt[hi - 1].ticks)
		return hi - 1;
	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;
		if (m->pt[mid].ticks <= stamp)
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}

uint64_t th__stamp_map_ns_search(const struct th_stamp_map *m, struct th_stamp_seg *seg, uint64_t stamp)
{
	if (th__ns_per_tick <= 0 || stamp == 0)
		return stamp; /* stamps are CLOCK_MONOTONIC already (tscclock.h); 0: none */
	if (m->n == 0)
		return 0;
	const struct th_stamp_anchor *first = &m->pt[0], *last = &m->pt[m->n - 1];
	if (stamp >= last->ticks)
		return last->ns;
	if (stamp < first->ticks)
		return th__stamp_along(first, m->n > 1 ? slope(first, last) : th__ns_per_tick, stamp);
	size_t i = segment_of(m, stamp);
	double rate = slope(&m->pt[i], &m->pt[i + 1]);
	if (rate > 0)
		*seg = (struct th_stamp_seg){ .from = m->pt[i], .to_ticks = m->pt[i + 1].ticks, .rate = rate };
	return th__stamp_along(&m->pt[i], rate, stamp);
}

uint64_t th__stamp_map_ns(const struct th_stamp_map *m, uint64_t stamp)
{
	struct th_stamp_seg seg = { .rate = 0 };
	return th__stamp_map_ns_near(m, &seg, stamp);
}
