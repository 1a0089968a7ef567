/* run.h — the run schema in C: a run, its tasks, workers and timeline as structs made from
 * the field lists of run_schema.h, written to JSON by one writer (run_write.c, used by
 * `run`, `record` and `compare`) and read back by one reader that checks every field
 * (run_read.c: report.json is hostile input) for every renderer. */
#ifndef TASKHOP_RUN_H
#define TASKHOP_RUN_H

#include <stdbool.h>
#include <stddef.h>

#include "report/json.h"
#include "run_schema.h"

/* A number is a double; NAN stands for null or absent (the renderers print "-"). */
struct run_nums {
	const double *v;
	size_t n;
	bool known; /* false: null or absent */
};
struct run_names {
	const char *const *v;
	size_t n;
};
struct run_seed {
	bool known; /* false: null (a recording of another program has no seed) */
	unsigned long long v;
};

/* The C type of each kind of run_schema.h. */
typedef double run_t_COUNT, run_t_SIZE, run_t_SECS, run_t_TIME, run_t_WORKER, run_t_WINDEX,
	run_t_WCOUNT, run_t_TID, run_t_CPU, run_t_END;
typedef const char *run_t_NAME, *run_t_TEXT;
typedef int run_t_BOOL; /* -1 null, 0, 1 */
typedef struct run_nums run_t_CPUS, run_t_HIST, run_t_MEANS;
typedef struct run_names run_t_NAMES;
typedef struct run_seed run_t_SEED;
typedef const struct json *run_t_JSON; /* kept as it is (NULL: absent) */
#define RUN_MEMBER_(name, need, kind) run_t_##kind name;
#define RUN_COLUMN_(name, kind) double name;

struct run_task {
	TH_RUN_TASK_FIELDS(RUN_MEMBER_)
	const struct json *json; /* read: the task's object (workload figures take more) */
	const struct json *extra; /* write: members added as they are (a workload's own) */
};
struct run_worker {
	TH_RUN_WORKER_FIELDS(RUN_MEMBER_)
};
struct run_bpf {
	TH_RUN_BPF_FIELDS(RUN_MEMBER_)
};

enum run_end {
#define RUN_END_ENUM_(w) RUN_END_##w,
	TH_RUN_END_WORDS(RUN_END_ENUM_)
#undef RUN_END_ENUM_
	RUN_END_COUNT
};
extern const char *const run_end_words[RUN_END_COUNT];

struct run_tl_run {
	TH_RUN_TL_RUN_COLS(RUN_COLUMN_)
};
struct run_tl_migration {
	TH_RUN_TL_MIGRATION_COLS(RUN_COLUMN_)
};
struct run_tl_oncpu {
	TH_RUN_TL_ONCPU_COLS(RUN_COLUMN_)
};
struct run_rows {
	void *v; /* struct run_tl_run, _migration or _oncpu */
	size_t n;
};
struct run_ends {
	const unsigned char *v; /* enum run_end per timeline run */
	size_t n;
	bool known;
};
struct run_timeline {
	bool known; /* false: no timeline (null or absent) */
	struct run_rows runs, migrations, oncpu;
	struct run_ends run_ends;
	double dropped_runs;
};

typedef struct run_task *run_t_TASKS;
typedef struct run_worker *run_t_WORKERS;
typedef struct run_bpf run_t_BPF;
typedef struct run_timeline run_t_TIMELINE;
typedef struct run_rows run_t_ROWS;
typedef struct run_ends run_t_ENDS;

struct run {
	TH_RUN_FIELDS(RUN_MEMBER_)
	size_t ntasks, nworkers; /* of tasks[] and workers[] (nworkers == worker_count) */
	const struct json *json; /* read: the run's object */
	size_t index;            /* read: its place in the report (0-based) */
};

