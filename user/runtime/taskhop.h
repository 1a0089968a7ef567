/* taskhop.h — public API of libtaskhop, the user-space task runtime.
 * Stackful green tasks on a pool of worker pthreads, with Julia's vocabulary. */
#ifndef TASKHOP_H
#define TASKHOP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

/* What this header declares is the library's exported API (built -fvisibility=hidden). */
#pragma GCC visibility push(default)

/* ---- runtime ---------------------------------------------------------- */

#define TH_WORKERS_AUTO 0    /* all online CPUs (Julia's -t auto) */
#define TH_WORKERS_CORES (-1) /* physical cores, via hwloc */
#define TH_MAX_WORKERS 256
/* of the library, the recorder and the taskhop command; written into every JSON */
#define TASKHOP_VERSION "0.1.0"

enum th_placement {
	TH_PLACE_RANDOM,     /* seeded uniform choice of worker (the article's rand(1:W)) */
	TH_PLACE_ROUNDROBIN, /* 0, 1, 2, ... W-1, 0, ... */
};

/* cfg.run_log_cap: log runs into the default ring (see run_log_ring). */
#define TH_RUN_LOG_AUTO ((size_t)-1)

struct th_config {
	int workers;            /* N > 0, TH_WORKERS_AUTO or TH_WORKERS_CORES */
	const char *policy;     /* see th_policy_names(); NULL means "shared" */
	bool pin;               /* pin worker i to the i-th allowed CPU */
	size_t stack_size;      /* bytes per task stack, 16 KiB..1 GiB; 0 means 256 KiB */
	uint64_t seed;          /* run seed: task RNGs and random placement */
	enum th_placement placement; /* where tasks spawned without a worker start */
	size_t run_log_cap;     /* >0: each worker logs task runs, drained in this process,
				 * into a ring of this many (th_run_log); TH_RUN_LOG_AUTO:
				 * run_log_ring's, or if that is 0, 262,144 (8 MiB) per
				 * worker, less past 16 workers */
	size_t run_log_ring;    /* runs a worker's ring holds when a recorder attached from
				 * another process drains it (taskhop record -p); 0 = 1 Mi
				 * (32 MiB) per worker, less past 4 workers (4 Mi runs in
				 * all), 65,536 at least. Larger rides out longer pauses of
				 * the drain. */
	/* >0: the preemption quantum. A task spawned preemptible (th_spawn_opts)
	 * that runs this long without yielding, blocking or ending is interrupted
	 * and yielded on its behalf (x86-64 only; README: what such a task must
	 * not do). 0: no preemption, no timers. At least 10 us. */
	uint64_t preempt_ns;
	int activations;        /* enum th_activations; 0 = off */
	int max_spares;         /* spare threads for activations; 0 = as many as workers */
	/* The floating-point control state (x86-64: MXCSR's rounding mode and
	 * exception masks, the x87 control word; arm64: FPCR). false: a worker's
	 * tasks share its thread's, and a task that changes it (fesetround,
	 * feenableexcept) must put it back before it yields, blocks, fetches or
	 * returns. true: each task keeps its own across switches, about 2 ns more
	 * a switch. A new task starts with the state of the thread that first
	 * runs it. */
	bool task_fpenv;
};

/* Defaults: all online CPUs, "shared", unpinned, 256 KiB stacks, seed 1,
 * random placement, no run log. */
void th_config_default(struct th_config *cfg);

/* Parses "N", "auto" or "cores" into cfg->workers form. 0 ok, -1 bad text. */
int th_parse_workers(const char *text, int *workers);

/* Starts the workers. Returns 0, or -1 with th_last_error() set (unknown policy,
 * bad worker count, pinning refused, ...). One runtime per process at a time. */
int th_runtime_start(const struct th_config *cfg);

/* Waits until every spawned task is done, then stops and joins the workers.
 * Called from inside a task it would wait for itself: it aborts with a message. */
void th_runtime_stop(void);

/* The message of the last failed call in this thread, e.g. "unknown policy 'x'". */
const char *th_last_error(void);

