/* stats.h — the statistics of a report: {median, min, max, ci95} over repeats, and the SPT
 * lower bound on mean completion time that every policy is measured against. */
#ifndef TASKHOP_STATS_H
#define TASKHOP_STATS_H

#include <stdio.h>

#include "report/json.h"

struct stat_summary {
	int n;
	double median, min, max, mean;
	/* 95% confidence interval of the mean (Student t, n-1 degrees of freedom);
	 * [mean, mean] when n == 1. */
	double ci_lo, ci_hi;
};

/* Summarizes x[0..n) (n >= 1; the array is not modified). Returns 0, -1 if n < 1. */
int stats_summarize(const double *x, int n, struct stat_summary *out);
/* {"median":..,"min":..,"max":..,"ci95":[lo,hi],"mean":..,"n":..}; null when n == 0. */
struct json *stats_json(const double *x, int n);
/* Two-sided 97.5% quantile of Student's t with dof degrees of freedom (1.96 for large dof). */
double stats_t975(int dof);

/* Shortest-processing-time-first on `workers` identical machines with all tasks released at
 * time 0: the minimum possible mean completion time (optimal with or without preemption).
 * work[i] >= 0 are the tasks' processing times. Returns the mean completion; *makespan
 * (optional) gets the makespan of that schedule. n == 0 gives 0. */
double spt_mean_completion(const double *work, int n, int workers, double *makespan);

/* Log2 histograms, as bcc's runqlat: slot 0 holds [0, 1), slot k >= 1 holds
 * [2^(k-1), 2^k); the last slot also takes everything larger (to +inf). */
#define STATS_LOG2_SLOTS 65
/* The slot of v, or -1 when v is negative or NaN (not counted). */
int stats_log2_slot(double v);
/* The bounds [lo, hi) of a slot in [0, STATS_LOG2_SLOTS). */
void stats_log2_bounds(int slot, double *lo, double *hi);
/* Prints count[0..nslots) as runqlat does, from the first to the last non-empty slot:
 * "[lo, hi) count |****   |" under a header naming the unit; "(no data)" when empty. */
void stats_log2_print(FILE *f, const char *unit, const double *count, int nslots);

#endif
