/* rec_darts.c — the darts-like workload of rec_darts.h: 20 short + 1 long task, each
 * yielding 10 times, spawned on random workers as the article's @tspawnat does. */
#include "rec_darts.h"
#include "record.h"

struct dart_arg {
	uint64_t draws;
	int yields;
	uint64_t hits;
};

static void *darts_task(void *p)
{
	struct dart_arg *a = p;
	uint64_t chunk = a->draws / (uint64_t)(a->yields + 1);
	for (int y = 0; y <= a->yields; y++) {
		for (uint64_t i = 0; i < chunk; i++) {
			double x = th_rand_double(), z = th_rand_double();
			a->hits += x * x + z * z <= 1.0;
		}
		if (y < a->yields)
			th_yield();
	}
	return NULL;
}

void rec_darts_default(struct rec_darts *d)
{
	d->nshort = 20;
	d->short_draws = 200000;
	d->long_draws = 4000000;
	d->yields = 10;
	d->seed = 42;
}

int rec_darts_run(const struct rec_darts *d, th_task **tasks)
{
	static struct dart_arg args[REC_DARTS_MAX];
	struct th_rng rng;
	int n = d->nshort + 1, w = th_nworkers();

	if (n > REC_DARTS_MAX || w <= 0)
		return -1;
	th_rng_seed(&rng, d->seed, 7);
	for (int i = 0; i < n; i++) {
		args[i] = (struct dart_arg){ i < d->nshort ? d->short_draws : d->long_draws, d->yields, 0 };
		tasks[i] = th_spawn_at((int)(th_rng_next(&rng) % (uint64_t)w), darts_task, &args[i]);
		if (!tasks[i])
			return -1;
	}
	for (int i = 0; i < n; i++)
		th_wait(tasks[i]);
	return n;
}

int rec_darts_bind_threads(struct th_record *r, th_task **tasks, int n)
{
	for (int i = 0; i < n; i++) {
		struct th_task_stats st;
		th_task_stats(tasks[i], &st);
		if (st.kernel_tid && th_record_bind_thread(r, st.id, (int)st.kernel_tid) != 0)
			return -1;
	}
	return 0;
}