int th_nworkers(void);         /* workers of the running runtime */
const char *th_policy_name(void);
const char *const *th_policy_names(void); /* NULL-terminated list */
const char *th_policy_description(const char *name); /* NULL if unknown */
/* cfg.policy may also be a policy plugin's path (taskhop_policy.h): a name with a '/'
 * or ending in ".so" is one, loaded at th_runtime_start. */
bool th_policy_is_plugin(const char *name);

/* ---- tasks ------------------------------------------------------------ */

typedef struct th_task th_task;
typedef void *(*th_fn)(void *arg);

/* Threads.@spawn: any worker may run it, as the policy decides. */
th_task *th_spawn(th_fn fn, void *arg);
/* Sticky task bound to one worker for its whole life (Julia's sticky tasks,
 * the article's modified @tspawnat). */
th_task *th_spawn_on(int worker, th_fn fn, void *arg);
/* ThreadPools' @tspawnat: starts on `worker`, may migrate later if the
 * policy migrates tasks. */
th_task *th_spawn_at(int worker, th_fn fn, void *arg);

/* Spawning with options, for what the three calls above cannot say:
 *   th_spawn_opts(f, x, &(struct th_spawn_opts){ .preemptible = true });
 * where/worker: TH_ANYWHERE (the policy places it, as th_spawn), TH_START_AT
 * (as th_spawn_at) or TH_STICK_TO (as th_spawn_on). preemptible: the task may
 * be interrupted anywhere in its own code when cfg.preempt_ns is set; only
 * for code that holds no lock and touches no per-thread state (README). */
enum th_where { TH_ANYWHERE = 0, TH_START_AT, TH_STICK_TO };
struct th_spawn_opts {
	enum th_where where;
	int worker;         /* for TH_START_AT and TH_STICK_TO */
	bool preemptible;
};
th_task *th_spawn_opts(th_fn fn, void *arg, const struct th_spawn_opts *opts);

/* yield(): back to the scheduler; the policy decides where the task resumes.
 * Outside a task (main thread, kthread task) it is sched_yield(). */
void th_yield(void);

/* wait/fetch: from a task it blocks only the task; from a thread, the thread. */
void th_wait(th_task *t);
void *th_fetch(th_task *t);
/* Drops the caller's handle; the task itself runs to completion regardless.
 * A NULL handle, a freed one (a second free, a fetch after free) make th_wait,
 * th_fetch and th_task_free abort with a message. */
void th_task_free(th_task *t);

th_task *th_self_task(void);   /* NULL outside a task */
uint64_t th_task_id(const th_task *t);
int th_self_worker(void);      /* threadid(): 0-based; -1 outside a worker */

/* What the runtime counted for one task (read after th_wait). */
struct th_task_stats {
	uint64_t id;
	int spawn_worker;   /* worker of the spawning task, -1 from a plain thread */
	int home_worker;    /* placement (sticky/at target), -1 if none */
	int first_worker;   /* worker of its first run */
	int last_worker;    /* worker of its last run */
	uint64_t runs;      /* times it was switched in */
	uint64_t yields;    /* th_yield calls */
	uint64_t blocks;    /* times it blocked (wait, mutex, group) */
	uint64_t worker_hops; /* resumed on a worker other than the previous run's */
	uint64_t spawn_ns, first_run_ns, done_ns; /* CLOCK_MONOTONIC; spawn_ns only
						   * with the run log on, else 0 */
	uint64_t kernel_tid; /* kthread policy: the task's own thread; else 0 */
	uint64_t preempted;  /* times the runtime preempted it (cfg.preempt_ns) */
	uint64_t activations; /* spare threads started while it was blocked */
};
void th_task_stats(const th_task *t, struct th_task_stats *out);

/* CPU time of the calling thread in ns, corrected for the calling task's
 * preemptions: the difference of two readings with no yield or block in
 * between is the task's own CPU time, even if it was preempted and moved to
 * another worker in between (outside a task: the thread's CPU time). */
uint64_t th_task_cpu_ns(void);

/* ---- structured concurrency ------------------------------------------ */

