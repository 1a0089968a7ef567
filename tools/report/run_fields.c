/* run_fields.c — the field tables of run_fields.h, generated from run_schema.h's lists. */
#include "report/run_fields.h"

#define FIELD_(type, name, need, kind) \
	{ #name, RUN_NEED_##need, RUN_KIND_##kind, offsetof(struct type, name) },
#define RUN_F_(name, need, kind) FIELD_(run, name, need, kind)
#define BPF_F_(name, need, kind) FIELD_(run_bpf, name, need, kind)
#define TASK_F_(name, need, kind) FIELD_(run_task, name, need, kind)
#define WORKER_F_(name, need, kind) FIELD_(run_worker, name, need, kind)
#define TL_F_(name, need, kind) FIELD_(run_timeline, name, need, kind)
#define COL_(name, kind) RUN_KIND_##kind,
#define LEN_(a) (sizeof(a) / sizeof((a)[0]))

static const struct run_field run_f[] = { TH_RUN_FIELDS(RUN_F_) };
static const struct run_field bpf_f[] = { TH_RUN_BPF_FIELDS(BPF_F_) };
static const struct run_field task_f[] = { TH_RUN_TASK_FIELDS(TASK_F_) };
static const struct run_field worker_f[] = { TH_RUN_WORKER_FIELDS(WORKER_F_) };
static const struct run_field tl_f[] = { TH_RUN_TIMELINE_FIELDS(TL_F_) };

const struct run_fields run_fields_run = { run_f, LEN_(run_f) };
const struct run_fields run_fields_bpf = { bpf_f, LEN_(bpf_f) };
const struct run_fields run_fields_task = { task_f, LEN_(task_f) };
const struct run_fields run_fields_worker = { worker_f, LEN_(worker_f) };
const struct run_fields run_fields_timeline = { tl_f, LEN_(tl_f) };

static const enum run_kind col_run[] = { TH_RUN_TL_RUN_COLS(COL_) };
static const enum run_kind col_mig[] = { TH_RUN_TL_MIGRATION_COLS(COL_) };
static const enum run_kind col_oncpu[] = { TH_RUN_TL_ONCPU_COLS(COL_) };
const struct run_columns run_cols_run = { col_run, LEN_(col_run) };
const struct run_columns run_cols_migration = { col_mig, LEN_(col_mig) };
const struct run_columns run_cols_oncpu = { col_oncpu, LEN_(col_oncpu) };

/* Rows are read and written as arrays of doubles: each row struct is its columns. */
_Static_assert(sizeof(struct run_tl_run) == LEN_(col_run) * sizeof(double), "run row");
_Static_assert(sizeof(struct run_tl_migration) == LEN_(col_mig) * sizeof(double), "migration row");
_Static_assert(sizeof(struct run_tl_oncpu) == LEN_(col_oncpu) * sizeof(double), "oncpu row");

const char *const run_end_words[RUN_END_COUNT] = {
#define RUN_END_WORD_(w) #w,
	TH_RUN_END_WORDS(RUN_END_WORD_)
};
