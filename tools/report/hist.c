/* hist.c — per-policy distributions of run-queue wait and on-CPU time per run, summed from
 * the per-task log2 histograms of a report, printed as bcc's runqlat prints them. */
#include "report/hist.h"

#include <stdlib.h>
#include <string.h>

/* The key is the member's name (run_schema.h), checked by offsetof. */
#define HIST_KIND(member, what, log_y) { #member, offsetof(struct run_task, member), what, log_y }
const struct hist_kind hist_kinds[2] = {
	HIST_KIND(runq_wait_hist_us, "run-queue wait per run (sch-delay)", true),
	HIST_KIND(on_cpu_hist_us, "on-CPU time per run (run-time)", false),
};

static double run_sum(const struct run *r, const struct hist_kind *kind, double *count)
{
	double slices = 0;
	for (size_t k = 0; k < r->ntasks; k++) {
		const struct run_nums *h = (const struct run_nums *)((const char *)&r->tasks[k] + kind->off);
		for (size_t i = 0; i < h->n && i < STATS_LOG2_SLOTS; i++) {
			if (h->v[i] > 0) {
				count[i] += h->v[i];
				slices += h->v[i];
			}
		}
	}
	return slices;
}

double hist_sum_runs(const struct run *runs, size_t nruns, const char *policy,
		     const struct hist_kind *kind, double *count)
{
	double slices = 0;
	for (size_t r = 0; r < nruns; r++)
		if (!policy || (runs[r].policy && strcmp(runs[r].policy, policy) == 0))
			slices += run_sum(&runs[r], kind, count);
	return slices;
}

static void policy_text(const struct run *runs, size_t nruns, const char *policy, size_t n_of,
			FILE *f)
{
	for (int k = 0; k < 2; k++) {
		double count[STATS_LOG2_SLOTS] = { 0 };
		double n = hist_sum_runs(runs, nruns, policy, &hist_kinds[k], count);
		fprintf(f, "\n%s, policy %s: %.0f task runs in %zu run%s%s\n", hist_kinds[k].what,
			policy, n, n_of, n_of == 1 ? "" : "s", n ? "" : " (no BPF data)");
		if (n)
			stats_log2_print(f, "usecs", count, STATS_LOG2_SLOTS);
	}
}

static const char *policy_of(const struct run *r)
{
	return r->policy ? r->policy : "";
}

void hist_text_runs(const struct run *runs, size_t nruns, FILE *f)
{
	for (size_t r = 0; r < nruns; r++) {
		const char *p = policy_of(&runs[r]);
		size_t first = 0, n = 0;
		while (strcmp(policy_of(&runs[first]), p) != 0)
			first++;
		if (first != r)
			continue; /* not the policy's first run: printed already */
		for (size_t i = 0; i < nruns; i++)
			n += strcmp(policy_of(&runs[i]), p) == 0;
		policy_text(runs, nruns, p, n, f);
	}
}

/* JSON runs as structs (run_read_partial); a run it refuses is left empty. */
static struct run *read_runs(const struct json *runs, size_t n)
{
	struct run *r = calloc(n ? n : 1, sizeof(*r));
	char err[256];
	for (size_t i = 0; r && i < n; i++)
		if (run_read_partial(json_at(runs, i), &r[i], err, sizeof(err)))
			memset(&r[i], 0, sizeof(r[i]));
	return r;
}

static void free_runs(struct run *r, size_t n)
{
	for (size_t i = 0; r && i < n; i++)
		run_release(&r[i]);
	free(r);
}

double hist_sum(const struct json *runs, const char *policy, const char *field, double *count)
{
	const struct hist_kind *kind = NULL;
	for (int k = 0; k < 2; k++)
		if (strcmp(hist_kinds[k].field, field) == 0)
			kind = &hist_kinds[k];
	size_t n = json_len(runs);
	struct run *r = kind ? read_runs(runs, n) : NULL;
	double slices = r ? hist_sum_runs(r, n, policy, kind, count) : 0;
	free_runs(r, n);
	return slices;
}

void hist_text(const struct json *x, FILE *f)
{
	const struct json *runs = json_get(x, "runs");
	struct run one;
	char err[256];
	if (runs) {
		size_t n = json_len(runs);
		struct run *r = read_runs(runs, n);
		if (r)
			hist_text_runs(r, n, f);
		free_runs(r, n);
	} else if (run_read_partial(x, &one, err, sizeof(err)) == 0) { /* a single run */
		if (!one.policy)
			one.policy = "?";
		hist_text_runs(&one, 1, f);
		run_release(&one);
	} else {
		fprintf(f, "taskhop: the run cannot be shown: %s\n", err);
	}
}
