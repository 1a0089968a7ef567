/* tscclock.c — CLOCK_MONOTONIC time for a task's timestamps, read from the CPU's
 * time-stamp counter and re-anchored to the kernel's clock every few milliseconds. */
#define _GNU_SOURCE
#include <stdio.h>
#include <string.h>

#include "internal.h"
#include "tscclock.h"

/* Why: every task records when it first ran and when it ended, and under
 * kvm-clock a clock_gettime() costs ~22 ns, about a quarter of a whole
 * spawn and join. rdtsc costs ~9 ns. Between two clock_gettime() anchors a
 * worker extrapolates with the TSC rate measured at start; re-anchoring every
 * ~10 ms bounds the error by the rate's error over 10 ms (well under a
 * microsecond), and the result never goes backwards on a worker. Without an
 * invariant TSC (constant_tsc and nonstop_tsc in /proc/cpuinfo) every read
 * is a clock_gettime(). */

#define REANCHOR_NS 10000000ull

static double ns_per_tick;       /* 0: no usable TSC */
static uint64_t reanchor_ticks;

#if defined(__x86_64__)
static inline uint64_t ticks(void)
{
	return __builtin_ia32_rdtsc();
}

/* The kernel clock and the TSC at one instant, for the calibration and for
 * every anchor: the TSC is read on both sides of the clock and the tightest
 * of a few tries kept, so a preemption or a slow first call (lazy binding, a
 * sanitizer's interceptor) between the two readings cannot skew the pair.
 * (Seen under TSan with single readings: a rate off by ~0.6%, task dates up
 * to 64 us ahead of CLOCK_MONOTONIC.) */
static void paired_reading(uint64_t *ns, uint64_t *tick)
{
	uint64_t best_gap = UINT64_MAX;
	*ns = 0;
	*tick = 0;
	for (int i = 0; i < 3; i++) {
		uint64_t t0 = ticks(), n = th_now_ns(), t1 = ticks();
		if (t1 - t0 < best_gap) {
			best_gap = t1 - t0;
			*ns = n;
			*tick = t0 + (t1 - t0) / 2;
		}
	}
}

static bool invariant_tsc(void)
{
	FILE *f = fopen("/proc/cpuinfo", "r");
	if (!f)
		return false;
	char line[4096];
	bool constant = false, nonstop = false;
	while (fgets(line, sizeof(line), f) && !(constant && nonstop)) {
		if (strncmp(line, "flags", 5) != 0)
			continue;
		constant = strstr(line, " constant_tsc") != NULL;
		nonstop = strstr(line, " nonstop_tsc") != NULL;
		break;
	}
	fclose(f);
	return constant && nonstop;
}

void th__tscclock_calibrate(void)
{
	if (ns_per_tick > 0 || !invariant_tsc())
		return;
	/* ~2 ms of both clocks: the rate to a few parts in 10^5 */
	uint64_t n0, t0, n1, t1;
	paired_reading(&n0, &t0);
	do
		paired_reading(&n1, &t1);
	while (n1 - n0 < 2000000);
	if (t1 <= t0)
		return;
	ns_per_tick = (double)(n1 - n0) / (double)(t1 - t0);
	reanchor_ticks = (uint64_t)((double)REANCHOR_NS / ns_per_tick);
}
#else
static inline uint64_t ticks(void)
{
	return 0;
}

static void paired_reading(uint64_t *ns, uint64_t *tick)
{
	*ns = th_now_ns();
	*tick = 0;
}

void th__tscclock_calibrate(void)
{
}
#endif

uint64_t th__tscclock_now(struct th_tscclock *c)
{
	if (ns_per_tick <= 0)
		return th_now_ns();
	uint64_t t = ticks();
	uint64_t ns;
	if (c->anchor_ns == 0 || t - c->anchor_ticks > reanchor_ticks) {
		paired_reading(&c->anchor_ns, &c->anchor_ticks);
		ns = c->anchor_ns;
	} else {
		ns = c->anchor_ns + (uint64_t)((double)(t - c->anchor_ticks) * ns_per_tick);
	}
	if (ns < c->last_ns) /* a fresh anchor may sit a hair behind an extrapolation */
		ns = c->last_ns;
	c->last_ns = ns;
	return ns;
}
