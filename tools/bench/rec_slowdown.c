/* rec_slowdown.c — `make bench`: what recording costs a workload: the yield micro-benchmark
 * (ns per yield) and the darts workload (tools/workloads/darts.c): off, on, --usdt. */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "record.h"
#include "taskhop.h"
#include "workload.h"

/* RUNLOG: the runtime's run log alone (two clock reads per run), to separate its cost
 * from the recorder's own (slot stores, tracepoint programs, ring-buffer thread, join). */
enum mode { OFF, RUNLOG, ON, USDT, NMODES };
static const char *mode_name[NMODES] = { "off", "runlog", "on", "usdt" };

/* x 3 modes x every policy: each darts run loads a recorder (about 0.6 s). 3 took
 * make bench to 298-304 s on 2026-12-07 (this section 39 s of it); 2 keeps it under 5 minutes */
#define REPEAT 2
/* USDT runs once: each recording with USDT probes ends with about 2.2 s of the kernel
 * unregistering its 20 uprobes, one at a time (about 100 ms each, one RCU grace period
 * after another; closing them from parallel threads did not overlap them). A second
 * USDT repeat cost make bench 11 s, for figures (4-5 us a yield, a hundred times the
 * others) that one reading gives well enough. */
static int runs_of(int m)
{
	return m == USDT ? 1 : REPEAT;
}
#define YIELDS 100000
#define MAXPOL 8

extern const struct th_workload th_workload_darts;

static uint64_t lost;

/* Starts the runtime (and the recorder for ON/USDT); returns the recorder or NULL. */
static struct th_record *begin(const char *policy, enum mode m)
{
	struct th_config cfg;
	th_config_default(&cfg);
	cfg.policy = policy;
	cfg.workers = 2;
	cfg.run_log_cap = m == OFF ? 0 : (size_t)1 << 20;
	if (th_runtime_start(&cfg) != 0) {
		fprintf(stderr, "rec_slowdown: %s\n", th_last_error());
		exit(1);
	}
	if (m == OFF || m == RUNLOG)
		return NULL;
	struct th_record_opts o;
	th_record_opts_default(&o);
	o.usdt = m == USDT;
	struct th_record *r = th_record_open(&o);
	if (!r || th_record_attach_self(r) != 0 || th_record_start(r) != 0) {
		fprintf(stderr, "rec_slowdown: %s\n", th_record_error());
		exit(1);
	}
	return r;
}

static void end(struct th_record *r)
{
	if (r) {
		th_record_stop(r);
		lost += th_record_lost_events(r);
		th_record_close(r);
	}
	th_runtime_stop();
}

static uint64_t cpu_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void *yielder(void *arg)
{
	(void)arg;
	for (int i = 0; i < YIELDS; i++)
		th_yield();
	return NULL;
}

/* ns per yield: two sticky tasks on worker 0 taking turns. */
static double yield_once(enum mode m)
{
	struct th_record *r = begin("sticky", m);
	uint64_t t0 = th_now_ns();
	th_task *a = th_spawn_on(0, yielder, NULL), *b = th_spawn_on(0, yielder, NULL);
	th_wait(a);
	th_wait(b);
	double ns = (double)(th_now_ns() - t0) / (2.0 * YIELDS);
	th_task_free(a);
	th_task_free(b);
	end(r);
	return ns;
}

/* One darts run (20 x 1e6 + 1 x 1e8 draws): wall ms, process CPU ms (user + system, which
 * includes the BPF programs run on this process's context switches), and the tasks' mean
 * completion ms, the article's figure of merit for comparing policies. */
static void darts_once(const char *policy, enum mode m, double *wall, double *cpu, double *mean)
{
	static char params[256];
	char *args[] = { "--small", "1e6", "--large", "1e8" }, err[256];
	const struct th_workload *w = &th_workload_darts;
	w->defaults(params);
	for (int i = 0; i < 4; i++)
		if (w->parse(params, 4, args, &i, err, sizeof(err)) != 1)
			exit(1);
	struct wl_env env = { .workers = 2, .seed = 1, .policy = policy, .quiet = true };
	struct wl_result res;
	memset(&res, 0, sizeof(res));
	struct th_record *r = begin(policy, m);
	uint64_t t0 = th_now_ns(), c0 = cpu_ns();
	if (w->run(params, &env, &res, err, sizeof(err)) != 0) {
		fprintf(stderr, "rec_slowdown: darts: %s\n", err);
		exit(1);
	}
	*wall = (double)(th_now_ns() - t0) / 1e6;
	*cpu = (double)(cpu_ns() - c0) / 1e6;
	*mean = 0;
	for (size_t i = 0; i < res.ntasks; i++)
		*mean += res.tasks[i].completion_s * 1e3 / (double)res.ntasks;
	end(r);
	wl_result_free(&res);
}

static int dcmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static double med(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), dcmp);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2; /* of an even count: the middle two's mean */
}

