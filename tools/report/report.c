/* report.c — builds, derives and aggregates run/compare reports (the JSON side), and writes
 * every output file of a report directory. The run schema is run.h; renderers are render.c. */
#include "report/report.h"

#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "report/fsutil.h"
#include "report/run.h"
#include "report/stats.h"
#include "taskhop.h"

/* The fields every run, task and worker carries: REQ and NUL in run_schema.h. */
#define CARRIED_(name, need, kind) CARRIED_##need(#name)
#define CARRIED_REQ(key) key,
#define CARRIED_NUL(key) key,
#define CARRIED_OPT(key)
#define CARRIED_EXT(key)
const char *const report_run_fields[] = { TH_RUN_FIELDS(CARRIED_) NULL };
const char *const report_task_fields[] = { TH_RUN_TASK_FIELDS(CARRIED_) NULL };
const char *const report_worker_fields[] = { TH_RUN_WORKER_FIELDS(CARRIED_) NULL };
const char *const report_policy_fields[] = {
	REPORT_METRIC_MEAN, REPORT_METRIC_MAKESPAN, REPORT_METRIC_HOPS, REPORT_METRIC_MIGR, NULL,
};

/* ---- building ------------------------------------------------------------ */

static void cpu_model(char *out, size_t len)
{
	snprintf(out, len, "unknown");
	FILE *f = fopen("/proc/cpuinfo", "r");
	if (!f)
		return;
	char line[512];
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, "model name", 10) == 0) {
			char *c = strchr(line, ':');
			if (c) {
				c++;
				while (*c == ' ' || *c == '\t')
					c++;
				c[strcspn(c, "\n")] = 0;
				snprintf(out, len, "%s", c);
			}
			break;
		}
	}
	fclose(f);
}

struct json *report_machine(void)
{
	struct json *m = json_obj();
	struct utsname u;
	char model[256];
	cpu_model(model, sizeof(model));
	json_set_num(m, "cpus", (double)sysconf(_SC_NPROCESSORS_ONLN));
	json_set_str(m, "kernel", uname(&u) == 0 ? u.release : "unknown");
	json_set_str(m, "cpu_model", model);
	/* Other processes competing for the CPUs distort every timing: keep the evidence. */
	double load[1];
	if (getloadavg(load, 1) == 1)
		json_set_num(m, "loadavg_1min", load[0]);
	return m;
}

struct json *report_command(int argc, char **argv)
{
	size_t cap = 64;
	for (int i = 0; i < argc; i++)
		cap += 4 * strlen(argv[i]) + 3;
	char *s = malloc(cap), *o = s;
	if (!s)
		return json_str("");
	for (int i = 0; i < argc; i++) {
		const char *a = argv[i];
		bool plain = *a && strspn(a, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
					  "0123456789-_=.,/:+@%") == strlen(a);
		if (i)
			*o++ = ' ';
		if (plain) {
			o += sprintf(o, "%s", a);
			continue;
		}
		*o++ = '\'';
		for (; *a; a++) {
			if (*a == '\'')
				o += sprintf(o, "'\\''");
			else
				*o++ = *a;
		}
		*o++ = '\'';
	}
	*o = 0;
	struct json *j = json_str(s);
	free(s);
	return j;
}

void report_stamp(struct json *o, const char *schema)
{
	json_set_str(o, "taskhop_version", TASKHOP_VERSION);
	json_set_str(o, "schema", schema);
}

struct json *report_new(const char *workload, const struct json *options, int argc, char **argv)
{
	struct json *r = json_obj();
	json_set_num(r, "taskhop_report", 1);
	report_stamp(r, REPORT_SCHEMA_REPORT);
	json_set(r, "command", report_command(argc, argv));
	json_set(r, "machine", report_machine());
	json_set_str(r, "workload", workload);
	json_set(r, "options", options ? json_clone(options) : json_arr());
	json_set_bool(r, "interrupted", false);
	json_set(r, "runs", json_arr());
	return r;
}

