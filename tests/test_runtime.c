/* test_runtime.c — the runtime core: spawn/fetch, groups, mutex, nesting,
 * the sticky and shared policies, static and dynamic splits, RNG, stack overflow. */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <sched.h>
#include <setjmp.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "context.h"
#include "lib/child.h"
#include "runlog.h"
#include "stampmap.h"
#include "taskhop.h"
#include "taskhop_abi.h"

/* TSan makes every switch and atomic ~20x slower: its build runs the big
 * counts divided by 10 so `make test SAN=thread` stays within minutes. */
#if defined(__SANITIZE_THREAD__)
#define SCALE 10
#else
#define SCALE 1
#endif

#if defined(__SANITIZE_ADDRESS__)
#define UNDER_ASAN 1
#else
#define UNDER_ASAN 0
#endif

static void start(const char *policy, int workers)
{
	struct th_config cfg;
	th_config_default(&cfg);
	cfg.policy = policy;
	cfg.workers = workers;
	cfg.seed = 42;
	if (th_runtime_start(&cfg) != 0)
		fail_msg("th_runtime_start: %s", th_last_error());
}

/* Every test's teardown: a test that fails between start() and
 * th_runtime_stop() must not leave the runtime up for the next one, whose
 * start() would then fail too (one failure reported as many). */
static int stop_if_running(void **state)
{
	(void)state;
	th_runtime_stop();
	return 0;
}

static const char *const core_policies[] = { "sticky", "shared" };

/* ---- fetch ---------------------------------------------------------------- */

static void *square(void *arg)
{
	intptr_t x = (intptr_t)arg;
	return (void *)(x * x);
}

static void fetch_returns_each_tasks_result(void **state)
{
	(void)state;
	for (size_t p = 0; p < 2; p++) {
		start(core_policies[p], 2);
		th_task *t[1000];
		for (intptr_t i = 0; i < 1000; i++)
			t[i] = th_spawn(square, (void *)i);
		for (intptr_t i = 0; i < 1000; i++) {
			assert_non_null(t[i]);
			assert_int_equal((intptr_t)th_fetch(t[i]), i * i);
			th_task_free(t[i]);
		}
		th_runtime_stop();
	}
}

/* ---- th_runtime_stop waits for every task ---------------------------------- */

static _Atomic long finished_tasks;

/* Spins a little so that tasks are still running when stop is called. */
static void *leaf_then_count(void *arg)
{
	(void)arg;
	volatile unsigned x = 0;
	for (unsigned i = 0; i < 20000; i++)
		x += i;
	atomic_fetch_add(&finished_tasks, 1);
	return NULL;
}

enum { CHILDREN = 8 };

/* Spawned from main: spawns children from a worker (so the spawn counts of
 * several workers and of main's thread all change), frees their handles
 * without fetching them. */
static void *parent_then_count(void *arg)
{
	(void)arg;
	for (int i = 0; i < CHILDREN; i++)
		th_task_free(th_spawn(leaf_then_count, NULL));
	return leaf_then_count(NULL);
}

static void stop_waits_for_every_task_nobody_fetched(void **state)
{
	(void)state;
	static const char *const policies[] = { "sticky", "shared", "steal", "multiqueue",
						"fcfs", "feedback", "kthread" };
	const int parents = 200 / SCALE;
	for (size_t p = 0; p < sizeof(policies) / sizeof(policies[0]); p++) {
		atomic_store(&finished_tasks, 0);
		start(policies[p], 2);
		for (int i = 0; i < parents; i++)
			th_task_free(th_spawn(parent_then_count, NULL));
		th_runtime_stop();
		if (atomic_load(&finished_tasks) != (long)parents * (CHILDREN + 1))
			fail_msg("%s: th_runtime_stop returned with %ld of %d tasks finished", policies[p],
				 atomic_load(&finished_tasks), parents * (CHILDREN + 1));
	}
}

/* ---- a million tiny tasks ------------------------------------------------- */

static _Atomic long total;

static void *add_arg(void *arg)
{
	atomic_fetch_add(&total, (long)(intptr_t)arg);
	return NULL;
}

static void million_tiny_tasks_sum_correctly(void **state)
{
	(void)state;
	for (size_t p = 0; p < 2; p++) {
		start(core_policies[p], 2);
		atomic_store(&total, 0);
		th_group g = TH_GROUP_INIT;
		const long n = 1000000 / SCALE;
		for (long i = 1; i <= n; i++)
			th_group_spawn(&g, add_arg, (void *)(intptr_t)i);
		th_group_wait(&g);
		assert_int_equal(atomic_load(&total), n * (n + 1) / 2);
		th_runtime_stop();
	}
}

/* ---- nesting -------------------------------------------------------------- */

static void *nest(void *arg)
{
	intptr_t depth = (intptr_t)arg;
	if (depth == 0)
		return (void *)0;
	th_task *child = th_spawn(nest, (void *)(depth - 1));
	if (!child)
		return (void *)-1000000;
	intptr_t r = (intptr_t)th_fetch(child);
	th_task_free(child);
	return (void *)(r + 1);
}

static void nested_spawn_10000_deep_completes(void **state)
{
	(void)state;
	for (size_t p = 0; p < 2; p++) {
		start(core_policies[p], 2);
		th_task *t = th_spawn(nest, (void *)(10000 / SCALE));
		assert_int_equal((intptr_t)th_fetch(t), 10000 / SCALE);
		th_task_free(t);
		th_runtime_stop();
	}
}

/* A task fetching another on a single worker must block only itself: if it
 * blocked the worker thread, the child could never run. */
static void fetch_in_task_blocks_only_the_task(void **state)
{
	(void)state;
	start("shared", 1);
	th_task *t = th_spawn(nest, (void *)50);
	assert_int_equal((intptr_t)th_fetch(t), 50);
	th_task_free(t);
	th_runtime_stop();
}

/* ---- @sync ---------------------------------------------------------------- */

static _Atomic int finished;

static void *slow_yielder(void *arg)
{
	for (intptr_t i = 0; i < (intptr_t)arg; i++)
		th_yield();
	atomic_fetch_add(&finished, 1);
	return NULL;
}

