/* render.c — text, Markdown, HTML and CSV renderings of run and compare reports, made from
 * the JSON alone so that `taskhop report` reproduces exactly what `compare` printed. */
#include "report/report.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "report/fsutil.h"
#include "report/run.h"
#include "report/run_fields.h"

/* ---- small formatting helpers ------------------------------------------- */

/* A nullable number as text: "-" when null (NAN). scale multiplies (ns -> ms). */
static const char *fmt_num(char *buf, size_t len, double x, const char *fmt, double scale)
{
	if (isnan(x))
		snprintf(buf, len, "-");
	else
		snprintf(buf, len, fmt, x * scale);
	return buf;
}

static double or_zero(double x)
{
	return isnan(x) ? 0 : x;
}

static const char *or_text(const char *s, const char *def)
{
	return s ? s : def;
}

static const struct json *policy_metric(const struct json *report, const char *policy, const char *m)
{
	return json_get(json_get(json_get(report, "policies"), policy), m);
}

static double median_of(const struct json *stat)
{
	return json_get_num(stat, "median", NAN);
}

/* The policy every other is compared with: sticky (no migration) when present. */
static const char *baseline_policy(const struct json *report)
{
	const struct json *pols = json_get(report, "policies");
	if (json_get(pols, "sticky"))
		return "sticky";
	return NULL;
}

static void cpus_text(const struct run_nums *v, char *buf, size_t len)
{
	size_t o = 0;
	buf[0] = 0;
	for (size_t i = 0; i < v->n && o + 8 < len; i++)
		o += (size_t)snprintf(buf + o, len - o, "%s%.0f", i ? "," : "", v->v[i]);
	if (!v->n)
		snprintf(buf, len, "-");
}

/* A run's time in the kernel, blocked, over its tasks (ms), or "-" without BPF. */
static const char *blocked_ms(char *buf, size_t len, const struct run *r)
{
	double ns = 0;
	for (size_t i = 0; i < r->ntasks; i++) {
		if (isnan(r->tasks[i].kernel_blocked_ns))
			return snprintf(buf, len, "-"), buf;
		ns += r->tasks[i].kernel_blocked_ns;
	}
	snprintf(buf, len, r->ntasks ? "%.2f" : "-", ns / 1e6);
	return buf;
}

/* ---- one run ------------------------------------------------------------ */