/* @sync: tasks spawned into a group; th_group_wait returns when all are done. */
typedef struct th_group {
	_Atomic long pending;
	void *waiters; /* runtime-private wait queue */
	_Atomic int lock;
} th_group;
#define TH_GROUP_INIT { 0, NULL, 0 }
void th_group_init(th_group *g);
void th_group_spawn(th_group *g, th_fn fn, void *arg);  /* detached, result dropped */
void th_group_wait(th_group *g);

/* Task-aware mutex (Julia's lock): a task that finds it held blocks, its
 * worker runs something else. Also usable from plain threads. */
typedef struct th_mutex {
	_Atomic int lock;  /* guards the fields below */
	int held;
	void *waiters;
} th_mutex;
#define TH_MUTEX_INIT { 0, 0, NULL }
void th_mutex_init(th_mutex *m);
void th_mutex_lock(th_mutex *m);
bool th_mutex_trylock(th_mutex *m);
void th_mutex_unlock(th_mutex *m);

/* ---- data parallelism ------------------------------------------------- */

/* @threads for: [lo, hi) split into W equal contiguous blocks, block i runs
 * as a sticky task on worker i; returns when all are done. */
typedef void (*th_range_fn)(int64_t lo, int64_t hi, void *arg);
void th_for(int64_t lo, int64_t hi, th_range_fn body, void *arg);

/* The split th_for uses: block i of n over [lo, hi). Exposed for tests. */
void th_static_block(int64_t lo, int64_t hi, int n, int i, int64_t *blo, int64_t *bhi);

/* Folds.map over [lo, hi) with dynamic chunking: tasks take chunks of
 * `chunk` indices from a shared counter, so uneven work balances; chunk 0
 * takes guided pieces (a share of what is left, shrinking to the end).
 * f(i, arg) is stored into out[i - lo]. */
typedef double (*th_index_fn)(int64_t i, void *arg);
void th_map(int64_t lo, int64_t hi, int64_t chunk, th_index_fn f, void *arg, double *out);
/* Folds.reduce: op over f(i) for i in [lo, hi) with identity `init`; op must
 * be associative. Fixed chunks (0 = 16 per worker), folded in index order. */
typedef double (*th_reduce_op)(double a, double b);
double th_reduce(int64_t lo, int64_t hi, int64_t chunk, th_index_fn f, void *arg,
		 th_reduce_op op, double init);
/* Same as th_map/th_reduce but static equal split (what Folds does by default). */
void th_map_static(int64_t lo, int64_t hi, th_index_fn f, void *arg, double *out);
/* Memory for a large result written once, such as th_map's `out`: whole
 * 2 MiB stretches get transparent huge pages, so filling it costs a page
 * fault per 2 MiB instead of per 4 KiB (see resultmem.c). Free with free(). */
void *th_result_alloc(size_t size);

/* ---- per-task RNG ----------------------------------------------------- */

/* xoshiro256++ per task, seeded from (run seed, task id) as Julia 1.7 seeds
 * each task: the same task id under the same seed gives the same stream,
 * whatever worker or policy runs it. Outside a task: a per-thread stream
 * seeded from (run seed, 0). */
uint64_t th_rand_u64(void);
double th_rand_double(void); /* uniform in [0, 1) */
/* The raw generator, for tests and workloads that keep their own. */
struct th_rng { uint64_t s[4]; };
void th_rng_seed(struct th_rng *r, uint64_t seed, uint64_t stream);
/* Inline (C99 `inline`; rng.c holds the external definitions, so the symbols
 * stay exported): a hot loop that drew through a call paid for the call, and
 * Julia inlines its task-local xoshiro the same way. */
inline uint64_t th_rng_next(struct th_rng *r)
{
	uint64_t *s = r->s;
	uint64_t sum = s[0] + s[3];
	uint64_t out = ((sum << 23) | (sum >> 41)) + s[0];
	uint64_t t = s[1] << 17;
	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = (s[3] << 45) | (s[3] >> 19);
	return out;
}
inline double th_rng_double(struct th_rng *r)
{
	return (double)(th_rng_next(r) >> 11) * 0x1.0p-53;
}
/* The calling task's own generator (the per-thread one outside a task). The
 * pointer stays valid for the task's life, across yields and migrations, so
 * a hot loop can draw with th_rng_double(r) without a lookup per draw. */