static void *group_in_task(void *arg)
{
	(void)arg;
	th_group g = TH_GROUP_INIT;
	for (int i = 0; i < 100; i++)
		th_group_spawn(&g, slow_yielder, (void *)(intptr_t)(i % 7 * 10));
	th_group_wait(&g);
	return (void *)(intptr_t)atomic_load(&finished);
}

static void group_wait_waits_for_all(void **state)
{
	(void)state;
	for (size_t p = 0; p < 2; p++) {
		start(core_policies[p], 2);
		atomic_store(&finished, 0);
		th_group g = TH_GROUP_INIT;
		for (int i = 0; i < 200; i++)
			th_group_spawn(&g, slow_yielder, (void *)(intptr_t)(i % 13 * 5));
		th_group_wait(&g);
		assert_int_equal(atomic_load(&finished), 200);
		/* and from inside a task */
		atomic_store(&finished, 0);
		th_task *t = th_spawn(group_in_task, NULL);
		assert_int_equal((intptr_t)th_fetch(t), 100);
		th_task_free(t);
		th_runtime_stop();
	}
}

/* ---- mutex ---------------------------------------------------------------- */

static th_mutex mtx = TH_MUTEX_INIT;
static long guarded;

static void *locked_increments(void *arg)
{
	(void)arg;
	for (int i = 0; i < 2000; i++) {
		th_mutex_lock(&mtx);
		long v = guarded;
		if (i % 50 == 0)
			th_yield(); /* hold the lock across a switch: others must block */
		guarded = v + 1;
		th_mutex_unlock(&mtx);
	}
	return NULL;
}

static void mutex_counter_is_exact_under_two_workers(void **state)
{
	(void)state;
	for (size_t p = 0; p < 2; p++) {
		start(core_policies[p], 2);
		guarded = 0;
		th_group g = TH_GROUP_INIT;
		for (int i = 0; i < 16; i++)
			th_group_spawn(&g, locked_increments, NULL);
		/* the main thread takes the lock too: plain threads block on a futex */
		for (int i = 0; i < 2000; i++) {
			th_mutex_lock(&mtx);
			guarded++;
			th_mutex_unlock(&mtx);
		}
		th_group_wait(&g);
		assert_int_equal(guarded, 17 * 2000);
		th_runtime_stop();
	}
}

/* ---- sticky and shared ---------------------------------------------------- */

static void *yield_n(void *arg)
{
	for (intptr_t i = 0; i < (intptr_t)arg; i++)
		th_yield();
	return NULL;
}

static void sticky_tasks_never_hop_and_end_where_placed(void **state)
{
	(void)state;
	start("sticky", 2);
	th_task *t[64];
	for (int i = 0; i < 64; i++)
		t[i] = (i % 2) ? th_spawn(yield_n, (void *)20) : th_spawn_at(i % 2, yield_n, (void *)20);
	int on[2] = { 0, 0 };
	for (int i = 0; i < 64; i++) {
		struct th_task_stats st;
		th_wait(t[i]);
		th_task_stats(t[i], &st);
		assert_int_equal(st.worker_hops, 0);
		assert_int_equal(st.runs, 21);
		assert_int_equal(st.yields, 20);
		assert_true(st.home_worker >= 0);
		assert_int_equal(st.first_worker, st.home_worker);
		assert_int_equal(st.last_worker, st.home_worker);
		on[st.home_worker]++;
		th_task_free(t[i]);
	}
	assert_true(on[0] > 0 && on[1] > 0); /* random placement used both */
	th_runtime_stop();
}

static _Atomic int long_running;

static void *long_yielder(void *arg)
{
	(void)arg;
	atomic_store(&long_running, 1);
	/* keeps yielding until every short task is done (bounded, in case) */
	for (long i = 0; i < 50000000 && atomic_load(&finished) < 40; i++)
		th_yield();
	int seen = atomic_load(&finished);
	atomic_store(&long_running, 0);
	return (void *)(intptr_t)seen;
}

static void *short_task(void *arg)
{
	(void)arg;
	for (int i = 0; i < 10; i++) {
		volatile double x = 0;
		for (int k = 0; k < 20000; k++)
			x += k;
		th_yield();
	}
	atomic_fetch_add(&finished, 1);
	return NULL;
}

static void shared_runs_others_during_a_long_task_and_tasks_hop(void **state)
{
	(void)state;
	start("shared", 2);
	atomic_store(&finished, 0);
	th_task *lng = th_spawn(long_yielder, NULL);
	th_task *t[40];
	for (int i = 0; i < 40; i++)
		t[i] = th_spawn(short_task, NULL);
	uint64_t hops = 0;
	for (int i = 0; i < 40; i++) {
		struct th_task_stats st;
		th_wait(t[i]);
		th_task_stats(t[i], &st);
		hops += st.worker_hops;
		th_task_free(t[i]);
	}
	/* all 40 finished while the long task was still yielding */
	assert_int_equal((intptr_t)th_fetch(lng), 40);
	struct th_task_stats ls;
	th_task_stats(lng, &ls);
	th_task_free(lng);
	assert_true(hops + ls.worker_hops > 0);
	th_runtime_stop();
}

/* ---- splits --------------------------------------------------------------- */

static void static_split_matches_julia_threads(void **state)
{
	(void)state;
	/* Julia: @threads over 1:10 with 3 threads gives 1:4, 5:7, 8:10 */
	int64_t lo, hi;
	th_static_block(0, 10, 3, 0, &lo, &hi);
	assert_true(lo == 0 && hi == 4);
	th_static_block(0, 10, 3, 1, &lo, &hi);
	assert_true(lo == 4 && hi == 7);
	th_static_block(0, 10, 3, 2, &lo, &hi);
	assert_true(lo == 7 && hi == 10);
	th_static_block(5, 7, 4, 3, &lo, &hi); /* more workers than indices */
	assert_true(lo == 7 && hi == 7);
}

static int ran_on[1000];

