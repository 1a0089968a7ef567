/* policy_kthread.c — the baseline without a user-level scheduler: every task is
 * its own kernel thread, th_yield is sched_yield() and the kernel decides where it runs. */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "guard.h"
#include "core.h"
#include "probes.h"
#include "waitq.h"

/* The workers still start (the runtime always has them) but stay parked:
 * pop never has anything for them.
 *
 * A plain thread that spawns faster than the kernel finishes tasks would
 * pile up threads until pthread_create fails, so such a spawner waits
 * while MAX_LIVE task threads exist. Tasks spawning tasks never wait:
 * a parent blocked in spawn while its children wait for a slot held by
 * other blocked parents would deadlock (nested fib does exactly that). */
#define MAX_LIVE 512

struct kthread {
	_Atomic int live;           /* task threads not yet finished */
	_Atomic uint32_t slot_word; /* futex: bumped when a thread finishes */
	pthread_attr_t attr;
};

static int kt_init(struct th_runtime *rt)
{
	struct kthread *k = calloc(1, sizeof(*k));
	if (!k || pthread_attr_init(&k->attr) != 0) {
		free(k);
		th__set_error("kthread: out of memory");
		return -1;
	}
	pthread_attr_setdetachstate(&k->attr, PTHREAD_CREATE_DETACHED);
	if (pthread_attr_setstacksize(&k->attr, rt->cfg.stack_size) != 0) {
		pthread_attr_destroy(&k->attr);
		free(k);
		th__set_error("kthread: stack size %zu refused by pthreads", rt->cfg.stack_size);
		return -1;
	}
	rt->policy_data = k;
	return 0;
}

/* th_runtime_stop calls this once no task is live; each thread stops using
 * k before it finishes its task (see task_thread). */
static void kt_fini(struct th_runtime *rt)
{
	struct kthread *k = rt->policy_data;
	pthread_attr_destroy(&k->attr);
	free(k);
	rt->policy_data = NULL;
}


static void *task_thread(void *arg)
{
	struct th_task *t = arg;
	struct kthread *k = th__rt->policy_data;
	/* An overflow of this thread's stack is reported like a task's on a
	 * worker: its own signal stack, and the handler told where the guard is. */
	void *altstack = th__guard_enter_task_thread(th__rt->cfg.stack_size);
	th__set_thread_task(t); /* th_self_task, th_rand_*, th_yield see t */
	t->kernel_tid = (uint64_t)syscall(SYS_gettid);
	/* -1: no worker. The task's "worker" is this thread; the recorder
	 * sees the CPUs it ran on. */
	th__task_started(t, -1);
	void *result = t->fn(t->arg);
	TH_PROBE_TASK_DONE(t->id, -1);
	atomic_fetch_sub(&k->live, 1);
	atomic_fetch_add(&k->slot_word, 1);
	th_futex_wake(&k->slot_word, 1);
	th__set_thread_task(NULL);
	th__guard_leave_task_thread(altstack);
	th__task_finish(t, result); /* may let th_runtime_stop free k */
	return NULL;
}

static void wait_for_slot(struct kthread *k)
{
	for (;;) {
		uint32_t seen = atomic_load(&k->slot_word);
		if (atomic_load(&k->live) < MAX_LIVE)
			return;
		th_futex_wait(&k->slot_word, seen);
	}
}

static int kt_start_task(struct th_runtime *rt, struct th_task *t)
{
	struct kthread *k = rt->policy_data;
	if (!th_self_task())
		wait_for_slot(k);
	atomic_fetch_add(&k->live, 1);
	pthread_t th;
	int rc;
	/* EAGAIN: the kernel's thread limit, often transient while exited
	 * threads are reaped. Give it a moment before giving up. */
	for (int tries = 0; (rc = pthread_create(&th, &k->attr, task_thread, t)) == EAGAIN && tries < 1000; tries++)
		usleep(1000);
	if (rc != 0) {
		atomic_fetch_sub(&k->live, 1);
		th__set_error("kthread: cannot start a thread for task %llu: %s",
			      (unsigned long long)t->id, strerror(rc));
		return -1;
	}
	return 0;
}

/* Tasks never come back through the run queue: they yield with
 * sched_yield() and block as threads. A push is a runtime bug. */
static int kt_push(struct th_runtime *rt, struct th_worker *self, struct th_task *t, enum th_why why)
{
	(void)rt, (void)self;
	fprintf(stderr, "taskhop: kthread policy asked to queue task %llu (why %d): runtime bug\n",
		(unsigned long long)t->id, (int)why);
	abort();
}

static struct th_task *kt_pop(struct th_runtime *rt, struct th_worker *w)
{
	(void)rt, (void)w;
	return NULL;
}

const struct th_policy th_policy_kthread = {
	.name = "kthread",
	.description = "every task is its own kernel thread; the kernel decides where it runs (baseline)",
	.init = kt_init,
	.fini = kt_fini,
	.push = kt_push,
	.pop = kt_pop,
	.start_task = kt_start_task,
};
