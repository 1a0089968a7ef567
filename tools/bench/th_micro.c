/* th_micro.c — taskhop's micro-benchmarks (yield, spawn+join, nested fib, steal
 * share), printed as "bench: NAME VALUE UNIT" for tools/bench/run.sh to compare with peers. */
#define _GNU_SOURCE
#include <malloc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "act_monitor.h"
#include "taskhop.h"

static struct {
	const char *policy;
	long yields, tasks;
	int fib, reps;
	const char *prefix; /* "" for the headline figures, "policy.NAME." otherwise */
	const char *only;   /* figures' names, comma-separated (profiling, extra rounds), or NULL: all */
	int activations;    /* enum th_activations: what nothing blocking costs with them on */
} opt = { "steal", 10000000, 1000000, 30, 3, "", NULL, TH_ACT_OFF };

static void start(int workers)
{
	struct th_config cfg;
	th_config_default(&cfg);
	cfg.policy = opt.policy;
	cfg.workers = workers;
	cfg.activations = opt.activations;
	if (th_runtime_start(&cfg) != 0) {
		fprintf(stderr, "th_micro: %s\n", th_last_error());
		exit(1);
	}
}

static th_task *spawn_or_die(th_fn fn, void *arg)
{
	th_task *t = th_spawn(fn, arg);
	if (!t) {
		fprintf(stderr, "th_micro: th_spawn: %s\n", th_last_error());
		exit(1);
	}
	return t;
}

/* ---- yield: two tasks on one worker, each yields n times ------------------- */

static void *yielder(void *arg)
{
	for (long i = 0, n = (long)(intptr_t)arg; i < n; i++)
		th_yield();
	return NULL;
}

static double yield_ns(void)
{
	start(1);
	uint64_t t0 = th_now_ns();
	th_task *a = spawn_or_die(yielder, (void *)(intptr_t)opt.yields);
	th_task *b = spawn_or_die(yielder, (void *)(intptr_t)opt.yields);
	th_wait(a), th_wait(b);
	double ns = (double)(th_now_ns() - t0) / (2.0 * (double)opt.yields);
	th_task_free(a), th_task_free(b);
	th_runtime_stop();
	return ns;
}

/* ---- spawn + fetch of empty tasks, from a task, 1000 at a time ------------- */

enum { BATCH = 1000 };

static void *empty(void *arg)
{
	return arg;
}

struct spawn_run {
	long n;
	bool stats;    /* count tasks first run off the spawner's worker */
	long off_home; /* out */
};

/* Same shape as the peers: spawn a batch, fetch each result in order. */
static void *spawner(void *arg)
{
	struct spawn_run *r = arg;
	th_task *t[BATCH];
	long sum = 0;
	for (long done = 0; done < r->n; done += BATCH) {
		for (intptr_t i = 0; i < BATCH; i++)
			t[i] = spawn_or_die(empty, (void *)i);
		for (int i = 0; i < BATCH; i++) {
			sum += (intptr_t)th_fetch(t[i]);
			if (r->stats) {
				struct th_task_stats st;
				th_task_stats(t[i], &st);
				r->off_home += st.first_worker != st.spawn_worker;
			}
			th_task_free(t[i]);
		}
	}
	if (sum != r->n / BATCH * (BATCH * (BATCH - 1) / 2)) {
		fprintf(stderr, "th_micro: spawn_join lost a result\n");
		exit(1);
	}
	return NULL;
}

static double spawn_join_ns(int workers, struct spawn_run *r)
{
	start(workers);
	uint64_t t0 = th_now_ns();
	th_task *root = spawn_or_die(spawner, r);
	th_wait(root);
	double ns = (double)(th_now_ns() - t0) / (double)r->n;
	th_task_free(root);
	th_runtime_stop();
	return ns;
}

static double spawn_join_1w(void)
{
	struct spawn_run r = { .n = opt.tasks };
	return spawn_join_ns(1, &r);
}

static double spawn_join_2w(void)
{
	struct spawn_run r = { .n = opt.tasks };
	return spawn_join_ns(2, &r);
}

/* ---- nested fib: spawn one branch, compute the other ----------------------- */

static void *fib(void *arg)
{
	intptr_t n = (intptr_t)arg;
	if (n < 2)
		return (void *)n;
	th_task *a = spawn_or_die(fib, (void *)(n - 1));
	intptr_t b = (intptr_t)fib((void *)(n - 2));
	intptr_t r = (intptr_t)th_fetch(a) + b;
	th_task_free(a);
	return (void *)r;
}

