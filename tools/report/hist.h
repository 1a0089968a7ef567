/* hist.h — distributions over run slices in a report: per policy, log2 histograms of each
 * run's run-queue wait and on-CPU time (the tasks' runq_wait_hist_us / on_cpu_hist_us). */
#ifndef TASKHOP_HIST_H
#define TASKHOP_HIST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "report/json.h"
#include "report/run.h"
#include "report/stats.h"

/* The two distributions, by task field, with what they measure. */
struct hist_kind {
	const char *field; /* "runq_wait_hist_us" */
	size_t off;        /* of its struct run_nums in struct run_task */
	const char *what;  /* "run-queue wait per run" */
	bool log_y;        /* figure: share on a log scale (most runs wait 0) */
};
extern const struct hist_kind hist_kinds[2];

/* Adds the task histograms of `kind` of every run of `policy` (NULL: every run) to
 * count[STATS_LOG2_SLOTS]. Returns the run slices counted (0: no BPF data). */
double hist_sum_runs(const struct run *runs, size_t nruns, const char *policy,
		     const struct hist_kind *kind, double *count);
/* The same from JSON runs (each read as run_read_partial reads; a run it refuses counts
 * nothing); field names the kind. */
double hist_sum(const struct json *runs, const char *policy, const char *field, double *count);

/* `--hist`: per policy, both distributions as runqlat prints them. */
void hist_text_runs(const struct run *runs, size_t nruns, FILE *f);
/* The same from JSON: a report (its runs[]) or a single run (an object with tasks[]). */
void hist_text(const struct json *report_or_run, FILE *f);

#endif
