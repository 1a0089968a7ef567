/* tscclock.c — CLOCK_MONOTONIC time for a task's timestamps, read from the CPU's
 * time-stamp counter and re-anchored to the kernel's clock every few milliseconds. */
#define _GNU_SOURCE
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "core.h"
#include "tscclock.h"

/* Why: every task records when it first ran and when it ended, and under
 * kvm-clock a clock_gettime() costs ~22 ns, about a quarter of a whole
 * spawn and join. rdtsc costs ~9 ns. Between two clock_gettime() anchors a
 * worker extrapolates with the TSC rate measured at start; re-anchoring every
 * ~10 ms bounds the error by the rate's error over 10 ms (well under a
 * microsecond), and the result never goes backwards on a worker. Without an
 * invariant TSC (constant_tsc and nonstop_tsc in /proc/cpuinfo) every read
 * is a clock_gettime(). On arm64 the counter is the generic timer's
 * (cntvct_el0, rate in cntfrq_el0), constant-rate by architecture, unless an
 * emulator derives it from the wall clock (then every read is a clock_gettime()
 * too). */

#define REANCHOR_NS 10000000ull

double th__ns_per_tick;          /* 0: no usable TSC */
bool th__counter_has_rdtscp = true; /* decided with the rate (invariant_tsc, rdtscp_is_faster) */
static uint64_t reanchor_ticks;

/* The counter itself is read inline by th__counter_ticks (tscclock.h): the run
 * log stamps every switch with it. */
static inline uint64_t ticks(void)
{
	return th__counter_ticks();
}

#if defined(__x86_64__) || defined(__aarch64__)
/* The kernel clock and the counter at one instant, for the calibration and for
 * every anchor: the counter is read on both sides of the clock and the tightest
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
#endif

#if defined(__x86_64__)
/* The two ordered reads cost differently from one CPU to the next (rdtscp 9 ns
 * cheaper than lfence + rdtsc on one Xeon guest, 5 ns dearer on an EPYC one):
 * the run log stamps every switch, so the cheaper one is measured and kept. */
static uint64_t time_ordered_reads(bool rdtscp)
{
	enum { READS = 2000 };
	th__counter_has_rdtscp = rdtscp;
	uint64_t best = UINT64_MAX, sink = 0;
	for (int round = 0; round < 3; round++) {
		uint64_t t0 = th_now_ns();
		for (int i = 0; i < READS; i++)
			sink += th__counter_ticks();
		uint64_t t = th_now_ns() - t0;
		best = t < best ? t : best;
	}
	__asm__ volatile("" : : "r"(sink));
	return best;
}

static bool rdtscp_is_faster(void)
{
	return time_ordered_reads(true) <= time_ordered_reads(false);
}

static bool invariant_tsc(void)
{
	FILE *f = fopen("/proc/cpuinfo", "r");
	if (!f)
		return false;
	char line[4096];
	bool constant = false, nonstop = false, ordered = false;
	while (fgets(line, sizeof(line), f) && !(constant && nonstop)) {
		if (strncmp(line, "flags", 5) != 0)
			continue;
		constant = strstr(line, " constant_tsc") != NULL;
		nonstop = strstr(line, " nonstop_tsc") != NULL;
		/* the run log's ordered read: rdtscp, or lfence + rdtsc (tscclock.h) */
		ordered = strstr(line, " rdtscp") != NULL;
		break;
	}
	fclose(f);
	th__counter_has_rdtscp = ordered && rdtscp_is_faster();
	return constant && nonstop;
}

/* The TSC's rate is the CPU's, not architectural: ~2 ms of both clocks give
 * it to a few parts in 10^5. 0: no usable TSC. */
static double counter_ns_per_tick(void)
{
	if (!invariant_tsc())
		return 0;
	uint64_t n0, t0, n1, t1;
	paired_reading(&n0, &t0);
	do
		paired_reading(&n1, &t1);
	while (n1 - n0 < 2000000);
	if (t1 <= t0)
		return 0;
	return (double)(n1 - n0) / (double)(t1 - t0);
}
#elif defined(__aarch64__)
/* True when the counter reads as the wall clock: qemu-user (make test-arm64)
 * emulates cntvct_el0 as CLOCK_REALTIME / period, which NTP may step, so an
 * extrapolation from it can jump (seen in CI: a task's end dated 0.5 ms after
 * the caller's later clock_gettime). A real counter counts from an arbitrary
 * origin near boot, decades away from the epoch. */
static bool counter_is_the_wall_clock(double ns_per_tick)
{
	struct timespec wall;
	clock_gettime(CLOCK_REALTIME, &wall);
	double wall_ns = (double)wall.tv_sec * 1e9 + (double)wall.tv_nsec;
	double counter_ns = (double)ticks() * ns_per_tick;
	return counter_ns > wall_ns - 1e9 && counter_ns < wall_ns + 1e9;
}

/* The counter's rate is in cntfrq_el0, as the kernel's arch timer takes it. */
static double counter_ns_per_tick(void)
{
	uint64_t hz;
	__asm__ volatile("mrs %0, cntfrq_el0" : "=r"(hz));
	if (hz == 0 || counter_is_the_wall_clock(1e9 / (double)hz))
		return 0;
	return 1e9 / (double)hz;
}
#else
static void paired_reading(uint64_t *ns, uint64_t *tick)
{
	*ns = th_now_ns();
	*tick = 0;
}

static double counter_ns_per_tick(void)
{
	return 0;
}
#endif

void th__tscclock_calibrate(void)
{
	if (th__ns_per_tick > 0)
		return;
	double rate = counter_ns_per_tick();
	if (rate <= 0)
		return;
	reanchor_ticks = (uint64_t)((double)REANCHOR_NS / rate);
	th__ns_per_tick = rate;
}

uint64_t th__tscclock_now(struct th_tscclock *c)
{
	if (th__ns_per_tick <= 0)
		return th_now_ns();
	uint64_t t = th__counter_ticks_unordered();
	uint64_t ns;
	if (c->anchor_ns == 0 || t - c->anchor_ticks > reanchor_ticks) {
		paired_reading(&c->anchor_ns, &c->anchor_ticks);
		ns = c->anchor_ns;
	} else {
		ns = c->anchor_ns + (uint64_t)((double)(t - c->anchor_ticks) * th__ns_per_tick);
	}
	if (ns < c->last_ns) /* a fresh anchor may sit a hair behind an extrapolation */
		ns = c->last_ns;
	c->last_ns = ns;
	return ns;
}

/* ---- run-log stamps: raw counter values, dated when the log is drained ---- */

void th__stamp_anchor(struct th_stamp_anchor *a)
{
	if (th__ns_per_tick > 0) {
		paired_reading(&a->ns, &a->ticks);
	} else {
		a->ns = th_now_ns();
		a->ticks = a->ns;
	}
}