void report_run_text_of(const struct run *r, FILE *f)
{
	bool bpf_on = r->bpf.enabled == 1;
	char b[19][40];
	char seed[32];
	fprintf(f, "%s  policy=%s  workers=%.0f%s  seed=%s  bpf=%s", or_text(r->workload, "?"),
		or_text(r->policy, "?"), or_zero(r->worker_count), r->pin == 1 ? " (pinned)" : "", run_seed_text(seed, sizeof(seed), r),
		bpf_on ? "on" : "off");
	if (!isnan(r->preempt_ms))
		fprintf(f, "  preempt=%gms", r->preempt_ms);
	/* runs past the run log's capacity are missing from the per-task kernel figures */
	double dropped = or_zero(r->bpf.dropped_runs);
	bool partial = bpf_on && dropped > 0;
	if (bpf_on && partial)
		fprintf(f, " (%.0f lost events, %.0f runs dropped from the run log: per-task kernel "
			   "figures are partial, marked ~)", or_zero(r->bpf.lost_events), dropped);
	else if (bpf_on)
		fprintf(f, " (%.0f lost events)", or_zero(r->bpf.lost_events));
	fputc('\n', f);
	/* preempted: by the runtime (--preempt); k-preempt: by the kernel (BPF) */
	/* max-delay: the largest run-queue wait of one run (perf sched latency's "max delay"),
	 * max-at: when it ended, seconds from t0 */
	fprintf(f, "%5s %-10s %10s %5s %5s %4s %10s %5s %6s %9s %5s %6s %6s %-5s %11s %11s %9s %11s %6s"
		   " %13s %9s\n",
		"task", "label", "n", "spawn", "first", "last", "done(ms)", "runs", "yields", "preempted",
		"hops", "migr", "migr-k", "cpus", "run-time(ms)", "sch-delay", "k-preempt", "blocked(ms)",
		"blocks", "max-delay(ms)", "max-at(s)");
	for (size_t i = 0; i < r->ntasks; i++) {
		const struct run_task *t = &r->tasks[i];
		char cpus[64];
		cpus_text(&t->cpus_visited, cpus, sizeof(cpus));
		fmt_num(b[9], 32, t->cpu_migrations, "%.0f", 1);
		fmt_num(b[10], 32, t->cpu_migrations_kernel, "%.0f", 1);
		fmt_num(b[11], 32, t->on_cpu_ns, "%.2f", 1e-6);
		fmt_num(b[12], 32, t->runq_wait_ns, "%.3f", 1e-6);
		fmt_num(b[13], 32, t->preemptions, "%.0f", 1);
		fmt_num(b[14], 32, t->kernel_blocked_ns, "%.2f", 1e-6);
		fmt_num(b[15], 32, t->kernel_blocks, "%.0f", 1);
		fmt_num(b[17], 32, t->max_runq_wait_ns, "%.3f", 1e-6);
		fmt_num(b[18], 32, t->max_runq_wait_at_s, "%.4f", 1);
		for (int k = 9; partial && k < 18; k++)
			if (k != 16 && strcmp(b[k], "-") != 0)
				strcat(b[k], "~");
		fprintf(f, "%5s %-10s %10s %5s %5s %4s %10s %5s %6s %9s %5s %6s %6s %-5s %11s %11s %9s %11s %6s"
			   " %13s %9s\n",
			fmt_num(b[0], 32, t->id, "%.0f", 1), or_text(t->label, ""), fmt_num(b[1], 32, t->n, "%.4g", 1),
			fmt_num(b[2], 32, t->spawn_worker, "%.0f", 1),
			fmt_num(b[3], 32, t->first_worker, "%.0f", 1),
			fmt_num(b[4], 32, t->last_worker, "%.0f", 1),
			fmt_num(b[5], 32, t->completion_s, "%.2f", 1e3), fmt_num(b[6], 32, t->runs, "%.0f", 1),
			fmt_num(b[7], 32, t->yields, "%.0f", 1), fmt_num(b[16], 32, t->preempted, "%.0f", 1),
			fmt_num(b[8], 32, t->worker_hops, "%.0f", 1), b[9], b[10], cpus, b[11], b[12], b[13],
			b[14], b[15], b[17], b[18]);
	}
	if (r->nworkers) {
		fprintf(f, "%6s %7s %9s %6s %9s %12s %13s %11s %6s\n", "worker", "tid", "tasks_run", "migr",
			"k-preempt", "on-cpu(ms)", "runq-wait(ms)", "blocked(ms)", "blocks");
		for (size_t i = 0; i < r->nworkers; i++) {
			const struct run_worker *w = &r->workers[i];
			fprintf(f, "%6s %7s %9s %6s %9s %12s %13s %11s %6s\n",
				fmt_num(b[0], 32, w->index, "%.0f", 1), fmt_num(b[1], 32, w->tid, "%.0f", 1),
				fmt_num(b[2], 32, w->tasks_run, "%.0f", 1),
				fmt_num(b[3], 32, w->cpu_migrations, "%.0f", 1),
				fmt_num(b[4], 32, w->preemptions, "%.0f", 1),
				fmt_num(b[5], 32, w->on_cpu_ns, "%.2f", 1e-6),
				fmt_num(b[6], 32, w->runq_wait_ns, "%.3f", 1e-6),
				fmt_num(b[7], 32, w->kernel_blocked_ns, "%.2f", 1e-6),
				fmt_num(b[8], 32, w->kernel_blocks, "%.0f", 1));
		}
	}
	double mean = r->mean_completion_s, ideal = r->ideal_mean_completion_s;
	if (r->ntasks) {
		fprintf(f, "mean completion %.3f s   makespan %.3f s   ideal (SPT) %s s", mean, r->makespan_s,
			fmt_num(b[0], 32, ideal, "%.3f", 1));
		if (ideal > 0)
			fprintf(f, "   mean/ideal %.2f", mean / ideal);
		fputc('\n', f);
	}
	fprintf(f, "wall %.3f s   peak RSS %.0f KiB\n", r->wall_s, or_zero(r->peak_rss_kb));
	const char *sum = r->summary ? r->summary : "";
	if (*sum)
		fprintf(f, "%s%s", sum, sum[strlen(sum) - 1] == '\n' ? "" : "\n");
}

void report_run_text(const struct json *run, FILE *f)
{
	struct run r;
	char err[256];
	if (run_read_partial(run, &r, err, sizeof(err))) {
		fprintf(f, "taskhop: the run cannot be shown: %s\n", err);
		return;
	}
	report_run_text_of(&r, f);
	run_release(&r);
}

