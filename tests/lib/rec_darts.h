/* rec_darts.h — a small darts-like workload for the recorder's tests and benchmarks:
 * N short tasks and one long one, each throwing darts in chunks with a yield between. */
#ifndef TASKHOP_REC_DARTS_H
#define TASKHOP_REC_DARTS_H

#include <stdint.h>

#include "taskhop.h"

struct rec_darts {
	int nshort;            /* short tasks (the article: 20) */
	uint64_t short_draws;  /* draws per short task */
	uint64_t long_draws;   /* draws of the long task */
	int yields;            /* th_yield calls per task (the article: 10) */
	uint64_t seed;         /* where each task starts: th_spawn_at(random worker) */
};

#define REC_DARTS_MAX 64

/* The article's shape at a size that runs in well under a second on 2 cores. */
void rec_darts_default(struct rec_darts *d);

/* Spawns the tasks (the long one last) with th_spawn_at on seeded random workers, waits
 * for all, fills tasks[] (nshort + 1 handles, to be th_task_free'd by the caller) and
 * returns the number of tasks, or -1. Needs a running runtime. */
int rec_darts_run(const struct rec_darts *d, th_task **tasks);

/* kthread policy: binds each of the n tasks that ran as its own kernel thread to that
 * thread (th_record_bind_thread), which a recording needs before th_record_stop. 0 or -1. */
struct th_record;
int rec_darts_bind_threads(struct th_record *r, th_task **tasks, int n);

#endif