static void record_worker(int64_t lo, int64_t hi, void *arg)
{
	(void)arg;
	for (int64_t i = lo; i < hi; i++)
		ran_on[i] = th_self_worker();
}

static void th_for_runs_block_i_on_worker_i(void **state)
{
	(void)state;
	start("shared", 2);
	memset(ran_on, -1, sizeof(ran_on));
	th_for(0, 1000, record_worker, NULL);
	for (int i = 0; i < 1000; i++)
		assert_int_equal(ran_on[i], i < 500 ? 0 : 1);
	th_runtime_stop();
}

static double cube(int64_t i, void *arg)
{
	(void)arg;
	return (double)(i % 1000) * (double)(i % 1000) * (double)(i % 7);
}

static double add(double a, double b)
{
	return a + b;
}

static void map_and_reduce_equal_serial(void **state)
{
	(void)state;
	const int64_t lo = 3, hi = 200003;
	double *par = malloc(sizeof(double) * (size_t)(hi - lo));
	double *par2 = malloc(sizeof(double) * (size_t)(hi - lo));
	double serial_sum = 0;
	for (int64_t i = lo; i < hi; i++)
		serial_sum += cube(i, NULL);
	for (size_t p = 0; p < 2; p++) {
		start(core_policies[p], 2);
		th_map(lo, hi, 0, cube, NULL, par);
		th_map_static(lo, hi, cube, NULL, par2);
		for (int64_t i = lo; i < hi; i++) {
			assert_true(par[i - lo] == cube(i, NULL));
			assert_true(par2[i - lo] == cube(i, NULL));
		}
		/* integer-valued terms: every association gives the exact sum */
		assert_true(th_reduce(lo, hi, 0, cube, NULL, add, 0.0) == serial_sum);
		assert_true(th_reduce(lo, hi, 7, cube, NULL, add, 0.0) == serial_sum);
		th_runtime_stop();
	}
	free(par);
	free(par2);
}

/* th_result_alloc, th_map's output memory: filling 64 MiB front to back
 * takes a page fault per 2 MiB where the kernel offers transparent huge
 * pages, not one per 4 KiB (16,384): the faults that made a 2-worker map
 * pay more kernel time than the serial loop. */
static bool transparent_huge_pages_possible(void)
{
	char buf[128] = "";
	FILE *f = fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r");
	if (!f)
		return false;
	bool ok = fgets(buf, sizeof buf, f) && !strstr(buf, "[never]");
	fclose(f);
	return ok;
}

static long minor_faults(void)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_minflt;
}

static void result_memory_fills_with_a_fault_per_huge_page(void **state)
{
	(void)state;
	char *small = th_result_alloc(0), *tiny = th_result_alloc(100);
	assert_non_null(small);
	assert_non_null(tiny);
	memset(tiny, 7, 100);
	free(small);
	free(tiny);
	const size_t size = (size_t)64 << 20;
	char *r = th_result_alloc(size);
	assert_non_null(r);
	assert_int_equal((uintptr_t)r % ((size_t)2 << 20), 0);
	long before = minor_faults();
	memset(r, 1, size);
	long faults = minor_faults() - before;
	assert_true(r[0] == 1 && r[size - 1] == 1);
	free(r);
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
	/* the sanitizers' shadow memory takes 4 KiB faults of its own */
	skip();
#endif
	if (!transparent_huge_pages_possible())
		skip();
	if (getenv("TASKHOP_TEST_EMULATED")) {
		/* qemu-user answers madvise(MADV_HUGEPAGE) with 0 and ignores it */
		print_message("skipped under %s: it ignores MADV_HUGEPAGE\n", getenv("TASKHOP_TEST_EMULATED"));
		skip();
	}
	if (faults >= (long)(size / 4096 / 8))
		fail_msg("%ld page faults filling %zu MiB: huge pages were not used", faults, size >> 20);
}

/* ---- RNG ------------------------------------------------------------------ */

static void *draw(void *arg)
{
	uint64_t *out = arg;
	for (int i = 0; i < 8; i++) {
		out[i] = th_rand_u64();
		th_yield();
	}
	return NULL;
}

static void rng_stream_depends_only_on_seed_and_task_id(void **state)
{
	(void)state;
	uint64_t a[4][8], b[4][8];
	const char *pols[] = { "sticky", "shared" };
	for (int run = 0; run < 2; run++) {
		start(pols[run], 2);
		th_task *t[4];
		for (int i = 0; i < 4; i++)
			t[i] = th_spawn(draw, run ? b[i] : a[i]);
		for (int i = 0; i < 4; i++) {
			th_wait(t[i]);
			th_task_free(t[i]);
		}
		th_runtime_stop();
	}
	assert_memory_equal(a, b, sizeof(a));
	assert_true(a[0][0] != a[1][0]); /* different tasks, different streams */
	struct th_rng r1, r2;
	th_rng_seed(&r1, 42, 1);
	th_rng_seed(&r2, 42, 1);
	for (int i = 0; i < 8; i++) /* task 1's stream is the seeded stream 1 */
		assert_true(th_rng_next(&r1) == a[0][i] && th_rng_next(&r2) == a[0][i]);
	double d = th_rng_double(&r1);
	assert_true(d >= 0.0 && d < 1.0);
}

/* ---- errors --------------------------------------------------------------- */

static void unknown_policy_is_a_clear_error(void **state)
{
	(void)state;
	struct th_config cfg;
	th_config_default(&cfg);
	cfg.policy = "nonsense";
	assert_int_equal(th_runtime_start(&cfg), -1);
	assert_non_null(strstr(th_last_error(), "unknown policy 'nonsense'"));
	assert_non_null(strstr(th_last_error(), "sticky"));
	int w;
	assert_int_equal(th_parse_workers("0", &w), -1);
	assert_int_equal(th_parse_workers("x", &w), -1);
	assert_int_equal(th_parse_workers(" 3", &w), -1);
	assert_int_equal(th_parse_workers("+3", &w), -1);
	assert_int_equal(th_parse_workers("3 ", &w), -1);
	assert_int_equal(th_parse_workers("3", &w), 0);
	assert_int_equal(w, 3);
	assert_int_equal(th_parse_workers("auto", &w), 0);
	assert_int_equal(th_parse_workers("cores", &w), 0);
	assert_int_equal(w, TH_WORKERS_CORES);
	cfg.policy = "shared";
	cfg.workers = TH_WORKERS_CORES;
	assert_int_equal(th_runtime_start(&cfg), 0); /* hwloc finds at least one core */
	assert_true(th_nworkers() >= 1);
	assert_null(th_spawn_on(th_nworkers(), square, NULL));
	assert_non_null(strstr(th_last_error(), "does not exist"));
	th_runtime_stop();
}

