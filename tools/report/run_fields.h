/* run_fields.h — run_schema.h's lists as tables of (key, need, kind, offset) that the one
 * writer (run_write.c) and the one reader (run_read.c) walk. Internal to tools/report. */
#ifndef TASKHOP_RUN_FIELDS_H
#define TASKHOP_RUN_FIELDS_H

#include <stddef.h>

#include "report/run.h"

enum run_need { RUN_NEED_REQ, RUN_NEED_NUL, RUN_NEED_OPT, RUN_NEED_EXT };
enum run_kind {
	RUN_KIND_COUNT, RUN_KIND_SIZE, RUN_KIND_SECS, RUN_KIND_TIME, RUN_KIND_WORKER,
	RUN_KIND_WINDEX, RUN_KIND_WCOUNT, RUN_KIND_TID, RUN_KIND_CPU, RUN_KIND_END,
	RUN_KIND_NAME, RUN_KIND_TEXT, RUN_KIND_BOOL, RUN_KIND_CPUS, RUN_KIND_HIST, RUN_KIND_MEANS,
	RUN_KIND_NAMES, RUN_KIND_SEED, RUN_KIND_JSON,
	/* nested parts, read and written by their own code */
	RUN_KIND_TASKS, RUN_KIND_WORKERS, RUN_KIND_BPF, RUN_KIND_TIMELINE, RUN_KIND_ROWS,
	RUN_KIND_ENDS,
};

struct run_field {
	const char *key;
	enum run_need need;
	enum run_kind kind;
	size_t off; /* of the member in its struct */
};

struct run_fields {
	const struct run_field *f;
	size_t n;
};

extern const struct run_fields run_fields_run, run_fields_bpf, run_fields_task, run_fields_worker,
	run_fields_timeline;
/* Kinds of the columns of each timeline row type (also their count). */
struct run_columns {
	const enum run_kind *kind;
	size_t n;
};
extern const struct run_columns run_cols_run, run_cols_migration, run_cols_oncpu;

/* True when kind holds a double (a number, NAN for null). */
static inline int run_kind_is_number(enum run_kind k)
{
	return k <= RUN_KIND_END;
}

#endif
