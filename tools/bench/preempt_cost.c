/* preempt_cost.c — what one preemption costs (timer signal, trampoline, switch):
 * two spinning tasks on one worker, with and without a short quantum. */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "taskhop.h"

/* Process CPU time, not wall time: the signal's kernel work is charged to
 * the process, and other programs on a busy machine are not. */
static double cpu_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static void *spin(void *arg)
{
	volatile double x = 1;
	for (long i = 0; i < (long)(intptr_t)arg; i++)
		x = x * 1.0000001 + 0.5;
	return NULL;
}

static double wall_ns(void)
{
	return (double)th_now_ns();
}

/* CPU ns for two tasks of `work` iterations on one worker; *preempted gets
 * the preemptions of both, *wall the wall time. preemptible false: the
 * timer ticks, and the handler finds nothing to preempt. */
static double two_spinners(uint64_t quantum, bool preemptible, long work, uint64_t *preempted,
			   double *wall)
{
	struct th_config cfg;
	th_config_default(&cfg);
	cfg.workers = 1;
	cfg.policy = "shared";
	cfg.preempt_ns = quantum;
	if (th_runtime_start(&cfg) != 0) {
		fprintf(stderr, "preempt_cost: %s\n", th_last_error());
		exit(1);
	}
	struct th_spawn_opts o = { .preemptible = preemptible };
	double c0 = cpu_ns(), w0 = wall_ns();
	th_task *a = th_spawn_opts(spin, (void *)(intptr_t)work, &o);
	th_task *b = th_spawn_opts(spin, (void *)(intptr_t)work, &o);
	th_wait(a);
	th_wait(b);
	double c = cpu_ns() - c0;
	*wall = wall_ns() - w0;
	struct th_task_stats sa, sb;
	th_task_stats(a, &sa);
	th_task_stats(b, &sb);
	*preempted = sa.preempted + sb.preempted;
	th_task_free(a);
	th_task_free(b);
	th_runtime_stop();
	return c;
}

#define QUANTUM 100000 /* ns */

int main(int argc, char **argv)
{
	long work = argc > 1 ? atol(argv[1]) : 100000000;
	int reps = argc > 2 ? atoi(argv[2]) : 3;
	if (work < 1000000 || reps < 1 || reps > 100) {
		fprintf(stderr, "usage: preempt_cost [ITERATIONS >= 1e6 [REPS 1..100]]\n");
		return 2;
	}
	/* Alternate plain, ticking and preempted runs; the cheapest of each,
	 * since a busy machine only ever adds (cache and frequency effects). */
	double plain = 0, tick = 0, tick_wall = 0, pre = 0, wall;
	uint64_t n = 0, none;
	for (int r = 0; r < reps; r++) {
		double p = two_spinners(0, true, work, &none, &wall);
		double t = two_spinners(QUANTUM, false, work, &none, &wall);
		if (r == 0 || t < tick) {
			tick = t;
			tick_wall = wall;
		}
		uint64_t k;
		double q = two_spinners(QUANTUM, true, work, &k, &wall);
		if (r == 0 || p < plain)
			plain = p;
		if (r == 0 || q < pre) {
			pre = q;
			n = k;
		}
	}
	if (!n) {
		fprintf(stderr, "preempt_cost: no preemption happened\n");
		return 1;
	}
	printf("bench: preempt_cost_ns %.0f ns\n", (pre - plain) / (double)n);
	printf("# preempt_cost: %llu preemptions at a 100 us quantum; %.1f ms vs %.1f ms of CPU\n",
	       (unsigned long long)n, pre / 1e6, plain / 1e6);
	/* The share that is the kernel's alone: a tick every quantum of the
	 * wall time, none of which preempts (an estimate: ticks are counted
	 * from the wall time, so it needs the CPU to itself). */
	printf("bench: preempt_tick_only_ns %.0f ns\n", (tick - plain) / (tick_wall / QUANTUM));
	return 0;
}
