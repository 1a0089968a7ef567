/* core_types.h — what a task, a worker and the runtime are made of. Shared by the
 * core (core.h) and the policies (policy.h), which read only the fields marked for them. */
#ifndef TASKHOP_CORE_TYPES_H
#define TASKHOP_CORE_TYPES_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "taskhop.h"
#include "context.h"
#include "tscclock.h"

/* A task's life: spawn makes it RUNNABLE; a worker that takes it from the
 * policy makes it RUNNING; a yield makes it RUNNABLE again, a block BLOCKED
 * (and a wake RUNNABLE), its return DONE. Only a RUNNABLE task is in a
 * policy's queue, and only the core writes the state. */
enum th_state { TH_RUNNABLE, TH_RUNNING, TH_BLOCKED, TH_DONE };

struct th_task {
	/* --- identity and work --- */
	uint64_t id;               /* policies: read (ids grow in spawn order) */
	th_fn fn;
	void *arg;
	void *result;
	_Atomic int state;         /* enum th_state; policies: read only */
	_Atomic int refs;          /* user handle + runtime */
	_Atomic uint32_t magic;    /* TH_TASK_LIVE while the user handle is valid (task.c) */
	struct th_group *group;    /* @sync group, or NULL */

	/* --- placement: read by policies --- */
	int home;                  /* th_spawn_on / th_spawn_at target, or -1 (a policy may set it at push) */
	bool sticky;               /* must only ever run on `home` */
	int spawn_worker;          /* -1 when spawned by a plain thread */
	int last_worker;           /* -1 before the first run */
	int first_worker;

	/* --- policy-private: one intrusive link and two words, the policy's
	 * from push until the task is handed back by pop --- */
	struct th_task *next;
	uint64_t policy_word;      /* e.g. multiqueue priority */
	void *policy_ptr;

	/* --- execution --- */
	struct th_ctx ctx;
	struct th_stack stack;     /* mapped at first run, unmapped when done */
	struct th_rng rng;
	void *done_waiters;        /* struct th_waiter list, under done_lock */
	_Atomic int done_lock;

	/* --- counters (policies: runs may be read) --- */
	uint64_t runs, yields, blocks, worker_hops;
	uint64_t spawn_ns, first_run_ns, done_ns;
	uint64_t kernel_tid;
	bool preemptible;          /* th_spawn_opts: preempt.c may interrupt it */
	uint64_t preempted;        /* times it was */
	int64_t cpu_skew_ns;       /* th_task_cpu_ns: thread CPU clocks left at preemptions */
	uint64_t activations;      /* spare threads started while it blocked */
};

struct th_runtime;
struct th_os_thread;
struct th_stack_cache;
struct th_runlog;
struct th_policy;
struct th_activation_backend;

/* Go's P/M split. A worker (P) is its index, queues (policy_data), RNG,
 * caches and run log: what policies see. A thread (M, struct th_os_thread,
 * core.h) is what runs a worker's loop and its tasks. Normally thread i
 * serves worker i for the whole run; with activations on, a spare thread
 * takes a worker over while the thread that served it is blocked in the
 * kernel inside a task (activation.c). Owner-only operations on a worker
 * (its deque, caches, log) are done by whichever thread serves it now. */
struct th_worker {
	int index;                 /* policies: read */
	int tid;                   /* kernel tid of the thread serving it (last known) */
	int cpu;                   /* pinned CPU or -1 */
	struct th_runtime *rt;
	struct th_tscclock clock;  /* task timestamps when the run log is off */
	struct th_rng rng;         /* for the policy's random choices (th__worker_rand) */
	void *policy_data;         /* per-worker policy state */
	uint32_t fair_tick;        /* pops since the last fair turn (th_fair_turn) */
	struct th_stack_cache *stacks;
	_Atomic uint32_t park_word; /* futex: 1 = told to wake */
	_Atomic int parked;
	struct th_runlog *log;     /* run log (runlog.h): its line of the run-log area */
	uint64_t steals;           /* tasks this worker took from others (policies count, owner only) */
	uint64_t activations;      /* times a spare thread took it over */
	struct th_task *free_tasks; /* freed task structs kept for reuse (task.c) */
	int nfree_tasks;
	/* Tasks spawned and finished by whichever thread serves this worker
	 * (task.c; their sums over workers say when every task is done). In a
	 * line of their own: a count in struct th_runtime was written by the
	 * spawner and by the worker that ran each task, and moved between
	 * their cores twice a task. */
	_Alignas(64) _Atomic uint64_t spawned;
	_Atomic uint64_t finished;
} __attribute__((aligned(64)));

struct th_runtime {
	int nworkers;               /* policies: read */
	struct th_worker *workers;
	int nthreads;               /* nworkers + spares */
	struct th_os_thread *threads;
	const struct th_policy *policy;
	void *policy_data;          /* global policy state: the policy's, from init to fini */
	struct th_config cfg;       /* policies: read */
	_Atomic int quiet_wanted;   /* th_runtime_stop waits: a finish checks for the last task */
	/* One line each for what different workers write at different times: the
	 * spawner takes ids, threads that serve no worker count their tasks, idle
	 * workers count themselves. The spawner's id and the old task count on
	 * one line with the idle counts moved it between cores at every spawn. */
	_Alignas(64) _Atomic uint64_t next_id;
	_Alignas(64) _Atomic uint64_t ext_spawned; /* by threads that serve no worker */
	_Atomic uint64_t ext_finished;
	_Atomic uint32_t quiet_word; /* futex: bumped when the last task is done */
	_Alignas(64) _Atomic int nparked; /* policies: read, as a hint (relaxed) */
	_Atomic int nspinning;      /* workers looking for work right now; policies: a hint */
	_Atomic int fence_word;      /* TSan builds: the park/push barrier */
	_Atomic bool stopping;
	_Atomic int preempt_stretched; /* workers whose tick is stretched (preempt.c) */
	struct th_area_head *area;  /* the run-log area (area.c) */
	size_t area_size;
	_Atomic uint32_t rr_next;   /* round-robin placement */
	struct th_rng place_rng;    /* seeded random placement (under place_lock) */
	_Atomic int place_lock;
	/* activations (activation.c) */
	int act_mode;               /* enum th_activations in effect */
	int nspares;
	const struct th_activation_backend *act_backend; /* opened, or NULL */
	_Atomic int spare_lock;     /* guards the fields below */
	int nidle;
	int *idle;                  /* indices of parked spare threads */
	uint64_t act_count, act_missed;
	size_t act_nlat;
	uint64_t *act_lat;
	/* debug and sanitizer builds (core_check.h): tasks pushed to the policy
	 * and not handed back yet; never negative, 0 once every task is done */
	_Atomic long queued;
};

#endif
