/* test_record_cli.c — `taskhop record` as a user runs it (bad input, hints, exit status,
 * tables and JSON in the run vocabulary) and the report vocabulary it shares with run/compare. */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "lib/need_bpf.h"
#include "lib/run_cli.h"
#include "report/fsutil.h"
#include "report/json.h"
#include "report/report.h"

/* A scratch directory per test, removed with what the test wrote into it. */
static char scratch[64];

static const char *scratch_path(char *buf, size_t len, const char *name)
{
	snprintf(buf, len, "%s/%s", scratch, name);
	return buf;
}

static int setup(void **state)
{
	(void)state;
	snprintf(scratch, sizeof(scratch), "/tmp/th_reccli_XXXXXX");
	return mkdtemp(scratch) ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", scratch);
	return system(cmd) == 0 ? 0 : -1;
}

static struct json *parse(const char *path)
{
	char err[256];
	struct json *j = json_parse_file(path, err, sizeof(err));
	if (!j)
		fail_msg("%s", err);
	return j;
}

/* ---- bad input: one line, exit 2, before anything runs --------------------------- */

static void record_pid_out_of_range_is_refused(void **state)
{
	(void)state;
	/* 99999999999 used to be truncated to pid 1215752191 (and 4294967297 to pid 1) */
	expect_usage_error(run_taskhop("record", "-p", "99999999999", NULL), "out of range");
	expect_usage_error(run_taskhop("record", "-p", "4294967297", NULL), "out of range");
	expect_usage_error(run_taskhop("record", "-p", "0", NULL), "out of range");
	expect_usage_error(run_taskhop("record", "-p", "12x", NULL), "'12x'");
}

static void record_bad_option_prints_one_line_and_exits_2(void **state)
{
	(void)state;
	expect_usage_error(run_taskhop("record", "--bogus", "--", "true", NULL), "'--bogus'");
	expect_usage_error(run_taskhop("record", "-x", "--", "true", NULL), "'-x'");
	expect_usage_error(run_taskhop("record", "-o", NULL), "-o needs a value");
}

static void record_unwritable_output_is_refused_before_the_command_runs(void **state)
{
	(void)state;
	char marker[256];
	scratch_path(marker, sizeof(marker), "ran.json");
	/* the command would write `marker` if it ran */
	expect_usage_error(run_taskhop("record", "-o", "/nonexistent/x", "--", taskhop_bin(), "run",
				       "darts", "--small", "1e3", "--large", "1e4", "--no-bpf", "--quiet",
				       "--json", marker, NULL),
			   "/nonexistent/x");
	assert_int_equal(access(marker, F_OK), -1);
	expect_usage_error(run_taskhop("record", "-o", scratch, "--", "true", NULL), "is a directory");
}

/* record has neither --no-bpf nor --usdt: its errors must not suggest them. */
static void record_errors_suggest_only_what_record_has(void **state)
{
	(void)state;
	setenv("TASKHOP_BTF_PATH", "/nonexistent/vmlinux", 1);
	struct result *r = run_taskhop("record", "--", "true", NULL);
	unsetenv("TASKHOP_BTF_PATH");
	if (r->status != 1 || count_lines(r->err) != 1 || !strstr(r->err, "no BTF") ||
	    strstr(r->err, "--no-bpf") || strstr(r->err, "--usdt"))
		fail_msg("exit %d, stderr: %s", r->status, r->err);
	free(r);
}

/* ---- the recording in the run vocabulary ----------------------------------------- */

static const char *const vocabulary[] = { "taskhop_version", "schema", NULL };

static void expect_keys(const struct json *o, const char *const *keys, const char *where)
{
	for (int i = 0; keys[i]; i++)
		if (!json_get(o, keys[i]))
			fail_msg("%s has no '%s'", where, keys[i]);
}

