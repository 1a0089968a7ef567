/* record.h — the BPF recorder's in-process API: follow this process, a pid or a command,
 * and get, per user task and per worker, what the kernel did to the threads running them. */
#ifndef TASKHOP_RECORD_H
#define TASKHOP_RECORD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "taskhop_abi.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What this header declares is the library's exported API (built -fvisibility=hidden). */
#pragma GCC visibility push(default)

/*
 * How it works (collection in user/record/load.c, events.c, drain.c; analysis in join.c):
 *  - Kernel side (bpf/taskhop_rec.bpf.c): tp_btf (or raw_tp) programs on sched_switch,
 *    sched_migrate_task and sched_wakeup(_new), filtered to the followed processes, send
 *    each thread's on-CPU intervals (cpu, start, end, run-queue wait before it, preempted
 *    or not) and each kernel migration through a BPF ring buffer.
 *  - Which user task a worker was running: in-process (th_record_attach_self), from the
 *    runtime's run log (cfg.run_log_cap > 0), joined by worker and time with the kernel
 *    intervals; the workers also publish "task id + switch seq" in an mmap'd BPF map so
 *    that migration events name their task without any trap. For another process
 *    (pid / command) or with opts.usdt, from the runtime's USDT probes (about 1 µs each).
 *
 * Typical in-process use (what `taskhop run` does):
 *     struct th_config cfg; th_config_default(&cfg); cfg.run_log_cap = TH_RUN_LOG_AUTO;
 *     th_runtime_start(&cfg);
 *     const char *why = th_record_unavailable();      // NULL when BPF is usable
 *     if (why) { fprintf(stderr, "%s\n", why); ... fall back to --no-bpf ... }
 *     struct th_record_opts o; th_record_opts_default(&o);
 *     struct th_record *r = th_record_open(&o);
 *     th_record_attach_self(r);
 *     th_record_start(r);              // no task may be running yet
 *     ... spawn the workload, wait for all of it ...
 *     for each task t: th_task_stats(t, &st);
 *         if (st.kernel_tid) th_record_bind_thread(r, st.id, st.kernel_tid); // kthread policy
 *     th_record_stop(r);               // no task may be running any more; figures computed
 *     th_record_task(r, 0, st.id, &rt);  ... th_record_worker(r, w, &rw); ...
 *     th_record_close(r); th_runtime_stop();
 * Every call that can fail returns -1 (or NULL) and sets th_record_error(): one line
 * that names the fix.
 */

#define TH_REC_MAX_TARGETS TH_MAX_TARGETS /* processes one recording can follow */
#define TH_REC_MAX_CPUS 1024
#define TH_REC_CPU_WORDS (TH_REC_MAX_CPUS / 64)

struct th_record_opts {
	bool usdt;              /* also attach the runtime's USDT probes (--usdt): cross-check
				 * in-process, always on for a pid / command target */
	bool slots;             /* in-process: workers publish their current task in the
				 * mmap'd slot map (default true) */
	size_t ringbuf_bytes;   /* BPF ring buffer size, power of 2; 0 = 16 MiB */
	bool prog_stats;        /* count the BPF programs' runs and run time while recording
				 * (BPF_ENABLE_STATS; see th_record_prog_stats) */
	int drain_stall_ms;     /* in-process, for tests: the poller drains the run logs only
				 * every this many ms (0: as fast as runs come), so that a
				 * drain that falls behind can be shown */
};
void th_record_opts_default(struct th_record_opts *o);

/* NULL when this process can record, else one line naming what is missing and the fix:
 * "BPF recording needs root or CAP_BPF+CAP_PERFMON: run as root, or use --no-bpf",
 * no BTF, BPF disabled in the kernel, ... Cheap, no side effects; call before open.
 * (Env TASKHOP_BTF_PATH replaces /sys/kernel/btf/vmlinux in the BTF check, for tests.) */
const char *th_record_unavailable(void);

/* The error message of the last failed th_record_* call in this thread. */
const char *th_record_error(void);

struct th_record;

/* Allocates a recorder; nothing is loaded yet. NULL opts = defaults. */
struct th_record *th_record_open(const struct th_record_opts *opts);

/* Targets, before th_record_start (up to TH_REC_MAX_TARGETS, mixed freely). */
/* This process: the running libtaskhop runtime (th_runtime_start done). */
int th_record_attach_self(struct th_record *r);
/* A running process linked with libtaskhop (checked: it must carry `taskhop` USDT notes).
 * pid as this process sees it (works inside a PID namespace). USDT is used. */
int th_record_attach_pid(struct th_record *r, pid_t pid);
/* Where the runs of target pid come from, in words for a header line: "its run
 * logs, in process", "its run-log area (shared memory)" or "USDT probes". NULL
 * when pid is not a target. */
