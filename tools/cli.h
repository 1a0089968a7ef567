/* cli.h — helpers shared by the `taskhop` subcommands: usage errors (one line, exit 2),
 * policy and worker-count checks, and running one workload into a run JSON. */
#ifndef TASKHOP_CLI_H
#define TASKHOP_CLI_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "report/json.h"
#include "taskhop.h"
#include "workload.h"

/* Prints "taskhop CMD: message (try 'taskhop CMD --help')" on stderr; returns 2. */
int cli_usage(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Prints "taskhop CMD: message" on stderr; returns 1. */
int cli_fail(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* "sticky, shared, ..." from th_policy_names(). */
const char *cli_policy_list(char *buf, size_t len);
bool cli_policy_known(const char *name);
/* --workers: N in 1..TH_MAX_WORKERS, "auto" or "cores". 0, or -1 (bad text, 0, too many). */
int cli_parse_workers(const char *text, int *workers);
/* Unsigned integers in numparse.h's syntax (digits or 1e7 form): 0, or -1 (bad, < min). */
int cli_parse_u64(const char *text, uint64_t min, uint64_t *out);
/* An integer flag of cli_cmd_name: 0, or 2 after the one-line usage error
 * "FLAG must be a whole number in MIN..MAX (digits or 1e7 form), not 'TEXT'". */
int cli_number(const char *flag, const char *text, uint64_t min, uint64_t max, uint64_t *out);
/* --preempt MS (run, and each item of compare's list): milliseconds in [0.01, 10000],
 * maybe with a fraction, so written with digits, a point and an exponent only (no hex,
 * sign, space, inf); with off_ok also 0 (no preemption). 0 and *ns set (rounded to the
 * nanosecond; 0 for off), or -1. The message is the caller's. */
int cli_parse_preempt(const char *text, bool off_ok, uint64_t *ns);
/* Before a run: can FLAG's file be written (not a directory, its directory takes new
 * files)? 0, or 2 after a one-line usage error. The _dir form checks an existing directory. */
int cli_check_output_file(const char *flag, const char *path);
int cli_check_output_dir(const char *flag, const char *dir);
/* "a,b,c" workloads listed one per line for errors: "darts, isprime, leibniz". */
const char *cli_workload_list(char *buf, size_t len);

/* Everything one run needs; filled by cli_parse_run() or by hand. */
struct cli_run {
	const struct th_workload *wl;
	void *params;             /* wl->params_size bytes */
	struct th_config cfg;
	const char *workers_text; /* as given, for messages */
	bool no_bpf;
	bool quiet;               /* no table on stdout */
	bool hist;                /* --hist: also the run-queue wait / on-CPU distributions */
	const char *json_path;
	char **wl_argv;           /* the workload's own options, as given (for the JSON) */
	int wl_argc;
};

/* The subcommand named in cli_parse_run's messages ("run", or "compare" checking options). */
extern const char *cli_cmd_name;

/* Parses `run`'s arguments (argv[0] is the workload name). Returns 0, or 2 after printing
 * the usage error, or 3 when --help was printed. */
int cli_parse_run(int argc, char **argv, struct cli_run *o);
void cli_run_free(struct cli_run *o);

/* Runs once and returns the run JSON, or NULL after printing one line (status in *rc:
 * 1 failure, 2 bad usage). full_argc/full_argv become the run's "command". */
struct json *cli_execute(const struct cli_run *o, int full_argc, char **full_argv, int *rc);

#endif
