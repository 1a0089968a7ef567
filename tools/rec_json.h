/* rec_json.h — a recording's per-task / per-worker kernel figures as run fields (report/run.h),
 * shared by `taskhop run` (its own runtime) and `taskhop record` (another process): one
 * vocabulary, written by the one run writer. */
#ifndef TASKHOP_REC_JSON_H
#define TASKHOP_REC_JSON_H

#include <stdint.h>

#include "record.h"
#include "report/json.h"
#include "report/run.h"

/* The kernel-only task fields (cpu_migrations, cpu_migrations_kernel, worker_cpu_changes,
 * cpus_visited, on_cpu_ns, runq_wait_ns, preemptions, kernel_blocked_ns, kernel_blocks);
 * all null when rt is NULL (no BPF, or the task was not seen). 0, or -1 on OOM. */
int rec_run_task_kernel(struct run_task *task, const struct th_rec_task *rt);
/* Per run of the task (BPF): its largest scheduling delay and when it ended
 * (max_runq_wait_ns, max_runq_wait_at_s from t0, null when it never waited), and log2
 * histograms over its runs of the run-queue wait and of the on-CPU time
 * (runq_wait_hist_us, on_cpu_hist_us: counts per slot of stats_log2_slot, in µs);
 * all null when rt is NULL. 0, or -1 on OOM. */
int rec_run_task_slices(struct run_task *task, struct th_record *rec, const struct th_rec_task *rt,
			uint64_t t0);
/* The kernel-only worker fields (cpu_migrations, preemptions, on_cpu_ns, runq_wait_ns,
 * kernel_blocked_ns, kernel_blocks, host_tid); null when rw is NULL. */
void rec_run_worker_kernel(struct run_worker *worker, const struct th_rec_worker *rw);
/* Adds process pid's timeline to r (times in s from t0; pid 0: every process): its task
 * runs with why each ended, the kernel's migrations of its workers and every kernel
 * on-CPU interval of its runtime threads (the row columns: run_schema.h). 0, or -1 on OOM. */
int rec_run_timeline(struct th_record *rec, int pid, uint64_t t0, struct run *r);
/* enum th_why as a run end. */
enum run_end rec_run_end(uint32_t why);

/* What `taskhop record` knows of a followed process beyond the recording. */
struct rec_target_info {
	int pid;
	const char *command;     /* its command line, shell-quoted */
	const char *name;        /* its program's name: the run's "workload" */
	const char *attached_at; /* wall-clock time recording began, ISO 8601 */
};

/* The run JSON (schema taskhop-run/1, as `taskhop run --json`) of one recorded process:
 * tasks and workers from the recording, completion times from its start. NULL on OOM. */
struct json *rec_json_run(struct th_record *rec, const struct rec_target_info *t);

#endif
