/* hist.c — per-policy distributions of run-queue wait and on-CPU time per run, summed from
 * the per-task log2 histograms of a report, printed as bcc's runqlat prints them. */
#include "report/hist.h"

#include <string.h>

const struct hist_kind hist_kinds[2] = {
	{ "runq_wait_hist_us", "run-queue wait per run (sch-delay)", true },
	{ "on_cpu_hist_us", "on-CPU time per run (run-time)", false },
};

static double run_sum(const struct json *run, const char *field, double *count)
{
	const struct json *tasks = json_get(run, "tasks");
	double slices = 0;
	for (size_t k = 0; k < json_len(tasks); k++) {
		const struct json *h = json_get(json_at(tasks, k), field);
		for (size_t i = 0; i < json_len(h) && i < STATS_LOG2_SLOTS; i++) {
			double x = json_is_num(json_at(h, i)) ? json_num_of(json_at(h, i)) : 0;
			if (x > 0) {
				count[i] += x;
				slices += x;
			}
		}
	}
	return slices;
}

double hist_sum(const struct json *runs, const char *policy, const char *field, double *count)
{
	double slices = 0;
	for (size_t r = 0; r < json_len(runs); r++) {
		const struct json *run = json_at(runs, r);
		if (!policy || strcmp(json_get_str(run, "policy", ""), policy) == 0)
			slices += run_sum(run, field, count);
	}
	return slices;
}

static void policy_text(const struct json *runs, const char *policy, size_t nruns, FILE *f)
{
	for (int k = 0; k < 2; k++) {
		double count[STATS_LOG2_SLOTS] = { 0 };
		double n = hist_sum(runs, policy, hist_kinds[k].field, count);
		fprintf(f, "\n%s, policy %s: %.0f task runs in %zu run%s%s\n", hist_kinds[k].what,
			policy, n, nruns, nruns == 1 ? "" : "s", n ? "" : " (no BPF data)");
		if (n)
			stats_log2_print(f, "usecs", count, STATS_LOG2_SLOTS);
	}
}

void hist_text(const struct json *x, FILE *f)
{
	const struct json *runs = json_get(x, "runs");
	if (!runs) { /* a single run: its own policy */
		struct json *one = json_arr();
		json_push(one, json_clone(x));
		policy_text(one, json_get_str(x, "policy", "?"), 1, f);
		json_free(one);
		return;
	}
	for (size_t r = 0; r < json_len(runs); r++) {
		const char *p = json_get_str(json_at(runs, r), "policy", "");
		size_t first = 0, n = 0;
		while (strcmp(json_get_str(json_at(runs, first), "policy", ""), p) != 0)
			first++;
		if (first != r)
			continue; /* not the policy's first run: printed already */
		for (size_t i = 0; i < json_len(runs); i++)
			n += strcmp(json_get_str(json_at(runs, i), "policy", ""), p) == 0;
		policy_text(runs, p, n, f);
	}
}