/* ---- pinning, tids, run log, published slots ------------------------------ */

static void *where_am_i(void *arg)
{
	int *cpu = arg;
	*cpu = sched_getcpu();
	th_yield();
	return NULL;
}

static void pinned_workers_run_on_their_own_cpu(void **state)
{
	(void)state;
	cpu_set_t allowed;
	assert_int_equal(sched_getaffinity(0, sizeof(allowed), &allowed), 0);
	if (CPU_COUNT(&allowed) < 2)
		skip();
	struct th_config cfg;
	th_config_default(&cfg);
	cfg.workers = 2;
	cfg.pin = true;
	cfg.run_log_cap = 64;
	assert_int_equal(th_runtime_start(&cfg), 0);
	int cpu[2] = { -1, -1 };
	assert_true(th_worker_tid(0) > 0 && th_worker_tid(1) > 0 && th_worker_tid(0) != th_worker_tid(1));
	for (int w = 0; w < 2; w++) {
		th_task *t = th_spawn_on(w, where_am_i, &cpu[w]);
		th_wait(t);
		th_task_free(t);
	}
	assert_true(cpu[0] >= 0 && cpu[1] >= 0 && cpu[0] != cpu[1]);
	/* each sticky task ran twice on its worker: two log entries there */
	for (int w = 0; w < 2; w++) {
		size_t n;
		uint64_t dropped;
		const struct th_run_record *log = th_run_log(w, &n, &dropped);
		assert_int_equal(n, 2);
		assert_int_equal(dropped, 0);
		assert_int_equal(log[0].why, TH_WHY_YIELD);
		assert_int_equal(log[1].why, TH_WHY_DONE);
		assert_true(log[0].task_id == log[1].task_id && log[0].worker == (uint32_t)w);
		assert_true(log[0].start_ns <= log[0].end_ns && log[0].end_ns <= log[1].start_ns);
	}
	th_runtime_stop();
}

/* The run log under CPU contention: a task's logged runs never overlap, and
 * in start order they give the runtime's own worker-hop count (the recorder
 * derives hops that way). Rounds of a few tasks that yield often: the main
 * thread waits for each, so an exit wakes it, and spinning threads keep the
 * CPUs oversubscribed, so the woken waiter often preempts the worker right
 * after the exit while the other worker cycles through the rest. That once
 * dated the next task's run from before the worker's pop, while the task
 * still ran on the other worker. */
#define ROUND_TASKS 3
#define ROUND_YIELDS 30

static _Atomic bool spinners_stop;

static void *spin_until_stopped(void *arg)
{
	(void)arg;
	while (!atomic_load_explicit(&spinners_stop, memory_order_relaxed))
		;
	return NULL;
}

static void *yield_often(void *arg)
{
	volatile double x = 0;
	for (int i = 0; i < ROUND_YIELDS; i++) {
		for (int k = 0; k < 5000; k++)
			x += k;
		th_yield();
	}
	return arg;
}

static int run_start_cmp(const void *a, const void *b)
{
	const struct th_run_record *x = a, *y = b;
	if (x->task_id != y->task_id)
		return x->task_id < y->task_id ? -1 : 1;
	return x->start_ns < y->start_ns ? -1 : x->start_ns > y->start_ns;
}

/* The two workers' logs, sorted by (task, start). */
static struct th_run_record *sorted_run_logs(size_t *total)
{
	size_t n0, n1;
	uint64_t d0, d1;
	const struct th_run_record *l0 = th_run_log(0, &n0, &d0), *l1 = th_run_log(1, &n1, &d1);
	assert_int_equal(d0 + d1, 0);
	struct th_run_record *all = malloc((n0 + n1 + 1) * sizeof(*all));
	assert_non_null(all);
	if (n0) /* a worker that ran nothing has no log (NULL): memcpy must not get it */
		memcpy(all, l0, n0 * sizeof(*all));
	if (n1)
		memcpy(all + n0, l1, n1 * sizeof(*all));
	*total = n0 + n1;
	qsort(all, *total, sizeof(*all), run_start_cmp);
	return all;
}

static void check_logged_runs(th_task **tasks, int ntasks)
{
	size_t total, i = 0;
	struct th_run_record *all = sorted_run_logs(&total);
	for (int k = 0; k < ntasks; k++) {
		struct th_task_stats st;
		th_task_stats(tasks[k], &st);
		while (i < total && all[i].task_id < st.id)
			i++;
		uint64_t runs = 0, hops = 0;
		for (size_t j = i; j < total && all[j].task_id == st.id; j++, runs++) {
			if (j > i && all[j].start_ns < all[j - 1].end_ns)
				fail_msg("task %llu: run %llu starts %llu ns before its previous run ended",
					 (unsigned long long)st.id, (unsigned long long)runs,
					 (unsigned long long)(all[j - 1].end_ns - all[j].start_ns));
			hops += j > i && all[j].worker != all[j - 1].worker;
		}
		assert_int_equal(runs, st.runs);
		assert_int_equal(hops, st.worker_hops);
	}
	free(all);
}

