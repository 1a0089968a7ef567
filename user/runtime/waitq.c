/* waitq.c — blocking and waking of tasks and threads.
 * A task blocks by switching to its worker, which releases the lock after the switch. */
#define _GNU_SOURCE
#include "waitq.h"

#include <errno.h>
#include <linux/futex.h>
#include <stddef.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "core.h"
#include "probes.h"

void th_futex_wait(_Atomic uint32_t *word, uint32_t expected)
{
	syscall(SYS_futex, word, FUTEX_WAIT_PRIVATE, expected, NULL, NULL, 0);
}

void th_futex_wake(_Atomic uint32_t *word, int n)
{
	syscall(SYS_futex, word, FUTEX_WAKE_PRIVATE, n, NULL, NULL, 0);
}

static void append(void **list, struct th_waiter *w)
{
	struct th_waiter **p = (struct th_waiter **)list;
	while (*p)
		p = &(*p)->next;
	*p = w;
}

struct th_waiter *th_waiters_pop(void **list)
{
	struct th_waiter *w = *list;
	if (w)
		*list = w->next;
	return w;
}

struct th_waiter *th_waiters_take(void **list)
{
	struct th_waiter *w = *list;
	*list = NULL;
	return w;
}


/* A plain thread's wait. futex word: 0 waiting, 1 woken, 2 asleep. It spins
 * first: a fetch of a short task is usually answered within microseconds,
 * and on a VM a futex sleep + wake pair costs more than that. */
#define THREAD_SPIN_NS 20000

static void wait_as_thread(struct th_waiter *w)
{
	uint64_t until = th_now_ns() + THREAD_SPIN_NS;
	for (unsigned i = 1; atomic_load_explicit(&w->futex, memory_order_acquire) != 1; i++) {
		th_cpu_relax();
		if ((i & 63) == 0 && th_now_ns() > until)
			break;
	}
	uint32_t waiting = 0;
	if (!atomic_compare_exchange_strong(&w->futex, &waiting, 2))
		return; /* woken while we spun */
	while (atomic_load_explicit(&w->futex, memory_order_acquire) != 1)
		th_futex_wait(&w->futex, 2);
}

void th_block(_Atomic int *lock, void **list)
{
	struct th_waiter w = { .next = NULL, .task = th__current_task() };
	atomic_init(&w.futex, 0);
	append(list, &w);
	if (w.task) {
		th__task_block(lock); /* returns when woken, maybe on another worker */
		return;
	}
	th_spin_unlock(lock);
	wait_as_thread(&w);
}


void th_waiter_wake(struct th_waiter *w)
{
	/* Read everything first: once woken, the waiter's stack frame may go. */
	struct th_task *t = w->task;
	if (t) {
		struct th_worker *self = th__self_worker();
		TH_PROBE_TASK_WAKE(t->id, self ? self->index : -1);
		th__make_runnable(t, TH_WHY_WAKE);
		return;
	}
	/* Only a sleeper needs the syscall. If the waiter returns between the
	 * exchange and the wake, waking a stale address is harmless. */
	if (atomic_exchange_explicit(&w->futex, 1, memory_order_acq_rel) == 2)
		th_futex_wake(&w->futex, 1);
}

void th_waiters_wake_all(struct th_waiter *list)
{
	while (list) {
		struct th_waiter *next = list->next; /* before the wake frees it */
		th_waiter_wake(list);
		list = next;
	}
}
