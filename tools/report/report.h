/* report.h — taskhop reports: the run and compare JSON (the source of truth), their
 * aggregation over repeats, and every rendering made from the JSON alone. */
#ifndef TASKHOP_REPORT_H
#define TASKHOP_REPORT_H

#include <stdbool.h>
#include <stdio.h>

#include "report/json.h"

/* Field names every run / task / worker object carries (null when not measured). */
extern const char *const report_run_fields[];
extern const char *const report_task_fields[];
extern const char *const report_worker_fields[];
/* Figures per policy in report["policies"][NAME], each {median,min,max,ci95,...} over the
 * policy's runs (report_aggregate): the names, once. */
#define REPORT_METRIC_MEAN "mean_completion_s"        /* runs' mean_completion_s */
#define REPORT_METRIC_MAKESPAN "makespan_s"           /* runs' makespan_s */
#define REPORT_METRIC_HOPS "worker_hops_per_task"     /* per task of a run */
#define REPORT_METRIC_MIGR "cpu_migrations_per_task"  /* per task of a run (BPF) */
#define REPORT_METRIC_IDEAL "ratio_to_ideal"          /* mean / ideal_mean_completion_s */
#define REPORT_METRIC_WALL "wall_s"                   /* runs' wall_s */
#define REPORT_METRIC_PREEMPTED "preempted_per_task"  /* per task (the runtime's --preempt) */
extern const char *const report_policy_fields[];
/* Distinct policy labels one report may hold (each a table row, a figure series and a
 * trace process); the reader refuses more. */
#define REPORT_MAX_POLICIES 32

/* ---- building ------------------------------------------------------------ */

/* {"machine":{cpus,kernel,cpu_model}} of this machine. */
struct json *report_machine(void);
/* The command line as one shell-quoted string. */
struct json *report_command(int argc, char **argv);
/* An empty compare report: taskhop_report, command, machine, workload, options, runs[]. */
struct json *report_new(const char *workload, const struct json *options, int argc, char **argv);
/* Fills mean_completion_s, makespan_s and ideal_mean_completion_s of a run from its tasks
 * (completion_s, work_s) and workers. */
void report_run_derive(struct json *run);
/* Recomputes report["policies"] from report["runs"] (policies in order of first run). */
int report_aggregate(struct json *report);
/* A report of one run (what `taskhop report run.json` renders). Takes ownership of run. */
struct json *report_from_run(struct json *run);

/* Checks the fields above are present in every run, task and worker, of their type and in
 * their range (CPUs, workers, ids, counts, means, timeline rows; names without control
 * characters), so that every renderer below can trust a report that passed: the run reader
 * (report_view_read in report/run.h, run_read.c) reads it and lets it go.
 * 0, or -1 with one line naming the run and field in err: "run 3 task 5 has no
 * 'completion_s'", "run 1: 'timeline runs' must be a whole number in [-1, 1023], not 2e9". */
int report_validate(const struct json *report, char *err, size_t errlen);

/* ---- rendering (all from the JSON) ---------------------------------------- */

/* `taskhop run`: the per-task table and the run summary, of a run as the reader (run.h)
 * gives it, or of its JSON (read first; a run that fails the reader is one line on f). */
struct run;
void report_run_text_of(const struct run *run, FILE *f);
void report_run_text(const struct json *run, FILE *f);
/* The policy summary table of a compare report. */
void report_text(const struct json *report, FILE *f);
/* Markdown / HTML / CSV into a stream. figs: names of SVGs already drawn in the same
 * directory (HTML inlines them, Markdown links them). */
struct report_figs {
	char names[16][64];
	char titles[16][128];
	int n;
};
void report_markdown(const struct json *report, const struct report_figs *figs, FILE *f);
int report_html(const struct json *report, const struct report_figs *figs, const char *dir, FILE *f);
void report_csv(const struct json *report, FILE *f);

struct report_view;
/* Draws every figure of the report into dir (gnuplot SVGs) and lists them in figs.
 * A figure gnuplot cannot draw is reported on stderr and skipped; a figure that cannot be
 * written (a full disk) fails the whole report. Returns figures drawn, or -1 with err set. */
int report_figures(const struct json *report, const char *dir, struct report_figs *figs,
		   char *err, size_t errlen);
int report_figures_of(const struct report_view *v, const char *dir, struct report_figs *figs,
		      char *err, size_t errlen);
/* The colour of the i-th policy in every figure ("#rrggbb"). */
const char *report_policy_colour(int i);
/* Which runs the timelines draw (trace_pick.c), from the report's timeline_seed (read into
 * report_view.timeline_mode): a seed (REPORT_PICK_SEED), "all" (every run), else the median
 * run of each policy (by mean completion, or wall time without it; the lower median of an
 * even count). */
enum { REPORT_PICK_MEDIAN, REPORT_PICK_SEED, REPORT_PICK_ALL };
struct report_view;
/* The run of `policy` the timeline draws (for "all": the median one), or NULL (no run with
 * that seed); why gets the reason, "the median run of 5 by mean completion". */
const struct run *report_timeline_run(const struct report_view *v, const char *policy, char *why,
				      size_t len);
/* Sets report["timeline_seed"] (--timeline-seed): "all", or seed. -1, changing nothing, if
 * the report has runs and none of them has that seed. */
int report_set_timeline_seed(struct json *report, bool all, unsigned long long seed);
/* Sets report["timeline_color"] (--timeline-color): "worker" or "cpu"; -1 for anything else. */
int report_set_timeline_color(struct json *report, const char *color);
/* The Chrome trace-event JSON (Perfetto) of the report's chosen runs (above), one process
 * per run: tracks per CPU (the kernel's on-CPU intervals of its threads), per thread
 * (running / runnable / preempted / blocked), per worker and per task (task runs). */
struct json *report_trace(const struct json *report); /* NULL: the report fails the reader */
struct json *report_trace_of(const struct report_view *v);

/* Validates the report, then writes report.md, report.html, runs.csv, the figures and
 * trace.json (and report.json too when with_json) into a directory beside dir, checks every
 * file and swaps it in for dir (see fs_stage in fsutil.h): dir holds the complete new
 * report or, after a failure, the old one untouched. 0, or -1 with err naming the file. */
int report_write_all(const struct json *report, const char *dir, bool with_json, char *err,
		     size_t errlen);

/* Every JSON taskhop writes names its version and its schema ("taskhop_version",
 * "schema"): a run (`run --json`, `record -o`), a report (report.json), a trace
 * (trace.json; trace viewers ignore top-level keys they do not know). */
#define REPORT_SCHEMA_RUN "taskhop-run/1"
#define REPORT_SCHEMA_REPORT "taskhop-report/1"
#define REPORT_SCHEMA_TRACE "taskhop-trace/2"
void report_stamp(struct json *o, const char *schema);

/* Policy name used for the serial baseline runs of a workload with baseline_option. */
#define REPORT_SERIAL "serial"

#endif