static struct json *num_or_null(double x)
{
	return isnan(x) ? json_null() : json_num(x);
}

void report_run_derive(struct json *run)
{
	struct run r;
	char err[256];
	if (run_read_partial(run, &r, err, sizeof(err)))
		return;
	run_derive(&r);
	json_set(run, TH_RUN_KEY(mean_completion_s), num_or_null(r.mean_completion_s));
	json_set(run, TH_RUN_KEY(makespan_s), num_or_null(r.makespan_s));
	json_set(run, TH_RUN_KEY(ideal_mean_completion_s), num_or_null(r.ideal_mean_completion_s));
	run_release(&r);
}

/* Per-task mean of a task field (its offset in struct run_task) over a run; NAN when any
 * task lacks it (e.g. no BPF). */
static double per_task(const struct run *run, size_t field)
{
	if (!run->ntasks)
		return NAN;
	double s = 0;
	for (size_t i = 0; i < run->ntasks; i++)
		s += *(const double *)((const char *)&run->tasks[i] + field); /* NAN stays NAN */
	return s / (double)run->ntasks;
}

/* One policy's figures: x[k][run] for each metric over the runs of that policy. */
enum { M_MEAN, M_SPAN, M_HOPS, M_MIGR, M_IDEAL, M_WALL, M_PREEMPTED, M_NMETRICS };
static const char *const metric_names[M_NMETRICS] = {
	REPORT_METRIC_MEAN, REPORT_METRIC_MAKESPAN, REPORT_METRIC_HOPS, REPORT_METRIC_MIGR,
	REPORT_METRIC_IDEAL, REPORT_METRIC_WALL, REPORT_METRIC_PREEMPTED,
};

static double run_metric(const struct run *run, int m)
{
	switch (m) {
	case M_MEAN: return run->mean_completion_s;
	case M_SPAN: return run->makespan_s;
	case M_HOPS: return per_task(run, offsetof(struct run_task, worker_hops));
	case M_MIGR: return per_task(run, offsetof(struct run_task, cpu_migrations));
	case M_PREEMPTED: return per_task(run, offsetof(struct run_task, preempted)); /* by the runtime */
	case M_IDEAL: {
		double ideal = run->ideal_mean_completion_s;
		return ideal > 0 ? run->mean_completion_s / ideal : NAN;
	}
	default: return run->wall_s;
	}
}

/* The figures of one policy over its runs. */
static struct json *policy_figures(const struct report_view *v, const char *name, double *x)
{
	struct json *p = json_obj();
	int count = 0;
	for (int m = 0; m < M_NMETRICS; m++) {
		int k = 0;
		bool missing = false;
		for (size_t j = 0; j < v->nruns; j++) {
			if (strcmp(v->runs[j].policy, name) != 0)
				continue;
			double y = run_metric(&v->runs[j], m);
			if (isnan(y))
				missing = true;
			else
				x[k++] = y;
		}
		/* A figure missing from some runs would summarize a biased subset: null. */
		json_set(p, metric_names[m], missing ? json_null() : stats_json(x, k));
	}
	/* every run of the policy: a serial baseline has no mean completion but ran */
	for (size_t j = 0; j < v->nruns; j++)
		count += strcmp(v->runs[j].policy, name) == 0;
	json_set_num(p, "runs", count);
	return p;
}

int report_aggregate(struct json *report)
{
	struct report_view v;
	char err[256];
	if (report_view_read_partial(report, &v, err, sizeof(err))) {
		json_set(report, "policies", json_obj()); /* nothing to summarize: the reader refuses it */
		return -1;
	}
	struct json *pols = json_obj();
	double *x = malloc((v.nruns ? v.nruns : 1) * sizeof(*x));
	if (!pols || !x) {
		json_free(pols);
		free(x);
		report_view_free(&v);
		return -1;
	}
	for (size_t i = 0; i < v.nruns; i++)
		if (!json_get(pols, v.runs[i].policy))
			json_set(pols, v.runs[i].policy, policy_figures(&v, v.runs[i].policy, x));
	free(x);
	report_view_free(&v);
	return json_set(report, "policies", pols);
}