static void record_writes_a_run_that_report_renders(void **state)
{
	(void)state;
	NEED_BPF();
	char json[256];
	scratch_path(json, sizeof(json), "rec.json");
	struct result *r = run_taskhop("record", "-o", json, "--", taskhop_bin(), "run", "darts",
				       "--workers", "2", "--small", "1e5", "--large", "1e6", "--no-bpf", NULL);
	if (r->status != 0)
		fail_msg("exit %d: %s", r->status, r->err);
	/* the child's table alone on stdout; record's header and tables on stderr */
	assert_non_null(strstr(r->out, "done(ms)"));
	assert_null(strstr(r->out, "taskhop record:"));
	assert_non_null(strstr(r->err, "taskhop record: pid "));
	assert_non_null(strstr(r->err, "attached at "));
	assert_non_null(strstr(r->err, "recorded for "));
	/* the same columns as `taskhop run` */
	assert_non_null(strstr(r->err, "done(ms)  runs yields preempted  hops   migr migr-k cpus"));
	assert_non_null(strstr(r->err, "run-time(ms)"));
	free(r);

	struct json *run = parse(json);
	expect_keys(run, vocabulary, "the recording");
	expect_keys(run, report_run_fields, "the recording");
	assert_string_equal(json_get_str(run, "schema", ""), "taskhop-run/1");
	const struct json *tasks = json_get(run, "tasks");
	assert_int_equal(json_len(tasks), 21);
	for (size_t i = 0; i < json_len(tasks); i++) {
		const struct json *t = json_at(tasks, i);
		expect_keys(t, report_task_fields, "a task");
		assert_true(json_get_num(t, "runs", 0) == 11);
		assert_true(json_get_num(t, "on_cpu_ns", 0) > 0);
		assert_true(json_get_num(t, "completion_s", 0) > 0);
		assert_true(json_get(t, "kernel_blocked_ns") && json_get(t, "kernel_blocks"));
	}
	assert_int_equal(json_len(json_get(run, "workers")), 2);
	json_free(run);

	r = run_taskhop("report", json, "--no-files", NULL);
	if (r->status != 0)
		fail_msg("report exit %d: %s", r->status, r->err);
	assert_non_null(strstr(r->out, "run-time(ms)"));
	assert_non_null(strstr(r->out, "mean completion"));
	free(r);
}

static void record_exits_with_the_commands_status(void **state)
{
	(void)state;
	NEED_BPF();
	/* `taskhop run nosuch` is a usage error: 2 */
	struct result *r = run_taskhop("record", "-q", "--", taskhop_bin(), "run", "nosuch", NULL);
	assert_int_equal(r->status, 2);
	free(r);
}

static void every_json_written_names_its_version_and_schema(void **state)
{
	(void)state;
	char json[256], dir[256], path[300];
	scratch_path(json, sizeof(json), "run.json");
	struct result *r = run_taskhop("run", "darts", "--workers", "2", "--small", "1e3", "--large",
				       "1e4", "--no-bpf", "--quiet", "--json", json, NULL);
	assert_int_equal(r->status, 0);
	free(r);
	struct json *run = parse(json);
	expect_keys(run, vocabulary, "run --json");
	assert_string_equal(json_get_str(run, "schema", ""), "taskhop-run/1");
	assert_true(json_is_num(json_get(json_get(run, "bpf"), "dropped_runs")));
	json_free(run);
	scratch_path(dir, sizeof(dir), "cmp");
	r = run_taskhop("compare", "darts", "--policies", "shared", "--repeat", "1", "--workers", "2",
			"--small", "1e3", "--large", "1e4", "--no-bpf", "--out", dir, NULL);
	assert_int_equal(r->status, 0);
	free(r);
	snprintf(path, sizeof(path), "%s/report.json", dir);
	struct json *rep = parse(path);
	expect_keys(rep, vocabulary, "report.json");
	assert_string_equal(json_get_str(rep, "schema", ""), "taskhop-report/1");
	json_free(rep);
}

/* ---- compare ----------------------------------------------------------------------- */

static void compare_with_a_serial_baseline_counts_its_repeats(void **state)
{
	(void)state;
	char dir[256];
	scratch_path(dir, sizeof(dir), "isprime");
	struct result *r = run_taskhop("compare", "isprime", "--policies", "shared", "--repeat", "2",
				       "--workers", "2", "--hi", "20000", "--no-bpf", "--out", dir, NULL);
	if (r->status != 0)
		fail_msg("exit %d: %s", r->status, r->err);
	if (!strstr(r->out, "2 policies x 2 repeats, 2 workers, 4 runs"))
		fail_msg("header: %s", r->out);
	/* the serial row: 2 runs, not 0 */
	char *row = strstr(r->out, "\nserial ");
	assert_non_null(row);
	int runs = -1;
	assert_int_equal(sscanf(row, "\nserial %d", &runs), 1);
	assert_int_equal(runs, 2);
	free(r);
}