/* ---- compare: summary table ------------------------------------------------ */

static void stat_cell(char *buf, size_t len, const struct json *s, const char *fmt1)
{
	if (!s || json_type_of(s) != JSON_OBJ) {
		snprintf(buf, len, "-");
		return;
	}
	char f[64];
	snprintf(f, sizeof(f), "%s [%s, %s]", fmt1, fmt1, fmt1);
	snprintf(buf, len, f, json_get_num(s, "median", NAN), json_get_num(s, "min", NAN),
		 json_get_num(s, "max", NAN));
}

static int runs_of_first_policy(const struct json *report)
{
	const struct json *pols = json_get(report, "policies");
	return json_len(pols) ? (int)json_get_num(json_at(pols, 0), "runs", 0) : 0;
}

/* One row per policy: mean completion (median [min, max]), ratios to ideal and baseline,
 * makespan, hops and CPU migrations per task. Shared by text and Markdown. */
struct row {
	const char *name;
	char runs[16], mean[64], ideal[16], base[16], span[64], hops[16], migr[16], wall[64], speedup[16];
	char preempted[16];
	char span_med[16], wall_med[16];
};

static int table_rows(const struct json *report, struct row *rows, int max)
{
	const struct json *pols = json_get(report, "policies");
	const char *base = baseline_policy(report);
	double base_mean = base ? median_of(policy_metric(report, base, REPORT_METRIC_MEAN)) : NAN;
	double serial = median_of(policy_metric(report, REPORT_SERIAL, REPORT_METRIC_WALL));
	int n = 0;
	for (size_t i = 0; i < json_len(pols) && n < max; i++, n++) {
		const struct json *p = json_at(pols, i);
		struct row *r = &rows[n];
		r->name = json_key_at(pols, i);
		snprintf(r->runs, sizeof(r->runs), "%.0f", json_get_num(p, "runs", 0));
		stat_cell(r->mean, sizeof(r->mean), json_get(p, REPORT_METRIC_MEAN), "%.3f");
		stat_cell(r->span, sizeof(r->span), json_get(p, REPORT_METRIC_MAKESPAN), "%.3f");
		stat_cell(r->wall, sizeof(r->wall), json_get(p, REPORT_METRIC_WALL), "%.3f");
		double w = median_of(json_get(p, REPORT_METRIC_WALL)), sm = median_of(json_get(p, REPORT_METRIC_MAKESPAN));
		snprintf(r->span_med, sizeof(r->span_med), isnan(sm) ? "-" : "%.3f", sm);
		snprintf(r->wall_med, sizeof(r->wall_med), isnan(w) ? "-" : "%.3f", w);
		snprintf(r->speedup, sizeof(r->speedup), serial > 0 && w > 0 ? "%.2f" : "-", serial / w);
		double ri = median_of(json_get(p, REPORT_METRIC_IDEAL));
		double m = median_of(json_get(p, REPORT_METRIC_MEAN));
		double h = median_of(json_get(p, REPORT_METRIC_HOPS));
		double c = median_of(json_get(p, REPORT_METRIC_MIGR));
		snprintf(r->ideal, sizeof(r->ideal), isnan(ri) ? "-" : "%.2f", ri);
		snprintf(r->base, sizeof(r->base),
			 isnan(base_mean) || !(base_mean > 0) || isnan(m) ? "-" : "%.2f", m / base_mean);
		snprintf(r->hops, sizeof(r->hops), isnan(h) ? "-" : "%.2f", h);
		snprintf(r->migr, sizeof(r->migr), isnan(c) ? "-" : "%.2f", c);
		double pr = median_of(json_get(p, REPORT_METRIC_PREEMPTED));
		snprintf(r->preempted, sizeof(r->preempted), isnan(pr) ? "-" : "%.1f", pr);
	}
	return n;
}

static void headline(const struct report_view *v, FILE *f, const char *pre)
{
	const struct run *r0 = v->nruns ? &v->runs[0] : NULL;
	for (size_t i = 0; i < v->nruns; i++) {
		if (strcmp(v->runs[i].policy, REPORT_SERIAL) != 0) {
			r0 = &v->runs[i];
			break;
		}
	}
	fprintf(f, "%s%s", pre, v->workload ? v->workload : "?");
	for (size_t i = 0; i < v->options.n; i++)
		fprintf(f, " %s", v->options.v[i]);
	fprintf(f, ": %zu policies x %d repeats, %.0f workers%s, %zu runs%s\n",
		json_len(json_get(v->json, "policies")), runs_of_first_policy(v->json),
		r0 ? r0->worker_count : 0, r0 && r0->pin == 1 ? " (pinned)" : "", v->nruns,
		v->interrupted ? " (interrupted: partial report)" : "");
}