static void run_log_stays_in_order_under_cpu_contention(void **state)
{
	(void)state;
	pthread_t spinners[3];
	atomic_store(&spinners_stop, false);
	for (int i = 0; i < 3; i++)
		assert_int_equal(pthread_create(&spinners[i], NULL, spin_until_stopped, NULL), 0);
	for (size_t p = 0; p < 2; p++) {
		struct th_config cfg;
		th_config_default(&cfg);
		cfg.policy = core_policies[p];
		cfg.workers = 2;
		cfg.run_log_cap = 4 * ROUND_TASKS * ROUND_YIELDS;
		assert_int_equal(th_runtime_start(&cfg), 0);
		for (int round = 0; round < 300 / SCALE; round++) {
			th_task *tasks[ROUND_TASKS];
			for (int k = 0; k < ROUND_TASKS; k++)
				tasks[k] = th_spawn(yield_often, NULL);
			for (int k = 0; k < ROUND_TASKS; k++)
				th_wait(tasks[k]);
			check_logged_runs(tasks, ROUND_TASKS);
			for (int k = 0; k < ROUND_TASKS; k++)
				th_task_free(tasks[k]);
			th_run_log_clear();
		}
		th_runtime_stop();
	}
	atomic_store(&spinners_stop, true);
	for (int i = 0; i < 3; i++)
		pthread_join(spinners[i], NULL);
}

/* The run log's stamps are dated when drained, and a run's end and the next
 * run's start are often dated by different drains. Each drain once drew its
 * own line through its two anchors: a stamp dated through a later, short and
 * noisy segment moved by the noise times its distance, and a task's runs came
 * out of order. One map through every anchor dates a stamp the same whichever
 * drain dates it, and a stamp past the newest anchor no later than it. */
static void run_log_dates_a_stamp_the_same_whichever_drain_dates_it(void **state)
{
	(void)state;
	double saved_rate = th__ns_per_tick;
	th__ns_per_tick = 0.5; /* stamps are counter ticks */
	struct th_stamp_map m = { 0 };
	const struct th_stamp_anchor a[] = { { 1000, 5000 }, { 2000, 5500 }, { 2010, 5600 } };
	assert_int_equal(th__stamp_map_add(&m, &a[0]), 0);
	assert_int_equal(th__stamp_map_add(&m, &a[1]), 0);
	uint64_t mid = th__stamp_map_ns(&m, 1500), ahead = th__stamp_map_ns(&m, 2005);
	assert_int_equal(mid, 5250);
	assert_int_equal(ahead, 5500); /* past the newest anchor: dated at it */
	/* a drain 10 ticks later: its segment's slope is 20x the first's */
	assert_int_equal(th__stamp_map_add(&m, &a[2]), 0);
	assert_int_equal(th__stamp_map_ns(&m, 1500), mid);
	assert_true(th__stamp_map_ns(&m, 2005) >= ahead);
	assert_int_equal(th__stamp_map_ns(&m, 2005), 5550);
	/* an anchor behind the newest (a drain on a CPU whose counter lags) is skipped */
	const struct th_stamp_anchor behind = { 2008, 5700 };
	assert_int_equal(th__stamp_map_add(&m, &behind), 0);
	assert_int_equal(th__stamp_map_ns(&m, 2005), 5550);
	for (uint64_t t = 900; t < 2100; t++)
		assert_true(th__stamp_map_ns(&m, t) <= th__stamp_map_ns(&m, t + 1));
	th__stamp_map_free(&m);
	th__ns_per_tick = saved_rate;
}

/* A drain dates its batch through a remembered segment (th__stamp_map_ns_near):
 * it must give every stamp exactly the date the full lookup gives, in any order
 * of stamps (a batch's stamps jump between segments: a task's start is often
 * older than the previous run's end on another worker), outside the anchors too. */
static void run_log_dating_through_a_remembered_segment_is_exact(void **state)
{
	(void)state;
	double saved_rate = th__ns_per_tick;
	th__ns_per_tick = 0.37;
	struct th_stamp_map m = { 0 };
	uint64_t ticks = 100000, ns = 7000000;
	uint64_t x = 88172645463325252ull; /* xorshift: irregular anchor gaps and stamps */
	for (int i = 0; i < 300; i++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		ticks += 1 + x % 5000;
		ns += 1 + (x >> 20) % 2000;
		assert_int_equal(th__stamp_map_add(&m, &(struct th_stamp_anchor){ ticks, ns }), 0);
	}
	struct th_stamp_seg seg = { .rate = 0 };
	uint64_t stamp = 100000;
	for (int i = 0; i < 200000; i++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		/* mostly small steps forward, now and then a jump anywhere (or 0) */
		stamp = x % 16 == 0 ? x % (ticks + 20000) : x % 16 == 1 ? 0 : stamp + x % 700;
		assert_int_equal(th__stamp_map_ns_near(&m, &seg, stamp), th__stamp_map_ns(&m, stamp));
	}
	th__stamp_map_free(&m);
	th__ns_per_tick = saved_rate;
}

/* The dating a drain must give, each stamp through the full lookup: a run
 * starts no earlier than the run before ended, and ends no earlier than it starts. */
static void date_each_stamp(struct th_run_record *runs, size_t n, const struct th_stamp_map *m, uint64_t *last)
{
	for (size_t i = 0; i < n; i++) {
		struct th_run_record *r = &runs[i];
		uint64_t start = th__stamp_map_ns(m, r->start_ns);
		r->start_ns = start > *last ? start : *last;
		if (!(r->reserved & TH_AREA_RUN_END_NS))
			r->end_ns = th__stamp_map_ns(m, r->end_ns);
		if (r->end_ns < r->start_ns)
			r->end_ns = r->start_ns;
		*last = r->end_ns;
		r->reserved = 0;
	}
}

/* th__runlog_date skips the conversion of a start that is the stamp which
 * ended the run before (one reading per switch): the dates must be those of
 * converting every stamp, also after an end the kernel dated (ns already, not
 * a stamp), a stamp of 0 (none), and a start that jumps back. */
