/* tscclock.h — a worker's cheap CLOCK_MONOTONIC reading (the TSC, re-anchored to
 * clock_gettime every ~10 ms) for task timestamps; tscclock.c says why. */
#ifndef TASKHOP_TSCCLOCK_H
#define TASKHOP_TSCCLOCK_H

#include <stdbool.h>
#include <stdint.h>

#include "taskhop.h" /* th_now_ns */

/* One per worker, touched only by it. Zeroed: anchors at the first read. */
struct th_tscclock {
	uint64_t anchor_ticks, anchor_ns, last_ns;
};

/* Measures the TSC rate once (about 2 ms); later calls return at once. */
void th__tscclock_calibrate(void);
/* Nanoseconds of CLOCK_MONOTONIC, within a microsecond, never going back on c. */
uint64_t th__tscclock_now(struct th_tscclock *c);

/* ---- the run log's stamps ------------------------------------------------
 * A switch is stamped with the raw counter (rdtsc, ~9 ns; cntvct on arm64)
 * instead of clock_gettime (~22 ns under kvm-clock): the run log converts
 * stamps to CLOCK_MONOTONIC when it is drained, between two paired readings
 * of both clocks (anchors) taken by the drains (stampmap.h). Without a usable counter a
 * stamp is CLOCK_MONOTONIC already and the conversion is the identity. */
extern double th__ns_per_tick;   /* 0: no usable counter (stamps are ns) */
extern bool th__counter_has_rdtscp; /* x86-64: stamps use rdtscp (announced, and measured the cheaper ordered read) */

static inline uint64_t th__counter_ticks(void)
{
#if defined(__x86_64__)
	/* rdtscp, not rdtsc: rdtsc is not ordered, and a stamp taken right after
	 * popping a task could read the counter before the pop's loads completed,
	 * i.e. before the other worker's end stamp of that task's previous run
	 * (seen: 2 such inversions of up to 168 ticks in 600,000 hand-offs between
	 * unpinned threads). rdtscp waits for every earlier load, as the kernel's
	 * rdtsc_ordered does with it or lfence; here it costs ~9 ns less per
	 * recorded yield than lfence + rdtsc (102 -> 93 ns). */
	if (!th__counter_has_rdtscp) {
		/* no rdtscp announced, or it measured slower: lfence is
		 * dispatch-serializing on Intel and on AMD under Linux, which is
		 * what the kernel's rdtsc_ordered relies on (19 ns on an EPYC
		 * guest that hides rdtscp, against 27 for clock_gettime) */
		__builtin_ia32_lfence();
		return __builtin_ia32_rdtsc();
	}
	unsigned int aux;
	return __builtin_ia32_rdtscp(&aux);
#elif defined(__aarch64__)
	/* the generic timer's virtual count: constant-rate by architecture,
	 * readable at EL0 on Linux; the isb keeps the read from being taken
	 * ahead of the code before it, as the kernel's own read does */
	uint64_t v;
	__asm__ volatile("isb\n\tmrs %0, cntvct_el0" : "=r"(v) : : "memory");
	return v;
#else
	return 0;
#endif
}

/* The counter without the fence, for a task's own first-run and end dates
 * (th__tscclock_now): each is read and compared on one thread, where an early
 * read is off by at most the CPU's out-of-order window (nanoseconds), and the
 * fence (lfence then) cost ~20 ns per read on this VM (spawn+fetch 104 -> 148 ns
 * with it, two reads per task). The run log's stamps order runs across
 * workers and keep the ordered read. */
static inline uint64_t th__counter_ticks_unordered(void)
{
#if defined(__x86_64__)
	return __builtin_ia32_rdtsc();
#else
	return th__counter_ticks();
#endif
}

static inline uint64_t th__stamp(void)
{
	return th__ns_per_tick > 0 ? th__counter_ticks() : th_now_ns();
}

/* A stamp without the fence, where no other worker's stamp must come before it
 * (worker.c's log_clock_for says which). */
static inline uint64_t th__stamp_unordered(void)
{
	return th__ns_per_tick > 0 ? th__counter_ticks_unordered() : th_now_ns();
}

struct th_stamp_anchor {
	uint64_t ticks, ns;      /* the counter and CLOCK_MONOTONIC at one instant */
};
void th__stamp_anchor(struct th_stamp_anchor *a);

#endif