/* The first run's summary (a workload's own lines), "" when none. */
static const char *first_summary(const struct report_view *v)
{
	return v->nruns && v->runs[0].summary ? v->runs[0].summary : "";
}

static void text_of(const struct report_view *v, FILE *f)
{
	const struct json *report = v->json;
	struct row rows[32];
	int n = table_rows(report, rows, 32);
	const char *base = baseline_policy(report);
	char bh[32];
	snprintf(bh, sizeof(bh), "x %s", base ? base : "base");
	bool serial = json_get(json_get(report, "policies"), REPORT_SERIAL) != NULL;
	headline(v, f, "");
	fprintf(f, "%-11s %4s  %-27s %7s %8s %10s %8s", "policy", "runs", "mean completion s [min,max]",
		"x ideal", bh, "makespan s", "wall s");
	if (serial)
		fprintf(f, " %8s", "speedup");
	fprintf(f, " %9s %9s %9s\n", "hops/task", "migr/task", "pre/task");
	for (int i = 0; i < n; i++) {
		fprintf(f, "%-11s %4s  %-27s %7s %8s %10s %8s", rows[i].name, rows[i].runs, rows[i].mean,
			rows[i].ideal, rows[i].base, rows[i].span_med, rows[i].wall_med);
		if (serial)
			fprintf(f, " %8s", rows[i].speedup);
		fprintf(f, " %9s %9s %9s\n", rows[i].hops, rows[i].migr, rows[i].preempted);
	}
	fprintf(f, "(median over repeats; x ideal = mean completion / SPT lower bound of the same run;%s"
		   " migr = CPU migrations, '-' without BPF; pre = preemptions by the runtime, --preempt)\n",
		serial ? " speedup = serial wall / wall;" : "");
	const char *sum = first_summary(v);
	if (*sum)
		fprintf(f, "%s%s", sum, sum[strlen(sum) - 1] == '\n' ? "" : "\n");
}

/* ---- Markdown ------------------------------------------------------------- */

/* ---- Runs table: one row per run, the same columns in Markdown and HTML ------ */

static const char *const run_columns[] = {
	"#", "policy", "seed", "mean completion s", "makespan s", "ideal s", "x ideal", "wall s",
	"peak RSS KiB", "BPF lost events", "kernel blocked ms",
};
#define RUN_COLUMNS (sizeof(run_columns) / sizeof(run_columns[0]))

/* The cells of run i (0-based) as text, in run_columns order; the policy is raw (the
 * caller escapes it for its format). */
static void run_cells(const struct run *r, size_t i, char cell[RUN_COLUMNS][64])
{
	double mean = r->mean_completion_s, ideal = r->ideal_mean_completion_s;
	snprintf(cell[0], 64, "%zu", i + 1);
	snprintf(cell[1], 64, "%s", r->policy);
	run_seed_text(cell[2], 64, r);
	fmt_num(cell[3], 64, mean, "%.4f", 1);
	fmt_num(cell[4], 64, r->makespan_s, "%.4f", 1);
	snprintf(cell[5], 64, isnan(ideal) ? "-" : "%.4f", ideal);
	snprintf(cell[6], 64, isnan(ideal) || !(ideal > 0) ? "-" : "%.2f", mean / ideal);
	snprintf(cell[7], 64, "%.4f", r->wall_s);
	snprintf(cell[8], 64, "%.0f", or_zero(r->peak_rss_kb));
	snprintf(cell[9], 64, r->bpf.enabled == 1 ? "%.0f" : "(no BPF)", or_zero(r->bpf.lost_events));
	blocked_ms(cell[10], 64, r);
}

/* A Markdown table row of n cells, and a header (names, then the rule). */
static void md_row(FILE *f, const char (*cell)[64], size_t n)
{
	fputc('|', f);
	for (size_t c = 0; c < n; c++)
		fprintf(f, " %s |", cell[c]);
	fputc('\n', f);
}

static void md_header(FILE *f, const char *const *names, size_t n)
{
	fputc('|', f);
	for (size_t c = 0; c < n; c++)
		fprintf(f, " %s |", names[c]);
	fprintf(f, "\n|");
	for (size_t c = 0; c < n; c++)
		fprintf(f, "---|");
	fputc('\n', f);
}

