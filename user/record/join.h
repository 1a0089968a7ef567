/* join.h — the recorder's analysis as one function: from what was collected (runs,
 * kernel on-CPU intervals and migrations, USDT events, thread bindings) to per-run,
 * per-task and per-worker figures. It knows no collector, no BPF and no runtime, so any
 * collector (the in-process ring-buffer poller, a reader of another process's run logs,
 * a test's fixture) feeds it the same arrays; join.c. */
#ifndef TASKHOP_REC_JOIN_H
#define TASKHOP_REC_JOIN_H

#include <stddef.h>
#include <stdint.h>

#include "record.h"
#include "vec.h"

/* ---- the input: what collectors append, in any order ------------------------ */

/* One on-CPU interval of a followed thread (TH_EV_ONCPU, or closed at stop). */
struct rec_ival {
	int pid, tid, cpu, host_tid;
	uint32_t flags;        /* TH_EVF_*: PREEMPTED, START_UNKNOWN, START_EST, END_EST */
	uint64_t start, end;   /* start 0 or START_UNKNOWN: on a CPU since before we looked */
	uint64_t wait_ns;      /* run-queue wait before it, as the kernel side measured it */
	uint64_t task_id, seq; /* slot / USDT view at switch-out */
};

/* A run as the USDT probes saw it: task_run ... task_yield|block|done. */
struct rec_usdt_run {
	int pid, tid, worker, cpu;
	uint64_t task_id, start, end;
	int open;              /* no end seen: it runs to the end of the recording */
	uint32_t why;          /* enum th_why of the probe that ended it */
};

/* task_spawn from USDT: which worker spawned a task (-1: a thread outside the runtime). */
struct rec_spawn {
	int pid, worker;
	uint64_t task_id;
};

/* worker_start from USDT: thread tid started serving worker. */
struct rec_worker_start {
	int pid, worker, tid;
};

/* kthread policy: task_id ran on its own kernel thread tid (th_record_bind_thread). */
struct rec_bind {
	int pid;
	uint64_t task_id;
	int tid;
};

struct rec_collected {
	struct vec runs;   /* struct th_rec_run from run logs: a collector fills pid, task_id,
			    * worker, tid (-1 unknown), start_ns, end_ns and why; the join
			    * fills the rest */
	struct vec uruns;  /* struct rec_usdt_run */
	struct vec ivals;  /* struct rec_ival */
	struct vec migs;   /* struct th_rec_migration (worker: filled by the join) */
	struct vec spawns; /* struct rec_spawn */
	struct vec wstart; /* struct rec_worker_start */
	struct vec binds;  /* struct rec_bind */
};
void rec_collected_init(struct rec_collected *c);
void rec_collected_free(struct rec_collected *c);

/* One followed process, as the join needs to know it. */
struct rec_proc {
	int pid;
	int run_log;             /* its runs came from its run log: a USDT run of a logged
				  * task only cross-checks it; else every USDT run is a run */
	const int *thread_tids;  /* tid of its runtime thread i (spares included), or NULL:
				  * then worker_start / task_run events name a thread's worker */
	int nthreads;
	int nworkers;            /* threads i < nworkers started serving worker i */
};

/* What the arrays are about: the window and the processes. */
struct rec_scope {
	uint64_t t_start, t_stop;        /* CLOCK_MONOTONIC */
	const struct rec_proc *procs;
	int nprocs;
};

/* ---- the output -------------------------------------------------------------- */

struct rec_joined {
	struct vec runs;    /* struct th_rec_run, sorted by (pid, task, start) */
	struct vec tasks;   /* struct th_rec_task, sorted by (pid, task) */
	struct vec workers; /* struct th_rec_worker, sorted by (pid, worker), -1 last */
	struct vec ivals;   /* struct rec_ival, settled, sorted by (pid, tid, end) */
	struct vec migs;    /* struct th_rec_migration, each with its thread's worker */
};
void rec_joined_free(struct rec_joined *j);

/* The join. Bindings are part of the input: there is nothing to add afterwards. c's
 * runs, intervals and migrations move into out (no copy of the largest arrays: c is
 * left empty of them), its other arrays are reordered; nothing else is read or kept,
 * so the same input gives the same figures. 0, or -1 when memory ran out (out is then
 * freed). Intervals and runs may come in any order, a run's intervals before or after
 * it: all is sorted here. */
int rec_join(const struct rec_scope *s, struct rec_collected *c, struct rec_joined *out);

/* The task (pid, id) of a join's output, or NULL. */
const struct th_rec_task *rec_joined_task(const struct rec_joined *j, int pid, uint64_t id);

/* First interval in [lo, hi) of one thread's intervals (sorted by end) whose end >= ts. */
size_t rec_first_ending_after(const struct rec_ival *iv, size_t lo, size_t hi, uint64_t ts);
/* The CPU of a thread at ts that falls between two of its intervals [lo, hi) (i: the
 * first ending after ts), when the gap is one the recorder could not date: a neighbour
 * with an estimated start or end. -1 when nothing says. */
int rec_gap_cpu(const struct rec_ival *iv, size_t lo, size_t hi, size_t i, uint64_t ts);

#endif
