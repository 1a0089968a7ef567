/* deque.h — Chase–Lev work-stealing deque of pointers, with the C11 memory
 * orderings of Le, Pop, Cohen, Zappa Nardelli (PPoPP 2013), growable. */
#ifndef TASKHOP_DEQUE_H
#define TASKHOP_DEQUE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

/* One owner thread calls push/take at the bottom; any thread may call steal,
 * which takes from the top. Bottom is LIFO for the owner (cache-warm, depth
 * first, as Cilk's work-first principle wants), top is FIFO for thieves
 * (the oldest, typically biggest, piece of work). */

struct th_deque_buf;

struct th_deque {
	/* top and bottom on their own cache lines: thieves hammer top with
	 * CAS, the owner writes bottom on every push and take. */
	_Alignas(64) _Atomic long top;
	_Alignas(64) _Atomic long bottom;
	_Atomic(struct th_deque_buf *) buf;
	/* Buffers replaced by a grow: a thief may still be reading one, and
	 * we have no epoch scheme, so they live until th_deque_fini. Growth
	 * doubles, so this costs at most the size of the current buffer. */
	struct th_deque_buf *retired;
	/* debug and sanitizer builds: 1 while a push or take runs (core_check.h) */
	_Atomic int owner_busy;
};

enum th_steal_rc { TH_STEAL_OK, TH_STEAL_EMPTY, TH_STEAL_ABORT };

/* capacity is rounded up to a power of two. 0 or -1 (out of memory). */
int th_deque_init(struct th_deque *d, size_t capacity);
void th_deque_fini(struct th_deque *d);

/* Owner only. -1 when growing the buffer fails (the item is not pushed). */
int th_deque_push(struct th_deque *d, void *item);
/* Owner only: the most recently pushed item, or NULL when empty. */
void *th_deque_take(struct th_deque *d);
/* Any thread: the oldest item into *out. ABORT means another thief or the
 * owner won a race for that item; the caller may retry. */
enum th_steal_rc th_deque_steal(struct th_deque *d, void **out);

/* Any thread: number of items at some recent moment (may be stale). */
long th_deque_size(struct th_deque *d);
/* Owner only, no fence: true when certainly empty. top only grows, so a
 * stale top can only make the deque look fuller, never emptier. */
static inline bool th_deque_owner_empty(struct th_deque *d)
{
	return atomic_load_explicit(&d->bottom, memory_order_relaxed) <=
	       atomic_load_explicit(&d->top, memory_order_relaxed);
}

#endif