const char *th_record_source(struct th_record *r, pid_t pid);
/* Forks argv (PATH lookup) held before exec; it runs from th_record_start on.
 * *child gets its pid. Reap it with th_record_wait_child. USDT is used. */
int th_record_attach_command(struct th_record *r, char *const argv[], pid_t *child);

/* Loads and attaches the BPF programs (filters are set at load time), binds the self
 * target's workers, publishes slots, clears the run log, releases a held command. */
int th_record_start(struct th_record *r);

/* Drains the ring buffer for up to timeout_ms. Returns events consumed (>= 0) or -1.
 * Returns 0 early with errno EINTR when a signal arrived (the Ctrl-C path). */
int th_record_poll(struct th_record *r, int timeout_ms);

/* For a command target: polls until the child exits; returns its wait status (as waitpid)
 * or -1. Stops early, returning -2, when *stop becomes true (e.g. set by SIGINT). */
int th_record_wait_child(struct th_record *r, volatile int *stop);

/* Detaches, drains what is left, takes the run logs of the self target, unpublishes the
 * slots, and computes every figure below, once (bind threads before). Idempotent. */
int th_record_stop(struct th_record *r);

/* kthread policy: the task ran on its own kernel thread `tid`; charge that thread's
 * intervals to task_id. Call before th_record_stop (after it: -1, the figures are made);
 * USDT learns it by itself. */
int th_record_bind_thread(struct th_record *r, uint64_t task_id, int tid);

/* ---- results (valid after th_record_stop) --------------------------------- */

struct th_rec_task {
	int pid;                     /* process (as this process sees it) */
	uint64_t task_id;
	uint64_t runs;               /* runs seen (run log, or USDT task_run) */
	uint64_t worker_hops;        /* runs on a worker other than the previous run's */
	uint64_t cpu_migrations;     /* CPU changes between consecutive on-CPU stretches */
	uint64_t cpu_migrations_kernel; /* kernel migrations (sched_migrate_task) of a worker
				      * thread charged to this task: each one to exactly one task,
				      * the one running on the thread when it happened, or, if the
				      * thread was running none (parked, between runs), the next
				      * task to run on it; after its last run: to none */
	uint64_t on_cpu_ns;
	uint64_t runq_wait_ns;       /* its worker runnable but not on a CPU (wakeup or
				      * preemption -> on CPU) while or just before it ran */
	uint64_t preemptions;        /* involuntary switch-outs of its worker while it ran */
	int ncpus_visited;
	uint64_t cpu_mask[TH_REC_CPU_WORDS]; /* bit c: ran on CPU c */
	int first_cpu, last_cpu;     /* -1 unknown */
	/* cross-check through the USDT probes (opts.usdt or external target; else 0) */
	uint64_t usdt_runs, usdt_worker_hops;
	uint64_t kernel_blocked_ns;  /* its worker thread off CPU and not runnable (blocked in a
				      * system call, page fault, ...) while running this task:
				      * switch-out to wakeup, runs of the runtime's own idle wait
				      * excluded (no task runs then) */
	uint64_t kernel_blocks;      /* such switch-outs */
	uint64_t worker_cpu_changes; /* times it resumed on the same worker thread as its previous
				      * on-CPU stretch but on another CPU: one kernel migration
				      * counts here for every task that later runs on the moved
				      * worker (what cpu_migrations_kernel meant before) */
	uint64_t yields;             /* runs that ended in a yield (run log or USDT) */
	int first_worker, last_worker; /* worker of its first / last run, -1 unknown */
	int spawn_worker;            /* worker that spawned it (USDT task_spawn), -1 outside
				      * any worker or unknown */
	uint64_t done_ns;            /* CLOCK_MONOTONIC end of its last run if that run ended
				      * the task, else 0 */
	uint64_t max_runq_wait_ns;   /* its largest scheduling delay: the run-queue wait of one
				      * run (th_rec_run.runq_wait_ns), as perf sched latency's
				      * "max delay" */
	uint64_t max_runq_wait_at_ns; /* when that wait ended (its worker got the CPU back),
				      * CLOCK_MONOTONIC; 0 when it never waited */
};

/* One followed thread of a target: a worker's thread, a spare (activations), or a
 * kthread-policy task's thread. */
struct th_rec_worker {
	int pid;
	int worker;                  /* the worker it started serving, or -1: a spare thread
				      * (see `thread`) or a kthread-policy task thread */
	int tid;                     /* thread id as this process sees it */
	uint64_t cpu_migrations;     /* CPU changes between its consecutive on-CPU intervals */
	uint64_t preemptions;
	uint64_t on_cpu_ns, off_cpu_ns, runq_wait_ns;
	uint64_t switches;           /* on-CPU intervals seen */
	int host_tid;                /* thread id in the initial PID namespace (= tid outside one) */
	uint64_t kernel_blocked_ns, kernel_blocks; /* the th_rec_task figures of the tasks it ran */
	int thread;                  /* self target: the runtime's thread index (th_thread_tid),
				      * spares included; -1 for other targets */
};