static void run_log_dating_a_batch_equals_dating_each_stamp(void **state)
{
	(void)state;
	double saved_rate = th__ns_per_tick;
	th__ns_per_tick = 0.37;
	struct th_stamp_map m = { 0 };
	uint64_t ticks = 100000, ns = 7000000, x = 0x9e3779b97f4a7c15ull;
	for (int i = 0; i < 100; i++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		ticks += 1 + x % 5000;
		ns += 1 + (x >> 20) % 2000;
		assert_int_equal(th__stamp_map_add(&m, &(struct th_stamp_anchor){ ticks, ns }), 0);
	}
	enum { N = 5000 };
	static struct th_run_record fast[N], slow[N];
	uint64_t stamp = 100500;
	for (int i = 0; i < N; i++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		struct th_run_record *r = &fast[i];
		/* mostly chained (start = the end before), now and then not */
		r->start_ns = i > 0 && x % 8 != 0 ? fast[i - 1].end_ns : x % 8 == 0 && x % 3 == 0 ? 0 : stamp;
		if (i > 0 && (fast[i - 1].reserved & TH_AREA_RUN_END_NS) && x % 2)
			r->start_ns = fast[i - 1].end_ns; /* equal to an ns end, by chance */
		stamp += x % 700;
		if (x % 11 == 0)
			stamp -= x % 300; /* a start read a hair early on another worker */
		r->end_ns = stamp;
		r->reserved = x % 13 == 0 ? TH_AREA_RUN_END_NS : 0;
		if (r->reserved)
			r->end_ns = 7000000 + x % 200000;
	}
	memcpy(slow, fast, sizeof(fast));
	uint64_t last_fast = 0, last_slow = 0;
	for (size_t at = 0; at < N; at += 128) { /* in a drain's batches */
		size_t n = N - at < 128 ? N - at : 128;
		th__runlog_date(fast + at, n, &m, &last_fast);
		date_each_stamp(slow + at, n, &m, &last_slow);
	}
	for (int i = 0; i < N; i++) {
		assert_int_equal(fast[i].start_ns, slow[i].start_ns);
		assert_int_equal(fast[i].end_ns, slow[i].end_ns);
	}
	assert_int_equal(last_fast, last_slow);
	th__stamp_map_free(&m);
	th__ns_per_tick = saved_rate;
}

/* Resident bytes of the mapping of the run-log area that starts at `start`,
 * or of the first one when start is 0 (*start then says which): -1 none. */
static long area_rss_kb(unsigned long *start)
{
	FILE *f = fopen("/proc/self/smaps", "r");
	if (!f)
		return -1;
	char line[512];
	long kb = -1;
	int in_area = 0;
	while (fgets(line, sizeof(line), f)) {
		unsigned long lo, hi;
		if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2) {
			in_area = strstr(line, TH_AREA_NAME) && (!*start || lo == *start);
			if (in_area && !*start)
				*start = lo;
		} else if (in_area && sscanf(line, "Rss: %ld kB", &kb) == 1) {
			break;
		}
	}
	fclose(f);
	return kb;
}

/* A recorder that attaches by pid finds the rings untouched (nothing logged
 * yet); the worker's first logged run maps its whole ring in, with one
 * madvise, instead of a minor fault every 128 runs on the switch path. */
static void an_attached_drainer_has_the_ring_mapped_by_the_first_logged_run(void **state)
{
	(void)state;
	if (getenv("TASKHOP_TEST_EMULATED"))
		skip(); /* qemu-user ignores MADV_POPULATE_WRITE */
	struct th_config cfg;
	th_config_default(&cfg);
	cfg.policy = "sticky";
	cfg.workers = 1;
	cfg.run_log_ring = 65536; /* 2 MiB: not logged, so not touched */
	assert_int_equal(th_runtime_start(&cfg), 0);
	unsigned long runtime_map = 0;
	long before = area_rss_kb(&runtime_map);
	assert_true(before >= 0);
	assert_true(before < 2048);
	struct th_area *a = NULL;
	if (th_area_open(getpid(), &a) != 0)
		fail_msg("th_area_open: %s", th_last_error());
	assert_int_equal(th_area_claim(a), 0); /* logging on, as a recorder's attach */
	th_task *t = th_spawn(yield_n, (void *)(intptr_t)3);
	th_wait(t);
	th_task_free(t);
	long after = area_rss_kb(&runtime_map);
	print_message("  the runtime's area mapping: %ld kB resident before the claim, %ld kB after 4 runs\n",
		      before, after);
	assert_true(after >= before + 2048);
	assert_true(th_area_drain(a) >= 4);
	th_area_close(a);
	th_runtime_stop();
}

/* A blocked task holds its stack, and stacks cost mappings (the kernel
 * allows vm.max_map_count, 65,530). A PROT_NONE guard made two per stack
 * (2,000 blocked tasks: 4,000 mappings); with guard regions
 * (MADV_GUARD_INSTALL, Linux 6.13) stacks mapped side by side merge (5). */
#define BLOCKED_TASKS 2000

static th_mutex gate = TH_MUTEX_INIT;
static _Atomic int tasks_at_gate;

static void *wait_at_gate(void *arg)
{
	atomic_fetch_add(&tasks_at_gate, 1);
	th_mutex_lock(&gate);
	th_mutex_unlock(&gate);
	return arg;
}

static long mapping_count(void)
{
	FILE *f = fopen("/proc/self/maps", "r");
	if (!f)
		return -1;
	long n = 0;
	for (int c; (c = getc(f)) != EOF;)
		n += c == '\n';
	fclose(f);
	return n;
}

static void a_blocked_task_costs_one_mapping(void **state)
{
	(void)state;
	start("shared", 2);
	th_task *tasks[BLOCKED_TASKS];
	atomic_store(&tasks_at_gate, 0);
	th_mutex_lock(&gate);
	long before = mapping_count();
	for (int k = 0; k < BLOCKED_TASKS; k++)
		tasks[k] = th_spawn(wait_at_gate, NULL);
	while (atomic_load(&tasks_at_gate) < BLOCKED_TASKS)
		sched_yield();
	long added = mapping_count() - before;
	th_mutex_unlock(&gate);
	for (int k = 0; k < BLOCKED_TASKS; k++) {
		th_wait(tasks[k]);
		th_task_free(tasks[k]);
	}
	th_runtime_stop();
	print_message("%d blocked tasks added %ld mappings\n", BLOCKED_TASKS, added);
#if defined(__SANITIZE_THREAD__)
	skip(); /* TSan maps memory of its own for every task stack (its fiber) */
#endif
	if (!th_stack_guard_regions())
		skip(); /* PROT_NONE guards: two mappings per stack */
	assert_true(added < BLOCKED_TASKS * 3 / 2);
}