struct json *report_from_run(struct json *run)
{
	struct json *r = json_obj();
	json_set_num(r, "taskhop_report", 1);
	report_stamp(r, REPORT_SCHEMA_REPORT);
	json_set(r, "command", json_clone(json_get(run, TH_RUN_KEY(command))) ?: json_str(""));
	json_set(r, "machine", json_clone(json_get(run, TH_RUN_KEY(machine))) ?: report_machine());
	json_set_str(r, "workload", json_get_str(run, TH_RUN_KEY(workload), "?"));
	json_set(r, "options", json_clone(json_get(run, TH_RUN_KEY(options))) ?: json_arr());
	json_set_bool(r, "interrupted", false);
	struct json *runs = json_arr();
	json_push(runs, run);
	json_set(r, "runs", runs);
	report_aggregate(r);
	return r;
}

/* ---- the report directory ------------------------------------------------- */

struct render_args {
	const struct json *report;
	const struct report_figs *figs;
	const char *dir;
	int kind;
};

static int render_cb(FILE *f, void *arg)
{
	struct render_args *a = arg;
	switch (a->kind) {
	case 0: report_markdown(a->report, a->figs, f); return 0;
	case 1: return report_html(a->report, a->figs, a->dir, f);
	default: report_csv(a->report, f); return 0;
	}
}

/* Everything of a report into dir (the staging directory): report.json, the figures, then
 * the pages that inline them, the CSV and the trace. */
static int write_files(const struct report_view *v, const char *dir, bool with_json, char *err,
		       size_t errlen)
{
	const struct json *report = v->json;
	char path[4096];
	if (with_json) {
		if (fs_join(path, sizeof(path), dir, "report.json") ||
		    json_write_file(path, report, 1, err, errlen))
			return -1;
	}
	struct report_figs figs;
	memset(&figs, 0, sizeof(figs));
	if (report_figures_of(v, dir, &figs, err, errlen) < 0)
		return -1;
	static const char *const files[] = { "report.md", "report.html", "runs.csv" };
	for (int k = 0; k < 3; k++) {
		struct render_args a = { report, &figs, dir, k };
		if (fs_join(path, sizeof(path), dir, files[k]) ||
		    fs_write_atomic(path, render_cb, &a, err, errlen))
			return -1;
	}
	struct json *trace = report_trace_of(v);
	int rc = fs_join(path, sizeof(path), dir, "trace.json") ||
		 json_write_file(path, trace, 0, err, errlen);
	json_free(trace);
	return rc ? -1 : 0;
}

/* Names in errors are those of the target, not of the staging directory. */
static void name_target(char *err, size_t errlen, const struct fs_stage *st)
{
	char *at = strstr(err, st->tmp);
	if (!at)
		return;
	char rest[1024];
	snprintf(rest, sizeof(rest), "%s", at + strlen(st->tmp));
	snprintf(at, errlen - (size_t)(at - err), "%s%s", st->target, rest);
}

int report_write_all(const struct json *report, const char *dir, bool with_json, char *err,
		     size_t errlen)
{
	struct report_view v;
	err[0] = 0;
	if (report_view_read(report, &v, err, errlen))
		return -1;
	struct fs_stage st;
	int rc = fs_stage_begin(&st, dir, err, errlen);
	if (rc == 0 && write_files(&v, st.tmp, with_json, err, errlen)) {
		name_target(err, errlen, &st);
		fs_stage_abort(&st);
		rc = -1;
	} else if (rc == 0 && (rc = fs_stage_commit(&st, err, errlen)) != 0) {
		name_target(err, errlen, &st);
	}
	report_view_free(&v);
	return rc;
}
