/* hist.h — distributions over run slices in a report: per policy, log2 histograms of each
 * run's run-queue wait and on-CPU time (the tasks' runq_wait_hist_us / on_cpu_hist_us). */
#ifndef TASKHOP_HIST_H
#define TASKHOP_HIST_H

#include <stdbool.h>
#include <stdio.h>

#include "report/json.h"
#include "report/stats.h"

/* The two distributions, by task field, with what they measure. */
struct hist_kind {
	const char *field; /* "runq_wait_hist_us" */
	const char *what;  /* "run-queue wait per run" */
	bool log_y;        /* figure: share on a log scale (most runs wait 0) */
};
extern const struct hist_kind hist_kinds[2];

/* Adds the task histograms `field` of every run of `policy` (NULL: every run) to
 * count[STATS_LOG2_SLOTS]. Returns the run slices counted (0: no BPF data). A validated
 * report only (validate.c bounds each array and count). */
double hist_sum(const struct json *runs, const char *policy, const char *field, double *count);

/* `--hist`: per policy, both distributions as runqlat prints them. Takes a report (its
 * runs[]) or a single run (an object with tasks[]). */
void hist_text(const struct json *report_or_run, FILE *f);

#endif
