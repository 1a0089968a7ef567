/* rec_slowdown.c — `make bench`: what recording costs a workload: the yield micro-benchmark
 * (ns per yield) and a darts run (ms): off, run log only, recorder on (default), --usdt. */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../tests/lib/rec_darts.h"
#include "record.h"
#include "taskhop.h"

/* LOG: the runtime's run log alone (two clock reads per run), to separate its cost from
 * the recorder's (slot stores, tracepoint programs, ring-buffer thread, the join). */
enum mode { OFF, LOG, ON, USDT, NMODES };
static const char *mode_name[NMODES] = { "off", "runlog", "on", "usdt" };

#define REPEAT 9
#define YIELDS 100000

/* Starts the runtime (and the recorder unless OFF); returns the recorder or NULL. */
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
	if (m == OFF || m == LOG)
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

static uint64_t lost;

static void end(struct th_record *r)
{
	if (r) {
		th_record_stop(r);
		lost += th_record_lost_events(r);
		size_t n;
		th_record_tasks(r, &n); /* the join is part of what recording costs the user */
		th_record_close(r);
	}
	th_runtime_stop();
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

static double darts_once(const char *policy, enum mode m)
{
	struct rec_darts d;
	th_task *tasks[REC_DARTS_MAX];
	rec_darts_default(&d);
	d.short_draws *= 3;
	d.long_draws *= 3;
	struct th_record *r = begin(policy, m);
	uint64_t t0 = th_now_ns();
	int n = rec_darts_run(&d, tasks);
	double ms = (double)(th_now_ns() - t0) / 1e6;
	for (int i = 0; i < n; i++)
		th_task_free(tasks[i]);
	end(r);
	return ms;
}

static int dcmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static double med(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), dcmp);
	return v[n / 2];
}

int main(void)
{
	const char *why = th_record_unavailable();
	if (why) {
		fprintf(stderr, "rec_slowdown: %s\n", why);
		return 1;
	}
	double y[NMODES][REPEAT], d[2][NMODES][REPEAT], ym[NMODES], dm[2][NMODES], dmin[2][NMODES];
	const char *pol[2] = { "shared", "sticky" };
	/* interleaved, so that drift in the machine's load hits every mode alike */
	for (int i = 0; i < REPEAT; i++)
		for (int m = 0; m < NMODES; m++) {
			y[m][i] = yield_once((enum mode)m);
			for (int p = 0; p < 2; p++)
				d[p][m][i] = darts_once(pol[p], (enum mode)m);
		}
	for (int m = 0; m < NMODES; m++) {
		ym[m] = med(y[m], REPEAT);
		printf("bench: rec_yield_%s_ns %.1f ns/yield (median of %d)\n", mode_name[m], ym[m], REPEAT);
	}
	for (int m = 1; m < NMODES; m++)
		printf("bench: rec_yield_slowdown_%s_pct %.1f %%\n", mode_name[m], 100.0 * (ym[m] / ym[OFF] - 1));
	for (int p = 0; p < 2; p++) {
		for (int m = 0; m < NMODES; m++) {
			dm[p][m] = med(d[p][m], REPEAT); /* sorts: [0] is the min */
			dmin[p][m] = d[p][m][0];
			printf("bench: rec_darts_%s_%s_ms %.1f ms (median of %d; min %.1f)\n", pol[p],
			       mode_name[m], dm[p][m], REPEAT, dmin[p][m]);
		}
		for (int m = 1; m < NMODES; m++)
			printf("bench: rec_darts_%s_slowdown_%s_pct %.1f %% (of the medians; of the mins %.1f %%)\n",
			       pol[p], mode_name[m], 100.0 * (dm[p][m] / dm[p][OFF] - 1),
			       100.0 * (dmin[p][m] / dmin[p][OFF] - 1));
	}
	for (int m = 0; m < NMODES; m++)
		printf("bench: rec_darts_winner_%s %s policy\n", mode_name[m],
		       dm[0][m] <= dm[1][m] ? pol[0] : pol[1]);
	printf("bench: rec_lost_events %llu events\n", (unsigned long long)lost);
	return 0;
}