/* ---- Largest scheduling delays: per policy, the tasks whose one run waited longest ---- */

static const char *const delay_columns[] = {
	"policy", "run", "task", "label", "max sch-delay ms", "at s", "sch-delay ms", "runs",
};
#define DELAY_COLUMNS (sizeof(delay_columns) / sizeof(delay_columns[0]))
#define DELAYS_PER_POLICY 5

struct delay {
	size_t run;
	const struct run_task *task;
};

static int delay_cmp(const void *pa, const void *pb)
{
	const struct delay *a = pa, *b = pb;
	double x = a->task->max_runq_wait_ns, y = b->task->max_runq_wait_ns;
	return (x < y) - (x > y); /* largest first */
}

/* The policy's tasks (over all its runs) with a measured max_runq_wait_ns, largest first,
 * at most `max`; *n gets how many. NULL when there are none (no BPF) or on OOM. */
static struct delay *largest_delays(const struct report_view *v, const char *policy, size_t max,
				    size_t *n)
{
	size_t total = 0, k = 0;
	for (size_t r = 0; r < v->nruns; r++)
		total += v->runs[r].ntasks;
	struct delay *d = total ? calloc(total, sizeof(*d)) : NULL;
	for (size_t r = 0; d && r < v->nruns; r++) {
		const struct run *run = &v->runs[r];
		if (strcmp(run->policy, policy) != 0)
			continue;
		for (size_t i = 0; i < run->ntasks; i++)
			if (!isnan(run->tasks[i].max_runq_wait_ns))
				d[k++] = (struct delay){ r, &run->tasks[i] };
	}
	if (!k) {
		free(d);
		return NULL;
	}
	qsort(d, k, sizeof(*d), delay_cmp);
	*n = k < max ? k : max;
	return d;
}

static void delay_cells(const char *policy, const struct delay *d, char cell[DELAY_COLUMNS][64])
{
	snprintf(cell[0], 64, "%s", policy);
	snprintf(cell[1], 64, "%zu", d->run + 1);
	fmt_num(cell[2], 64, d->task->id, "%.0f", 1);
	snprintf(cell[3], 64, "%s", d->task->label);
	snprintf(cell[4], 64, "%.3f", d->task->max_runq_wait_ns / 1e6);
	fmt_num(cell[5], 64, d->task->max_runq_wait_at_s, "%.4f", 1);
	fmt_num(cell[6], 64, d->task->runq_wait_ns, "%.3f", 1e-6);
	fmt_num(cell[7], 64, d->task->runs, "%.0f", 1);
}

/* Calls row(cells) for the table's rows, policy by policy; false when no run has the data. */
static bool delay_rows(const struct report_view *v,
		       void (*row)(FILE *, char cell[DELAY_COLUMNS][64]), FILE *f)
{
	const struct json *pols = json_get(v->json, "policies");
	bool any = false;
	for (size_t p = 0; p < json_len(pols); p++) {
		size_t n = 0;
		struct delay *d = largest_delays(v, json_key_at(pols, p), DELAYS_PER_POLICY, &n);
		for (size_t i = 0; d && i < n; i++) {
			char cell[DELAY_COLUMNS][64];
			delay_cells(json_key_at(pols, p), &d[i], cell);
			row(f, cell);
			any = true;
		}
		free(d);
	}
	return any;
}

/* The table's rows as one string (free it), or NULL when no run has the data. */
static char *delay_table(const struct report_view *v, void (*row)(FILE *, char cell[DELAY_COLUMNS][64]))
{
	char *body = NULL;
	size_t len = 0;
	FILE *mf = open_memstream(&body, &len);
	if (!mf)
		return NULL;
	bool any = delay_rows(v, row, mf);
	fclose(mf);
	if (!any) {
		free(body);
		return NULL;
	}
	return body;
}

static void md_delay_row(FILE *f, char cell[DELAY_COLUMNS][64])
{
	md_row(f, (const char (*)[64])cell, DELAY_COLUMNS);
}

static const char delay_note[] =
	"The largest run-queue wait of one run of a task (its worker thread runnable but not on a "
	"CPU, from the BPF kernel data; perf sched latency's \"max delay\"), the %d largest per "
	"policy over all repeats; *at*: when that wait ended, seconds from the run's t0.";

