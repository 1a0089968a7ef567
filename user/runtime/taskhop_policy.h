/* taskhop_policy.h — installed as <taskhop/policy.h>: what a migration policy built as
 * a shared object sees of the runtime (load it with --policy ./x.so or cfg.policy). */
#ifndef TASKHOP_POLICY_H
#define TASKHOP_POLICY_H

#include <stdbool.h>
#include <stdint.h>

#include "taskhop.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What this header declares is the library's exported API (built -fvisibility=hidden). */
#pragma GCC visibility push(default)

/*
 * A policy decides where a runnable task waits and which waiting task a worker runs
 * next; the runtime does everything else (stacks, switching, blocking, waking idle
 * workers, counters, probes). tools/examples/policy_lifo.c is a complete one.
 *
 * The runtime calls push and pop from any worker at the same time: a policy locks its
 * own queues. Workers are numbered 0 .. nworkers-1; -1 means "not a worker" (main or
 * another plain thread pushed the task).
 *
 * A task is handed to the policy by push and taken back by pop (or yield_pop); in
 * between, the policy may use the task's link (th_task_link) and word (th_task_word)
 * as it likes, and nothing else touches them. Once push has queued a task, another
 * worker may pop it, run it to its end and free it: read what you need before queueing.
 *
 * A sticky task (th_spawn_on) must run only on its home worker; a task with a home but
 * not sticky (th_spawn_at) should start there and may move later.
 */

/* Raised whenever struct th_policy_ops or the meaning of a call below changes; the
 * runtime loads only a plugin built with the version it has. */
#define TH_POLICY_ABI_VERSION 1

struct th_policy_ops {
	uint32_t abi_version;        /* TH_POLICY_ABI_VERSION */
	const char *name;            /* what th_policy_name() and reports show */
	const char *description;     /* one line */
	/* Optional: set up for nworkers workers; 0, or -1 after th_policy_error(). */
	int (*init)(int nworkers);
	/* Optional: free what init made. Every task has been popped and has ended. */
	void (*fini)(void);
	/* Makes t runnable: `why` is TH_WHY_SPAWN (new), TH_WHY_YIELD (after a th_yield)
	 * or TH_WHY_WAKE (what it waited for happened). `self` is the calling worker or -1.
	 * Returns the worker to wake for t, or -1 to wake any idle one. */
	int (*push)(int self, th_task *t, enum th_why why);
	/* The next task for worker `worker` (the calling worker), or NULL: none. */
	th_task *(*pop)(int worker);
	/* Optional: the task `worker` should run instead of `yielder`, which is still
	 * running and in no queue; NULL lets the yielder go on. Without it a yield takes
	 * pop()'s task; push(yielder, TH_WHY_YIELD) follows the switch either way. */
	th_task *(*yield_pop)(int worker, const th_task *yielder);
};

/* The one symbol a policy plugin defines and exports (declared here, so that it is
 * exported even from a plugin built -fvisibility=hidden):
 *     const struct th_policy_ops th_policy_plugin = { TH_POLICY_ABI_VERSION, ... }; */
extern const struct th_policy_ops th_policy_plugin;
#define TH_POLICY_PLUGIN_SYMBOL "th_policy_plugin"

/* What a policy may read of a task (th_task_id is in taskhop.h). */
int th_task_home(const th_task *t);         /* placement worker, -1: none */
bool th_task_sticky(const th_task *t);      /* must run on th_task_home only */
int th_task_last_worker(const th_task *t);  /* worker of its last run, -1: not run yet */

/* The policy's own fields of a task it holds: a link for intrusive lists and a word
 * (a priority, a timestamp, ...). Their value is undefined when push hands t over. */
th_task **th_task_link(th_task *t);
uint64_t *th_task_word(th_task *t);

/* Helpers. th_policy_rand and th_policy_fair_turn keep per-worker state: call them
 * only from that worker (inside pop or yield_pop, or push with self == worker). */
uint64_t th_policy_rand(int worker);        /* the worker's own xoshiro256++ stream */
int th_policy_place(void);                  /* a worker for cfg.placement (random, round-robin) */
bool th_policy_fair_turn(int worker);       /* true on every 61st pop (Go's fairness tick) */
void th_policy_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif
#endif