static const enum mode darts_modes[] = { OFF, ON, USDT };

int main(void)
{
	const char *why = th_record_unavailable();
	if (why) {
		fprintf(stderr, "rec_slowdown: %s\n", why);
		return 1;
	}
	static double y[NMODES][REPEAT], ym[NMODES];
	static double dw[MAXPOL][NMODES][REPEAT], dc[MAXPOL][NMODES][REPEAT], dmc[MAXPOL][NMODES][REPEAT];
	double wm[MAXPOL][NMODES], cm[MAXPOL][NMODES], mm[MAXPOL][NMODES];
	const char *pol[MAXPOL];
	int np = 0;
	/* One policy that keeps tasks on their worker, one that moves them, and one
	 * where every task is a kernel thread: each darts run loads a recorder, and
	 * all seven policies x 3 modes x 3 repeats took 45 s of make bench's 300. */
	static const char *const darts_policies[] = { "sticky", "steal", "kthread" };
	for (size_t k = 0; k < sizeof(darts_policies) / sizeof(darts_policies[0]); k++)
		pol[np++] = darts_policies[k];

	/* interleaved, so that drift in the machine's load hits every mode alike */
	for (int i = 0; i < REPEAT; i++) {
		for (int m = 0; m < NMODES; m++)
			if (i < runs_of(m))
				y[m][i] = yield_once((enum mode)m);
		for (int p = 0; p < np; p++)
			for (size_t k = 0; k < sizeof(darts_modes) / sizeof(darts_modes[0]); k++) {
				enum mode m = darts_modes[k];
				if (i >= runs_of(m))
					continue;
				darts_once(pol[p], m, &dw[p][m][i], &dc[p][m][i], &dmc[p][m][i]);
			}
	}
	printf("# rec_slowdown: medians of %d runs (usdt: %d), 2 workers; darts = 20 x 1e6 + 1 x 1e8 "
	       "draws; cpu = process user+system time\n", REPEAT, runs_of(USDT));
	for (int m = 0; m < NMODES; m++) {
		ym[m] = med(y[m], runs_of(m));
		printf("bench: rec_yield_%s_ns %.1f ns/yield\n", mode_name[m], ym[m]);
	}
	for (int m = 1; m < NMODES; m++)
		printf("bench: rec_yield_slowdown_%s_pct %.1f %%\n", mode_name[m], 100.0 * (ym[m] / ym[OFF] - 1));
	for (int p = 0; p < np; p++) {
		for (size_t k = 0; k < sizeof(darts_modes) / sizeof(darts_modes[0]); k++) {
			enum mode m = darts_modes[k];
			wm[p][m] = med(dw[p][m], runs_of(m));
			cm[p][m] = med(dc[p][m], runs_of(m));
			mm[p][m] = med(dmc[p][m], runs_of(m));
			printf("bench: rec_darts_%s_%s_wall_ms %.1f ms\n", pol[p], mode_name[m], wm[p][m]);
			printf("bench: rec_darts_%s_%s_cpu_ms %.1f ms\n", pol[p], mode_name[m], cm[p][m]);
			printf("bench: rec_darts_%s_%s_mean_completion_ms %.1f ms\n", pol[p], mode_name[m], mm[p][m]);
		}
		for (int m = ON; m <= USDT; m++) {
			printf("bench: rec_darts_%s_slowdown_%s_wall_pct %.1f %%\n", pol[p], mode_name[m],
			       100.0 * (wm[p][m] / wm[p][OFF] - 1));
			printf("bench: rec_darts_%s_slowdown_%s_cpu_pct %.1f %%\n", pol[p], mode_name[m],
			       100.0 * (cm[p][m] / cm[p][OFF] - 1));
		}
	}
	/* the comparison `taskhop compare darts` makes: order of the policies by mean completion */
	int order_off[MAXPOL];
	for (int m = OFF; m <= USDT; m++) {
		if (m == RUNLOG)
			continue;
		int order[MAXPOL];
		for (int p = 0; p < np; p++)
			order[p] = p;
		for (int a = 0; a < np; a++)
			for (int b = a + 1; b < np; b++)
				if (mm[order[b]][m] < mm[order[a]][m]) {
					int t = order[a];
					order[a] = order[b];
					order[b] = t;
				}
		printf("# rec_darts policy order by mean completion, recording %s:", mode_name[m]);
		for (int p = 0; p < np; p++)
			printf("%s%s", p ? " < " : " ", pol[order[p]]);
		printf("\n");
		if (m == OFF) {
			memcpy(order_off, order, sizeof(order));
			continue;
		}
		printf("bench: rec_darts_same_winner_%s %d bool\n", mode_name[m], order[0] == order_off[0]);
		printf("bench: rec_darts_same_order_%s %d bool\n", mode_name[m],
		       memcmp(order, order_off, (size_t)np * sizeof(int)) == 0);
	}
	printf("bench: rec_lost_events %llu events\n", (unsigned long long)lost);
	return 0;
}