static void markdown_delays(const struct report_view *v, FILE *f)
{
	char *body = delay_table(v, md_delay_row);
	if (body) {
		fprintf(f, "\n## Largest scheduling delays\n\n");
		fprintf(f, delay_note, DELAYS_PER_POLICY);
		fprintf(f, "\n\n");
		md_header(f, delay_columns, DELAY_COLUMNS);
		fputs(body, f);
	}
	free(body);
}

static void markdown_of(const struct report_view *v, const struct report_figs *figs, FILE *f)
{
	const struct json *report = v->json;
	struct row rows[32];
	int n = table_rows(report, rows, 32);
	const char *base = baseline_policy(report);
	fprintf(f, "# taskhop report: %s\n\n", or_text(v->workload, "?"));
	headline(v, f, "");
	fprintf(f, "\nMachine: %.0f CPUs, %s, Linux %s", or_zero(v->cpus), or_text(v->cpu_model, "?"),
		or_text(v->kernel, "?"));
	if (!isnan(v->loadavg_1min))
		fprintf(f, ", 1-min load average %.2f at the start", v->loadavg_1min);
	fprintf(f, ".  \nCommand: `%s`\n\n", or_text(v->command, ""));
	fprintf(f, "## Summary (median over repeats, [min, max])\n\n");
	fprintf(f, "| policy | runs | mean completion s | x ideal | x %s | makespan s | wall s | "
		   "speedup vs serial | hops/task | CPU migrations/task |\n"
		   "|---|---|---|---|---|---|---|---|---|---|\n", base ? base : "baseline");
	for (int i = 0; i < n; i++)
		fprintf(f, "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", rows[i].name,
			rows[i].runs, rows[i].mean, rows[i].ideal, rows[i].base, rows[i].span,
			rows[i].wall, rows[i].speedup, rows[i].hops, rows[i].migr);
	fprintf(f, "\n*x ideal*: mean completion divided by the shortest-processing-time-first lower "
		   "bound computed from the same run's measured task work on the same number of workers.\n");
	const char *sum = first_summary(v);
	if (*sum)
		fprintf(f, "\n```\n%s%s```\n", sum, sum[strlen(sum) - 1] == '\n' ? "" : "\n");
	if (figs && figs->n) {
		fprintf(f, "\n## Figures\n\n");
		for (int i = 0; i < figs->n; i++)
			fprintf(f, "### %s\n\n![%s](%s)\n\n", figs->titles[i], figs->titles[i], figs->names[i]);
	}
	markdown_delays(v, f);
	fprintf(f, "\n## Runs\n\n");
	md_header(f, run_columns, RUN_COLUMNS);
	for (size_t i = 0; i < v->nruns; i++) {
		char cell[RUN_COLUMNS][64];
		run_cells(&v->runs[i], i, cell);
		md_row(f, (const char (*)[64])cell, RUN_COLUMNS);
	}
	fprintf(f, "\nFiles: `report.json` (source of truth; `taskhop report DIR` re-renders this page), "
		   "`runs.csv` (one row per task per run), `trace.json` (open in https://ui.perfetto.dev).\n");
}

/* ---- HTML: one self-contained page ----------------------------------------- */

static void html_esc(FILE *f, const char *s)
{
	for (; *s; s++) {
		switch (*s) {
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '&': fputs("&amp;", f); break;
		case '"': fputs("&quot;", f); break;
		default: fputc(*s, f);
		}
	}
}

/* An HTML table row of n cells, escaped. */
static void html_row(FILE *f, const char (*cell)[64], size_t n)
{
	fprintf(f, "<tr>");
	for (size_t c = 0; c < n; c++) {
		fprintf(f, "<td>");
		html_esc(f, cell[c]);
		fprintf(f, "</td>");
	}
	fprintf(f, "</tr>\n");
}

static void html_delay_row(FILE *f, char cell[DELAY_COLUMNS][64])
{
	html_row(f, (const char (*)[64])cell, DELAY_COLUMNS);
}

static void html_delays(const struct report_view *v, FILE *f)
{
	char *body = delay_table(v, html_delay_row);
	if (body) {
		fprintf(f, "<h2>Largest scheduling delays</h2>\n<p>The largest run-queue wait of one "
			   "run of a task (its worker thread runnable but not on a CPU, from the BPF "
			   "kernel data; perf sched latency's &ldquo;max delay&rdquo;), the %d largest per "
			   "policy over all repeats; <em>at</em>: when that wait ended, seconds from the "
			   "run's t0.</p>\n<table><tr>", DELAYS_PER_POLICY);
		for (size_t c = 0; c < DELAY_COLUMNS; c++)
			fprintf(f, "<th>%s</th>", delay_columns[c]);
		fprintf(f, "</tr>\n%s</table>\n", body);
	}
	free(body);
}

