/* test_keysort.c — the join's sort into task order (user/record/keysort.c) gives what
 * qsort by (pid, task, start) gives, in the shapes a recording has: one process or
 * several, task ids small or with high bits, a task's runs spread over threads (out of
 * start order), one task with many runs, and more processes than the radix path takes. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "keysort.h"

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint64_t next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static int by_task(const void *x, const void *y)
{
	const struct task_key *a = x, *b = y;
	if (a->pid != b->pid)
		return a->pid < b->pid ? -1 : 1;
	if (a->task != b->task)
		return a->task < b->task ? -1 : 1;
	return a->start < b->start ? -1 : a->start > b->start;
}

/* Sorts keys both ways: the same (pid, task, start) sequence, and every key still the
 * one it was (its idx names its place in the input). */
static void check_sorted_like_qsort(const struct task_key *in, size_t n)
{
	struct task_key *mine = malloc((n + 1) * sizeof(*mine)), *ref = malloc((n + 1) * sizeof(*ref));
	assert_non_null(mine);
	assert_non_null(ref);
	memcpy(mine, in, n * sizeof(*in));
	memcpy(ref, in, n * sizeof(*in));
	assert_int_equal(rec_sort_task_keys(mine, n), 0);
	qsort(ref, n, sizeof(*ref), by_task);
	for (size_t i = 0; i < n; i++) {
		assert_int_equal(mine[i].pid, ref[i].pid);
		assert_true(mine[i].task == ref[i].task);
		assert_true(mine[i].start == ref[i].start);
		const struct task_key *orig = &in[mine[i].idx];
		assert_true(orig->pid == mine[i].pid && orig->task == mine[i].task &&
			    orig->start == mine[i].start);
	}
	free(mine);
	free(ref);
}

/* n keys of npids processes over ntasks tasks (ids from base), as threads' logs give
 * them: nthreads chunks, each in start order; distinct starts. */
static struct task_key *recording(size_t n, int npids, uint64_t base, uint64_t ntasks, int nthreads)
{
	struct task_key *k = malloc((n + 1) * sizeof(*k));
	assert_non_null(k);
	static const int pids[] = { 4242, 17, 90001, 3, 555, 1 };
	size_t per = n / (size_t)nthreads + 1;
	for (size_t i = 0; i < n; i++) {
		size_t chunk = i / per, pos = i % per;
		k[i] = (struct task_key){ .pid = pids[next() % (uint64_t)npids],
					  .task = base + next() % ntasks,
					  .start = pos * 64 + chunk, /* each chunk rising, chunks interleaved */
					  .idx = i };
	}
	return k;
}

static void one_process_of_many_short_tasks(void **state)
{
	(void)state;
	struct task_key *k = recording(200000, 1, 1, 100000, 2);
	check_sorted_like_qsort(k, 200000);
	free(k);
}

static void several_processes_and_task_ids_with_high_bits(void **state)
{
	(void)state;
	struct task_key *k = recording(50000, 5, 0xfffff00000000000ull, 1ull << 40, 3);
	check_sorted_like_qsort(k, 50000);
	free(k);
	k = recording(50000, 3, 1ull << 63, 7, 4); /* few tasks, many runs each, out of order */
	check_sorted_like_qsort(k, 50000);
	free(k);
}

static void sizes_around_the_radix_threshold(void **state)
{
	(void)state;
	static const size_t sizes[] = { 0, 1, 2, 2047, 2048, 2049, 4099 };
	for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
		struct task_key *k = recording(sizes[s], 2, 10, 300, 2);
		check_sorted_like_qsort(k, sizes[s]);
		free(k);
	}
}

static void one_task_with_runs_in_reverse_order(void **state)
{
	(void)state;
	size_t n = 30000;
	struct task_key *k = malloc(n * sizeof(*k));
	assert_non_null(k);
	for (size_t i = 0; i < n; i++)
		k[i] = (struct task_key){ .pid = 7, .task = i % 3 ? 99 : 5, .start = n - i, .idx = i };
	check_sorted_like_qsort(k, n);
	free(k);
}

static void more_processes_than_the_radix_takes(void **state)
{
	(void)state;
	size_t n = 20000;
	struct task_key *k = malloc(n * sizeof(*k));
	assert_non_null(k);
	for (size_t i = 0; i < n; i++)
		k[i] = (struct task_key){ .pid = (int)(next() % 200) - 100, .task = next() % 50,
					  .start = i, .idx = i };
	check_sorted_like_qsort(k, n);
	free(k);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(one_process_of_many_short_tasks),
		cmocka_unit_test(several_processes_and_task_ids_with_high_bits),
		cmocka_unit_test(sizes_around_the_radix_threshold),
		cmocka_unit_test(one_task_with_runs_in_reverse_order),
		cmocka_unit_test(more_processes_than_the_radix_takes),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