struct th_rng *th_self_rng(void);

/* ---- recording hooks (used by user/record) ---------------------------- */

/* Nanoseconds on CLOCK_MONOTONIC, the clock bpf_ktime_get_ns() reads. */
uint64_t th_now_ns(void);

/* Kernel thread id of worker i (valid after th_runtime_start). */
int th_worker_tid(int worker);

/* One entry of a worker's run log: task `task_id` ran on `worker` from
 * start_ns to end_ns and came back because of `why` (enum th_why). `thread`
 * is the runtime thread that ran it (th_thread_tid(thread)): thread ==
 * worker, unless activations had handed the worker to another thread. */
struct th_run_record {
	uint64_t task_id;
	uint64_t start_ns;
	uint64_t end_ns;
	uint32_t worker;
	uint32_t why;
	uint32_t thread;
	uint32_t reserved;         /* 0; keeps the record a multiple of 8 bytes */
};
enum th_why { TH_WHY_SPAWN = 0, TH_WHY_YIELD = 1, TH_WHY_BLOCK = 2, TH_WHY_DONE = 3, TH_WHY_WAKE = 4,
	      TH_WHY_PREEMPT = 5 /* run log only: the runtime yielded for the task */ };

/* The run log of worker i (cfg.run_log_cap > 0): every run drained so far,
 * oldest first. Each worker writes its runs into a ring of run_log_cap
 * entries (rounded up to a power of two) and never waits: when the ring is
 * full the run is counted in *dropped instead. th_run_log drains first, so
 * with nobody else draining the log keeps the first run_log_cap runs; a
 * thread calling th_run_log_drain() while tasks run (the recorder's poller)
 * keeps the rings empty and nothing is dropped while it keeps up. The
 * pointer is valid until the next drain or clear: read it while no task
 * runs. th_run_log_clear empties all logs (and the rings) and their counts. */
const struct th_run_record *th_run_log(int worker, size_t *n, uint64_t *dropped);
void th_run_log_clear(void);
/* Any thread, while tasks run: moves every ring's runs into the logs and
 * dates them on CLOCK_MONOTONIC (they are stamped with the CPU's counter).
 * Returns the number of runs moved. */
size_t th_run_log_drain(void);
/* Runs dropped by all workers since the last clear (rings found full). */
uint64_t th_run_log_dropped(void);
/* Runs one worker's ring holds; 0 while no run log is kept. A drainer that
 * sleeps longer than this many fast switches (30 ns each) loses runs. */
size_t th_run_log_ring_runs(void);

/* ---- another process's run logs (what `taskhop record -p` uses) ----------------
 * A running runtime keeps its workers' run logs in a shared memory area (see
 * bpf/taskhop_abi.h); a process with root can map it and drain the runs, with no
 * uprobe, signal or system call in the traced process. */
struct th_area;
/* Maps process pid's area: 0 and *out set; 1 when it has none (not linked with
 * a libtaskhop that makes one, or no runtime running); -1 (th_last_error) when
 * it cannot be read or is not well formed. Everything in it is checked. */
int th_area_open(pid_t pid, struct th_area **out);
/* 1 when a live process drains it already (it may be the process itself). */
int th_area_busy(const struct th_area *a);
/* Becomes its drainer and turns the workers' logging on; -1 when taken. */
int th_area_claim(struct th_area *a);
/* Copies the runs logged since the last call out of the rings and dates them
 * on CLOCK_MONOTONIC; the number moved, -1 no memory. */
long th_area_drain(struct th_area *a);
/* Every run drained (and not forgotten), in drain order; records of the
 * public th_run_record layout, thread = index for th_area_tid. The area keeps
 * them packed (a few bytes a run) and unpacks those new since the last call. */
const struct th_run_record *th_area_runs(struct th_area *a, size_t *n);
void th_area_forget_runs(struct th_area *a);
/* Runs lost: overwritten while the drain lagged, malformed, or no memory. */
uint64_t th_area_lost(const struct th_area *a);
/* Kernel tid of its runtime thread i (workers first), 0 unknown. */
int th_area_tid(const struct th_area *a, int thread);
int th_area_nthreads(const struct th_area *a);
int th_area_nworkers(const struct th_area *a);
/* Runs one of its workers' rings holds. */
size_t th_area_ring_runs(const struct th_area *a);
/* Logging off, the claim given back, unmapped. NULL is fine. */
void th_area_close(struct th_area *a);

