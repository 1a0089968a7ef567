/* deque.c — Chase–Lev work-stealing deque (Le et al., "Correct and Efficient
 * Work-Stealing for Weak Memory Models", PPoPP 2013, figure 1 orderings). */
#include "deque.h"

#include <stdlib.h>

#include "core_check.h"

struct th_deque_buf {
	long mask;                  /* capacity - 1, capacity a power of two */
	struct th_deque_buf *next;  /* retired list */
	_Atomic(void *) slot[];
};

static struct th_deque_buf *buf_new(long cap)
{
	struct th_deque_buf *b = malloc(sizeof(*b) + (size_t)cap * sizeof(b->slot[0]));
	if (!b)
		return NULL;
	b->mask = cap - 1;
	b->next = NULL;
	return b;
}

int th_deque_init(struct th_deque *d, size_t capacity)
{
	long cap = 16;
	while ((size_t)cap < capacity)
		cap <<= 1;
	struct th_deque_buf *b = buf_new(cap);
	if (!b)
		return -1;
	atomic_init(&d->top, 0);
	atomic_init(&d->bottom, 0);
	atomic_init(&d->buf, b);
	atomic_init(&d->owner_busy, 0);
	d->retired = NULL;
	return 0;
}

void th_deque_fini(struct th_deque *d)
{
	free(atomic_load_explicit(&d->buf, memory_order_relaxed));
	for (struct th_deque_buf *r = d->retired, *n; r; r = n) {
		n = r->next;
		free(r);
	}
	atomic_store_explicit(&d->buf, NULL, memory_order_relaxed);
	d->retired = NULL;
}

/* Owner only: copy [t, b) into a buffer twice as big. The old one is
 * retired, not freed: a thief that loaded it before the swap still reads
 * valid items from it (slots in [t, b) are not overwritten until the owner
 * pushes past them, and the owner now pushes into the new buffer). */
static struct th_deque_buf *grow(struct th_deque *d, struct th_deque_buf *a, long t, long b)
{
	struct th_deque_buf *n = buf_new((a->mask + 1) * 2);
	if (!n)
		return NULL;
	for (long i = t; i < b; i++)
		atomic_store_explicit(&n->slot[i & n->mask],
				      atomic_load_explicit(&a->slot[i & a->mask], memory_order_relaxed),
				      memory_order_relaxed);
	/* release: a thief that sees the new buffer sees its contents. */
	atomic_store_explicit(&d->buf, n, memory_order_release);
	a->next = d->retired;
	d->retired = a;
	return n;
}

/* Debug and sanitizer builds: the bottom end is the owner's alone, so two
 * threads in push or take at once means a policy used another worker's deque
 * from the owner's side (thieves have th_deque_steal). Catches the overlap
 * when it happens, not every wrong call. Relaxed: under TSan the check must
 * not order anything the deque's own atomics do not. */
static inline void owner_enter(struct th_deque *d)
{
	TH_CHECK(!atomic_exchange_explicit(&d->owner_busy, 1, memory_order_relaxed),
		 "th_deque: two threads at the owner's end at once (only the owner pushes and takes)");
}

static inline void owner_leave(struct th_deque *d)
{
	if (TH_CHECKS)
		atomic_store_explicit(&d->owner_busy, 0, memory_order_relaxed);
}

int th_deque_push(struct th_deque *d, void *item)
{
	owner_enter(d);
	long b = atomic_load_explicit(&d->bottom, memory_order_relaxed);
	long t = atomic_load_explicit(&d->top, memory_order_acquire);
	struct th_deque_buf *a = atomic_load_explicit(&d->buf, memory_order_relaxed);
	if (b - t > a->mask) {
		a = grow(d, a, t, b);
		if (!a) {
			owner_leave(d);
			return -1;
		}
	}
	atomic_store_explicit(&a->slot[b & a->mask], item, memory_order_relaxed);
	/* The paper has fence(release) + relaxed store of bottom; a release
	 * store is the same instruction on x86 and arm64 and, unlike a lone
	 * fence, ThreadSanitizer understands it: a thief's acquire load of
	 * bottom then orders everything the owner wrote into the item. */
	atomic_store_explicit(&d->bottom, b + 1, memory_order_release);
	owner_leave(d);
	return 0;
}

void *th_deque_take(struct th_deque *d)
{
	owner_enter(d);
	long b = atomic_load_explicit(&d->bottom, memory_order_relaxed) - 1;
	struct th_deque_buf *a = atomic_load_explicit(&d->buf, memory_order_relaxed);
	atomic_store_explicit(&d->bottom, b, memory_order_relaxed);
	/* The one full fence on the owner's path: the store of bottom must be
	 * visible before we read top, or a thief and the owner could both
	 * take the last item (store-load reordering). */
	atomic_thread_fence(memory_order_seq_cst);
	long t = atomic_load_explicit(&d->top, memory_order_relaxed);
	if (t > b) { /* empty: restore bottom */
		atomic_store_explicit(&d->bottom, b + 1, memory_order_relaxed);
		owner_leave(d);
		return NULL;
	}
	void *x = atomic_load_explicit(&a->slot[b & a->mask], memory_order_relaxed);
	if (t == b) {
		/* Last item: race the thieves for it through top. */
		if (!atomic_compare_exchange_strong_explicit(&d->top, &t, t + 1, memory_order_seq_cst,
							     memory_order_relaxed))
			x = NULL;
		atomic_store_explicit(&d->bottom, b + 1, memory_order_relaxed);
	}
	owner_leave(d);
	return x;
}

enum th_steal_rc th_deque_steal(struct th_deque *d, void **out)
{
	long t = atomic_load_explicit(&d->top, memory_order_acquire);
	atomic_thread_fence(memory_order_seq_cst);
	long b = atomic_load_explicit(&d->bottom, memory_order_acquire);
	if (t >= b)
		return TH_STEAL_EMPTY;
	/* The paper loads the buffer with consume; acquire is what compilers
	 * implement consume as anyway. */
	struct th_deque_buf *a = atomic_load_explicit(&d->buf, memory_order_acquire);
	void *x = atomic_load_explicit(&a->slot[t & a->mask], memory_order_relaxed);
	if (!atomic_compare_exchange_strong_explicit(&d->top, &t, t + 1, memory_order_seq_cst,
						     memory_order_relaxed))
		return TH_STEAL_ABORT;
	*out = x;
	return TH_STEAL_OK;
}

long th_deque_size(struct th_deque *d)
{
	long b = atomic_load_explicit(&d->bottom, memory_order_relaxed);
	long t = atomic_load_explicit(&d->top, memory_order_relaxed);
	return b > t ? b - t : 0;
}
