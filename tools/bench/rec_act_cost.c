/* rec_act_cost.c — `make bench`: what bpf activations cost when nothing blocks, read
 * off the kernel's own count of the activation program's runs and run time (BPF
 * run-time statistics), beside the wall figure of activations.sh. */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "../../tests/lib/rec_darts.h"
#include "act_monitor.h"
#include "record.h"
#include "taskhop.h"

/* Why this figure: the issue asks that darts with activations bpf take within 1 %
 * of its time with them off. One darts run's mean completion moves by +-20 % from
 * one run to the next on this VM, the back-to-back bpf/off pairs of activations.sh
 * too (0.75 to 1.41 seen), so the wall ratio cannot resolve 1 %. What bpf adds
 * when nothing blocks is the program run at every context switch on the machine
 * (tp_btf/sched_switch, for every thread of every process), plus a few stores a
 * yield (yield_ns_activations_bpf_over_off). The kernel counts the first exactly. */

/* One run a policy: the figure is a rate (0.004 % in each of 3 runs of 2026-12-07),
 * and make bench has 5 minutes in all. */

static double clock_ns(clockid_t id)
{
	struct timespec ts;
	clock_gettime(id, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

struct reading {
	double wall_ns, cpu_ns;         /* the darts run: wall, this process's CPU */
	unsigned long long runs, bpf_ns; /* the activation program over that run */
};

/* One darts run (20 x 1e7 + 1 x 1e8 draws, as activations.sh's idle figure) under
 * policy with activations bpf, the program's statistics taken around it. */
static struct reading darts_bpf(const char *policy)
{
	struct th_config cfg;
	th_config_default(&cfg);
	cfg.policy = policy;
	cfg.workers = 2;
	cfg.activations = TH_ACT_BPF;
	th_set_activation_backend(&rec_act_backend);
	if (th_runtime_start(&cfg) != 0) {
		fprintf(stderr, "rec_act_cost: %s\n", th_last_error());
		exit(1);
	}
	struct rec_darts d;
	rec_darts_default(&d);
	d.short_draws = 10000000;
	d.long_draws = 100000000;
	th_task *tasks[REC_DARTS_MAX];
	struct reading r = { 0 };
	unsigned long long runs0, ns0;
	if (rec_act_prog_stats(&runs0, &ns0) != 0) {
		fprintf(stderr, "rec_act_cost: the activation program is not loaded\n");
		exit(1);
	}
	double w0 = clock_ns(CLOCK_MONOTONIC), c0 = clock_ns(CLOCK_PROCESS_CPUTIME_ID);
	int n = rec_darts_run(&d, tasks);
	r.wall_ns = clock_ns(CLOCK_MONOTONIC) - w0;
	r.cpu_ns = clock_ns(CLOCK_PROCESS_CPUTIME_ID) - c0;
	if (n < 0 || rec_act_prog_stats(&r.runs, &r.bpf_ns) != 0) {
		fprintf(stderr, "rec_act_cost: darts failed\n");
		exit(1);
	}
	r.runs -= runs0;
	r.bpf_ns -= ns0;
	for (int i = 0; i < n; i++)
		th_task_free(tasks[i]);
	th_runtime_stop();
	return r;
}

int main(void)
{
	const char *why = th_record_unavailable();
	if (why) {
		fprintf(stderr, "rec_act_cost: %s\n", why);
		return 1;
	}
	int stats = bpf_enable_stats(BPF_STATS_RUN_TIME); /* counts while this fd is open */
	if (stats < 0) {
		fprintf(stderr, "rec_act_cost: cannot enable BPF run-time statistics\n");
		return 1;
	}
	static const char *const policies[] = { "steal", "shared" };
	for (size_t p = 0; p < sizeof(policies) / sizeof(policies[0]); p++) {
		struct reading r = darts_bpf(policies[p]);
		printf("bench: activations_idle_bpf_prog_cpu_pct_%s %.4f %% (of the run's CPU time)\n", policies[p],
		       100.0 * (double)r.bpf_ns / r.cpu_ns);
		printf("#   %s: a darts run with activations bpf: %.2f s wall, %.2f s CPU, the program ran %llu "
		       "times (%.0f a second), %.0f ns a run\n",
		       policies[p], r.wall_ns / 1e9, r.cpu_ns / 1e9, r.runs, (double)r.runs / (r.wall_ns / 1e9),
		       r.runs ? (double)r.bpf_ns / (double)r.runs : 0.0);
	}
	close(stats);
	return 0;
}
