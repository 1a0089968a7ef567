/* waitq.h — blocking and waking, for tasks and plain threads alike.
 * Every blocking primitive (fetch, @sync, mutex) is a list of waiters under a spinlock. */
#ifndef TASKHOP_WAITQ_H
#define TASKHOP_WAITQ_H

#include <stdatomic.h>
#include <stdint.h>

struct th_task;

/* Lives on the blocked caller's stack until it is woken. */
struct th_waiter {
	struct th_waiter *next;
	struct th_task *task;      /* a green task, or NULL for a plain thread */
	_Atomic uint32_t futex;    /* plain thread: 0 waiting, 1 woken, 2 asleep */
};

/* Called with *lock held: appends the caller to *list and blocks it; the
 * lock is released once the caller can no longer miss its wake-up (for a
 * task, after its context is saved). Returns after th_waiter_wake. */
void th_block(_Atomic int *lock, void **list);

/* Detaches and returns the first waiter (FIFO), or NULL. Call under lock. */
struct th_waiter *th_waiters_pop(void **list);
/* Detaches the whole list. Call under lock. */
struct th_waiter *th_waiters_take(void **list);

/* Wakes one detached waiter. Call after releasing the lock. */
void th_waiter_wake(struct th_waiter *w);
/* Wakes every waiter of a detached list. */
void th_waiters_wake_all(struct th_waiter *list);

/* futex helpers */
void th_futex_wait(_Atomic uint32_t *word, uint32_t expected);
void th_futex_wake(_Atomic uint32_t *word, int n);

#endif
