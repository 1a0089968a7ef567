/* stats.c — median/min/max/mean and the t-based 95% interval over repeats, and the SPT bound.
 * Repeats are few (5 by default), so the interval uses Student's t, not the normal 1.96. */
#include "report/stats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

double stats_t975(int dof)
{
	static const double t[] = { 0, 12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306,
		2.262, 2.228, 2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
		2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042 };
	if (dof < 1)
		return NAN;
	if (dof < (int)(sizeof(t) / sizeof(t[0])))
		return t[dof];
	if (dof <= 60)
		return 2.000;
	if (dof <= 120)
		return 1.980;
	return 1.960;
}

int stats_summarize(const double *x, int n, struct stat_summary *out)
{
	memset(out, 0, sizeof(*out));
	if (n < 1)
		return -1;
	double *s = malloc((size_t)n * sizeof(*s));
	if (!s)
		return -1;
	memcpy(s, x, (size_t)n * sizeof(*s));
	qsort(s, (size_t)n, sizeof(*s), cmp_double);
	out->n = n;
	out->min = s[0];
	out->max = s[n - 1];
	out->median = n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
	double sum = 0;
	for (int i = 0; i < n; i++)
		sum += s[i];
	out->mean = sum / n;
	double ss = 0;
	for (int i = 0; i < n; i++)
		ss += (s[i] - out->mean) * (s[i] - out->mean);
	double half = n > 1 ? stats_t975(n - 1) * sqrt(ss / (n - 1)) / sqrt(n) : 0;
	out->ci_lo = out->mean - half;
	out->ci_hi = out->mean + half;
	free(s);
	return 0;
}

struct json *stats_json(const double *x, int n)
{
	struct stat_summary st;
	if (n < 1 || stats_summarize(x, n, &st))
		return json_null();
	struct json *o = json_obj(), *ci = json_arr();
	json_set_num(o, "median", st.median);
	json_set_num(o, "min", st.min);
	json_set_num(o, "max", st.max);
	json_push(ci, json_num(st.ci_lo));
	json_push(ci, json_num(st.ci_hi));
	json_set(o, "ci95", ci);
	json_set_num(o, "mean", st.mean);
	json_set_num(o, "n", n);
	return o;
}

/* Why SPT in this form: with identical machines and all releases at 0, giving the next
 * shortest task to the machine that frees first yields the order that minimizes the sum
 * of completion times (Conway, Maxwell & Miller); preemption cannot do better. */
double spt_mean_completion(const double *work, int n, int workers, double *makespan)
{
	if (makespan)
		*makespan = 0;
	if (n <= 0 || workers <= 0)
		return 0;
	double *w = malloc((size_t)n * sizeof(*w));
	double *load = calloc((size_t)workers, sizeof(*load));
	if (!w || !load) {
		free(w);
		free(load);
		return NAN;
	}
	memcpy(w, work, (size_t)n * sizeof(*w));
	qsort(w, (size_t)n, sizeof(*w), cmp_double);
	double sum = 0, span = 0;
	for (int i = 0; i < n; i++) {
		int m = 0;
		for (int k = 1; k < workers; k++)
			if (load[k] < load[m])
				m = k;
		load[m] += w[i] > 0 ? w[i] : 0;
		sum += load[m];
		if (load[m] > span)
			span = load[m];
	}
	free(w);
	free(load);
	if (makespan)
		*makespan = span;
	return sum / n;
}

int stats_log2_slot(double v)
{
	if (!(v >= 0))
		return -1;
	if (v < 1)
		return 0;
	int e = ilogb(v); /* floor(log2 v) for finite v; INT_MAX for +inf */
	return e >= STATS_LOG2_SLOTS - 2 ? STATS_LOG2_SLOTS - 1 : e + 1;
}

void stats_log2_bounds(int slot, double *lo, double *hi)
{
	*lo = slot <= 0 ? 0 : ldexp(1, slot - 1);
	*hi = slot >= STATS_LOG2_SLOTS - 1 ? INFINITY : ldexp(1, slot);
}

void stats_log2_print(FILE *f, const char *unit, const double *count, int nslots)
{
	enum { BAR = 40 };
	int first = -1, last = -1;
	double max = 0;
	for (int i = 0; i < nslots; i++)
		if (count[i] > 0) {
			first = first < 0 ? i : first;
			last = i;
			max = count[i] > max ? count[i] : max;
		}
	fprintf(f, "%24s %10s  distribution\n", unit, "count");
	if (first < 0) {
		fprintf(f, "%24s\n", "(no data)");
		return;
	}
	for (int i = first; i <= last; i++) {
		char range[64];
		double lo, hi;
		stats_log2_bounds(i, &lo, &hi);
		snprintf(range, sizeof(range), "[%.0f, %.0f)", lo, hi);
		int stars = (int)(count[i] / max * BAR + 0.5);
		fprintf(f, "%24s %10.0f  |%-*.*s|\n", range, count[i], BAR, stars,
			"****************************************");
	}
}
