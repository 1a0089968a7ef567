/* test_deque.c — the Chase–Lev deque alone: order at both ends, growth, and a
 * 1e7-operation race of the owner against thieves that loses and duplicates nothing. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <pthread.h>
#include <cmocka.h>

#include "deque.h"

#define ITEM(i) ((void *)(uintptr_t)(i))

static void owner_takes_newest_first(void **state)
{
	(void)state;
	struct th_deque d;
	assert_int_equal(th_deque_init(&d, 4), 0);
	for (uintptr_t i = 1; i <= 3; i++)
		assert_int_equal(th_deque_push(&d, ITEM(i)), 0);
	assert_ptr_equal(th_deque_take(&d), ITEM(3));
	assert_ptr_equal(th_deque_take(&d), ITEM(2));
	assert_ptr_equal(th_deque_take(&d), ITEM(1));
	assert_null(th_deque_take(&d));
	assert_true(th_deque_owner_empty(&d));
	th_deque_fini(&d);
}

static void thief_takes_oldest_first(void **state)
{
	(void)state;
	struct th_deque d;
	void *x = NULL;
	assert_int_equal(th_deque_init(&d, 4), 0);
	assert_int_equal(th_deque_steal(&d, &x), TH_STEAL_EMPTY);
	for (uintptr_t i = 1; i <= 3; i++)
		assert_int_equal(th_deque_push(&d, ITEM(i)), 0);
	assert_int_equal(th_deque_steal(&d, &x), TH_STEAL_OK);
	assert_ptr_equal(x, ITEM(1));
	assert_int_equal(th_deque_steal(&d, &x), TH_STEAL_OK);
	assert_ptr_equal(x, ITEM(2));
	assert_ptr_equal(th_deque_take(&d), ITEM(3));
	assert_int_equal(th_deque_steal(&d, &x), TH_STEAL_EMPTY);
	th_deque_fini(&d);
}

/* Pushing far past the initial capacity, with the window [top, bottom)
 * wrapped around the ring, keeps every item in order. */
static void growing_keeps_every_item_in_order(void **state)
{
	(void)state;
	struct th_deque d;
	void *x;
	assert_int_equal(th_deque_init(&d, 16), 0);
	for (uintptr_t i = 1; i <= 10; i++)
		assert_int_equal(th_deque_push(&d, ITEM(i)), 0);
	for (uintptr_t i = 1; i <= 7; i++) /* move top so the window wraps */
		assert_int_equal(th_deque_steal(&d, &x), TH_STEAL_OK);
	for (uintptr_t i = 11; i <= 5000; i++)
		assert_int_equal(th_deque_push(&d, ITEM(i)), 0);
	assert_int_equal(th_deque_size(&d), 5000 - 7);
	for (uintptr_t i = 8; i <= 2000; i++) {
		assert_int_equal(th_deque_steal(&d, &x), TH_STEAL_OK);
		assert_ptr_equal(x, ITEM(i));
	}
	for (uintptr_t i = 5000; i > 2000; i--)
		assert_ptr_equal(th_deque_take(&d), ITEM(i));
	assert_null(th_deque_take(&d));
	th_deque_fini(&d);
}

/* ---- the race ------------------------------------------------------------ */

#define NTHIEVES 2
#define NOPS 10000000L  /* owner operations: pushes + takes */

struct race {
	struct th_deque d;
	_Atomic unsigned char *seen; /* per item: how many times it was taken */
	long nitems;                 /* items pushed, known when owner_done */
	_Atomic int owner_done;
	_Atomic long stolen;
	_Atomic long aborts;
};

static void consume(struct race *r, void *x)
{
	uintptr_t i = (uintptr_t)x;
	atomic_fetch_add_explicit(&r->seen[i], 1, memory_order_relaxed);
}

static void *thief(void *arg)
{
	struct race *r = arg;
	long n = 0, ab = 0;
	for (;;) {
		void *x;
		enum th_steal_rc rc = th_deque_steal(&r->d, &x);
		if (rc == TH_STEAL_OK) {
			consume(r, x);
			n++;
		} else if (rc == TH_STEAL_ABORT) {
			ab++;
		} else if (atomic_load(&r->owner_done)) {
			break; /* owner drained the rest itself, nothing is left */
		}
	}
	atomic_fetch_add(&r->stolen, n);
	atomic_fetch_add(&r->aborts, ab);
	return NULL;
}

/* The owner pushes in bursts and takes in bursts (xorshift decides), so the
 * deque is often near empty — where owner and thieves race for the last
 * item — and sometimes long enough to grow under the thieves' feet. */
static void owner_and_thieves_lose_and_duplicate_nothing(void **state)
{
	(void)state;
	struct race *r = calloc(1, sizeof(*r));
	assert_non_null(r);
	r->seen = calloc(NOPS + 1, 1);
	assert_non_null(r->seen);
	assert_int_equal(th_deque_init(&r->d, 16), 0);

	pthread_t th[NTHIEVES];
	for (int i = 0; i < NTHIEVES; i++)
		assert_int_equal(pthread_create(&th[i], NULL, thief, r), 0);

	uint64_t rng = 88172645463325252ull;
	long next = 1, taken = 0;
	for (long op = 0; op < NOPS;) {
		rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
		int burst = 1 + (int)(rng % 64);
		bool push = (rng >> 32) % 3 != 0; /* 2/3 of bursts push */
		for (int k = 0; k < burst && op < NOPS; k++, op++) {
			if (push) {
				assert_int_equal(th_deque_push(&r->d, ITEM(next)), 0);
				next++;
			} else {
				void *x = th_deque_take(&r->d);
				if (x) {
					consume(r, x);
					taken++;
				}
			}
		}
	}
	for (void *x; (x = th_deque_take(&r->d)); taken++)
		consume(r, x);
	r->nitems = next - 1;
	atomic_store(&r->owner_done, 1);
	for (int i = 0; i < NTHIEVES; i++)
		pthread_join(th[i], NULL);

	long lost = 0, dup = 0;
	for (long i = 1; i <= r->nitems; i++) {
		unsigned char s = atomic_load_explicit(&r->seen[i], memory_order_relaxed);
		lost += s == 0;
		dup += s > 1;
	}
	print_message("deque race: %ld items, owner took %ld, thieves stole %ld, %ld aborted steals\n",
		      r->nitems, taken, atomic_load(&r->stolen), atomic_load(&r->aborts));
	assert_int_equal(lost, 0);
	assert_int_equal(dup, 0);
	assert_int_equal(taken + atomic_load(&r->stolen), r->nitems);
	assert_true(atomic_load(&r->stolen) > 0); /* the thieves really raced */
	th_deque_fini(&r->d);
	free((void *)r->seen);
	free(r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(owner_takes_newest_first),
		cmocka_unit_test(thief_takes_oldest_first),
		cmocka_unit_test(growing_keeps_every_item_in_order),
		cmocka_unit_test(owner_and_thieves_lose_and_duplicate_nothing),
	};
	return cmocka_run_group_tests_name("deque", tests, NULL, NULL);
}
