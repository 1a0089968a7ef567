/* workload.h — the interface every `taskhop` workload implements (tools/workloads/NAME.c).
 * A workload parses its own options, runs once, and fills a wl_result the CLI turns into JSON.
 *
 * Adding a workload: write tools/workloads/NAME.c defining
 *   `const struct th_workload th_workload_NAME = { .name = "NAME", ... };`
 * That is all: tools/tools.mk generates the registry ($(B)/wl_registry.h, one WL(NAME) per
 * file in tools/workloads/), so `taskhop list/run/compare` see it at the next build.
 *
 * Life of one run (tools/cmd_run.c):
 *   defaults(params) -> parse(...) for each unknown argument -> [runtime started with the chosen
 *   policy/workers/seed, unless needs_runtime() says no] -> [BPF recorder attached] ->
 *   run(params, env, result) -> [recorder stopped, runtime stopped] -> JSON/report.
 *   The CLI adds to each row the BPF fields and, for tasks the workload did not report (e.g. the
 *   tasks th_map spawns), rows built from the runtime's run log.
 */
#ifndef TASKHOP_WORKLOAD_H
#define TASKHOP_WORKLOAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "taskhop.h"
#include "report/json.h"

/* One task of a run, as the workload saw it. */
struct wl_task {
	char label[32];           /* short, e.g. "n=1e7" */
	double n;                 /* the task's size in workload units (darts: draws), or 0 */
	struct th_task_stats st;  /* from th_task_stats() after th_wait; st.id identifies it */
	double completion_s;      /* completion time since the run's t0 */
	double work_s;            /* CPU time of the task's own work (SPT bound input), <0 unknown */
	struct json *extra;       /* optional object; its members are added to the task's JSON
	                           * (darts: {"means": [...]}); owned by the result */
};

/* What a run produced. The workload fills it; the CLI owns and frees it. */
struct wl_result {
	uint64_t t0_ns;           /* th_now_ns() when the workload started spawning */
	struct wl_task *tasks;    /* grown with wl_add_task() */
	size_t ntasks, cap;
	struct json *extra;       /* optional object of run-level fields ("primes": 664411, ...) */
	char summary[512];        /* one or more lines for the text report, e.g. the prime count */
};

/* What the CLI gives the workload. */
struct wl_env {
	int workers;              /* resolved worker count (th_nworkers() when the runtime runs) */
	uint64_t seed;            /* the run seed (--seed) */
	const char *policy;       /* policy name, for messages */
	bool quiet;               /* no progress output */
	bool preempt;             /* --preempt: spawn preemptible tasks */
};

/* Figure hook output: the SVG files written, relative to the output directory. */
struct wl_figures {
	char names[8][64];
	char titles[8][128];
	int n;
	char err[512];            /* why, when the hook returns FIG_WRITE_FAILED */
};

struct th_workload {
	const char *name;
	const char *description;  /* one line for `taskhop list` */
	const char *options_help; /* "  --small N   ...\n" lines for `taskhop run NAME --help` */
	const char *example;      /* a command line that works as pasted */
	size_t params_size;       /* bytes of the workload's own parameter struct */
	void (*defaults)(void *params);
	/* Parses the option at argv[*i] (reading a value at argv[*i+1] if it takes one and
	 * advancing *i past it). Returns 1 if consumed, 0 if not an option of this workload,
	 * -1 on a bad value with a one-line message in err. */
	int (*parse)(void *params, int argc, char **argv, int *i, char *err, size_t errlen);
	/* Optional: options that are each valid but wrong together (isprime --lo 10 --hi 5).
	 * Called once all are parsed, before anything runs: 0, or -1 with one line in err
	 * (a usage error, exit 2). */
	int (*check)(const void *params, char *err, size_t errlen);
	/* Optional: false when these params run without the task runtime (e.g. own processes).
	 * NULL means the runtime is always needed. */
	bool (*needs_runtime)(const void *params);
	/* Runs once. Returns 0, or -1 with a one-line message in err. */
	int (*run)(const void *params, const struct wl_env *env, struct wl_result *res,
		   char *err, size_t errlen);
	/* Optional: the option that gives the serial baseline (isprime: "--serial"). `compare`
	 * then adds a "serial" run per repeat, and the speedup figure is drawn. */
	const char *baseline_option;
	/* Optional: true when its tasks may be preempted anywhere (no locks, no per-thread
	 * library state): `--preempt MS` is refused for the others. */
	bool preemptible;
	/* Optional: extra figures drawn from a report JSON (the compare report, see
	 * report/report.h) into dir, written with fig_gnuplot(). Returns 0, or -1, or
	 * FIG_WRITE_FAILED as fig_gnuplot returned it. */
	int (*figures)(const struct json *report, const char *dir, struct wl_figures *out);
};

/* ---- helpers for workloads (tools/workload.c) -------------------------- */

/* Appends a zeroed row (work_s = -1) and returns it; NULL on out of memory. */
struct wl_task *wl_add_task(struct wl_result *res);
/* Fills row->st from a finished task and row->completion_s from its done time. */
void wl_task_from(struct wl_task *row, const th_task *t, uint64_t t0_ns);
void wl_result_free(struct wl_result *res);
/* CPU time of the calling thread in seconds (the task's own work when measured
 * between two yields). */
double wl_thread_cpu_s(void);
/* Parses a count like "1e7", "20000000" or "2e8" (must be a whole number in min..9e15),
 * with the syntax of every integer flag (numparse.h). */
int wl_parse_count(const char *text, double min, double *out);

/* Registry (tools/workload.c, generated list). */
const struct th_workload *wl_find(const char *name);
/* The linked workloads in registry order; *n set to their number. */
const struct th_workload *const *wl_all(int *n);

/* Draws an SVG with gnuplot: script is a complete gnuplot script that may use the
 * inline data blocks it defines; "set terminal" and "set output" are prepended.
 * Written to dir/name via a temp file + rename, and checked (gnuplot's exit status, a
 * complete SVG). Returns 0, or -1 with "file: why" in err when gnuplot failed, or
 * FIG_WRITE_FAILED when the file could not be written (a full disk: the report fails).
 * No string read from a report may be pasted into a script: titles go through
 * fig_quote, data blocks hold numbers only. */
#define FIG_WRITE_FAILED (-2)
int fig_gnuplot(const char *dir, const char *name, int width, int height, const char *script,
		char *err, size_t errlen);
/* Writes s as one gnuplot string literal (single quotes; a quote doubled; control
 * characters, which single quotes cannot hold, as spaces). */
void fig_quote(FILE *f, const char *s);
/* Replaces gnuplot for every later fig_gnuplot (NULL: gnuplot again). The fuzz target
 * checks the scripts a hostile report makes without running anything. */
typedef int (*fig_runner_fn)(const char *dir, const char *name, const char *script, char *err,
			     size_t errlen);
void fig_set_runner(fig_runner_fn fn);

#endif
