/* sync.c — @sync groups and the task-aware mutex.
 * Both are a spinlock-guarded state plus a waiter list (waitq.c). */
#define _GNU_SOURCE
#include "core.h"
#include "preempt.h"
#include "waitq.h"


void th_group_init(th_group *g)
{
	atomic_init(&g->pending, 0);
	atomic_init(&g->lock, 0);
	g->waiters = NULL;
}

void th_group_spawn(th_group *g, th_fn fn, void *arg)
{
	atomic_fetch_add_explicit(&g->pending, 1, memory_order_relaxed);
	th__group_spawn(g, fn, arg);
}

/* The decrement happens under the lock so that th_group_wait, which also
 * takes it, cannot return (and free the group) while a finisher still
 * holds the group. */
void th__group_task_done(struct th_group *g)
{
	th_spin_lock(&g->lock);
	struct th_waiter *w = NULL;
	if (atomic_fetch_sub_explicit(&g->pending, 1, memory_order_acq_rel) == 1)
		w = th_waiters_take(&g->waiters);
	th_spin_unlock(&g->lock);
	th_waiters_wake_all(w);
}

/* Each call below holds a spinlock for a moment: a preemptible task must
 * not be preempted inside (preempt.h). */
void th_group_wait(th_group *g)
{
	bool preempt = th__nopreempt_begin();
	th_spin_lock(&g->lock);
	if (atomic_load_explicit(&g->pending, memory_order_acquire) == 0)
		th_spin_unlock(&g->lock);
	else
		th_block(&g->lock, &g->waiters);
	th__nopreempt_end(preempt);
}

void th_mutex_init(th_mutex *m)
{
	atomic_init(&m->lock, 0);
	m->held = 0;
	m->waiters = NULL;
}

void th_mutex_lock(th_mutex *m)
{
	bool preempt = th__nopreempt_begin();
	th_spin_lock(&m->lock);
	if (!m->held) {
		m->held = 1;
		th_spin_unlock(&m->lock);
	} else {
		/* th_mutex_unlock hands the mutex to us directly: held stays 1, so
		 * no newcomer can barge in between the wake-up and our resumption. */
		th_block(&m->lock, &m->waiters);
	}
	th__nopreempt_end(preempt);
}

bool th_mutex_trylock(th_mutex *m)
{
	bool preempt = th__nopreempt_begin();
	th_spin_lock(&m->lock);
	bool got = !m->held;
	m->held = 1;
	th_spin_unlock(&m->lock);
	th__nopreempt_end(preempt);
	return got;
}

void th_mutex_unlock(th_mutex *m)
{
	bool preempt = th__nopreempt_begin();
	th_spin_lock(&m->lock);
	struct th_waiter *w = th_waiters_pop(&m->waiters);
	if (!w)
		m->held = 0;
	th_spin_unlock(&m->lock);
	if (w)
		th_waiter_wake(w);
	th__nopreempt_end(preempt);
}
