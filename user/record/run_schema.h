/* run_schema.h — the fields of a run JSON (schema taskhop-run/1), each named once: one line
 * per field of a run, task, worker and timeline row, in the order they are written.
 *
 * A line is X(name, need, kind): the JSON key is the member name itself (#name), need says
 * whether it must be there, kind what it holds (tools/report/run_read.c gives each kind its
 * range). tools/report/run.h makes the C structs, the writer and the reader from these
 * lines, so a new field is a line here and the producer that fills it. The header is in
 * user/record, not in tools/, because the recorder library (user/record/json.c, which
 * cannot link the CLI) writes the same per-task and per-worker figures under the same names
 * (TH_TASK_KEY and the like, at the end); bpf/ holds the kernel/user ABI, which this is
 * not. It holds no code, only these lists and the key arrays made from them.
 *
 * need: REQ   present, not null
 *       NUL   present, null when not measured (no BPF)
 *       OPT   may be absent (older files); written, null when unknown
 *       EXT   may be absent; written only when known */
#ifndef TASKHOP_RUN_SCHEMA_H
#define TASKHOP_RUN_SCHEMA_H

/* A run. TASKS, WORKERS, BPF and TIMELINE are the nested parts below. */
#define TH_RUN_FIELDS(X)                         \
	X(workload, REQ, NAME)                   \
	X(options, OPT, NAMES)                   \
	X(policy, REQ, NAME)                     \
	X(worker_count, REQ, WCOUNT)             \
	X(pin, NUL, BOOL)                        \
	X(seed, NUL, SEED)                       \
	X(preempt_ms, OPT, SECS)                 \
	X(bpf, REQ, BPF)                         \
	X(activations, EXT, NAME)                \
	X(activation, EXT, JSON)                 \
	X(wall_s, NUL, SECS)                     \
	X(peak_rss_kb, NUL, COUNT)               \
	X(cpu_s, OPT, SECS)                      \
	X(tasks, REQ, TASKS)                     \
	X(workers, REQ, WORKERS)                 \
	X(timeline, OPT, TIMELINE)               \
	X(extra, EXT, JSON)                      \
	X(summary, OPT, TEXT)                    \
	X(command, OPT, TEXT)                    \
	X(machine, EXT, JSON)                    \
	X(recording, EXT, JSON)                  \
	X(mean_completion_s, NUL, SECS)          \
	X(makespan_s, NUL, SECS)                 \
	X(ideal_mean_completion_s, NUL, SECS)    \
	X(repeat, EXT, COUNT)

/* run["bpf"]: whether the kernel side recorded, and what it lost. */
#define TH_RUN_BPF_FIELDS(X)      \
	X(enabled, REQ, BOOL)     \
	X(lost_events, OPT, COUNT) \
	X(dropped_runs, OPT, COUNT)

/* A task. The REQ and NUL fields are also the columns of runs.csv, in this order. */
#define TH_RUN_TASK_FIELDS(X)                 \
	X(id, REQ, COUNT)                     \
	X(label, REQ, NAME)                   \
	X(n, NUL, SIZE)                       \
	X(spawn_worker, REQ, WORKER)          \
	X(first_worker, REQ, WORKER)          \
	X(last_worker, REQ, WORKER)           \
	X(completion_s, NUL, SECS)            \
	X(runs, REQ, COUNT)                   \
	X(yields, REQ, COUNT)                 \
	X(preempted, OPT, COUNT)              \
	X(worker_hops, REQ, COUNT)            \
	X(cpu_migrations, NUL, COUNT)         \
	X(cpu_migrations_kernel, NUL, COUNT)  \
	X(worker_cpu_changes, OPT, COUNT)     \
	X(cpus_visited, NUL, CPUS)            \
	X(on_cpu_ns, NUL, COUNT)              \
	X(runq_wait_ns, NUL, COUNT)           \
	X(preemptions, NUL, COUNT)            \
	X(kernel_blocked_ns, OPT, COUNT)      \
	X(kernel_blocks, OPT, COUNT)          \
	X(max_runq_wait_ns, OPT, COUNT)       \
	X(max_runq_wait_at_s, OPT, TIME)      \
	X(runq_wait_hist_us, OPT, HIST)       \
	X(on_cpu_hist_us, OPT, HIST)          \
	X(work_s, OPT, SECS)                  \
	X(blocks, EXT, COUNT)                 \
	X(activations, EXT, COUNT)            \
	X(means, EXT, MEANS)

/* A worker: one per worker thread (a serial run: the thread that ran the loop). */
#define TH_RUN_WORKER_FIELDS(X)           \
	X(index, REQ, WINDEX)             \
	X(tid, REQ, TID)                  \
	X(cpu_migrations, NUL, COUNT)     \
	X(preemptions, NUL, COUNT)        \
	X(on_cpu_ns, NUL, COUNT)          \
	X(runq_wait_ns, NUL, COUNT)       \
	X(kernel_blocked_ns, OPT, COUNT)  \
	X(kernel_blocks, OPT, COUNT)      \
	X(host_tid, OPT, TID)             \
	X(tasks_run, REQ, COUNT)

/* run["timeline"]: rows of numbers (ROWS), one word per run (ENDS). */
#define TH_RUN_TIMELINE_FIELDS(X)   \
	X(runs, OPT, ROWS)          \
	X(run_ends, OPT, ENDS)      \
	X(migrations, OPT, ROWS)    \
	X(oncpu, OPT, ROWS)         \
	X(dropped_runs, EXT, COUNT)

