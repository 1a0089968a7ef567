/* trace_pick.c — which run of each policy the timelines draw (trace.json, and the timeline
 * figures): report["timeline_seed"] names a seed, "all", or (absent, null, "median") the
 * median run of each policy, so that a picture shows a typical run, not a lucky one. */
#include "report/report.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "report/run.h"

/* What a run is ranked by: its mean completion, or its wall time when it has none. */
static double rank_key(const struct run *run)
{
	if (!isnan(run->mean_completion_s))
		return run->mean_completion_s;
	return isnan(run->wall_s) ? 0 : run->wall_s;
}

struct ranked {
	double key;
	size_t i;
};

static int by_key_then_index(const void *a, const void *b)
{
	const struct ranked *x = a, *y = b;
	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	return x->i < y->i ? -1 : x->i > y->i;
}

/* The lower median by rank_key of the policy's runs (ties: the earlier run). */
static const struct run *median_run(const struct report_view *v, const char *policy, size_t *count)
{
	size_t n = v->nruns, k = 0;
	struct ranked *r = malloc((n ? n : 1) * sizeof(*r));
	if (!r)
		return NULL;
	for (size_t i = 0; i < n; i++)
		if (strcmp(v->runs[i].policy, policy) == 0)
			r[k++] = (struct ranked){ rank_key(&v->runs[i]), i };
	*count = k;
	const struct run *run = NULL;
	if (k) {
		qsort(r, k, sizeof(*r), by_key_then_index);
		run = &v->runs[r[(k - 1) / 2].i];
	}
	free(r);
	return run;
}

const struct run *report_timeline_run(const struct report_view *v, const char *policy, char *why,
				      size_t len)
{
	size_t count = 0;
	if (v->timeline_mode == REPORT_PICK_SEED) {
		for (size_t i = 0; i < v->nruns; i++) {
			const struct run *run = &v->runs[i];
			if (strcmp(run->policy, policy) == 0 && run->seed.known && run->seed.v == v->timeline_seed) {
				snprintf(why, len, "the run with seed %llu (--timeline-seed)", v->timeline_seed);
				return run;
			}
		}
		snprintf(why, len, "no run with seed %llu", v->timeline_seed);
		return NULL;
	}
	const struct run *run = median_run(v, policy, &count);
	snprintf(why, len, "the median run of %zu by %s", count,
		 run && !isnan(run->mean_completion_s) ? "mean completion" : "wall time");
	return run;
}

int report_set_timeline_color(struct json *report, const char *color)
{
	if (strcmp(color, "worker") != 0 && strcmp(color, "cpu") != 0)
		return -1;
	return json_set_str(report, "timeline_color", color);
}

int report_set_timeline_seed(struct json *report, bool all, unsigned long long seed)
{
	if (all)
		return json_set_str(report, "timeline_seed", "all");
	struct report_view v;
	char err[256];
	if (report_view_read_partial(report, &v, err, sizeof(err)))
		return -1;
	/* compare sets it before any run exists: its caller checked the range */
	bool found = v.nruns == 0;
	for (size_t i = 0; i < v.nruns && !found; i++)
		found = v.runs[i].seed.known && v.runs[i].seed.v == seed;
	report_view_free(&v);
	return found ? json_set_u64(report, "timeline_seed", seed) : -1;
}
