/* cmd_report.c — `taskhop report DIR|FILE.json`: re-renders the text summary, Markdown, HTML,
 * CSV, figures and trace.json from a report (or single run) JSON alone. */
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "cmd.h"
#include "report/hist.h"
#include "report/report.h"
#include "report/run.h"
#include "report/stats.h"

static void report_help(FILE *f)
{
	fprintf(f,
		"usage: taskhop report DIR|FILE.json [--out DIR] [--no-files] [--bench] [--hist]\n"
		"                      [--timeline-seed S|all] [--timeline-color worker|cpu]\n"
		"\n"
		"Reads DIR/report.json (written by 'taskhop compare') or a run JSON (written by\n"
		"'taskhop run --json'), prints the summary, and re-renders report.md, report.html,\n"
		"runs.csv, the SVG figures and trace.json from the JSON alone.\n"
		"\n"
		"  --out DIR    write the rendered files there (default: the JSON's directory)\n"
		"  --no-files   only print the summary\n"
		"  --hist       also print, per policy, the run-queue wait and on-CPU time per run\n"
		"               of a task as log2 histograms (as bcc's runqlat)\n"
		"  --bench      print the report's key figures as 'bench: NAME VALUE UNIT' lines\n"
		"               instead (what 'make bench' shows)\n"
		"  --timeline-seed S|all  which run's trace (and timeline) to draw per policy: the\n"
		"               run with seed S, or every run (default: the median run by mean\n"
		"               completion); trace.json says which it drew\n"
		"  --timeline-color worker|cpu  colour the timeline figures' run bars by the\n"
		"               worker that ran them (default) or by the CPU (BPF data)\n"
		"\n"
		"example:\n"
		"  taskhop compare darts --policies sticky,shared --repeat 2 --small 1e5 --large 1e7 --no-bpf --out /tmp/r\n"
		"  taskhop report /tmp/r\n");
}

/* Policies that move tasks between workers in user space: everything but sticky (never moves)
 * and kthread (the kernel moves threads) and the serial baseline. */
static bool user_migrating(const char *p)
{
	return strcmp(p, "sticky") && strcmp(p, "kthread") && strcmp(p, REPORT_SERIAL);
}

static double med(const struct json *pol, const char *m)
{
	return json_get_num(json_get(pol, m), "median", -1);
}

/* The targets: best migrating policy's mean completion vs the SPT ideal and vs
 * sticky (darts-like reports), and speedup over the serial baseline (isprime-like). */
static void print_bench(const struct json *r)
{
	const char *wl = json_get_str(r, "workload", "?");
	const struct json *pols = json_get(r, "policies");
	const struct json *m = json_get(r, "machine");
	if (json_is_num(json_get(m, "loadavg_1min")))
		printf("# %s: 1-min load average %.2f on %.0f CPUs when the runs started\n", wl,
		       json_get_num(m, "loadavg_1min", 0), json_get_num(m, "cpus", 0));
	/* Share of its CPUs the median run got (process CPU time / (wall x workers)). */
	struct report_view v;
	char err[256];
	double share[1024];
	int ns = 0;
	if (report_view_read(r, &v, err, sizeof(err)) == 0) { /* validated by the caller */
		for (size_t i = 0; i < v.nruns && ns < 1024; i++) {
			const struct run *run = &v.runs[i];
			if (run->cpu_s >= 0 && run->wall_s > 0 && strcmp(run->policy, REPORT_SERIAL) != 0)
				share[ns++] = run->cpu_s / (run->wall_s * run->worker_count);
		}
		report_view_free(&v);
	}
	struct stat_summary st;
	if (ns && stats_summarize(share, ns, &st) == 0)
		printf("# %s: the median run used %.0f%% of its workers' CPU time (100%% = no competition "
		       "and no idling)\n", wl, 100 * st.median);
	double serial = med(json_get(pols, REPORT_SERIAL), REPORT_METRIC_WALL);
	double sticky = med(json_get(pols, "sticky"), REPORT_METRIC_MEAN);
	const char *best = NULL;
	double best_mean = 0, best_ratio = 0;
	for (size_t i = 0; i < json_len(pols); i++) {
		const char *name = json_key_at(pols, i);
		const struct json *p = json_at(pols, i);
		if (serial > 0) {
			double w = med(p, REPORT_METRIC_WALL);
			if (strcmp(name, REPORT_SERIAL) == 0)
				printf("bench: %s_serial_wall %.3f s\n", wl, w);
			else
				printf("bench: %s_speedup_%s %.3f x\n", wl, name, serial / w);
			continue;
		}
		double m = med(p, REPORT_METRIC_MEAN), ri = med(p, REPORT_METRIC_IDEAL);
		printf("bench: %s_mean_completion_%s %.4f s\n", wl, name, m);
		if (ri > 0)
			printf("bench: %s_mean_over_ideal_%s %.3f ratio\n", wl, name, ri);
		if (user_migrating(name) && ri > 0 && (!best || m < best_mean)) {
			best = name;
			best_mean = m;
			best_ratio = ri;
		}
	}
	if (best) {
		printf("# %s: best migrating policy (lowest median mean completion): %s\n", wl, best);
		printf("bench: %s_best_migrating_over_ideal %.3f ratio\n", wl, best_ratio);
		if (sticky > 0)
			printf("bench: %s_best_migrating_over_sticky %.3f ratio\n", wl, best_mean / sticky);
	}
}

