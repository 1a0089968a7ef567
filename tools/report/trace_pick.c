/* trace_pick.c — which run of each policy the timelines draw (trace.json, and the timeline
 * figures): report["timeline_seed"] names a seed, "all", or (absent, null, "median") the
 * median run of each policy, so that a picture shows a typical run, not a lucky one. */
#include "report/report.h"

#include <stdlib.h>
#include <string.h>

/* What a run is ranked by: its mean completion, or its wall time when it has none. */
static double rank_key(const struct json *run)
{
	const struct json *m = json_get(run, "mean_completion_s");
	return json_is_num(m) ? json_num_of(m) : json_get_num(run, "wall_s", 0);
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

int report_timeline_mode(const struct json *report, unsigned long long *seed)
{
	const struct json *v = json_get(report, "timeline_seed");
	if (json_type_of(v) == JSON_STR && strcmp(json_str_of(v), "all") == 0)
		return REPORT_PICK_ALL;
	if (json_is_num(v) && json_as_u64(v, seed))
		return REPORT_PICK_SEED;
	return REPORT_PICK_MEDIAN;
}

/* The lower median by rank_key of the policy's runs (ties: the earlier run). */
static const struct json *median_run(const struct json *runs, const char *policy, size_t *count)
{
	size_t n = json_len(runs), k = 0;
	struct ranked *r = malloc((n ? n : 1) * sizeof(*r));
	if (!r)
		return NULL;
	for (size_t i = 0; i < n; i++)
		if (strcmp(json_get_str(json_at(runs, i), "policy", ""), policy) == 0)
			r[k++] = (struct ranked){ rank_key(json_at(runs, i)), i };
	*count = k;
	const struct json *run = NULL;
	if (k) {
		qsort(r, k, sizeof(*r), by_key_then_index);
		run = json_at(runs, r[(k - 1) / 2].i);
	}
	free(r);
	return run;
}

const struct json *report_timeline_run(const struct json *report, const char *policy, char *why,
				       size_t len)
{
	const struct json *runs = json_get(report, "runs");
	unsigned long long seed = 0, s;
	size_t count = 0;
	if (report_timeline_mode(report, &seed) == REPORT_PICK_SEED) {
		for (size_t i = 0; i < json_len(runs); i++) {
			const struct json *run = json_at(runs, i);
			if (strcmp(json_get_str(run, "policy", ""), policy) == 0 &&
			    json_as_u64(json_get(run, "seed"), &s) && s == seed) {
				snprintf(why, len, "the run with seed %llu (--timeline-seed)", seed);
				return run;
			}
		}
		snprintf(why, len, "no run with seed %llu", seed);
		return NULL;
	}
	const struct json *run = median_run(runs, policy, &count);
	snprintf(why, len, "the median run of %zu by %s", count,
		 run && json_is_num(json_get(run, "mean_completion_s")) ? "mean completion" : "wall time");
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
	const struct json *runs = json_get(report, "runs");
	unsigned long long s;
	/* compare sets it before any run exists: its caller checked the range */
	bool found = json_len(runs) == 0;
	for (size_t i = 0; i < json_len(runs) && !found; i++)
		found = json_as_u64(json_get(json_at(runs, i), "seed"), &s) && s == seed;
	return found ? json_set_u64(report, "timeline_seed", seed) : -1;
}