/* Inlines an SVG file, dropping the XML prolog and doctype that are not allowed inside HTML. */
static void inline_svg(FILE *f, const char *dir, const char *name)
{
	char path[4096], err[256];
	if (fs_join(path, sizeof(path), dir, name))
		return;
	char *svg = fs_read_all(path, NULL, err, sizeof(err));
	if (!svg) {
		fprintf(f, "<p>(%s missing)</p>\n", name);
		return;
	}
	char *start = strstr(svg, "<svg");
	fputs(start ? start : svg, f);
	free(svg);
}

static void html_of(const struct report_view *v, const struct report_figs *figs, const char *dir,
		    FILE *f)
{
	const struct json *report = v->json;
	struct row rows[32];
	int n = table_rows(report, rows, 32);
	const char *base = baseline_policy(report);
	fprintf(f, "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>taskhop report: ");
	html_esc(f, or_text(v->workload, "?"));
	fprintf(f, "</title>\n<style>body{font-family:sans-serif;max-width:1100px;margin:2em auto}"
		   "table{border-collapse:collapse}td,th{border:1px solid #bbb;padding:3px 8px;"
		   "text-align:right}th{background:#eee}td:first-child{text-align:left}"
		   "pre{background:#f6f6f6;padding:8px}</style></head><body>\n");
	fprintf(f, "<h1>taskhop report: ");
	html_esc(f, or_text(v->workload, "?"));
	fprintf(f, "</h1>\n<p>");
	char *hl = NULL;
	size_t hlen = 0;
	FILE *mf = open_memstream(&hl, &hlen);
	if (mf) {
		headline(v, mf, "");
		fclose(mf);
		html_esc(f, hl);
		free(hl);
	}
	fprintf(f, "<br>Machine: %.0f CPUs, ", or_zero(v->cpus));
	html_esc(f, or_text(v->cpu_model, "?"));
	fprintf(f, ", Linux ");
	html_esc(f, or_text(v->kernel, "?"));
	fprintf(f, "<br>Command: <code>");
	html_esc(f, or_text(v->command, ""));
	fprintf(f, "</code></p>\n<h2>Summary (median over repeats, [min, max])</h2>\n<table>"
		   "<tr><th>policy</th><th>runs</th><th>mean completion s</th><th>&times; ideal</th>"
		   "<th>&times; %s</th><th>makespan s</th><th>wall s</th><th>speedup vs serial</th>"
		   "<th>hops/task</th><th>CPU migrations/task</th></tr>\n",
		base ? base : "baseline");
	for (int i = 0; i < n; i++) {
		fprintf(f, "<tr><td>");
		html_esc(f, rows[i].name);
		fprintf(f, "</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td>"
			   "<td>%s</td><td>%s</td><td>%s</td></tr>\n",
			rows[i].runs, rows[i].mean, rows[i].ideal, rows[i].base, rows[i].span,
			rows[i].wall, rows[i].speedup, rows[i].hops, rows[i].migr);
	}
	fprintf(f, "</table>\n<p>&times; ideal: mean completion divided by the shortest-processing-"
		   "time-first lower bound from the same run's measured task work.</p>\n");
	const char *sum = first_summary(v);
	if (*sum) {
		fprintf(f, "<pre>");
		html_esc(f, sum);
		fprintf(f, "</pre>\n");
	}
	for (int i = 0; figs && i < figs->n; i++) {
		fprintf(f, "<h2>");
		html_esc(f, figs->titles[i]);
		fprintf(f, "</h2>\n");
		inline_svg(f, dir, figs->names[i]);
		fputc('\n', f);
	}
	html_delays(v, f);
	fprintf(f, "<h2>Runs</h2>\n<table><tr>");
	for (size_t c = 0; c < RUN_COLUMNS; c++)
		fprintf(f, "<th>%s</th>", run_columns[c]);
	fprintf(f, "</tr>\n");
	for (size_t i = 0; i < v->nruns; i++) {
		char cell[RUN_COLUMNS][64];
		run_cells(&v->runs[i], i, cell);
		html_row(f, (const char (*)[64])cell, RUN_COLUMNS);
	}
	fprintf(f, "</table>\n<p>Files: <a href=\"report.json\">report.json</a> (source of truth; <code>taskhop "
		   "report DIR</code> re-renders this page), <a href=\"runs.csv\">runs.csv</a> (one row per "
		   "task per run), <a href=\"trace.json\">trace.json</a> (open in "
		   "<a href=\"https://ui.perfetto.dev\">ui.perfetto.dev</a>).</p>\n");
	fprintf(f, "</body></html>\n");
}