int cmd_report(int argc, char **argv)
{
	const char *src = NULL, *out = NULL, *timeline_seed = NULL, *timeline_color = NULL;
	uint64_t seed = 0;
	bool files = true, bench = false, hist = false;
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
			report_help(stdout);
			return 0;
		} else if (strcmp(argv[i], "--no-files") == 0) {
			files = false;
		} else if (strcmp(argv[i], "--hist") == 0) {
			hist = true;
		} else if (strcmp(argv[i], "--bench") == 0) {
			bench = true;
			files = false;
		} else if (strcmp(argv[i], "--out") == 0) {
			if (i + 1 >= argc)
				return cli_usage("report", "--out needs a value");
			out = argv[++i];
		} else if (strcmp(argv[i], "--timeline-seed") == 0) {
			if (i + 1 >= argc)
				return cli_usage("report", "--timeline-seed needs a value");
			timeline_seed = argv[++i];
			if (strcmp(timeline_seed, "all") != 0 &&
			    cli_number("--timeline-seed", timeline_seed, 0, UINT64_MAX, &seed))
				return 2;
		} else if (strcmp(argv[i], "--timeline-color") == 0) {
			if (i + 1 >= argc)
				return cli_usage("report", "--timeline-color needs a value");
			timeline_color = argv[++i];
			if (strcmp(timeline_color, "worker") != 0 && strcmp(timeline_color, "cpu") != 0)
				return cli_usage("report", "--timeline-color must be worker or cpu, not '%s'",
						 timeline_color);
		} else if (argv[i][0] == '-') {
			return cli_usage("report", "unknown option '%s'", argv[i]);
		} else if (src) {
			return cli_usage("report", "one DIR or FILE.json, not '%s' too", argv[i]);
		} else {
			src = argv[i];
		}
	}
	if (!src)
		return cli_usage("report", "missing DIR or FILE.json");
	char path[4096], dir[4096], err[512];
	struct stat st;
	if (stat(src, &st) != 0)
		return cli_usage("report", "%s: no such file or directory", src);
	if (S_ISDIR(st.st_mode)) {
		snprintf(path, sizeof(path), "%s/report.json", src);
		snprintf(dir, sizeof(dir), "%s", src);
	} else {
		snprintf(path, sizeof(path), "%s", src);
		snprintf(dir, sizeof(dir), "%s", src);
		char *slash = strrchr(dir, '/');
		if (slash)
			*slash = 0;
		else
			snprintf(dir, sizeof(dir), ".");
	}
	struct json *j = json_parse_file(path, err, sizeof(err));
	if (!j)
		return cli_usage("report", "%s", err);
	bool single = !json_get(j, "taskhop_report") && json_get(j, TH_RUN_KEY(tasks));
	if (single)
		j = report_from_run(j);
	/* nothing of the file is printed or drawn before it passed */
	if (report_validate(j, err, sizeof(err))) {
		json_free(j);
		return cli_usage("report", "%s: %s", path, err);
	}
	if (single && !bench) {
		report_run_text(json_at(json_get(j, "runs"), 0), stdout);
		fputc('\n', stdout);
	}
	if (timeline_seed && report_set_timeline_seed(j, strcmp(timeline_seed, "all") == 0, seed)) {
		json_free(j);
		return cli_usage("report", "--timeline-seed %s: %s has no run with that seed", timeline_seed, path);
	}
	if (timeline_color)
		report_set_timeline_color(j, timeline_color);
	/* Older or hand-edited reports: the policy figures are always recomputed from runs. */
	report_aggregate(j);
	if (bench) {
		print_bench(j);
		json_free(j);
		return 0;
	}
	report_text(j, stdout);
	if (hist)
		hist_text(j, stdout);
	int rc = 0;
	if (files) {
		const char *to = out ? out : dir;
		if (report_write_all(j, to, out != NULL && !single, err, sizeof(err)))
			rc = cli_usage("report", "%s", err);
		else
			printf("wrote %s/report.md, report.html, runs.csv, *.svg, trace.json\n", to);
	}
	json_free(j);
	return rc;
}