struct slot_probe {
	uint64_t *slots;
	uint64_t seen_id;
};

static void *read_my_slot(void *arg)
{
	struct slot_probe *p = arg;
	p->seen_id = __atomic_load_n(&p->slots[2 * th_self_worker()], __ATOMIC_RELAXED);
	return NULL;
}

static void workers_publish_the_running_task_in_their_slot(void **state)
{
	(void)state;
	start("shared", 2);
	static uint64_t slots[2 * 2];
	memset(slots, 0, sizeof(slots));
	th_publish_slots(slots, 2 * sizeof(uint64_t));
	struct slot_probe p = { .slots = slots };
	th_task *t = th_spawn(read_my_slot, &p);
	th_wait(t);
	assert_int_equal(p.seen_id, th_task_id(t));
	th_task_free(t);
	th_publish_slots(NULL, 0);
	/* after the switch out the slot says "no task", and seq counted both switches */
	int w = 0;
	while (w < 2 && slots[2 * w + 1] == 0)
		w++;
	assert_true(w < 2);
	assert_int_equal(slots[2 * w], 0);
	assert_true(slots[2 * w + 1] >= 2);
	th_runtime_stop();
}

/* ---- task timestamps -------------------------------------------------------- */

/* Busy for ~2 ms by the exact clock; returns how long it measured. */
static void *busy_2ms(void *arg)
{
	(void)arg;
	uint64_t t0 = th_now_ns(), t;
	while ((t = th_now_ns()) - t0 < 2000000)
		;
	return (void *)(uintptr_t)(t - t0);
}

/* first_run_ns and done_ns (read from the TSC when the run log is off) are
 * CLOCK_MONOTONIC like th_now_ns: a task's times fall between readings taken
 * before its spawn and after its fetch, in order, and span at least what the
 * task itself measured running. One microsecond of slack for the TSC's
 * extrapolation. Every policy, several tasks per worker. */
static void task_timestamps_are_monotonic_clock_times(void **state)
{
	(void)state;
	const char *const policies[] = { "sticky", "shared", "steal", "multiqueue", "fcfs" };
	enum { N = 6, SLACK = 1000 };
	for (size_t p = 0; p < sizeof(policies) / sizeof(policies[0]); p++) {
		start(policies[p], 2);
		uint64_t before = th_now_ns();
		th_task *t[N];
		for (int i = 0; i < N; i++)
			assert_non_null(t[i] = th_spawn(busy_2ms, NULL));
		for (int i = 0; i < N; i++) {
			uint64_t ran = (uint64_t)(uintptr_t)th_fetch(t[i]);
			uint64_t after = th_now_ns();
			struct th_task_stats st;
			th_task_stats(t[i], &st);
			if (!(before <= st.first_run_ns + SLACK && st.first_run_ns <= st.done_ns &&
			      st.done_ns <= after + SLACK && st.done_ns - st.first_run_ns + SLACK >= ran))
				fail_msg("%s: task %d: before %llu first run %llu done %llu after %llu, ran %llu ns",
					 policies[p], i, (unsigned long long)before,
					 (unsigned long long)st.first_run_ns, (unsigned long long)st.done_ns,
					 (unsigned long long)after, (unsigned long long)ran);
			th_task_free(t[i]);
		}
		th_runtime_stop();
	}
}

/* ---- stack overflow ------------------------------------------------------- */

static volatile int depth_limit = 1 << 30; /* volatile: the compiler cannot see the end */

static int recurse(int n)
{
	volatile char pad[512];
	pad[0] = (char)n;
	if (n >= depth_limit)
		return 0;
	return recurse(n + 1) + pad[0];
}

static void *overflow(void *arg)
{
	(void)arg;
	return (void *)(intptr_t)recurse(0);
}

static void overflow_under(const void *policy)
{
	start(policy, 1);
	th_task *t = th_spawn(overflow, NULL);
	th_fetch(t);
}

/* Every policy, kthread's own threads included, names the task, its stack
 * size and its worker, and the process still dies of the SIGSEGV. */
static void stack_overflow_is_reported_with_task_id_under_every_policy(void **state)
{
	(void)state;
	for (const char *const *p = th_policy_names(); *p; p++) {
		char buf[4096];
		int status = run_in_child(overflow_under, *p, buf, sizeof(buf));
		if (!strstr(buf, "taskhop: task 1 overflowed its stack (256 KiB) on worker "))
			fail_msg("policy %s: child stderr was: %s", *p, buf);
		if (!WIFSIGNALED(status) || WTERMSIG(status) != SIGSEGV)
			fail_msg("policy %s: child status %#x, not killed by SIGSEGV", *p, status);
	}
}

/* ---- misuse the runtime refuses ------------------------------------------- */

/* A child that would hang (the deadlocks these tests pin down) dies here. */
static void misuse_expect_abort(void (*body)(const void *), const void *arg, const char *message)
{
	char buf[4096];
	int status = run_in_child(body, arg, buf, sizeof(buf));
	if (!strstr(buf, message))
		fail_msg("expected \"%s\" on stderr, child stderr was: %s (status %#x)", message, buf, status);
	if (!WIFSIGNALED(status) || WTERMSIG(status) != SIGABRT)
		fail_msg("child status %#x, not killed by SIGABRT; stderr: %s", status, buf);
}

static void *stop_the_runtime(void *arg)
{
	(void)arg;
	th_runtime_stop();
	return NULL;
}

static void stop_from_task_under(const void *policy)
{
	alarm(10); /* the old behaviour: a deadlock */
	start(policy, 1);
	th_fetch(th_spawn(stop_the_runtime, NULL));
}

static void runtime_stop_inside_a_task_aborts_with_a_message(void **state)
{
	(void)state;
	for (const char *const *p = th_policy_names(); *p; p++)
		misuse_expect_abort(stop_from_task_under, *p,
				    "taskhop: th_runtime_stop called from inside task 1");
}