/* One task run with the CPU it started on, for timelines (Perfetto: CPU -> worker -> task). */
struct th_rec_run {
	int pid;
	uint64_t task_id;
	int worker;
	int tid;
	int cpu;                     /* from the join with kernel intervals; -1 unknown */
	int usdt_cpu;                /* bpf_get_smp_processor_id() in task_run; -1 without USDT */
	uint64_t start_ns, end_ns;   /* CLOCK_MONOTONIC */
	uint64_t usdt_ts_ns;         /* when task_run fired (bpf_ktime_get_ns), 0 without USDT */
	uint32_t why;                /* enum th_why (run log) or 0 */
	uint64_t on_cpu_ns;          /* its worker thread on a CPU during this run (BPF) */
	uint64_t runq_wait_ns;       /* run-queue waits charged to this run: before it got the
				      * CPU, and after each preemption inside it */
	uint64_t runq_wait_end_ns;   /* when the largest of those waits ended; 0 none */
};

/* The kernel moved a thread (sched_migrate_task). */
struct th_rec_migration {
	int pid, tid, worker;
	int orig_cpu, dest_cpu;
	uint64_t ts_ns;
	uint64_t task_id;            /* task the worker was running (slot or USDT), 0 none */
};

/* pid 0 = the first target. 0, or -1 if the task was not seen. */
int th_record_task(struct th_record *r, int pid, uint64_t task_id, struct th_rec_task *out);
/* All tasks seen, sorted by (pid, task id). */
const struct th_rec_task *th_record_tasks(struct th_record *r, size_t *n);
/* pid 0 = the first target. 0, or -1 if no such worker. */
int th_record_worker(struct th_record *r, int pid, int worker, struct th_rec_worker *out);
/* Workers' threads, spare threads and kthread-task threads seen, sorted by (pid,
 * worker), -1 last (spares by thread index). Their figures sum to the process's. */
const struct th_rec_worker *th_record_workers(struct th_record *r, size_t *n);
const struct th_rec_run *th_record_runs(struct th_record *r, size_t *n);
const struct th_rec_migration *th_record_migrations(struct th_record *r, size_t *n);

/* One on-CPU interval of a followed thread (sched_switch), as the join settled it: a
 * thread's intervals are disjoint and its run-queue wait fits in the gap before each. */
struct th_rec_oncpu {
	int pid, tid, cpu;
	uint32_t flags;              /* TH_EVF_*: PREEMPTED = left the CPU still runnable */
	uint64_t start_ns, end_ns;   /* CLOCK_MONOTONIC */
	uint64_t wait_ns;            /* run-queue wait (wakeup or preemption -> on CPU) before it */
	uint64_t task_id;            /* task current at switch-out (slot or USDT), 0 none/unknown */
};
/* The i-th interval, sorted by (pid, tid, end): 0, or -1 past the last one. */
int th_record_oncpu(struct th_record *r, size_t i, struct th_rec_oncpu *out);

/* The CPU thread `tid` of process `pid` (0 = first target) was on at time ts
 * (CLOCK_MONOTONIC), from the kernel intervals; -1 if it was not on a CPU. */
int th_record_cpu_at(struct th_record *r, int pid, int tid, uint64_t ts);

/* When recording started and stopped (CLOCK_MONOTONIC ns; stop is 0 before th_record_stop). */
void th_record_window(struct th_record *r, uint64_t *start_ns, uint64_t *stop_ns);

/* Ring-buffer records the BPF side could not reserve (must be 0 for exact figures),
 * plus runs the self target's run log dropped (capacity too small). */
uint64_t th_record_lost_events(struct th_record *r);
uint64_t th_record_dropped_runs(struct th_record *r);

/* What the BPF programs cost: runs and total ns of the scheduler tracepoint programs
 * (sched_switch alone, and wakeup + migrate) and of the USDT handlers. Needs
 * opts.prog_stats (or sysctl kernel.bpf_stats_enabled=1); else all 0. */
struct th_rec_prog_stats {
	uint64_t switch_runs, switch_ns;
	uint64_t other_runs, other_ns;
	uint64_t usdt_runs, usdt_ns;
};
int th_record_prog_stats(struct th_record *r, struct th_rec_prog_stats *out);

/* Fills buf with the visited CPUs as "0,1,3"; returns buf. */
char *th_rec_cpu_list(const struct th_rec_task *t, char *buf, size_t len);

/* The whole recording as JSON ({"lost_events":..,"tasks":[..],"workers":[..],
 * "runs":[..],"migrations":[..]}); what `taskhop record -o` writes. 0 or -1. */
int th_record_write_json(struct th_record *r, FILE *f);

/* Detaches if needed, kills a held command, frees everything. NULL is fine. */
void th_record_close(struct th_record *r);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif
#endif
