/* render.c — text, Markdown, HTML and CSV renderings of run and compare reports, made from
 * the JSON alone so that `taskhop report` reproduces exactly what `compare` printed. */
#include "report/report.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "report/fsutil.h"

/* ---- small formatting helpers ------------------------------------------- */

/* A nullable number as text: "-" when absent/null. scale multiplies (ns -> ms). */
static const char *fmt_num(char *buf, size_t len, const struct json *v, const char *fmt, double scale)
{
	if (!json_is_num(v))
		snprintf(buf, len, "-");
	else
		snprintf(buf, len, fmt, json_num_of(v) * scale);
	return buf;
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

static void cpus_text(const struct json *v, char *buf, size_t len)
{
	if (!v || json_type_of(v) != JSON_ARR) {
		snprintf(buf, len, "-");
		return;
	}
	size_t o = 0;
	buf[0] = 0;
	for (size_t i = 0; i < json_len(v) && o + 8 < len; i++)
		o += (size_t)snprintf(buf + o, len - o, "%s%.0f", i ? "," : "", json_num_of(json_at(v, i)));
	if (!json_len(v))
		snprintf(buf, len, "-");
}

/* A run's time in the kernel, blocked, over its tasks (ms), or "-" without BPF. */
static const char *blocked_ms(char *buf, size_t len, const struct json *run)
{
	const struct json *tasks = json_get(run, "tasks");
	double ns = 0;
	for (size_t i = 0; i < json_len(tasks); i++) {
		const struct json *v = json_get(json_at(tasks, i), "kernel_blocked_ns");
		if (!json_is_num(v))
			return snprintf(buf, len, "-"), buf;
		ns += json_num_of(v);
	}
	snprintf(buf, len, json_len(tasks) ? "%.2f" : "-", ns / 1e6);
	return buf;
}

/* ---- one run ------------------------------------------------------------ */

void report_run_text(const struct json *run, FILE *f)
{
	const struct json *bpf = json_get(run, "bpf");
	bool bpf_on = json_get(bpf, "enabled") && json_bool_of(json_get(bpf, "enabled"));
	char b[17][40];
	char seed[32];
	fprintf(f, "%s  policy=%s  workers=%.0f%s  seed=%s  bpf=%s",
		json_get_str(run, "workload", "?"), json_get_str(run, "policy", "?"),
		json_get_num(run, "worker_count", 0), json_get(run, "pin") && json_bool_of(json_get(run, "pin")) ? " (pinned)" : "",
		json_num_text(json_get(run, "seed"), seed, sizeof(seed)), bpf_on ? "on" : "off");
	if (json_is_num(json_get(run, "preempt_ms")))
		fprintf(f, "  preempt=%gms", json_get_num(run, "preempt_ms", 0));
	/* runs past the run log's capacity are missing from the per-task kernel figures */
	double dropped = json_get_num(bpf, "dropped_runs", 0);
	bool partial = bpf_on && dropped > 0;
	if (bpf_on && partial)
		fprintf(f, " (%.0f lost events, %.0f runs dropped from the run log: per-task kernel "
			   "figures are partial, marked ~)", json_get_num(bpf, "lost_events", 0), dropped);
	else if (bpf_on)
		fprintf(f, " (%.0f lost events)", json_get_num(bpf, "lost_events", 0));
	fputc('\n', f);
	/* preempted: by the runtime (--preempt); k-preempt: by the kernel (BPF) */
	fprintf(f, "%5s %-10s %10s %5s %5s %4s %10s %5s %6s %9s %5s %6s %6s %-5s %11s %11s %9s %11s %6s\n",
		"task", "label", "n", "spawn", "first", "last", "done(ms)", "runs", "yields", "preempted",
		"hops", "migr", "migr-k", "cpus", "run-time(ms)", "sch-delay", "k-preempt", "blocked(ms)",
		"blocks");
	const struct json *tasks = json_get(run, "tasks");
	for (size_t i = 0; i < json_len(tasks); i++) {
		const struct json *t = json_at(tasks, i);
		char cpus[64];
		cpus_text(json_get(t, "cpus_visited"), cpus, sizeof(cpus));
		fmt_num(b[9], 32, json_get(t, "cpu_migrations"), "%.0f", 1);
		fmt_num(b[10], 32, json_get(t, "cpu_migrations_kernel"), "%.0f", 1);
		fmt_num(b[11], 32, json_get(t, "on_cpu_ns"), "%.2f", 1e-6);
		fmt_num(b[12], 32, json_get(t, "runq_wait_ns"), "%.3f", 1e-6);
		fmt_num(b[13], 32, json_get(t, "preemptions"), "%.0f", 1);
		fmt_num(b[14], 32, json_get(t, "kernel_blocked_ns"), "%.2f", 1e-6);
		fmt_num(b[15], 32, json_get(t, "kernel_blocks"), "%.0f", 1);
		for (int k = 9; partial && k < 16; k++)
			if (strcmp(b[k], "-") != 0)
				strcat(b[k], "~");
		fprintf(f, "%5s %-10s %10s %5s %5s %4s %10s %5s %6s %9s %5s %6s %6s %-5s %11s %11s %9s %11s %6s\n",
			fmt_num(b[0], 32, json_get(t, "id"), "%.0f", 1),
			json_get_str(t, "label", ""),
			fmt_num(b[1], 32, json_get(t, "n"), "%.4g", 1),
			fmt_num(b[2], 32, json_get(t, "spawn_worker"), "%.0f", 1),
			fmt_num(b[3], 32, json_get(t, "first_worker"), "%.0f", 1),
			fmt_num(b[4], 32, json_get(t, "last_worker"), "%.0f", 1),
			fmt_num(b[5], 32, json_get(t, "completion_s"), "%.2f", 1e3),
			fmt_num(b[6], 32, json_get(t, "runs"), "%.0f", 1),
			fmt_num(b[7], 32, json_get(t, "yields"), "%.0f", 1),
			fmt_num(b[16], 32, json_get(t, "preempted"), "%.0f", 1),
			fmt_num(b[8], 32, json_get(t, "worker_hops"), "%.0f", 1),
			b[9], b[10], cpus, b[11], b[12], b[13], b[14], b[15]);
	}
	const struct json *ws = json_get(run, "workers");
	if (json_len(ws)) {
		fprintf(f, "%6s %7s %9s %6s %9s %12s %13s %11s %6s\n", "worker", "tid", "tasks_run", "migr",
			"k-preempt", "on-cpu(ms)", "runq-wait(ms)", "blocked(ms)", "blocks");
		for (size_t i = 0; i < json_len(ws); i++) {
			const struct json *w = json_at(ws, i);
			fprintf(f, "%6s %7s %9s %6s %9s %12s %13s %11s %6s\n",
				fmt_num(b[0], 32, json_get(w, "index"), "%.0f", 1),
				fmt_num(b[1], 32, json_get(w, "tid"), "%.0f", 1),
				fmt_num(b[2], 32, json_get(w, "tasks_run"), "%.0f", 1),
				fmt_num(b[3], 32, json_get(w, "cpu_migrations"), "%.0f", 1),
				fmt_num(b[4], 32, json_get(w, "preemptions"), "%.0f", 1),
				fmt_num(b[5], 32, json_get(w, "on_cpu_ns"), "%.2f", 1e-6),
				fmt_num(b[6], 32, json_get(w, "runq_wait_ns"), "%.3f", 1e-6),
				fmt_num(b[7], 32, json_get(w, "kernel_blocked_ns"), "%.2f", 1e-6),
				fmt_num(b[8], 32, json_get(w, "kernel_blocks"), "%.0f", 1));
		}
	}
	double mean = json_get_num(run, "mean_completion_s", NAN);
	double ideal = json_get_num(run, "ideal_mean_completion_s", NAN);
	if (json_len(tasks)) {
		fprintf(f, "mean completion %.3f s   makespan %.3f s   ideal (SPT) %s s",
			mean, json_get_num(run, "makespan_s", NAN),
			fmt_num(b[0], 32, json_get(run, "ideal_mean_completion_s"), "%.3f", 1));
		if (ideal > 0)
			fprintf(f, "   mean/ideal %.2f", mean / ideal);
		fputc('\n', f);
	}
	fprintf(f, "wall %.3f s   peak RSS %.0f KiB\n", json_get_num(run, "wall_s", NAN),
		json_get_num(run, "peak_rss_kb", 0));
	const char *sum = json_get_str(run, "summary", "");
	if (*sum)
		fprintf(f, "%s%s", sum, sum[strlen(sum) - 1] == '\n' ? "" : "\n");
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
	double base_mean = base ? median_of(policy_metric(report, base, "mean_completion_s")) : NAN;
	double serial = median_of(policy_metric(report, REPORT_SERIAL, "wall_s"));
	int n = 0;
	for (size_t i = 0; i < json_len(pols) && n < max; i++, n++) {
		const struct json *p = json_at(pols, i);
		struct row *r = &rows[n];
		r->name = json_key_at(pols, i);
		snprintf(r->runs, sizeof(r->runs), "%.0f", json_get_num(p, "runs", 0));
		stat_cell(r->mean, sizeof(r->mean), json_get(p, "mean_completion_s"), "%.3f");
		stat_cell(r->span, sizeof(r->span), json_get(p, "makespan_s"), "%.3f");
		stat_cell(r->wall, sizeof(r->wall), json_get(p, "wall_s"), "%.3f");
		double w = median_of(json_get(p, "wall_s")), sm = median_of(json_get(p, "makespan_s"));
		snprintf(r->span_med, sizeof(r->span_med), isnan(sm) ? "-" : "%.3f", sm);
		snprintf(r->wall_med, sizeof(r->wall_med), isnan(w) ? "-" : "%.3f", w);
		snprintf(r->speedup, sizeof(r->speedup), serial > 0 && w > 0 ? "%.2f" : "-", serial / w);
		double ri = median_of(json_get(p, "ratio_to_ideal"));
		double m = median_of(json_get(p, "mean_completion_s"));
		double h = median_of(json_get(p, "worker_hops_per_task"));
		double c = median_of(json_get(p, "cpu_migrations_per_task"));
		snprintf(r->ideal, sizeof(r->ideal), isnan(ri) ? "-" : "%.2f", ri);
		snprintf(r->base, sizeof(r->base),
			 isnan(base_mean) || !(base_mean > 0) || isnan(m) ? "-" : "%.2f", m / base_mean);
		snprintf(r->hops, sizeof(r->hops), isnan(h) ? "-" : "%.2f", h);
		snprintf(r->migr, sizeof(r->migr), isnan(c) ? "-" : "%.2f", c);
		double pr = median_of(json_get(p, "preempted_per_task"));
		snprintf(r->preempted, sizeof(r->preempted), isnan(pr) ? "-" : "%.1f", pr);
	}
	return n;
}

static void headline(const struct json *report, FILE *f, const char *pre)
{
	const struct json *runs = json_get(report, "runs");
	const struct json *r0 = json_at(runs, 0);
	for (size_t i = 0; i < json_len(runs); i++) {
		if (strcmp(json_get_str(json_at(runs, i), "policy", ""), REPORT_SERIAL) != 0) {
			r0 = json_at(runs, i);
			break;
		}
	}
	const struct json *opts = json_get(report, "options");
	fprintf(f, "%s%s", pre, json_get_str(report, "workload", "?"));
	for (size_t i = 0; i < json_len(opts); i++)
		fprintf(f, " %s", json_str_of(json_at(opts, i)) ? json_str_of(json_at(opts, i)) : "");
	fprintf(f, ": %zu policies x %d repeats, %.0f workers%s, %zu runs%s\n",
		json_len(json_get(report, "policies")), runs_of_first_policy(report),
		json_get_num(r0, "worker_count", 0),
		json_get(r0, "pin") && json_bool_of(json_get(r0, "pin")) ? " (pinned)" : "",
		json_len(runs),
		json_get(report, "interrupted") && json_bool_of(json_get(report, "interrupted"))
			? " (interrupted: partial report)" : "");
}

void report_text(const struct json *report, FILE *f)
{
	struct row rows[32];
	int n = table_rows(report, rows, 32);
	const char *base = baseline_policy(report);
	char bh[32];
	snprintf(bh, sizeof(bh), "x %s", base ? base : "base");
	bool serial = json_get(json_get(report, "policies"), REPORT_SERIAL) != NULL;
	headline(report, f, "");
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
	const char *sum = json_get_str(json_at(json_get(report, "runs"), 0), "summary", "");
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
static void run_cells(const struct json *r, size_t i, char cell[RUN_COLUMNS][64])
{
	const struct json *bpf = json_get(r, "bpf");
	bool on = json_get(bpf, "enabled") && json_bool_of(json_get(bpf, "enabled"));
	double mean = json_get_num(r, "mean_completion_s", NAN);
	double ideal = json_get_num(r, "ideal_mean_completion_s", NAN);
	snprintf(cell[0], 64, "%zu", i + 1);
	snprintf(cell[1], 64, "%s", json_get_str(r, "policy", "?"));
	json_num_text(json_get(r, "seed"), cell[2], 64);
	fmt_num(cell[3], 64, json_get(r, "mean_completion_s"), "%.4f", 1);
	fmt_num(cell[4], 64, json_get(r, "makespan_s"), "%.4f", 1);
	snprintf(cell[5], 64, isnan(ideal) ? "-" : "%.4f", ideal);
	snprintf(cell[6], 64, isnan(ideal) || !(ideal > 0) ? "-" : "%.2f", mean / ideal);
	snprintf(cell[7], 64, "%.4f", json_get_num(r, "wall_s", NAN));
	snprintf(cell[8], 64, "%.0f", json_get_num(r, "peak_rss_kb", 0));
	snprintf(cell[9], 64, on ? "%.0f" : "(no BPF)", json_get_num(bpf, "lost_events", 0));
	blocked_ms(cell[10], 64, r);
}

void report_markdown(const struct json *report, const struct report_figs *figs, FILE *f)
{
	struct row rows[32];
	int n = table_rows(report, rows, 32);
	const char *base = baseline_policy(report);
	const struct json *m = json_get(report, "machine");
	fprintf(f, "# taskhop report: %s\n\n", json_get_str(report, "workload", "?"));
	headline(report, f, "");
	fprintf(f, "\nMachine: %.0f CPUs, %s, Linux %s", json_get_num(m, "cpus", 0),
		json_get_str(m, "cpu_model", "?"), json_get_str(m, "kernel", "?"));
	if (json_is_num(json_get(m, "loadavg_1min")))
		fprintf(f, ", 1-min load average %.2f at the start", json_get_num(m, "loadavg_1min", 0));
	fprintf(f, ".  \nCommand: `%s`\n\n", json_get_str(report, "command", ""));
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
	const char *sum = json_get_str(json_at(json_get(report, "runs"), 0), "summary", "");
	if (*sum)
		fprintf(f, "\n```\n%s%s```\n", sum, sum[strlen(sum) - 1] == '\n' ? "" : "\n");
	if (figs && figs->n) {
		fprintf(f, "\n## Figures\n\n");
		for (int i = 0; i < figs->n; i++)
			fprintf(f, "### %s\n\n![%s](%s)\n\n", figs->titles[i], figs->titles[i], figs->names[i]);
	}
	fprintf(f, "\n## Runs\n\n|");
	for (size_t c = 0; c < RUN_COLUMNS; c++)
		fprintf(f, " %s |", run_columns[c]);
	fprintf(f, "\n|");
	for (size_t c = 0; c < RUN_COLUMNS; c++)
		fprintf(f, "---|");
	fputc('\n', f);
	const struct json *runs = json_get(report, "runs");
	for (size_t i = 0; i < json_len(runs); i++) {
		char cell[RUN_COLUMNS][64];
		run_cells(json_at(runs, i), i, cell);
		fputc('|', f);
		for (size_t c = 0; c < RUN_COLUMNS; c++)
			fprintf(f, " %s |", cell[c]);
		fputc('\n', f);
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

int report_html(const struct json *report, const struct report_figs *figs, const char *dir, FILE *f)
{
	struct row rows[32];
	int n = table_rows(report, rows, 32);
	const char *base = baseline_policy(report);
	const struct json *m = json_get(report, "machine");
	fprintf(f, "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>taskhop report: ");
	html_esc(f, json_get_str(report, "workload", "?"));
	fprintf(f, "</title>\n<style>body{font-family:sans-serif;max-width:1100px;margin:2em auto}"
		   "table{border-collapse:collapse}td,th{border:1px solid #bbb;padding:3px 8px;"
		   "text-align:right}th{background:#eee}td:first-child{text-align:left}"
		   "pre{background:#f6f6f6;padding:8px}</style></head><body>\n");
	fprintf(f, "<h1>taskhop report: ");
	html_esc(f, json_get_str(report, "workload", "?"));
	fprintf(f, "</h1>\n<p>");
	char *hl = NULL;
	size_t hlen = 0;
	FILE *mf = open_memstream(&hl, &hlen);
	if (mf) {
		headline(report, mf, "");
		fclose(mf);
		html_esc(f, hl);
		free(hl);
	}
	fprintf(f, "<br>Machine: %.0f CPUs, ", json_get_num(m, "cpus", 0));
	html_esc(f, json_get_str(m, "cpu_model", "?"));
	fprintf(f, ", Linux ");
	html_esc(f, json_get_str(m, "kernel", "?"));
	fprintf(f, "<br>Command: <code>");
	html_esc(f, json_get_str(report, "command", ""));
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
	const char *sum = json_get_str(json_at(json_get(report, "runs"), 0), "summary", "");
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
	fprintf(f, "<h2>Runs</h2>\n<table><tr>");
	for (size_t c = 0; c < RUN_COLUMNS; c++)
		fprintf(f, "<th>%s</th>", run_columns[c]);
	fprintf(f, "</tr>\n");
	const struct json *runs = json_get(report, "runs");
	for (size_t i = 0; i < json_len(runs); i++) {
		char cell[RUN_COLUMNS][64];
		run_cells(json_at(runs, i), i, cell);
		fprintf(f, "<tr>");
		for (size_t c = 0; c < RUN_COLUMNS; c++) {
			fprintf(f, "<td>");
			html_esc(f, cell[c]);
			fprintf(f, "</td>");
		}
		fprintf(f, "</tr>\n");
	}
	fprintf(f, "</table>\n<p>Files: <a href=\"report.json\">report.json</a> (source of truth; <code>taskhop "
		   "report DIR</code> re-renders this page), <a href=\"runs.csv\">runs.csv</a> (one row per "
		   "task per run), <a href=\"trace.json\">trace.json</a> (open in "
		   "<a href=\"https://ui.perfetto.dev\">ui.perfetto.dev</a>).</p>\n");
	fprintf(f, "</body></html>\n");
	return 0;
}

/* ---- CSV: one row per task per run ------------------------------------------ */

static void csv_cell(FILE *f, const struct json *v)
{
	if (!v || json_type_of(v) == JSON_NULL)
		return;
	if (json_type_of(v) == JSON_NUM) {
		char buf[32];
		unsigned long long u;
		double x = json_num_of(v);
		if (json_as_u64(v, &u) || (x == floor(x) && fabs(x) < 9e15))
			fputs(json_num_text(v, buf, sizeof(buf)), f);
		else
			fprintf(f, "%.9g", x);
	} else if (json_type_of(v) == JSON_STR) {
		fputc('"', f);
		for (const char *s = json_str_of(v); *s; s++) {
			if (*s == '"')
				fputc('"', f);
			fputc(*s, f);
		}
		fputc('"', f);
	} else if (json_type_of(v) == JSON_ARR) {
		/* cpus_visited: "0 1" keeps the cell a single field */
		fputc('"', f);
		for (size_t i = 0; i < json_len(v); i++)
			fprintf(f, "%s%.0f", i ? " " : "", json_num_of(json_at(v, i)));
		fputc('"', f);
	} else if (json_type_of(v) == JSON_BOOL) {
		fputs(json_bool_of(v) ? "true" : "false", f);
	}
}

void report_csv(const struct json *report, FILE *f)
{
	static const char *const run_cols[] = { "policy", "seed", "worker_count", NULL };
	fprintf(f, "run");
	for (int i = 0; run_cols[i]; i++)
		fprintf(f, ",%s", run_cols[i]);
	for (int i = 0; report_task_fields[i]; i++)
		fprintf(f, ",%s", report_task_fields[i]);
	fprintf(f, ",work_s\n");
	const struct json *runs = json_get(report, "runs");
	for (size_t r = 0; r < json_len(runs); r++) {
		const struct json *run = json_at(runs, r);
		const struct json *tasks = json_get(run, "tasks");
		for (size_t k = 0; k < json_len(tasks); k++) {
			const struct json *t = json_at(tasks, k);
			fprintf(f, "%zu", r + 1);
			for (int i = 0; run_cols[i]; i++) {
				fputc(',', f);
				csv_cell(f, json_get(run, run_cols[i]));
			}
			for (int i = 0; report_task_fields[i]; i++) {
				fputc(',', f);
				csv_cell(f, json_get(t, report_task_fields[i]));
			}
			fputc(',', f);
			csv_cell(f, json_get(t, "work_s"));
			fputc('\n', f);
		}
	}
}
