/* rec_json.h — a recording's per-task / per-worker kernel figures as run-JSON fields, shared
 * by `taskhop run` (its own runtime) and `taskhop record` (another process): one vocabulary. */
#ifndef TASKHOP_REC_JSON_H
#define TASKHOP_REC_JSON_H

#include <stdint.h>

#include "record.h"
#include "report/json.h"

/* The kernel-only task fields (cpu_migrations, cpu_migrations_kernel, worker_cpu_changes,
 * cpus_visited, on_cpu_ns, runq_wait_ns, preemptions, kernel_blocked_ns, kernel_blocks);
 * all null when rt is NULL (no BPF, or the task was not seen). */
void rec_json_task_kernel(struct json *task, const struct th_rec_task *rt);
/* Per run of the task (BPF): its largest scheduling delay and when it ended
 * (max_runq_wait_ns, max_runq_wait_at_s from t0, null when it never waited), and log2
 * histograms over its runs of the run-queue wait and of the on-CPU time
 * (runq_wait_hist_us, on_cpu_hist_us: counts per slot of stats_log2_slot, in µs);
 * all null when rt is NULL. */
void rec_json_task_slices(struct json *task, struct th_record *rec, const struct th_rec_task *rt,
			  uint64_t t0);
/* The kernel-only worker fields (cpu_migrations, preemptions, on_cpu_ns, runq_wait_ns,
 * kernel_blocked_ns, kernel_blocks, host_tid); null when rw is NULL. */
void rec_json_worker_kernel(struct json *worker, const struct th_rec_worker *rw);
/* Sets process pid's timeline into tl (times in s from t0): "runs" [task, worker, cpu,
 * start_s, end_s] in start order per worker, "run_ends" (why each run ended, one string
 * per run: rec_json_run_end), "migrations" [ts_s, worker, task, from, to] (the kernel
 * moved a worker) and "oncpu" [tid, worker, cpu, start_s, end_s, runq_wait_s, end, task]
 * (every kernel on-CPU interval of the process's runtime threads; worker -1: a spare or
 * kthread-task thread; end 0 blocked, 1 preempted, 2 recording stopped; task current at
 * switch-out, 0 none). */
void rec_json_timeline(struct th_record *rec, int pid, uint64_t t0, struct json *tl);
/* enum th_why as run_ends says it: "yield", "block", "done", "preempt" or "unknown". */
const char *rec_json_run_end(uint32_t why);

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