static void compare_into_an_older_report_needs_force_and_replaces_it(void **state)
{
	(void)state;
	char dir[256], stale[300], path[300], err[256];
	scratch_path(dir, sizeof(dir), "old");
	assert_int_equal(mkdir(dir, 0755), 0);
	snprintf(path, sizeof(path), "%s/report.json", dir);
	assert_int_equal(fs_write_string(path, "{\"taskhop_report\": 1, \"workload\": \"isprime\"}\n",
					 err, sizeof(err)), 0);
	snprintf(stale, sizeof(stale), "%s/speedup.svg", dir);
	assert_int_equal(fs_write_string(stale, "<svg/>\n", err, sizeof(err)), 0);
	const char *args[] = { NULL, "compare", "darts", "--policies", "shared", "--repeat", "1",
			       "--workers", "2", "--small", "1e3", "--large", "1e4", "--no-bpf",
			       "--out", dir, NULL, NULL };
	expect_usage_error(run_argv(args), "--force");
	char *kept = fs_read_all(path, NULL, err, sizeof(err));
	assert_non_null(kept);
	assert_non_null(strstr(kept, "isprime")); /* untouched */
	free(kept);
	args[16] = "--force";
	struct result *r = run_argv(args);
	if (r->status != 0)
		fail_msg("exit %d: %s", r->status, r->err);
	free(r);
	assert_int_equal(access(stale, F_OK), -1); /* no figure of the older report left */
	struct json *rep = parse(path);
	assert_string_equal(json_get_str(rep, "workload", ""), "darts");
	json_free(rep);
}

/* ---- text output ------------------------------------------------------------------- */

static void dropped_runs_are_shown_and_task_figures_marked_partial(void **state)
{
	(void)state;
	char err[256];
	static const char text_json[] =
		"{\"workload\": \"darts\", \"policy\": \"shared\", \"worker_count\": 1, \"seed\": 1,"
		" \"bpf\": {\"enabled\": true, \"lost_events\": 0, \"dropped_runs\": 7},"
		" \"wall_s\": 1, \"peak_rss_kb\": 1, \"mean_completion_s\": 1, \"makespan_s\": 1,"
		" \"tasks\": [{\"id\": 1, \"label\": \"x\", \"completion_s\": 1, \"runs\": 3,"
		" \"cpu_migrations\": 2, \"cpu_migrations_kernel\": 1, \"cpus_visited\": [0],"
		" \"on_cpu_ns\": 5000000, \"runq_wait_ns\": 1000, \"preemptions\": 0}], \"workers\": []}";
	struct json *run = json_parse(text_json, strlen(text_json), err, sizeof(err));
	assert_non_null(run);
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	report_run_text(run, f);
	fclose(f);
	char *status = strstr(text, "bpf=on (0 lost events, 7 runs dropped");
	if (!status)
		fail_msg("status line: %s", text);
	assert_non_null(strstr(text, "partial"));
	assert_non_null(strstr(text, "5.00~")); /* run-time(ms) of the task, marked */
	free(text);
	json_free(run);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(record_pid_out_of_range_is_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(record_bad_option_prints_one_line_and_exits_2, setup, teardown),
		cmocka_unit_test_setup_teardown(record_unwritable_output_is_refused_before_the_command_runs,
						setup, teardown),
		cmocka_unit_test_setup_teardown(record_errors_suggest_only_what_record_has, setup, teardown),
		cmocka_unit_test_setup_teardown(record_writes_a_run_that_report_renders, setup, teardown),
		cmocka_unit_test_setup_teardown(record_exits_with_the_commands_status, setup, teardown),
		cmocka_unit_test_setup_teardown(every_json_written_names_its_version_and_schema, setup, teardown),
		cmocka_unit_test_setup_teardown(compare_with_a_serial_baseline_counts_its_repeats, setup, teardown),
		cmocka_unit_test_setup_teardown(compare_into_an_older_report_needs_force_and_replaces_it,
						setup, teardown),
		cmocka_unit_test_setup_teardown(dropped_runs_are_shown_and_task_figures_marked_partial,
						setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