/* Publish "current task id + switch sequence" of each worker into a shared
 * array (the recorder's BPF_F_MMAPABLE map): at every switch in and out,
 * worker i stores into base + i*stride a struct th_slot (bpf/taskhop_abi.h
 * layout: u64 task_id, u64 seq). NULL turns publishing off. Call while no
 * task runs. */
void th_publish_slots(void *base, size_t stride);

/* ---- activations: a worker blocked in the kernel is handed to a spare ---- */

/* When a task blocks in the kernel (a read, a sleep, a page fault), its
 * worker's thread leaves the CPU and the tasks queued on that worker wait.
 * With activations on, a parked spare thread takes the worker over (its
 * queues, its index) until the blocked thread comes back, which then requeues
 * its task and parks as a spare: the threads running tasks stay at the worker
 * count. BPF: the kernel tells the runtime (needs root, see user/record);
 * explicit: th_blocking_begin/end around the blocking call, no privileges. */
enum th_activations {
	TH_ACT_OFF = 0,
	TH_ACT_BPF = 1,      /* the kernel side sees every block (th_set_activation_backend) */
	TH_ACT_EXPLICIT = 2, /* only th_blocking_begin/end */
	TH_ACT_AUTO = 3,     /* bpf when its backend loads, else explicit */
};
const char *th_activations_name(int mode);          /* "off", "bpf", ... */
int th_parse_activations(const char *text, int *mode); /* 0 ok, -1 bad text */

/* Go's entersyscall/exitsyscall, Tokio's block_in_place: around a call that may
 * block the thread. With activations on, begin hands the worker to a spare at
 * once; end takes it back if the spare has not, else the task is requeued and
 * resumes on a worker. No-ops with activations off and outside a task. */
void th_blocking_begin(void);
void th_blocking_end(void);

/* What th_runtime_start needs from a kernel-side backend (user/record's
 * rec_act_backend). open: before the threads start, the `nthreads` slot
 * lines (stride TH_SLOT_STRIDE) the kernel side reads, or NULL with err set.
 * start: the threads run (th_thread_tid valid); begin watching, 0 or -1.
 * close: stop watching (runtime stop, or a failed start).
 * park: a parked spare's sleep, thread `thread`: returns once *word is not 0,
 * or kick(thread) was called, or the kernel side reported blocks (which park
 * passes to th_activate_thread on the way: the spare that wakes is the one
 * that takes the worker over, with no monitor thread between). May return
 * early; the caller checks *word and sleeps again. */
struct th_activation_backend {
	void *(*open)(int nthreads, char *err, size_t errlen);
	int (*start)(char *err, size_t errlen);
	void (*close)(void);
	void (*park)(int thread, _Atomic uint32_t *word);
	void (*kick)(int thread);
};
void th_set_activation_backend(const struct th_activation_backend *b);
/* Called by the backend: thread `thread` blocked in a task at blocked_ns
 * (CLOCK_MONOTONIC). Hands its worker to a spare (the caller itself when it
 * is a parked spare) if it is still blocked and a spare is free; returns 1
 * when it did. */
int th_activate_thread(int thread, uint64_t blocked_ns);

int th_nthreads(void);         /* threads of the running runtime, spares included */
int th_thread_tid(int thread); /* kernel tid of thread i, -1 if none */

struct th_activation_stats {
	int mode;                  /* enum th_activations in effect (auto resolved) */
	int spares;                /* spare threads */
	uint64_t activations;      /* spares started */
	uint64_t missed;           /* blocks seen while no spare was free */
	size_t nlatency;           /* samples in latency_ns (the first ones kept) */
	const uint64_t *latency_ns; /* block seen -> the spare serving the worker */
};
/* Valid until th_runtime_stop; read while no task runs. */
void th_activation_stats(struct th_activation_stats *out);
uint64_t th_worker_activations(int worker);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif
#endif
