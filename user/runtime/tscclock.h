/* tscclock.h — a worker's cheap CLOCK_MONOTONIC reading (the TSC, re-anchored to
 * clock_gettime every ~10 ms) for task timestamps; tscclock.c says why. */
#ifndef TASKHOP_TSCCLOCK_H
#define TASKHOP_TSCCLOCK_H

#include <stdint.h>

/* One per worker, touched only by it. Zeroed: anchors at the first read. */
struct th_tscclock {
	uint64_t anchor_ticks, anchor_ns, last_ns;
};

/* Measures the TSC rate once (about 2 ms); later calls return at once. */
void th__tscclock_calibrate(void);
/* Nanoseconds of CLOCK_MONOTONIC, within a microsecond, never going back on c. */
uint64_t th__tscclock_now(struct th_tscclock *c);

#endif