static void fetch_null(const void *arg)
{
	(void)arg;
	alarm(10);
	start("shared", 1);
	th_fetch(NULL);
}

static void free_twice(const void *policy)
{
	alarm(10);
	start(policy, 1);
	th_task *t = th_spawn(square, (void *)3);
	th_fetch(t);
	th_task_free(t);
	th_task_free(t);
}

/* The handle is freed while the task still runs (the runtime holds its
 * own reference), so the struct is still there to be checked. */
static void *park_a_while(void *arg)
{
	(void)arg;
	usleep(200 * 1000);
	return NULL;
}

static void fetch_after_free(const void *policy)
{
	alarm(10);
	start(policy, 1);
	th_task *t = th_spawn(park_a_while, NULL);
	th_task_free(t);
	th_fetch(t);
}

/* A struct freed by the worker goes to its cache for reuse: a fetch of the
 * stale handle must still see a freed task, not a live one. */
static void *free_then_fetch_in_task(void *arg)
{
	(void)arg;
	th_task *t = th_spawn(square, (void *)3);
	th_fetch(t);
	th_task_free(t);
	th_fetch(t);
	return NULL;
}

static void fetch_after_free_in_task(const void *policy)
{
	alarm(10);
	start(policy, 1);
	th_fetch(th_spawn(free_then_fetch_in_task, NULL));
}

static void fetch_null_double_free_and_fetch_after_free_abort(void **state)
{
	(void)state;
	misuse_expect_abort(fetch_null, NULL, "taskhop: th_fetch: NULL task handle");
	for (const char *const *p = th_policy_names(); *p; p++) {
		misuse_expect_abort(fetch_after_free, *p, "taskhop: th_fetch: task handle");
		if (UNDER_ASAN) /* these read a freed struct: ASan reports them first */
			continue;
		misuse_expect_abort(free_twice, *p, "taskhop: th_task_free: task handle");
		misuse_expect_abort(fetch_after_free_in_task, *p, "taskhop: th_fetch: task handle");
	}
}

static void stack_size_outside_16k_to_1g_is_refused_at_start(void **state)
{
	(void)state;
	static const size_t bad[] = { 1, 16 * 1024 - 1, ((size_t)1 << 30) + 1, (size_t)1 << 50 };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct th_config cfg;
		th_config_default(&cfg);
		cfg.workers = 1;
		cfg.stack_size = bad[i];
		if (th_runtime_start(&cfg) == 0) {
			th_runtime_stop();
			fail_msg("stack_size %zu was accepted", bad[i]);
		}
		assert_non_null(strstr(th_last_error(), "stack_size"));
		assert_non_null(strstr(th_last_error(), "16 KiB..1 GiB"));
	}
	static const size_t good[] = { 16 * 1024, (size_t)1 << 30 };
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		struct th_config cfg;
		th_config_default(&cfg);
		cfg.workers = 1;
		cfg.stack_size = good[i];
		if (th_runtime_start(&cfg) != 0)
			fail_msg("stack_size %zu refused: %s", good[i], th_last_error());
		th_task *t = th_spawn(square, (void *)5);
		assert_int_equal((intptr_t)th_fetch(t), 25);
		th_task_free(t);
		th_runtime_stop();
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(fetch_returns_each_tasks_result, stop_if_running),
		cmocka_unit_test_teardown(stop_waits_for_every_task_nobody_fetched, stop_if_running),
		cmocka_unit_test_teardown(million_tiny_tasks_sum_correctly, stop_if_running),
		cmocka_unit_test_teardown(nested_spawn_10000_deep_completes, stop_if_running),
		cmocka_unit_test_teardown(fetch_in_task_blocks_only_the_task, stop_if_running),
		cmocka_unit_test_teardown(group_wait_waits_for_all, stop_if_running),
		cmocka_unit_test_teardown(mutex_counter_is_exact_under_two_workers, stop_if_running),
		cmocka_unit_test_teardown(sticky_tasks_never_hop_and_end_where_placed, stop_if_running),
		cmocka_unit_test_teardown(shared_runs_others_during_a_long_task_and_tasks_hop, stop_if_running),
		cmocka_unit_test_teardown(static_split_matches_julia_threads, stop_if_running),
		cmocka_unit_test_teardown(th_for_runs_block_i_on_worker_i, stop_if_running),
		cmocka_unit_test_teardown(map_and_reduce_equal_serial, stop_if_running),
		cmocka_unit_test_teardown(result_memory_fills_with_a_fault_per_huge_page, stop_if_running),
		cmocka_unit_test_teardown(rng_stream_depends_only_on_seed_and_task_id, stop_if_running),
		cmocka_unit_test_teardown(unknown_policy_is_a_clear_error, stop_if_running),
		cmocka_unit_test_teardown(pinned_workers_run_on_their_own_cpu, stop_if_running),
		cmocka_unit_test_teardown(run_log_stays_in_order_under_cpu_contention, stop_if_running),
		cmocka_unit_test(run_log_dates_a_stamp_the_same_whichever_drain_dates_it),
		cmocka_unit_test(run_log_dating_through_a_remembered_segment_is_exact),
		cmocka_unit_test(run_log_dating_a_batch_equals_dating_each_stamp),
		cmocka_unit_test_teardown(an_attached_drainer_has_the_ring_mapped_by_the_first_logged_run, stop_if_running),
		cmocka_unit_test_teardown(a_blocked_task_costs_one_mapping, stop_if_running),
		cmocka_unit_test_teardown(workers_publish_the_running_task_in_their_slot, stop_if_running),
		cmocka_unit_test_teardown(task_timestamps_are_monotonic_clock_times, stop_if_running),
		cmocka_unit_test_teardown(stack_overflow_is_reported_with_task_id_under_every_policy, stop_if_running),
		cmocka_unit_test_teardown(runtime_stop_inside_a_task_aborts_with_a_message, stop_if_running),
		cmocka_unit_test_teardown(fetch_null_double_free_and_fetch_after_free_abort, stop_if_running),
		cmocka_unit_test_teardown(stack_size_outside_16k_to_1g_is_refused_at_start, stop_if_running),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
