/* keysort.h — the join's sort of runs into task order (keysort.c). */
#ifndef TASKHOP_REC_KEYSORT_H
#define TASKHOP_REC_KEYSORT_H

#include <stddef.h>
#include <stdint.h>

/* A run's place in task order: sorted by (pid, task, start); idx says which run. */
struct task_key {
	int pid;
	uint64_t task;
	uint64_t start;
	size_t idx;
};

/* Sorts k[0..n) by (pid, task, start). Keys equal in all three keep no particular order
 * (as with qsort). 0, or -1 with k unchanged when there is no memory for the pass. */
int rec_sort_task_keys(struct task_key *k, size_t n);

#endif
