/* hello.c — the README's runtime example: @spawn/fetch, @sync, a task-aware
 * lock, yields that let tasks migrate, and the per-task counters. */
#include <stdio.h>

#include "taskhop.h"

static th_mutex lock = TH_MUTEX_INIT;
static long total;

static void *darts(void *arg)
{
	long n = (long)arg, hits = 0;
	struct th_rng *rng = th_self_rng(); /* seeded from (run seed, task id) */
	for (int cycle = 0; cycle < 10; cycle++) {
		th_yield(); /* the policy may move us to another worker here */
		for (long i = 0; i < n / 10; i++) {
			double x = th_rng_double(rng), y = th_rng_double(rng);
			hits += x * x + y * y < 1.0;
		}
	}
	th_mutex_lock(&lock);
	total += hits;
	th_mutex_unlock(&lock);
	return (void *)hits;
}

int main(void)
{
	struct th_config cfg;
	th_config_default(&cfg);
	cfg.workers = 2;
	cfg.policy = "shared"; /* or sticky, steal, multiqueue, fcfs, kthread */
	if (th_runtime_start(&cfg) != 0) {
		fprintf(stderr, "hello: %s\n", th_last_error());
		return 1;
	}
	th_task *t[4];
	for (int i = 0; i < 4; i++)
		t[i] = th_spawn_at(i % 2, darts, (void *)1000000L); /* @tspawnat */
	for (int i = 0; i < 4; i++) {
		struct th_task_stats st;
		long hits = (long)th_fetch(t[i]);
		th_task_stats(t[i], &st);
		printf("task %llu: pi ~ %.4f, ran %llu times, %llu worker hops, worker %d -> %d\n",
		       (unsigned long long)st.id, 4.0 * (double)hits / 1e6,
		       (unsigned long long)st.runs, (unsigned long long)st.worker_hops,
		       st.first_worker, st.last_worker);
		th_task_free(t[i]);
	}
	printf("all: pi ~ %.5f\n", 4.0 * (double)total / 4e6);
	th_runtime_stop();
	return 0;
}
