/* keysort.c — the join's sort into task order (keysort.h), in linear time.
 *
 * Why not qsort: a recording of fib(30) has 2.7 million runs of 1.6 million tasks, and
 * glibc's merge sort of their 32-byte keys took about 0.7 s each time the join needed task
 * order. Task ids are integers, so a least-significant-digit radix sort over only the bits
 * in which they differ (21 bits for fib(30): two passes) puts the keys in task order,
 * and a stable pass by process follows when there are several. Each pass is stable, so
 * within a task the keys keep their input order: the join's input is sorted by thread
 * and start, so a task's runs are already in start order unless it ran on several
 * threads; those groups are sorted by start on their own. */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "keysort.h"

#define DIGIT_BITS 11
#define BUCKETS ((size_t)1 << DIGIT_BITS)
#define MAX_PIDS 64     /* more processes than that in one recording: qsort */
#define SMALL_GROUP 32  /* a task's runs out of start order: insertion sort up to this */

#define CMP(a, b) ((a) < (b) ? -1 : (a) > (b))

static int full_cmp(const void *x, const void *y)
{
	const struct task_key *a = x, *b = y;
	int c = CMP(a->pid, b->pid);
	if (!c) c = CMP(a->task, b->task);
	if (!c) c = CMP(a->start, b->start);
	return c;
}

static int start_cmp(const void *x, const void *y)
{
	const struct task_key *a = x, *b = y;
	return CMP(a->start, b->start);
}

/* One stable counting pass of src into dst by bucket_of(key). */
#define COUNTING_PASS(src, dst, n, bucket_of)                                    \
	do {                                                                       \
		size_t at[BUCKETS + 1];                                            \
		memset(at, 0, sizeof(at));                                         \
		for (size_t i_ = 0; i_ < (n); i_++)                                \
			at[(bucket_of((src)[i_])) + 1]++;                          \
		for (size_t b_ = 1; b_ <= BUCKETS; b_++)                           \
			at[b_] += at[b_ - 1];                                      \
		for (size_t i_ = 0; i_ < (n); i_++)                                \
			(dst)[at[bucket_of((src)[i_])]++] = (src)[i_];             \
	} while (0)

/* The distinct pids of k, ascending, into pids; their count, or -1 past MAX_PIDS. */
static int distinct_pids(const struct task_key *k, size_t n, int *pids)
{
	int np = 0;
	for (size_t i = 0; i < n; i++) {
		if (np && k[i].pid == pids[np - 1])
			continue; /* the common case: runs of one process come together */
		int j = 0;
		while (j < np && pids[j] < k[i].pid)
			j++;
		if (j < np && pids[j] == k[i].pid)
			continue;
		if (np == MAX_PIDS)
			return -1;
		memmove(&pids[j + 1], &pids[j], (size_t)(np - j) * sizeof(*pids));
		pids[j] = k[i].pid;
		np++;
	}
	return np;
}

static size_t pid_rank(const int *pids, int np, int pid)
{
	size_t lo = 0, hi = (size_t)np;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (pids[mid] < pid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Each run of equal (pid, task) into start order. */
static void sort_groups_by_start(struct task_key *k, size_t n)
{
	for (size_t i = 0; i < n;) {
		size_t j = i + 1;
		int sorted = 1;
		for (; j < n && k[j].pid == k[i].pid && k[j].task == k[i].task; j++)
			sorted &= k[j - 1].start <= k[j].start;
		if (!sorted && j - i <= SMALL_GROUP) {
			for (size_t a = i + 1; a < j; a++) {
				struct task_key x = k[a];
				size_t b = a;
				for (; b > i && k[b - 1].start > x.start; b--)
					k[b] = k[b - 1];
				k[b] = x;
			}
		} else if (!sorted) {
			qsort(&k[i], j - i, sizeof(*k), start_cmp);
		}
		i = j;
	}
}

int rec_sort_task_keys(struct task_key *k, size_t n)
{
	int pids[MAX_PIDS], np;
	if (n < BUCKETS || (np = distinct_pids(k, n, pids)) < 0) {
		if (n > 1)
			qsort(k, n, sizeof(*k), full_cmp);
		return 0;
	}
	uint64_t differ = 0;
	for (size_t i = 1; i < n; i++)
		differ |= k[i].task ^ k[0].task;
	unsigned bits = differ ? 64 - (unsigned)__builtin_clzll(differ) : 0;
	struct task_key *tmp = malloc(n * sizeof(*tmp));
	if (!tmp)
		return -1;
	struct task_key *src = k, *dst = tmp;
	for (unsigned shift = 0; shift < bits; shift += DIGIT_BITS) {
#define TASK_DIGIT(key) ((size_t)((key).task >> shift) & (BUCKETS - 1))
		COUNTING_PASS(src, dst, n, TASK_DIGIT);
#undef TASK_DIGIT
		struct task_key *t = src;
		src = dst;
		dst = t;
	}
	if (np > 1) {
#define PID_RANK(key) pid_rank(pids, np, (key).pid)
		COUNTING_PASS(src, dst, n, PID_RANK);
#undef PID_RANK
		struct task_key *t = src;
		src = dst;
		dst = t;
	}
	if (src != k)
		memcpy(k, src, n * sizeof(*k));
	free(tmp);
	sort_groups_by_start(k, n);
	return 0;
}