/* The columns of the timeline rows, X(name, kind); times in s from the run's t0.
 * runs: one per task run, in start order per worker (worker -1: a kthread task's own
 * thread; cpu -1: not known without BPF). */
#define TH_RUN_TL_RUN_COLS(X) \
	X(task, COUNT)        \
	X(worker, WORKER)     \
	X(cpu, CPU)           \
	X(start_s, TIME)      \
	X(end_s, TIME)
/* migrations: the kernel moved a worker's thread (task: the one it ran, 0 none). */
#define TH_RUN_TL_MIGRATION_COLS(X) \
	X(ts_s, TIME)               \
	X(worker, WORKER)           \
	X(task, COUNT)              \
	X(from_cpu, CPU)            \
	X(to_cpu, CPU)
/* oncpu: every kernel on-CPU interval of the process's threads (worker -1: a thread that
 * serves none; end 0 blocked, 1 preempted, 2 recording stopped; task current at
 * switch-out, 0 none). */
#define TH_RUN_TL_ONCPU_COLS(X) \
	X(tid, TID)             \
	X(worker, WORKER)       \
	X(cpu, CPU)             \
	X(start_s, TIME)        \
	X(end_s, TIME)          \
	X(runq_wait_s, SECS)    \
	X(end, END)             \
	X(task, COUNT)

/* The words of run_ends, by enum th_why order where it has one. */
#define TH_RUN_END_WORDS(X) X(yield) X(block) X(done) X(preempt) X(unknown)

/* Keys by name, checked by the compiler: TH_TASK_KEY(worker_hops) is "worker_hops", and a
 * name that is not a task field does not compile (the index is an enum made from the list). */
#define TH_RUN_KEY_ENUM_(prefix, name) prefix##name,
#define TH_RUN_TASK_ENUM_(name, need, kind) TH_RUN_KEY_ENUM_(th_task_k_, name)
#define TH_RUN_WORKER_ENUM_(name, need, kind) TH_RUN_KEY_ENUM_(th_worker_k_, name)
#define TH_RUN_KEY_NAME_(name, ...) #name,
enum th_run_task_key { TH_RUN_TASK_FIELDS(TH_RUN_TASK_ENUM_) th_task_k_count_ };
enum th_run_worker_key { TH_RUN_WORKER_FIELDS(TH_RUN_WORKER_ENUM_) th_worker_k_count_ };
static const char *const th_run_task_keys[] __attribute__((unused)) = {
	TH_RUN_TASK_FIELDS(TH_RUN_KEY_NAME_)
};
static const char *const th_run_worker_keys[] __attribute__((unused)) = {
	TH_RUN_WORKER_FIELDS(TH_RUN_KEY_NAME_)
};
#define TH_TASK_KEY(name) th_run_task_keys[th_task_k_##name]
#define TH_WORKER_KEY(name) th_run_worker_keys[th_worker_k_##name]
#define TH_RUN_RUN_ENUM_(name, need, kind) TH_RUN_KEY_ENUM_(th_run_k_, name)
#define TH_RUN_TL_ENUM_(name, need, kind) TH_RUN_KEY_ENUM_(th_tl_k_, name)
enum th_run_run_key { TH_RUN_FIELDS(TH_RUN_RUN_ENUM_) th_run_k_count_ };
enum th_run_timeline_key { TH_RUN_TIMELINE_FIELDS(TH_RUN_TL_ENUM_) th_tl_k_count_ };
static const char *const th_run_run_keys[] __attribute__((unused)) = {
	TH_RUN_FIELDS(TH_RUN_KEY_NAME_)
};
static const char *const th_run_timeline_keys[] __attribute__((unused)) = {
	TH_RUN_TIMELINE_FIELDS(TH_RUN_KEY_NAME_)
};
#define TH_RUN_KEY(name) th_run_run_keys[th_run_k_##name]
#define TH_TIMELINE_KEY(name) th_run_timeline_keys[th_tl_k_##name]

/* The same for the columns of the timeline rows: TH_TL_RUN_KEY(task) is "task",
 * TH_TL_MIGRATION_KEY(from_cpu) is "from_cpu" (the recorder library's objects use these
 * names for the same values). */
#define TH_RUN_COL_NAME_(name, kind) #name,
#define TH_RUN_RUNCOL_ENUM_(name, kind) th_runcol_k_##name,
#define TH_RUN_MIGCOL_ENUM_(name, kind) th_migcol_k_##name,
enum th_run_tl_run_col { TH_RUN_TL_RUN_COLS(TH_RUN_RUNCOL_ENUM_) th_runcol_k_count_ };
enum th_run_tl_migration_col { TH_RUN_TL_MIGRATION_COLS(TH_RUN_MIGCOL_ENUM_) th_migcol_k_count_ };
static const char *const th_run_tl_run_cols[] __attribute__((unused)) = {
	TH_RUN_TL_RUN_COLS(TH_RUN_COL_NAME_)
};
static const char *const th_run_tl_migration_cols[] __attribute__((unused)) = {
	TH_RUN_TL_MIGRATION_COLS(TH_RUN_COL_NAME_)
};
#define TH_TL_RUN_KEY(name) th_run_tl_run_cols[th_runcol_k_##name]
#define TH_TL_MIGRATION_KEY(name) th_run_tl_migration_cols[th_migcol_k_##name]

#endif