/* ---- CSV: one row per task per run ------------------------------------------ */

static void csv_number(FILE *f, double x)
{
	if (isnan(x))
		return;
	if (x == floor(x) && fabs(x) < 9e15)
		fprintf(f, "%.0f", x);
	else
		fprintf(f, "%.9g", x);
}

static void csv_text(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"')
			fputc('"', f);
		fputc(*s, f);
	}
	fputc('"', f);
}

/* A task field as a cell: empty when null; cpus_visited as "0 1" (one field). */
static void csv_field(FILE *f, const struct run_field *fd, const struct run_task *t)
{
	const char *at = (const char *)t + fd->off;
	if (run_kind_is_number(fd->kind)) {
		csv_number(f, *(const double *)at);
	} else if (fd->kind == RUN_KIND_NAME || fd->kind == RUN_KIND_TEXT) {
		if (*(const char *const *)at)
			csv_text(f, *(const char *const *)at);
	} else if (fd->kind == RUN_KIND_CPUS) {
		const struct run_nums *x = (const struct run_nums *)at;
		if (!x->known)
			return;
		fputc('"', f);
		for (size_t i = 0; i < x->n; i++)
			fprintf(f, "%s%.0f", i ? " " : "", x->v[i]);
		fputc('"', f);
	}
}

/* The columns: the run's policy, seed and workers, then every task field that each task
 * carries (REQ and NUL in run_schema.h), then work_s. */
static bool csv_column(const struct run_field *fd)
{
	return fd->need == RUN_NEED_REQ || fd->need == RUN_NEED_NUL;
}

static void csv_of(const struct report_view *v, FILE *f)
{
	const struct run_fields *tf = &run_fields_task;
	char seed[32];
	fprintf(f, "run,policy,seed,worker_count");
	for (size_t i = 0; i < tf->n; i++)
		if (csv_column(&tf->f[i]))
			fprintf(f, ",%s", tf->f[i].key);
	fprintf(f, ",%s\n", TH_TASK_KEY(work_s));
	for (size_t r = 0; r < v->nruns; r++) {
		const struct run *run = &v->runs[r];
		for (size_t k = 0; k < run->ntasks; k++) {
			const struct run_task *t = &run->tasks[k];
			fprintf(f, "%zu,", r + 1);
			csv_text(f, run->policy);
			run_seed_text(seed, sizeof(seed), run);
			fprintf(f, ",%s,%.0f", run->seed.known ? seed : "", run->worker_count);
			for (size_t i = 0; i < tf->n; i++) {
				if (!csv_column(&tf->f[i]))
					continue;
				fputc(',', f);
				csv_field(f, &tf->f[i], t);
			}
			fputc(',', f);
			csv_number(f, t->work_s);
			fputc('\n', f);
		}
	}
}

/* ---- the JSON entry points: read (and check) the report, then render ----------- */

/* The report as a view, or false with one line on f. */
static bool view_or_say(const struct json *report, struct report_view *v, FILE *f)
{
	char err[256];
	if (report_view_read_partial(report, v, err, sizeof(err)) == 0)
		return true;
	fprintf(f, "taskhop: the report cannot be shown: %s\n", err);
	return false;
}

void report_text(const struct json *report, FILE *f)
{
	struct report_view v;
	if (view_or_say(report, &v, f))
		text_of(&v, f);
	report_view_free(&v);
}

void report_markdown(const struct json *report, const struct report_figs *figs, FILE *f)
{
	struct report_view v;
	if (view_or_say(report, &v, f))
		markdown_of(&v, figs, f);
	report_view_free(&v);
}

int report_html(const struct json *report, const struct report_figs *figs, const char *dir, FILE *f)
{
	struct report_view v;
	bool ok = view_or_say(report, &v, f);
	if (ok)
		html_of(&v, figs, dir, f);
	report_view_free(&v);
	return ok ? 0 : -1;
}

void report_csv(const struct json *report, FILE *f)
{
	struct report_view v;
	if (view_or_say(report, &v, f))
		csv_of(&v, f);
	report_view_free(&v);
}