static double fib_ms(void)
{
	start(2);
	uint64_t t0 = th_now_ns();
	th_task *root = spawn_or_die(fib, (void *)(intptr_t)opt.fib);
	intptr_t r = (intptr_t)th_fetch(root);
	double ms = (double)(th_now_ns() - t0) / 1e6;
	th_task_free(root);
	th_runtime_stop();
	if (opt.fib == 30 && r != 832040) {
		fprintf(stderr, "th_micro: fib(30) = %ld\n", (long)r);
		exit(1);
	}
	return ms;
}

/* Best of opt.reps: the run least disturbed by the rest of the machine. */
static double best(double (*f)(void))
{
	double b = f();
	for (int i = 1; i < opt.reps; i++) {
		double v = f();
		if (v < b)
			b = v;
	}
	return b;
}

/* Is figure one of --only's comma-separated names (or is there no --only)? */
static bool wanted(const char *figure)
{
	if (!opt.only)
		return true;
	size_t n = strlen(figure);
	for (const char *p = opt.only; *p;) {
		const char *comma = strchr(p, ',');
		size_t len = comma ? (size_t)(comma - p) : strlen(p);
		if (len == n && strncmp(p, figure, n) == 0)
			return true;
		p += len + (comma != NULL);
	}
	return false;
}

static int usage(void)
{
	fprintf(stderr, "usage: th_micro [--policy NAME] [--yields N] [--tasks N] [--fib N] [--reps N] [--prefix P]\n"
			"                [--only FIGURE[,FIGURE...]]  (yield_ns spawn_join_ns_1w spawn_join_ns_2w fib_ms steal_share)\n"
			"                [--activations off|bpf|explicit|auto]\n"
			"  e.g. th_micro --policy steal   (prints bench: yield_ns ... lines)\n");
	return 2;
}

static long number(const char *flag, const char *text)
{
	char *end;
	long v = strtol(text, &end, 10);
	if (!*text || *end || v < 1) {
		fprintf(stderr, "th_micro: %s wants a positive integer, not '%s'\n", flag, text);
		exit(2);
	}
	return v;
}

int main(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		if (i + 1 >= argc)
			return usage();
		const char *f = argv[i], *v = argv[++i];
		if (!strcmp(f, "--policy"))
			opt.policy = v;
		else if (!strcmp(f, "--prefix"))
			opt.prefix = v;
		else if (!strcmp(f, "--only"))
			opt.only = v;
		else if (!strcmp(f, "--activations")) {
			if (th_parse_activations(v, &opt.activations) != 0) {
				fprintf(stderr, "th_micro: --activations must be off, bpf, explicit or auto, not '%s'\n", v);
				return 2;
			}
		}
		else if (!strcmp(f, "--yields"))
			opt.yields = number(f, v);
		else if (!strcmp(f, "--tasks"))
			opt.tasks = number(f, v) / BATCH * BATCH;
		else if (!strcmp(f, "--fib"))
			opt.fib = (int)number(f, v);
		else if (!strcmp(f, "--reps"))
			opt.reps = (int)number(f, v);
		else
			return usage();
	}
	if (opt.tasks < BATCH) {
		fprintf(stderr, "th_micro: --tasks must be at least %d\n", BATCH);
		return 2;
	}
	/* As for the Boost.Fiber peer: keep freed memory in the heap. glibc
	 * would otherwise madvise() a worker arena's free top back to the
	 * kernel after every batch of 1000 tasks and refault it on the next. */
	mallopt(M_TRIM_THRESHOLD, 1 << 30);
	th_set_activation_backend(&rec_act_backend);
	setvbuf(stdout, NULL, _IOLBF, 0); /* lines survive a kill by run.sh's timeout */
	const char *p = opt.prefix;
	if (wanted("yield_ns"))
		printf("bench: %syield_ns %.1f ns\n", p, best(yield_ns));
	if (wanted("spawn_join_ns_1w"))
		printf("bench: %sspawn_join_ns_1w %.1f ns\n", p, best(spawn_join_1w));
	if (wanted("spawn_join_ns_2w"))
		printf("bench: %sspawn_join_ns_2w %.1f ns\n", p, best(spawn_join_2w));
	/* fib_ms is fib(30), the figure compared with the peers; another n is
	 * named after it (breadth-first policies keep hundreds of thousands of
	 * task stacks alive in fib(30): 73 s and 1.9 GB under shared). */
	char fibname[32] = "fib_ms";
	if (opt.fib != 30)
		snprintf(fibname, sizeof(fibname), "fib%d_ms", opt.fib);
	if (wanted("fib_ms"))
		printf("bench: %s%s %.1f ms\n", p, fibname, best(fib_ms));
	fflush(stdout);
	if (wanted("steal_share")) {
		/* The spawn test again, untimed, reading each task's stats. */
		struct spawn_run r = { .n = opt.tasks, .stats = true };
		spawn_join_ns(2, &r);
		printf("bench: %ssteal_share %.3f fraction\n", p, (double)r.off_home / (double)r.n);
	}
	return 0;
}