/* Accessors of the timeline rows. */
static inline const struct run_tl_run *run_tl_runs(const struct run *r)
{
	return r->timeline.runs.v;
}
static inline const struct run_tl_migration *run_tl_migrations(const struct run *r)
{
	return r->timeline.migrations.v;
}
static inline const struct run_tl_oncpu *run_tl_oncpu(const struct run *r)
{
	return r->timeline.oncpu.v;
}

/* ---- writing (run_write.c) ------------------------------------------------------ */

/* Who owns what: a run owns its tasks[] and workers[], every number array (run_nums.v),
 * options.v and the timeline rows, all malloc'd; strings and JSON values are borrowed.
 * run_new: an empty run (every number NAN, every flag null) with ntasks tasks and
 * nworkers workers, each empty too; the producer fills what it measured. NULL on OOM. */
struct run *run_new(size_t ntasks, size_t nworkers);
void run_task_clear(struct run_task *t);
void run_worker_clear(struct run_worker *w);
/* A copy of n numbers for a run_nums (known), NULL on out of memory. */
double *run_nums_dup(const double *v, size_t n);
/* Frees what the run owns, then (run_free) the run itself. */
void run_release(struct run *r);
void run_free(struct run *r);
/* Timeline rows, grown by the producer: 0, or -1 on out of memory. */
int run_push_tl_run(struct run *r, const struct run_tl_run *row, enum run_end end);
int run_push_tl_migration(struct run *r, const struct run_tl_migration *row);
int run_push_tl_oncpu(struct run *r, const struct run_tl_oncpu *row);
/* mean_completion_s, makespan_s and ideal_mean_completion_s from the tasks (completion_s,
 * work_s) on worker_count workers. */
void run_derive(struct run *r);
/* A run's seed as text: every digit, "-" when it has none. Returns buf. */
const char *run_seed_text(char *buf, size_t len, const struct run *r);
/* The run as JSON (stamped taskhop-run/1), every field of run_schema.h in its order; a run
 * or task that was read (its .json set) keeps the members the schema does not list. */
struct json *run_to_json(const struct run *r);

/* ---- reading (run_read.c) ------------------------------------------------------- */

/* A report as the renderers see it: its header and its runs, all checked. */
struct report_view {
	const struct json *json; /* the report (policies, figures of workloads) */
	const char *workload, *command;
	struct run_names options;
	double cpus, loadavg_1min; /* machine; NAN unknown */
	const char *kernel, *cpu_model;
	bool interrupted;
	int timeline_mode; /* REPORT_PICK_* */
	unsigned long long timeline_seed;
	bool colour_by_cpu; /* timeline_color "cpu" */
	struct run *runs;
	size_t nruns;
};

/* Reads one run object (the index-th of a report: errors name "run index+1") into r,
 * checking every field of run_schema.h: present when it must be, of its kind and in its
 * range (workers within worker_count, CPUs below TH_REC_MAX_CPUS, counts below 2^53,
 * names short and without control characters). 0, or -1 with one line in err
 * ("run 2 task 3 has no 'completion_s'"), r then empty. Strings point into the JSON;
 * run_release frees the rest. */
int run_read(const struct json *run, size_t index, struct run *r, char *err, size_t errlen);
/* The same, but a field that must be there and is not reads as null (NULL, NAN, -1), and
 * workers[] may be shorter than worker_count: what a run's text table shows of a run
 * written by hand. Every value present is checked as above. */
int run_read_partial(const struct json *run, struct run *r, char *err, size_t errlen);
/* A whole report (report.json), checked the same way. 0, or -1 with err. */
int report_view_read(const struct json *report, struct report_view *v, char *err, size_t errlen);
/* The same with runs read as run_read_partial reads them, and no 'taskhop_report' needed:
 * what the renderers' JSON entry points (report_trace, report_markdown, ...) take, so that
 * they draw what a hand-made report has. Missing names read as "?" (a label as ""). */
int report_view_read_partial(const struct json *report, struct report_view *v, char *err,
			     size_t errlen);
void report_view_free(struct report_view *v);

#endif
