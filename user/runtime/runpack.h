/* runpack.h — the kept run logs, packed: dated runs (struct th_run_record) as a few
 * bytes each, appended while the workers run and unpacked when they are read;
 * runpack.c. */
#ifndef TASKHOP_RUNPACK_H
#define TASKHOP_RUNPACK_H

#include <stddef.h>
#include <stdint.h>

#include "bigbuf.h"
#include "taskhop.h"

/* Why pack: a worker yielding in a loop logs 20 million runs a second, 800 MB/s
 * as 40-byte records. On the VMs measured, fresh anonymous memory came at about
 * 500 MB/s (page faults and zeroing, a ballooned guest), so the drain fell
 * behind growing its kept log, the rings filled, and a recording of fib(30)
 * dropped 130,000 to 190,000 of its 2.7 million runs. Consecutive runs of one
 * worker share most of their bits: a run starts where the previous one ended
 * (one counter reading serves both), its task id is near the previous one,
 * its worker and thread are the previous run's. So a run is a flag byte plus
 * varints of the differences: 3 bytes for a yield loop's runs, about 5 for
 * darts', at most TH_RUNPACK_MAX_BYTES.
 *
 * The pack holds only records this process made and checked; unpacking still
 * never reads past what was written. */
struct th_runpack {
	struct th_bigbuf buf;     /* the packed bytes */
	size_t bytes, n;          /* bytes written, runs in them */
	struct th_run_record last; /* the previous run packed: what the next one is told against */
};

/* The cursor of an unpacking: where in the bytes, and the run before. */
struct th_runpack_cursor {
	size_t at, n;
	struct th_run_record last;
};

/* A flag byte, why and extras (5 bytes each at most), three 64-bit varints
 * (10 each), worker, thread and reserved (5 each). */
#define TH_RUNPACK_MAX_BYTES 56

/* Appends n runs (dated: end_ns >= start_ns). 0, or -1: no memory, nothing appended. */
int th__runpack_put(struct th_runpack *p, const struct th_run_record *runs, size_t n);
/* Unpacks up to max runs after *c into out; returns how many (0: the end). */
size_t th__runpack_get(const struct th_runpack *p, struct th_runpack_cursor *c, struct th_run_record *out,
		       size_t max);
/* Forgets every run (the memory is kept for the next ones). */
void th__runpack_clear(struct th_runpack *p);
void th__runpack_free(struct th_runpack *p);

#endif
