/* waitq.c — blocking and waking of tasks and threads.
 * A task blocks by switching to its worker, which releases the lock after the switch. */
#define _GNU_SOURCE
#include "waitq.h"

#include <errno.h>
#include <linux/futex.h>
#include <stddef.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "internal.h"
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

void th__task_block(_Atomic int *lock); /* worker.c */

void th_block(_Atomic int *lock, void **list)
{
	struct th_worker *self = th__self_worker();
	struct th_waiter w = { .next = NULL, .task = self ? self->cur : NULL };
	atomic_init(&w.futex, 0);
	append(list, &w);
	if (w.task) {
		th__task_block(lock); /* returns when woken, maybe on another worker */
		return;
	}
	th_spin_unlock(lock);
	while (!atomic_load_explicit(&w.futex, memory_order_acquire))
		th_futex_wait(&w.futex, 0);
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
	atomic_store_explicit(&w->futex, 1, memory_order_release);
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
