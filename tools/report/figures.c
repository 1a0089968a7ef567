/* figures.c — the report's SVG figures, drawn by gnuplot from the report JSON: return times
 * per task, per-task hops and CPU migrations per policy, time and speedup vs serial. */
#include "report/report.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "report/hist.h"
#include "report/run.h"
#include "workload.h"

/* Policy colours, in the order policies first appear (colour-blind safe, Tol's palette). */
static const char *const palette[] = { "#4477aa", "#ee6677", "#228833", "#ccbb44",
				       "#66ccee", "#aa3377", "#bbbbbb", "#000000" };

const char *report_policy_colour(int i)
{
	return palette[i % (int)(sizeof(palette) / sizeof(palette[0]))];
}

/* A growing text buffer for scripts (open_memstream keeps this short). */
struct sbuf {
	char *s;
	size_t len;
	FILE *f;
};

static int sb_open(struct sbuf *b)
{
	b->s = NULL;
	b->len = 0;
	b->f = open_memstream(&b->s, &b->len);
	return b->f ? 0 : -1;
}

static char *sb_close(struct sbuf *b)
{
	fclose(b->f);
	return b->s;
}

static void add_fig(struct report_figs *figs, const char *name, const char *title)
{
	if (figs->n >= 16)
		return;
	snprintf(figs->names[figs->n], sizeof(figs->names[0]), "%s", name);
	snprintf(figs->titles[figs->n], sizeof(figs->titles[0]), "%s", title);
	figs->n++;
}

/* Where a figure that could not be written says why (the whole report then fails). */
struct fig_err {
	char *err;
	size_t errlen;
};

/* 1 drawn, 0 skipped (gnuplot could not draw it), -1 not written (err set). */
static int draw(const char *dir, const char *name, int w, int h, char *script,
		struct report_figs *figs, const char *title, struct fig_err *fe)
{
	char err[512] = "";
	int rc = fig_gnuplot(dir, name, w, h, script, err, sizeof(err));
	free(script);
	if (rc == FIG_WRITE_FAILED) {
		snprintf(fe->err, fe->errlen, "%s", err);
		return -1;
	}
	if (rc) {
		fprintf(stderr, "taskhop: figure %s skipped: %s\n", name, err);
		return 0;
	}
	add_fig(figs, name, title);
	return 1;
}

/* A title made from report strings: formatted, then quoted as one literal, and drawn as
 * plain text (enhanced mode would read '_' or '^' in a name as markup). */
static void quoted_title(FILE *f, const char *before, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void quoted_title(FILE *f, const char *before, const char *fmt, ...)
{
	char text[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	fputs(before, f);
	fig_quote(f, text);
	fputs(" noenhanced\n", f);
}

/* A series title: a policy name. */
static void key_title(FILE *f, const char *name)
{
	fputs("title ", f);
	fig_quote(f, name);
	fputs(" noenhanced", f);
}

/* Whether any run of the policy has tasks (a serial baseline has none: nothing to draw). */
static bool has_tasks(const struct report_view *v, const char *policy)
{
	for (size_t r = 0; r < v->nruns; r++)
		if (strcmp(v->runs[r].policy, policy) == 0 && v->runs[r].ntasks)
			return true;
	return false;
}

/* The task with the largest size `n` in a run (darts' long task), or -1 when the
 * sizes are equal or absent: it gets a label in the return-time plot. */
static long long_task_index(const struct run *run)
{
	long best = -1;
	double most = 0, least = INFINITY;
	for (size_t k = 0; k < run->ntasks; k++) {
		double n = run->tasks[k].n;
		if (isnan(n))
			return -1;
		if (n > most) {
			most = n;
			best = (long)k;
		}
		least = n < least ? n : least;
	}
	return most > least ? best : -1;
}

/* 1. The article's return-time plot as a strip plot: each task's completion time as a point,
 * one colour per policy, the policies side by side within a task (no line joins task
 * numbers: they are not a sequence), and the long task labelled. */
static const char *workload_of(const struct report_view *v)
{
	return v->workload ? v->workload : "?";
}

static int fig_returns(const struct report_view *v, const char *dir, struct report_figs *figs,
		       struct fig_err *fe)
{
	const struct json *pols = json_get(v->json, "policies");
	size_t np = json_len(pols);
	struct sbuf b;
	if (sb_open(&b))
		return 0;
	quoted_title(b.f, "set title ", "Return time of each task (%s): one point per task per run",
		     workload_of(v));
	fprintf(b.f, "set xlabel 'task number (t0: the start of the run, just before its first spawn)'\n"
		     "set ylabel 'completion time since t0 (s)'\n"
		     "set key outside right top\nset grid ytics\nset xtics 1 out nomirror\n"
		     "set yrange [0:*]\n");
	long long_task = -1;
	size_t ntasks = 0;
	double long_top = 0;
	for (size_t p = 0; p < np; p++) {
		/* policy p's points sit at task + an offset, so policies do not hide each other */
		double off = np > 1 ? -0.3 + 0.6 * (double)p / (double)(np - 1) : 0;
		fprintf(b.f, "$p%zu << EOD\n", p);
		for (size_t r = 0; r < v->nruns; r++) {
			const struct run *run = &v->runs[r];
			if (strcmp(run->policy, json_key_at(pols, p)) != 0)
				continue;
			long lt = long_task_index(run);
			ntasks = run->ntasks > ntasks ? run->ntasks : ntasks;
			if (lt >= 0)
				long_task = lt;
			for (size_t k = 0; k < run->ntasks; k++) {
				double c = run->tasks[k].completion_s;
				if ((long)k == lt && c > long_top)
					long_top = c;
				fprintf(b.f, "%.3f %.6f\n", (double)(k + 1) + off, c);
			}
		}
		fprintf(b.f, "EOD\n");
	}
	fprintf(b.f, "set xrange [0.4:%zu.6]\nset xtics 1, 1, %zu\n", ntasks, ntasks ? ntasks : 1);
	if (long_task >= 0 && long_top > 0)
		fprintf(b.f, "set label 1 'long task' at %ld, graph 0.97 center\n"
			     "set arrow 1 from %ld, graph 0.94 to %ld, first %.6f lc rgb '#555555'\n",
			long_task + 1, long_task + 1, long_task + 1, long_top * 1.02);
	fprintf(b.f, "plot ");
	bool first = true;
	for (size_t p = 0; p < np; p++) {
		if (!has_tasks(v, json_key_at(pols, p)))
			continue;
		fprintf(b.f, "%s$p%zu using 1:2 with points pt 7 ps 0.6 lc rgb '%s' ", first ? "" : ", ", p,
			report_policy_colour((int)p));
		key_title(b.f, json_key_at(pols, p));
		first = false;
	}
	fprintf(b.f, "\n");
	return draw(dir, "returns.svg", 900, 520, sb_close(&b), figs,
		    "Return time of each task (the article's figure), every run of every policy", fe);
}

/* Median, min and max of a task field at task index k over the runs of one policy;
 * false (and NANs) if no run has it. */
struct spread {
	double median, min, max;
};

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* field: the offset of a number in struct run_task */
static bool task_spread(const struct report_view *v, const char *policy, size_t k, size_t field,
			struct spread *out)
{
	double x[256];
	int n = 0;
	for (size_t r = 0; r < v->nruns && n < 256; r++) {
		const struct run *run = &v->runs[r];
		if (strcmp(run->policy, policy) != 0 || k >= run->ntasks)
			continue;
		double y = *(const double *)((const char *)&run->tasks[k] + field);
		if (!isnan(y))
			x[n++] = y;
	}
	*out = (struct spread){ NAN, NAN, NAN };
	if (!n)
		return false;
	qsort(x, (size_t)n, sizeof(x[0]), cmp_double);
	*out = (struct spread){ n % 2 ? x[n / 2] : (x[n / 2 - 1] + x[n / 2]) / 2, x[0], x[n - 1] };
	return true;
}

/* One panel: per task and policy a bar at the median over repeats with a min-max whisker;
 * the y axis has headroom above the tallest whisker, integer ticks, and starts a little
 * below 0 so that a zero bar still shows as a line. */
static void migr_panel(FILE *f, const struct report_view *v, const struct json *pols, size_t ntasks,
		       size_t field, const char *ylabel, const char *block)
{
	bool any = false;
	double top = 0;
	fprintf(f, "%s << EOD\n", block);
	for (size_t k = 0; k < ntasks; k++) {
		fprintf(f, "%zu", k + 1);
		for (size_t p = 0; p < json_len(pols); p++) {
			struct spread sp;
			if (task_spread(v, json_key_at(pols, p), k, field, &sp)) {
				any = true;
				top = sp.max > top ? sp.max : top;
				fprintf(f, " %.2f %.2f %.2f", sp.median, sp.min, sp.max);
			} else {
				fprintf(f, " NaN NaN NaN");
			}
		}
		fprintf(f, "\n");
	}
	fprintf(f, "EOD\nset ylabel '%s'\n", ylabel);
	if (!any) {
		fprintf(f, "unset key\nset label 1 'no BPF data in this report (recorded with --no-bpf "
			   "or without privileges)' at graph 0.5, graph 0.5 center\n"
			   "plot [0:1][0:1] NaN notitle\nunset label 1\nset key\n");
		return;
	}
	double step = top <= 6 ? 1 : ceil(top / 6);
	double high = (floor(top * 1.2 / step) + 1) * step;
	fprintf(f, "set yrange [%.3f:%.3f]\nset ytics 0, %.0f\nset format y '%%.0f'\nplot ", -high * 0.03,
		high, step);
	bool first = true;
	for (size_t p = 0; p < json_len(pols); p++) {
		if (!has_tasks(v, json_key_at(pols, p)))
			continue;
		fprintf(f, "%s%s using %zu:%zu:%zu%s lc rgb '%s' ", first ? "" : ", ", block, 3 * p + 2,
			3 * p + 3, 3 * p + 4, first ? ":xtic(1)" : "", report_policy_colour((int)p));
		key_title(f, json_key_at(pols, p));
		first = false;
	}
	fprintf(f, "\n");
}

/* 3. Per-task worker hops and CPU migrations (median over repeats, min-max whiskers), per policy. */
/* The most tasks of one run. */
static size_t max_tasks(const struct report_view *v)
{
	size_t n = 0;
	for (size_t r = 0; r < v->nruns; r++)
		n = v->runs[r].ntasks > n ? v->runs[r].ntasks : n;
	return n;
}

static int fig_migrations(const struct report_view *v, const char *dir, struct report_figs *figs,
			  struct fig_err *fe)
{
	const struct json *pols = json_get(v->json, "policies");
	size_t ntasks = max_tasks(v);
	if (!ntasks)
		return 0;
	struct sbuf b;
	if (sb_open(&b))
		return 0;
	fprintf(b.f, "set style data histograms\nset style histogram errorbars gap 1 lw 1\n"
		     "set style fill solid 0.85 border -1\nset grid ytics\nset key outside right top\n"
		     "set xlabel 'task number'\n"
		     "set multiplot layout 2,1 title 'Per task: bar = median over repeats, whisker = min to max'\n");
	migr_panel(b.f, v, pols, ntasks, offsetof(struct run_task, worker_hops),
		   "worker hops (user scheduler)", "$hops");
	migr_panel(b.f, v, pols, ntasks, offsetof(struct run_task, cpu_migrations),
		   "CPU migrations (kernel data)", "$migr");
	fprintf(b.f, "unset multiplot\n");
	return draw(dir, "migrations.svg", 900, 640, sb_close(&b), figs,
		    "Worker hops and CPU migrations per task, per policy", fe);
}

/* 4. Time and speedup vs the serial baseline (workloads with a baseline option). */
static int fig_speedup(const struct report_view *v, const char *dir, struct report_figs *figs,
		       struct fig_err *fe)
{
	const struct json *pols = json_get(v->json, "policies");
	const struct json *serial = json_get(json_get(pols, REPORT_SERIAL), REPORT_METRIC_WALL);
	double base = json_get_num(serial, "median", NAN);
	if (!(base > 0))
		return 0;
	double workers = v->nruns ? v->runs[0].worker_count : 1;
	for (size_t r = 0; r < v->nruns; r++)
		if (strcmp(v->runs[r].policy, REPORT_SERIAL) != 0)
			workers = v->runs[r].worker_count;
	struct sbuf b;
	if (sb_open(&b))
		return 0;
	/* numbers only in the block; the policy names label the x axis through quoted tics */
	fprintf(b.f, "$t << EOD\n");
	for (size_t p = 0; p < json_len(pols); p++) {
		const struct json *w = json_get(json_at(pols, p), REPORT_METRIC_WALL);
		double med = json_get_num(w, "median", NAN);
		fprintf(b.f, "%zu %zu %.6f %.6f %.6f %.4f\n", p, p, med,
			json_get_num(w, "min", NAN), json_get_num(w, "max", NAN), base / med);
	}
	fprintf(b.f, "EOD\nset xtics noenhanced\nset xtics (");
	for (size_t p = 0; p < json_len(pols); p++) {
		fig_quote(b.f, json_key_at(pols, p));
		fprintf(b.f, " %zu%s", p, p + 1 < json_len(pols) ? ", " : ")\n");
	}
	fprintf(b.f, "set style fill solid 0.8 border -1\nset boxwidth 0.6\nset grid ytics\n"
		     "set yrange [0:*]\nset xrange [-0.6:%zu.6]\nunset key\n", json_len(pols) - 1);
	quoted_title(b.f, "set multiplot layout 1,2 title ", "%s: time and speedup vs serial, %.0f workers",
		     workload_of(v), workers);
	fprintf(b.f, "set ylabel 'wall time (s), median and [min, max]'\n"
		     "plot $t using 1:3 with boxes lc rgb '#4477aa', "
		     "$t using 1:3:4:5 with yerrorbars lc rgb 'black' pt -1\n");
	fprintf(b.f, "set ylabel 'speedup over serial (median times)'\nset key top left\n"
		     "set yrange [0:%.2f]\n", workers * 1.2);
	fprintf(b.f,
		     "plot $t using 1:6 with boxes lc rgb '#228833' notitle, "
		     "$t using 1:6:(sprintf('%%.2f', $6)) with labels offset 0,0.7 notitle, "
		     "%.0f with lines dt 2 lc rgb 'black' title 'ideal (%.0f workers)'\n"
		     "unset multiplot\n", workers, workers);
	return draw(dir, "speedup.svg", 900, 420, sb_close(&b), figs,
		    "Time and speedup vs serial", fe);
}

/* A slot's lower bound in µs as a short tic label: 0, 1, 2, ... 512, 1K, ... (K = 1024). */
static void slot_label(char *buf, size_t len, int slot)
{
	double lo, hi;
	stats_log2_bounds(slot, &lo, &hi);
	if (lo >= 1073741824.0)
		snprintf(buf, len, "%.0fG", lo / 1073741824.0);
	else if (lo >= 1048576)
		snprintf(buf, len, "%.0fM", lo / 1048576);
	else if (lo >= 1024)
		snprintf(buf, len, "%.0fK", lo / 1024);
	else
		snprintf(buf, len, "%.0f", lo);
}

/* The smallest non-zero share (%) of a policy's runs in one slot; 100 when none. */
static double min_share(const double (*count)[STATS_LOG2_SLOTS], const double *n, size_t np)
{
	double m = 100;
	for (size_t p = 0; p < np; p++)
		for (int i = 0; n[p] > 0 && i < STATS_LOG2_SLOTS; i++)
			if (count[p][i] > 0 && 100 * count[p][i] / n[p] < m)
				m = 100 * count[p][i] / n[p];
	return m;
}

/* One panel: per slot, the share (%) of each policy's task runs in it, as clustered bars.
 * Returns false when no policy has data for this kind. */
static bool hist_panel(FILE *f, const struct report_view *v, const struct json *pols,
		       const struct hist_kind *kind, const char *block)
{
	size_t np = json_len(pols);
	double (*count)[STATS_LOG2_SLOTS] = calloc(np ? np : 1, sizeof(*count));
	double *n = calloc(np ? np : 1, sizeof(*n));
	int first = STATS_LOG2_SLOTS, last = -1;
	for (size_t p = 0; count && n && p < np; p++) {
		n[p] = hist_sum_runs(v->runs, v->nruns, json_key_at(pols, p), kind, count[p]);
		for (int i = 0; i < STATS_LOG2_SLOTS; i++)
			if (count[p][i] > 0) {
				first = i < first ? i : first;
				last = i > last ? i : last;
			}
	}
	if (last >= 0) {
		fprintf(f, "%s << EOD\n", block);
		for (int i = first; i <= last; i++) {
			fprintf(f, "%d", i - first);
			for (size_t p = 0; p < np; p++) {
				if (n[p] > 0)
					fprintf(f, " %.4f", 100 * count[p][i] / n[p]);
				else
					fprintf(f, " NaN");
			}
			fprintf(f, "\n");
		}
		fprintf(f, "EOD\nset xtics (");
		for (int i = first; i <= last; i++) {
			char label[16];
			slot_label(label, sizeof(label), i);
			fig_quote(f, label);
			fprintf(f, " %d%s", i - first, i < last ? ", " : ")\n");
		}
		quoted_title(f, "set title ", "%s", kind->what);
		/* most runs wait 0 us: a log scale keeps the tail of long waits visible */
		if (kind->log_y) /* down to the decade of the smallest share drawn */
			fprintf(f, "set logscale y\nset yrange [%g:100]\n"
				   "set ylabel 'share of task runs (%%, log scale)'\n",
				pow(10, floor(log10(min_share((const double (*)[STATS_LOG2_SLOTS])count, n, np)))));
		else
			fprintf(f, "unset logscale y\nset yrange [0:*]\nset ylabel 'share of task runs (%%)'\n");
		fprintf(f, "set xlabel 'us, log2 slots [lo, 2 lo) named by lo (K = 1024)'\nplot ");
		bool lead = true;
		for (size_t p = 0; p < np; p++) {
			if (!(n[p] > 0))
				continue;
			fprintf(f, "%s%s using %zu lc rgb '%s' ", lead ? "" : ", ", block, p + 2,
				report_policy_colour((int)p));
			key_title(f, json_key_at(pols, p));
			lead = false;
		}
		fprintf(f, "\n");
	}
	free(count);
	free(n);
	return last >= 0;
}

/* 5. Distributions over task runs (BPF): run-queue wait and on-CPU time per run, per policy. */
static int fig_distributions(const struct report_view *v, const char *dir, struct report_figs *figs,
			     struct fig_err *fe)
{
	const struct json *pols = json_get(v->json, "policies");
	struct sbuf b;
	if (sb_open(&b))
		return 0;
	fprintf(b.f, "set style data histograms\nset style histogram clustered gap 1\n"
		     "set style fill solid 0.85 border -1\nset grid ytics\nset key top right\n"
		     "set ytics format '%%g'\n");
	quoted_title(b.f, "set multiplot layout 2,1 title ",
		     "%s: distributions over every run of every task (log2 slots, as runqlat)",
		     workload_of(v));
	bool any = false;
	for (int k = 0; k < 2; k++)
		any |= hist_panel(b.f, v, pols, &hist_kinds[k], k ? "$oncpu" : "$wait");
	fprintf(b.f, "unset multiplot\n");
	if (!any) { /* recorded without BPF: nothing to draw */
		free(sb_close(&b));
		return 0;
	}
	return draw(dir, "distributions.svg", 900, 720, sb_close(&b), figs,
		    "Run-queue wait and on-CPU time per task run, per policy (BPF)", fe);
}

/* 6. The darts timeline the article describes in words, one figure per policy for its
 * chosen run (--timeline-seed; the median run by default), all on the same time axis:
 * a row per task, each run a bar coloured by the worker that ran it, a triangle where a
 * run starts on another worker than the task's previous run (a worker hop) and a cross
 * where the kernel moved the worker thread to another CPU while it ran the task. */

/* A policy name as part of a file name: kept when it is [A-Za-z0-9_-] only (names come
 * from the report, which is hostile input), else the policy's index stands in. */
static void timeline_name(char *out, size_t len, const char *policy, size_t index)
{
	bool plain = policy[0] != '\0' && strlen(policy) < 64;
	for (const char *c = policy; plain && *c; c++)
		plain = (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') ||
			*c == '_' || *c == '-';
	if (plain)
		snprintf(out, len, "timeline-%s.svg", policy);
	else
		snprintf(out, len, "timeline-%zu.svg", index + 1);
}

/* The end of the last run in a run's timeline (s), 0 if none. */
static double timeline_end(const struct run *run)
{
	const struct run_tl_run *rows = run_tl_runs(run);
	double end = 0;
	for (size_t i = 0; i < run->timeline.runs.n; i++)
		end = rows[i].end_s > end ? rows[i].end_s : end;
	return end;
}

/* by_cpu: a bar's colour is its CPU's (-1 without BPF: colour 0, grey), else its
 * worker's; *ncolours gets the number of colours used after the grey one. */
static void timeline_data(FILE *f, const struct run *run, bool by_cpu, size_t *ntasks, int *ncolours)
{
	const struct run_tl_run *rows = run_tl_runs(run);
	const struct run_tl_migration *migs = run_tl_migrations(run);
	size_t nrows = run->timeline.runs.n;
	/* a task's previous worker, by task id (ids are range-checked by the reader) */
	size_t cap = run->ntasks + 2;
	int *last = malloc(cap * sizeof(*last));
	fprintf(f, "$bars << EOD\n");
	for (size_t i = 0; i < nrows; i++) {
		const struct run_tl_run *r = &rows[i];
		double w = by_cpu ? r->cpu : r->worker;
		fprintf(f, "%.6f %.0f %.6f 0 %.0f\n", r->start_s, r->task, r->end_s - r->start_s,
			w >= 0 ? w + 2 : 1);
		*ntasks = r->task > (double)*ntasks ? (size_t)r->task : *ntasks;
		*ncolours = (int)w + 1 > *ncolours ? (int)w + 1 : *ncolours;
	}
	fprintf(f, "EOD\n$hops << EOD\n");
	for (size_t i = 0; last && i < cap; i++)
		last[i] = -1;
	for (size_t i = 0; last && i < nrows; i++) {
		size_t task = (size_t)rows[i].task;
		int w = (int)rows[i].worker;
		if (task >= cap)
			continue;
		if (last[task] >= 0 && last[task] != w)
			fprintf(f, "%.6f %zu\n", rows[i].start_s, task);
		last[task] = w;
	}
	free(last);
	fprintf(f, "EOD\n$kmig << EOD\n");
	for (size_t i = 0; i < run->timeline.migrations.n; i++)
		if (migs[i].task > 0)
			fprintf(f, "%.6f %.0f\n", migs[i].ts_s, migs[i].task);
	fprintf(f, "EOD\n");
}

static int fig_timeline(const struct report_view *v, const struct run *run, const char *policy,
			size_t index, double xmax, const char *dir, struct report_figs *figs,
			struct fig_err *fe)
{
	struct sbuf b;
	if (sb_open(&b))
		return 0;
	char why[160] = "", name[96];
	report_timeline_run(v, policy, why, sizeof(why));
	size_t ntasks = 0;
	int ncolours = 0;
	bool by_cpu = v->colour_by_cpu;
	timeline_data(b.f, run, by_cpu, &ntasks, &ncolours);
	quoted_title(b.f, "set title ", "%s: %s, seed %.0f (%s)", workload_of(v), policy,
		     run->seed.known ? (double)run->seed.v : 0, why);
	fprintf(b.f, "set xlabel 'time since t0 (s)'\nset ylabel 'task id'\nset xrange [0:%.6f]\n"
		     "set yrange [0.3:%zu.7] reverse\nset ytics 1 out nomirror\nset grid xtics\n"
		     "set key outside right top\n", xmax, ntasks ? ntasks : 1);
	fprintf(b.f, "set linetype 1 lc rgb '#bbbbbb'\n"); /* no CPU known (no BPF) */
	for (int w = 0; w < ncolours && w < 1024; w++)
		fprintf(b.f, "set linetype %d lc rgb '%s'\n", w + 2, report_policy_colour(w + 2));
	fprintf(b.f, "plot $bars using 1:2:3:4:5 with vectors nohead lw 7 lc variable notitle");
	for (int w = 0; w < ncolours && w < 8; w++)
		fprintf(b.f, ", NaN with lines lw 7 lt %d title '%s %d'", w + 2, by_cpu ? "CPU" : "worker", w);
	fprintf(b.f, ", $hops using 1:2 with points pt 9 ps 0.9 lc rgb '#000000' title 'worker hop', "
		     "$kmig using 1:2 with points pt 2 ps 0.9 lc rgb '#aa3377' title 'CPU migration (kernel)'\n");
	timeline_name(name, sizeof(name), policy, index);
	char title[200];
	snprintf(title, sizeof(title), "Timeline, %s: each task's runs coloured by %s", policy,
		 by_cpu ? "CPU" : "worker");
	return draw(dir, name, 900, 160 + 18 * (int)(ntasks ? ntasks : 1), sb_close(&b), figs, title, fe);
}

static int fig_timelines(const struct report_view *v, const char *dir, struct report_figs *figs,
			 struct fig_err *fe)
{
	const struct json *pols = json_get(v->json, "policies");
	double xmax = 0;
	for (size_t p = 0; p < json_len(pols); p++) {
		const struct run *run = report_timeline_run(v, json_key_at(pols, p), NULL, 0);
		double e = run ? timeline_end(run) : 0;
		xmax = e > xmax ? e : xmax;
	}
	if (!(xmax > 0))
		return 0;
	int drawn = 0;
	for (size_t p = 0; p < json_len(pols) && p < 8; p++) {
		const struct run *run = report_timeline_run(v, json_key_at(pols, p), NULL, 0);
		if (!run || !run->timeline.runs.n)
			continue;
		int rc = fig_timeline(v, run, json_key_at(pols, p), p, xmax * 1.02, dir, figs, fe);
		if (rc < 0)
			return -1;
		drawn += rc;
	}
	return drawn;
}

int report_figures_of(const struct report_view *v, const char *dir, struct report_figs *figs,
		      char *err, size_t errlen)
{
	struct fig_err fe = { err, errlen };
	const struct json *report = v->json;
	if (!v->nruns)
		return 0;
	size_t ntasks = max_tasks(v);
	const struct th_workload *wl = wl_find(v->workload ? v->workload : "");
	int drawn[6] = { 0 };
	if (ntasks >= 2)
		drawn[0] = fig_returns(v, dir, figs, &fe);
	if (drawn[0] >= 0 && wl && wl->figures) {
		struct wl_figures wf;
		memset(&wf, 0, sizeof(wf));
		if (wl->figures(report, dir, &wf) == FIG_WRITE_FAILED) {
			snprintf(err, errlen, "%s", wf.err);
			return -1;
		}
		for (int i = 0; i < wf.n; i++, drawn[1]++)
			add_fig(figs, wf.names[i], wf.titles[i]);
	}
	if (drawn[0] >= 0 && ntasks >= 1)
		drawn[2] = fig_migrations(v, dir, figs, &fe);
	if (drawn[0] >= 0 && drawn[2] >= 0)
		drawn[3] = fig_speedup(v, dir, figs, &fe);
	if (drawn[0] >= 0 && drawn[2] >= 0 && drawn[3] >= 0 && ntasks >= 1)
		drawn[4] = fig_distributions(v, dir, figs, &fe);
	if (drawn[0] >= 0 && drawn[2] >= 0 && drawn[3] >= 0 && drawn[4] >= 0 && ntasks >= 1)
		drawn[5] = fig_timelines(v, dir, figs, &fe);
	if (drawn[0] < 0 || drawn[2] < 0 || drawn[3] < 0 || drawn[4] < 0 || drawn[5] < 0)
		return -1;
	return drawn[0] + drawn[1] + drawn[2] + drawn[3] + drawn[4] + drawn[5];
}

int report_figures(const struct json *report, const char *dir, struct report_figs *figs,
		   char *err, size_t errlen)
{
	struct report_view v;
	if (report_view_read_partial(report, &v, err, errlen))
		return -1;
	int rc = report_figures_of(&v, dir, figs, err, errlen);
	report_view_free(&v);
	return rc;
}
