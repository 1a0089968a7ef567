/* test_cli.c — the `taskhop` command as a user runs it: bad input gives one line and exit 2,
 * workloads give the article's answers, and `compare` writes a complete, re-renderable report. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <grp.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "numparse.h"
#include "record.h"
#include "report/fsutil.h"
#include "report/json.h"
#include "lib/run_cli.h"

static void bad_input_gives_one_line_and_exit_2(void **state)
{
	(void)state;
	expect_usage_error(run_taskhop("frobnicate", NULL), "unknown command 'frobnicate'");
	expect_usage_error(run_taskhop("run", "nosuch", NULL), "unknown workload 'nosuch'");
	expect_usage_error(run_taskhop("run", "darts", "--policy", "nosuch", NULL), "unknown policy 'nosuch'");
	expect_usage_error(run_taskhop("run", "darts", "--frob", NULL), "unknown option '--frob'");
	expect_usage_error(run_taskhop("run", "darts", "--small", "abc", NULL), "not 'abc'");
	expect_usage_error(run_taskhop("run", "darts", "--small", "15", NULL), "multiple of 10");
	expect_usage_error(run_taskhop("run", "darts", "--workers", "0", NULL), "--workers");
	expect_usage_error(run_taskhop("run", "darts", "--workers=many", NULL), "not 'many'");
	expect_usage_error(run_taskhop("run", "darts", "--seed", "-3", NULL), "--seed");
	expect_usage_error(run_taskhop("run", "isprime", "--split", "sideways", NULL), "'sideways'");
	expect_usage_error(run_taskhop("run", "darts", "--json", "/nonexistent/dir/x.json", NULL),
			   "/nonexistent/dir/x.json");
	expect_usage_error(run_taskhop("compare", "darts", "--repeat", "0", NULL), "--repeat");
	expect_usage_error(run_taskhop("compare", "darts", "--policies", "sticky,bogus", NULL), "'bogus'");
	expect_usage_error(run_taskhop("compare", "darts", "--large", "x", NULL), "not 'x'");
	expect_usage_error(run_taskhop("compare", "darts", "--timeline-color", "gpu", NULL), "worker or cpu");
	expect_usage_error(run_taskhop("report", "/tmp", "--timeline-color", "gpu", NULL), "worker or cpu");
	expect_usage_error(run_taskhop("report", "/nonexistent/report", NULL), "/nonexistent/report");
}

/* --preempt: checked like every number, only for workloads whose tasks are safe to
 * interrupt, and recorded: the quantum in the run, the runtime's preemptions per task
 * (`preempted`, apart from the kernel's `preemptions`). */
static void preempt_option_is_checked_and_recorded_per_task(void **state)
{
	(void)state;
	expect_usage_error(run_taskhop("run", "darts", "--preempt", "abc", NULL), "--preempt");
	expect_usage_error(run_taskhop("run", "darts", "--preempt", "0", NULL), "not '0'");
	expect_usage_error(run_taskhop("run", "leibniz", "--preempt", "1", NULL), "not preemptible");
	expect_usage_error(run_taskhop("compare", "darts", "--preempt", "-1", NULL), "--preempt");
	char path[] = "/tmp/th_cli_preemptXXXXXX", err[256];
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	close(fd);
	struct result *r = run_taskhop("run", "darts", "--policy", "feedback", "--workers", "2",
				       "--small", "1e5", "--large", "2e7", "--count", "4", "--no-bpf",
				       "--quiet", "--preempt", "0.2", "--json", path, NULL);
#if defined(__SANITIZE_THREAD__) || !defined(__x86_64__)
	assert_int_equal(r->status, 1); /* refused with the runtime's reason */
	assert_non_null(strstr(r->err, "preemption"));
	free(r);
	unlink(path);
	return;
#endif
	assert_int_equal(r->status, 0);
	free(r);
	struct json *run = json_parse_file(path, err, sizeof(err));
	unlink(path);
	if (!run)
		fail_msg("%s", err);
	assert_true(json_get_num(run, "preempt_ms", 0) == 0.2);
	const struct json *tasks = json_get(run, "tasks");
	double most = 0;
	for (size_t i = 0; i < json_len(tasks); i++) {
		const struct json *t = json_get(json_at(tasks, i), "preempted");
		assert_true(json_is_num(t));
		most = json_num_of(t) > most ? json_num_of(t) : most;
	}
	assert_true(most >= 1); /* the 2e7 task runs tens of ms without a yield per cycle */
	assert_true(json_type_of(json_get(json_at(tasks, 0), "preemptions")) == JSON_NULL); /* kernel: no BPF */
	json_free(run);
}

/* compare --preempt L: each item 0 (none) or a quantum as run takes it, no empty item, no
 * value twice (1 and 1.0 are one quantum); a list too long for a report is refused before
 * anything runs. */
static void compare_preempt_list_refuses_bad_items(void **state)
{
	(void)state;
	static const char *const bad[][2] = {
		{ "1,abc", "not 'abc'" },   { "0,20000", "not '20000'" }, { "0.001", "not '0.001'" },
		{ "1,-1", "not '-1'" },     { "1,,0", "empty item" },      { "1,", "empty item" },
		{ "", "empty item" },       { "0,1,0", "'0' listed twice" },
		{ "1,1.0", "'1.0' is the same quantum as '1'" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		expect_usage_error(run_taskhop("compare", "darts", "--preempt", bad[i][0], NULL), bad[i][1]);
	expect_usage_error(run_taskhop("compare", "leibniz", "--preempt", "0,1", NULL), "not preemptible");
	expect_usage_error(run_taskhop("compare", "darts", "--preempt", "0,1,2,3,4", "--activations",
				       "off,explicit", "--out", "/tmp/th_cli_never", NULL), "at most 32");
	assert_int_equal(access("/tmp/th_cli_never", F_OK), -1);
}

/* The runs of a compare report as "LABEL:REPEAT:PREEMPT_MS" (- for none), comma-separated. */
static void compare_runs_text(const char *dir, char *out, size_t len, struct json **report)
{
	char path[300], err[256];
	snprintf(path, sizeof(path), "%s/report.json", dir);
	*report = json_parse_file(path, err, sizeof(err));
	if (!*report)
		fail_msg("%s", err);
	const struct json *runs = json_get(*report, "runs");
	size_t o = 0;
	out[0] = 0;
	for (size_t i = 0; i < json_len(runs) && o < len; i++) {
		const struct json *run = json_at(runs, i), *ms = json_get(run, "preempt_ms");
		char pre[32] = "-";
		if (json_is_num(ms))
			snprintf(pre, sizeof(pre), "%g", json_num_of(ms));
		o += (size_t)snprintf(out + o, len - o, "%s%s:%.0f:%s", i ? "," : "",
				      json_get_str(run, "policy", "?"), json_get_num(run, "repeat", 0), pre);
	}
}

/* compare --preempt 0,1: a dimension like --activations: within each repeat every policy
 * runs without and with the quantum, in the list's order, labelled POLICY/p0 and POLICY/p1
 * in the report, each run's preempt_ms its label's. One value keeps the plain labels. */
static void compare_preempt_list_interleaves_each_quantum(void **state)
{
	(void)state;
	char dir[] = "/tmp/th_cli_XXXXXX", text[1024], cmd[400];
	assert_non_null(mkdtemp(dir));
	struct result *r = run_taskhop("compare", "darts", "--policies", "fcfs,steal", "--preempt", "0,1",
				       "--small", "1e5", "--large", "1e6", "--count", "4", "--no-bpf",
				       "--repeat", "2", "--workers", "2", "--out", dir, "--force", NULL);
#if defined(__SANITIZE_THREAD__) || !defined(__x86_64__)
	assert_int_equal(r->status, 1); /* the first p1 run is refused with the runtime's reason */
	assert_non_null(strstr(r->err, "fcfs/p1"));
	free(r);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
	return;
#endif
	if (r->status != 0)
		fail_msg("compare failed (%d): %s", r->status, r->err);
	assert_non_null(strstr(r->err, "2 policies x 2 variants x 2 repeats = 8 runs"));
	free(r);
	struct json *report;
	compare_runs_text(dir, text, sizeof(text), &report);
	assert_string_equal(text, "fcfs/p0:1:-,fcfs/p1:1:1,steal/p0:1:-,steal/p1:1:1,"
				  "fcfs/p0:2:-,fcfs/p1:2:1,steal/p0:2:-,steal/p1:2:1");
	const struct json *pols = json_get(report, "policies");
	assert_int_equal(json_len(pols), 4);
	assert_non_null(json_get(pols, "fcfs/p0"));
	assert_non_null(json_get(pols, "fcfs/p1"));
	json_free(report);

	r = run_taskhop("compare", "darts", "--policies", "fcfs", "--preempt", "1", "--small", "1e5",
			"--large", "1e6", "--count", "4", "--no-bpf", "--repeat", "1", "--workers", "2",
			"--out", dir, "--force", NULL);
	if (r->status != 0)
		fail_msg("compare failed (%d): %s", r->status, r->err);
	free(r);
	compare_runs_text(dir, text, sizeof(text), &report);
	assert_string_equal(text, "fcfs:1:1");
	json_free(report);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
}

static void unwritable_out_writes_nothing(void **state)
{
	(void)state;
	char dir[] = "/tmp/th_cli_XXXXXX", file[256], out[300];
	assert_non_null(mkdtemp(dir));
	/* a path under a regular file can never be created, not even by root */
	snprintf(file, sizeof(file), "%s/plainfile", dir);
	assert_int_equal(fs_write_string(file, "x", out, sizeof(out)), 0);
	snprintf(out, sizeof(out), "%s/sub", file);
	expect_usage_error(run_taskhop("compare", "darts", "--no-bpf", "--repeat", "1", "--out", out,
				       "--small", "1e3", "--large", "1e4", NULL), "plainfile");
	unlink(file);
	assert_int_equal(rmdir(dir), 0); /* nothing else was written */
}

static void corrupt_report_json_is_rejected(void **state)
{
	(void)state;
	char dir[] = "/tmp/th_cli_XXXXXX", path[256], err[256];
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/report.json", dir);
	assert_int_equal(fs_write_string(path, "{\"taskhop_report\": 1, \"runs\": [ {\"work", err, sizeof(err)), 0);
	expect_usage_error(run_taskhop("report", dir, NULL), "not valid JSON");
	/* valid JSON, but not a report */
	assert_int_equal(fs_write_string(path, "{\"taskhop_report\": 1, \"runs\": [ {} ]}", err, sizeof(err)), 0);
	expect_usage_error(run_taskhop("report", dir, NULL), "run 1 has no 'workload'");
	unlink(path);
	assert_int_equal(rmdir(dir), 0);
}

static void help_and_version_succeed_with_examples(void **state)
{
	(void)state;
	const char *cmds[] = { "list", "run", "compare", "report" };
	for (int i = 0; i < 4; i++) {
		struct result *r = run_taskhop(cmds[i], "--help", NULL);
		assert_int_equal(r->status, 0);
		assert_non_null(strstr(r->out, "example"));
		assert_non_null(strstr(r->out, "taskhop "));
		free(r);
	}
	struct result *r = run_taskhop("run", "darts", "--help", NULL);
	assert_int_equal(r->status, 0);
	assert_non_null(strstr(r->out, "--small N"));
	free(r);
	r = run_taskhop("--version", NULL);
	assert_int_equal(r->status, 0);
	assert_non_null(strstr(r->out, "taskhop "));
	free(r);
	r = run_taskhop("list", NULL);
	assert_int_equal(r->status, 0);
	assert_non_null(strstr(r->out, "darts"));
	assert_non_null(strstr(r->out, "isprime"));
	assert_non_null(strstr(r->out, "sticky"));
	assert_non_null(strstr(r->out, "shared"));
	free(r);
}

static void isprime_counts_the_same_primes_in_every_mode(void **state)
{
	(void)state;
	/* pi(100000) - pi(999) = 9592 - 168 */
	const char *modes[][2] = { { "--serial", NULL }, { "--split", "static" }, { "--split", "dynamic" } };
	char dir[] = "/tmp/taskhop-test-XXXXXX", path[64], err[256];
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/run.json", dir);
	for (int i = 0; i < 3; i++) {
		struct result *r = run_taskhop("run", "isprime", "--no-bpf", "--workers", "2", "--hi", "100000",
					       "--json", path, modes[i][0], modes[i][1], NULL);
		if (r->status != 0 || !strstr(r->out, "primes in [1000, 100000]: 9424"))
			fail_msg("isprime %s: exit %d\n%s\n%s", modes[i][0], r->status, r->out, r->err);
		free(r);
		/* one entry in workers[] per thread that ran the map: the serial
		 * loop's is the main thread */
		struct json *run = json_parse_file(path, err, sizeof(err));
		if (!run)
			fail_msg("%s", err);
		int count = i == 0 ? 1 : 2;
		assert_int_equal((int)json_get_num(run, "worker_count", 0), count);
		assert_int_equal(json_len(json_get(run, "workers")), count);
		assert_true(json_get_num(json_at(json_get(run, "workers"), 0), "tid", 0) > 0);
		json_free(run);
	}
	unlink(path);
	rmdir(dir);
}

/* BPF is used when privileged; CI (TASKHOP_REQUIRE_BPF=1) insists on it. */
static bool want_bpf(void)
{
	const char *req = getenv("TASKHOP_REQUIRE_BPF");
	const char *why = th_record_unavailable();
	if (why && req && strcmp(req, "1") == 0)
		fail_msg("TASKHOP_REQUIRE_BPF=1 but BPF is unusable: %s", why);
	return why == NULL;
}

static void expect_fields(const struct json *o, const char *const *fields, const char *where)
{
	for (int i = 0; fields[i]; i++)
		if (!json_get(o, fields[i]))
			fail_msg("%s has no '%s'", where, fields[i]);
}

/* Whether the file dir/name contains text. */
static bool file_has(const char *dir, const char *name, const char *text)
{
	char path[512], err[256];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	char *s = fs_read_all(path, NULL, err, sizeof(err));
	bool ok = s && strstr(s, text);
	free(s);
	return ok;
}

static bool svg_ok(const char *dir, const char *name)
{
	return file_has(dir, name, "<svg") && file_has(dir, name, "</svg>");
}

static void check_report(const char *dir, bool bpf)
{
	/* the field list, spelled out here so the test pins the format */
	static const char *const run_fields[] = { "workload", "policy", "workers", "pin", "seed", "bpf",
		"wall_s", "peak_rss_kb", "mean_completion_s", "makespan_s", "ideal_mean_completion_s",
		"tasks", "worker_count", NULL };
	static const char *const task_fields[] = { "id", "label", "n", "spawn_worker", "first_worker",
		"last_worker", "completion_s", "runs", "yields", "worker_hops", "cpu_migrations",
		"cpu_migrations_kernel", "cpus_visited", "on_cpu_ns", "runq_wait_ns", "preemptions",
		"means", NULL };
	static const char *const worker_fields[] = { "index", "tid", "cpu_migrations", "preemptions",
		"on_cpu_ns", "runq_wait_ns", "tasks_run", NULL };
	static const char *const pol_fields[] = { "mean_completion_s", "makespan_s",
		"worker_hops_per_task", "cpu_migrations_per_task", NULL };
	static const char *const stat_fields[] = { "median", "min", "max", "ci95", NULL };
	static const char *const machine_fields[] = { "cpus", "kernel", "cpu_model", NULL };
	char path[512], err[256];
	snprintf(path, sizeof(path), "%s/report.json", dir);
	struct json *r = json_parse_file(path, err, sizeof(err));
	if (!r)
		fail_msg("%s", err);
	assert_non_null(strstr(json_get_str(r, "command", ""), "compare darts"));
	expect_fields(json_get(r, "machine"), machine_fields, "machine");
	const struct json *runs = json_get(r, "runs");
	assert_int_equal(json_len(runs), 4);
	/* interleaved: sticky, shared, sticky, shared; seeds 1, 1, 2, 2 */
	for (size_t i = 0; i < 4; i++) {
		const struct json *run = json_at(runs, i);
		assert_string_equal(json_get_str(run, "policy", ""), i % 2 ? "shared" : "sticky");
		assert_int_equal((int)json_get_num(run, "seed", -1), 1 + (int)i / 2);
		expect_fields(run, run_fields, "run");
		assert_int_equal(json_bool_of(json_get(json_get(run, "bpf"), "enabled")), bpf);
		const struct json *tasks = json_get(run, "tasks");
		assert_int_equal(json_len(tasks), 21);
		for (size_t k = 0; k < 21; k++) {
			const struct json *t = json_at(tasks, k);
			expect_fields(t, task_fields, "task");
			assert_int_equal(json_len(json_get(t, "means")), 10);
			assert_int_equal(json_is_num(json_get(t, "cpu_migrations")), bpf);
			assert_int_equal((int)json_get_num(t, "n", 0), k == 20 ? 10000000 : 100000);
			assert_true(json_get_num(t, "completion_s", -1) > 0);
			if (strcmp(json_get_str(run, "policy", ""), "sticky") == 0)
				assert_int_equal((int)json_get_num(t, "worker_hops", -1), 0);
		}
		/* `workers` is the workers[] array; worker_count its length */
		const struct json *ws = json_get(run, "workers");
		assert_int_equal(json_len(ws), 2);
		assert_int_equal((int)json_get_num(run, "worker_count", 0), 2);
		for (size_t w = 0; w < 2; w++)
			expect_fields(json_at(ws, w), worker_fields, "worker");
		assert_true(json_get_num(run, "ideal_mean_completion_s", 0) > 0);
		assert_true(json_get_num(run, "ideal_mean_completion_s", 0) <=
			    json_get_num(run, "mean_completion_s", 0));
	}
	const struct json *pols = json_get(r, "policies");
	assert_int_equal(json_len(pols), 2);
	for (size_t p = 0; p < 2; p++) {
		expect_fields(json_at(pols, p), pol_fields, "policy");
		expect_fields(json_get(json_at(pols, p), "mean_completion_s"), stat_fields, "mean_completion_s");
		assert_int_equal(json_is_null(json_get(json_at(pols, p), "cpu_migrations_per_task")), !bpf);
	}
	json_free(r);
	const char *svgs[] = { "returns.svg", "histogram.svg", "migrations.svg" };
	for (int i = 0; i < 3; i++)
		if (!svg_ok(dir, svgs[i]))
			fail_msg("%s/%s missing or not an SVG", dir, svgs[i]);
	/* the return times are a strip plot that marks darts' long task and says what t0 is;
	 * the migration bars are medians with min-max whiskers, as their title says */
	assert_true(file_has(dir, "returns.svg", "long task"));
	assert_true(file_has(dir, "returns.svg", "t0: the start of the run"));
	assert_true(file_has(dir, "migrations.svg", "whisker = min to max"));
	/* the article's timeline, one per policy, of the median run */
	assert_true(file_has(dir, "timeline-sticky.svg", "worker hop"));
	assert_true(file_has(dir, "timeline-shared.svg", "the median run of"));
	snprintf(path, sizeof(path), "%s/trace.json", dir);
	struct json *tr = json_parse_file(path, err, sizeof(err));
	if (!tr)
		fail_msg("%s", err);
	const struct json *ev = json_get(tr, "traceEvents");
	int slices = 0;
	for (size_t i = 0; i < json_len(ev); i++)
		slices += strcmp(json_get_str(json_at(ev, i), "ph", ""), "X") == 0;
	assert_true(slices >= 2 * 21 * 11 * 2); /* every run on its worker and task tracks */
	json_free(tr);
}

static void compare_writes_a_complete_report_that_rerenders(void **state)
{
	(void)state;
	bool bpf = want_bpf();
	char dir[] = "/tmp/th_cli_XXXXXX", dir2[300], cmd[700], err[256];
	assert_non_null(mkdtemp(dir));
	struct result *r = run_taskhop("compare", "darts", "--policies", "sticky,shared", "--repeat", "2",
				       "--workers", "2", "--large", "1e7", "--small", "1e5", "--out", dir,
				       bpf ? "--seed" : "--no-bpf", bpf ? "1" : NULL, NULL);
	if (r->status != 0)
		fail_msg("compare failed (%d): %s", r->status, r->err);
	assert_non_null(strstr(r->err, " 4/4]"));   /* progress on stderr */
	assert_non_null(strstr(r->out, "sticky"));  /* summary table on stdout */
	free(r);
	check_report(dir, bpf);
	/* `report` re-renders the same Markdown from report.json alone */
	snprintf(dir2, sizeof(dir2), "%s/again", dir);
	r = run_taskhop("report", dir, "--out", dir2, NULL);
	if (r->status != 0)
		fail_msg("report failed (%d): %s", r->status, r->err);
	free(r);
	char p1[400], p2[400];
	snprintf(p1, sizeof(p1), "%s/report.md", dir);
	snprintf(p2, sizeof(p2), "%s/report.md", dir2);
	char *a = fs_read_all(p1, NULL, err, sizeof(err)), *b = fs_read_all(p2, NULL, err, sizeof(err));
	assert_non_null(a);
	assert_non_null(b);
	assert_string_equal(a, b);
	free(a);
	free(b);
	assert_true(svg_ok(dir2, "returns.svg"));
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
}

static void ctrl_c_during_compare_still_writes_the_report(void **state)
{
	(void)state;
	char dir[] = "/tmp/th_cli_XXXXXX", path[300], err[256], cmd[400];
	assert_non_null(mkdtemp(dir));
	int errpipe[2];
	assert_int_equal(pipe(errpipe), 0);
	pid_t pid = fork();
	if (pid == 0) {
		int devnull = open("/dev/null", O_WRONLY);
		dup2(devnull, 1);
		dup2(errpipe[1], 2);
		close(errpipe[0]);
		execl(taskhop_bin(), taskhop_bin(), "compare", "darts", "--no-bpf", "--policies",
		      "sticky,shared", "--repeat", "200", "--workers", "2", "--small", "1e5", "--large",
		      "1e6", "--out", dir, (char *)NULL);
		_exit(127);
	}
	close(errpipe[1]);
	/* wait for the first progress line, then interrupt as a terminal would */
	char buf[4096];
	size_t n = 0;
	while (n + 1 < sizeof(buf) && !strstr(buf, "[  1/")) {
		ssize_t k = read(errpipe[0], buf + n, sizeof(buf) - 1 - n);
		if (k <= 0)
			break;
		n += (size_t)k;
		buf[n] = 0;
	}
	assert_non_null(strstr(buf, "[  1/"));
	kill(pid, SIGINT);
	while (read(errpipe[0], buf, sizeof(buf)) > 0)
		;
	close(errpipe[0]);
	int st;
	waitpid(pid, &st, 0);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 130);
	snprintf(path, sizeof(path), "%s/report.json", dir);
	struct json *r = json_parse_file(path, err, sizeof(err));
	if (!r)
		fail_msg("%s", err);
	assert_true(json_bool_of(json_get(r, "interrupted")));
	size_t runs = json_len(json_get(r, "runs"));
	assert_true(runs >= 1 && runs < 400);
	json_free(r);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
}

/* BPF requested (the default) but not allowed: one line naming the fix, non-zero exit;
 * --no-bpf gives the same run with the kernel-only fields null. */
static void unprivileged_run_names_the_fix_or_runs_without_bpf(void **state)
{
	(void)state;
	if (geteuid() == 0)
		run_as = 65534; /* nobody */
	if (access(taskhop_bin(), X_OK) != 0) {
		skip();
		return;
	}
	char dir[] = "/tmp/th_cli_run_XXXXXX", json[300], copy[300], saved[PATH_MAX], cmd[2 * PATH_MAX];
	assert_non_null(mkdtemp(dir));
	chmod(dir, 0777); /* the unprivileged run writes its JSON here */
	snprintf(json, sizeof(json), "%s/run.json", dir);
	/* nobody may not be able to enter the checkout (a clone made by mktemp -d
	 * is 0700): run a world-executable copy of the binary from here */
	snprintf(copy, sizeof(copy), "%s/taskhop", dir);
	snprintf(cmd, sizeof(cmd), "cp '%s' '%s' && chmod 0755 '%s'", taskhop_bin(), copy, copy);
	assert_int_equal(system(cmd), 0);
	snprintf(saved, sizeof(saved), "%s", taskhop_bin_buf);
	snprintf(taskhop_bin_buf, PATH_MAX, "%s", copy);
	struct result *r = run_taskhop("run", "darts", "--small", "1e3", "--large", "1e4", NULL);
	run_as = 0;
	if (r->status == 126 || r->status == 127) {
		free(r);
		snprintf(taskhop_bin_buf, PATH_MAX, "%s", saved);
		unlink(copy);
		rmdir(dir);
		skip(); /* cannot drop privileges here */
		return;
	}
	assert_int_equal(r->status, 1);
	assert_int_equal(count_lines(r->err), 1);
	assert_non_null(strstr(r->err, "run as root, or use --no-bpf"));
	free(r);
	if (geteuid() == 0)
		run_as = 65534;
	r = run_taskhop("run", "darts", "--no-bpf", "--small", "1e3", "--large", "1e4", "--json", json, NULL);
	run_as = 0;
	if (r->status != 0)
		fail_msg("--no-bpf run failed (%d): %s", r->status, r->err);
	assert_non_null(strstr(r->out, "bpf=off"));
	free(r);
	char err[256];
	struct json *run = json_parse_file(json, err, sizeof(err));
	assert_non_null(run);
	assert_false(json_bool_of(json_get(json_get(run, "bpf"), "enabled")));
	const struct json *t = json_at(json_get(run, "tasks"), 0);
	assert_true(json_is_null(json_get(t, "cpu_migrations")));
	assert_true(json_is_null(json_get(t, "on_cpu_ns")));
	assert_true(json_is_num(json_get(t, "worker_hops")));
	json_free(run);
	/* a single run's JSON renders too */
	r = run_taskhop("report", json, "--no-files", NULL);
	assert_int_equal(r->status, 0);
	assert_non_null(strstr(r->out, "mean completion"));
	free(r);
	snprintf(taskhop_bin_buf, PATH_MAX, "%s", saved);
	unlink(copy);
	unlink(json);
	assert_int_equal(rmdir(dir), 0);
}

/* Runs every "  taskhop ..." line under "example:" in a help text, in order. */
static void run_examples(const char *help, const char *what)
{
	const char *ex = strstr(help, "example:");
	if (!ex)
		fail_msg("%s: no example in --help", what);
	char *text = strdup(ex), *save = NULL;
	int ran = 0;
	for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		if (strncmp(line, "  taskhop ", 10) != 0)
			continue;
		const char *argv[64];
		int n = 0;
		char *save2 = NULL;
		for (char *w = strtok_r(line, " ", &save2); w && n < 63; w = strtok_r(NULL, " ", &save2))
			argv[n++] = w;
		argv[n] = NULL;
		struct result *r = run_argv(argv);
		if (r->status != 0)
			fail_msg("%s: example failed (exit %d): %s", what, r->status, r->err);
		free(r);
		ran++;
	}
	free(text);
	if (!ran)
		fail_msg("%s: no runnable example", what);
}

static void every_help_example_works_as_pasted(void **state)
{
	(void)state;
	const char *cmds[][2] = { { "list", NULL }, { "run", NULL }, { "compare", NULL },
				  { "report", NULL }, { "run", "darts" }, { "run", "isprime" } };
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		struct result *h = cmds[i][1] ? run_taskhop(cmds[i][0], cmds[i][1], "--help", NULL)
					      : run_taskhop(cmds[i][0], "--help", NULL);
		assert_int_equal(h->status, 0);
		run_examples(h->out, cmds[i][1] ? cmds[i][1] : cmds[i][0]);
		free(h);
	}
	assert_int_equal(system("rm -rf /tmp/darts-report /tmp/r"), 0);
}

/* ---- numbers, late usage errors, outputs checked up front -------------------------- */

/* The parser itself: digits or the 1e7 form, exact to 2^64-1, nothing else. */
static void number_parser_takes_digits_and_1e7_form_only(void **state)
{
	(void)state;
	static const struct {
		const char *text;
		uint64_t value;
	} good[] = { { "0", 0 }, { "20", 20 }, { "007", 7 }, { "1e7", 10000000 }, { "2.5e6", 2500000 },
		     { "1E3", 1000 }, { "1e+2", 100 }, { "1.50e1", 15 }, { "0e99999", 0 },
		     { "18446744073709551615", UINT64_MAX }, { "9007199254740993", 9007199254740993ULL } };
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		uint64_t v = 12345;
		if (num_parse_u64(good[i].text, 0, UINT64_MAX, &v) != NUM_OK || v != good[i].value)
			fail_msg("'%s' gave %llu", good[i].text, (unsigned long long)v);
	}
	static const char *const syntax[] = { "", " 100", "100 ", "+5", "-1", "0x14", "014x", "1e", "e7",
					      "1.5", "1.", ".5e1", "1e-3", "inf", "nan", "1_000", "1,000",
					      "１", "10\n" };
	for (size_t i = 0; i < sizeof(syntax) / sizeof(syntax[0]); i++) {
		uint64_t v = 12345;
		if (num_parse_u64(syntax[i], 0, UINT64_MAX, &v) != NUM_SYNTAX || v != 12345)
			fail_msg("'%s' was not refused as bad syntax", syntax[i]);
	}
	uint64_t v;
	assert_int_equal(num_parse_u64(NULL, 0, 10, &v), NUM_SYNTAX);
	assert_int_equal(num_parse_u64("2.55e1", 0, 100, &v), NUM_FRACTION);
	assert_int_equal(num_parse_u64("18446744073709551616", 0, UINT64_MAX, &v), NUM_RANGE);
	assert_int_equal(num_parse_u64("2e19", 0, UINT64_MAX, &v), NUM_RANGE);
	assert_int_equal(num_parse_u64("1e99999999999", 0, UINT64_MAX, &v), NUM_RANGE);
	assert_int_equal(num_parse_u64("9", 10, 20, &v), NUM_RANGE);
	assert_int_equal(num_parse_u64("21", 10, 20, &v), NUM_RANGE);
	char err[200];
	assert_int_equal(num_flag_u64("--seed", "0x10", 0, 99, &v, err, sizeof(err)), NUM_SYNTAX);
	assert_string_equal(err, "--seed must be a whole number in 0..99 (digits or 1e7 form), not '0x10'");
}

/* Every integer flag of every subcommand goes through the same parser: what one refuses,
 * all refuse, with one line naming the flag and exit 2. */
static void every_number_flag_refuses_hex_spaces_and_signs(void **state)
{
	(void)state;
	static const char *const flags[][3] = {
		{ "run", "darts", "--seed" },        { "run", "darts", "--workers" },
		{ "run", "darts", "--small" },       { "run", "darts", "--large" },
		{ "run", "darts", "--count" },       { "run", "isprime", "--lo" },
		{ "run", "isprime", "--hi" },        { "run", "isprime", "--chunk" },
		{ "run", "leibniz", "--terms" },     { "run", "leibniz", "--inputs" },
		{ "run", "leibniz", "--group" },     { "run", "leibniz", "--procs" },
		{ "run", "leibniz", "--proc-threads" }, { "run", "leibniz", "--batch" },
		{ "run", "leibniz", "--chunk" },     { "run", "leibniz", "--call-timeout" },
		{ "compare", "darts", "--repeat" },  { "compare", "darts", "--seed" },
		{ "compare", "darts", "--workers" },
	};
	static const char *const bad[] = { "0x14", " 100", "+5", "1.5", "-1", "1e" };
	for (size_t f = 0; f < sizeof(flags) / sizeof(flags[0]); f++)
		for (size_t b = 0; b < sizeof(bad) / sizeof(bad[0]); b++) {
			struct result *r = run_taskhop(flags[f][0], flags[f][1], flags[f][2], bad[b], "--no-bpf", NULL);
			char needle[128];
			snprintf(needle, sizeof(needle), "%s must be", flags[f][2]);
			if (r->status != 2 || count_lines(r->err) != 1 || !strstr(r->err, needle) ||
			    !strstr(r->err, bad[b]))
				fail_msg("%s %s %s '%s': exit %d, stderr: %s", flags[f][0], flags[f][1],
					 flags[f][2], bad[b], r->status, r->err);
			free(r);
		}
	/* and the 1e7 form works for every one of them, the seed included */
	struct result *r = run_taskhop("run", "darts", "--no-bpf", "--quiet", "--workers", "1e0", "--seed",
				       "1e3", "--small", "2e1", "--large", "1e2", "--count", "1e0", NULL);
	if (r->status != 0)
		fail_msg("1e form refused: %s", r->err);
	free(r);
}

/* Options that are each fine but wrong together are bad usage too (exit 2), found
 * before anything runs, in run and in compare. */
static void conflicting_options_exit_2_before_running(void **state)
{
	(void)state;
	expect_usage_error(run_taskhop("run", "isprime", "--no-bpf", "--lo", "10", "--hi", "5", NULL),
			   "--hi (5) is below --lo (10)");
	expect_usage_error(run_taskhop("compare", "isprime", "--no-bpf", "--lo", "10", "--hi", "5",
				       "--out", "/tmp/th_cli_never", NULL), "--hi (5) is below --lo (10)");
	assert_int_equal(access("/tmp/th_cli_never", F_OK), -1);
	expect_usage_error(run_taskhop("run", "leibniz", "--no-bpf", "--terms", "10", "--group", "20", NULL),
			   "--group");
	expect_usage_error(run_taskhop("run", "leibniz", "--no-bpf", "--bpf", NULL), "--bpf");
}

/* --json naming a directory (or a place that cannot be written) fails at once, with
 * nothing run: a 1e9-draw darts run here would take minutes if it were started. */
static void json_output_is_checked_before_the_run(void **state)
{
	(void)state;
	char dir[] = "/tmp/th_cli_XXXXXX";
	assert_non_null(mkdtemp(dir));
	expect_usage_error(run_taskhop("run", "darts", "--no-bpf", "--small", "1e9", "--json", dir, NULL), dir);
	assert_int_equal(rmdir(dir), 0);
	expect_usage_error(run_taskhop("run", "darts", "--no-bpf", "--small", "1e9", "--json",
				       "/proc/self/no/x.json", NULL), "/proc/self/no/x.json");
	/* a directory that exists but refuses new files (procfs, as root too) */
	expect_usage_error(run_taskhop("run", "darts", "--no-bpf", "--small", "1e9", "--json",
				       "/proc/taskhop.json", NULL), "/proc/taskhop.json");
	expect_usage_error(run_taskhop("compare", "darts", "--no-bpf", "--small", "1e9", "--out",
				       "/proc/self", NULL), "/proc/self");
}

/* The parent pid in /proc/PID/stat, 0 if the process is gone. */
static pid_t parent_of(pid_t pid)
{
	char path[64];
	int ppid = 0;
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	FILE *f = fopen(path, "r");
	if (!f)
		return 0;
	if (fscanf(f, "%*d (%*[^)]) %*c %d", &ppid) != 1)
		ppid = 0;
	fclose(f);
	return (pid_t)ppid;
}

/* Waits (up to 30 s) for a child of `parent` to appear and returns it, or 0. */
static pid_t child_of(pid_t parent)
{
	for (int tries = 0; tries < 3000; tries++) {
		DIR *d = opendir("/proc");
		struct dirent *e;
		pid_t found = 0;
		while (d && !found && (e = readdir(d)))
			if (e->d_name[0] >= '1' && e->d_name[0] <= '9' && parent_of(atoi(e->d_name)) == parent)
				found = (pid_t)atoi(e->d_name);
		if (d)
			closedir(d);
		if (found)
			return found;
		usleep(10000);
	}
	return 0;
}

static bool alive(pid_t pid)
{
	char path[64], state = 0;
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	FILE *f = fopen(path, "r");
	if (!f)
		return false;
	int rc = fscanf(f, "%*d (%*[^)]) %c", &state);
	fclose(f);
	return rc == 1 && state != 'Z' && state != 'X';
}

/* compare killed with SIGKILL (no handler runs) takes its `taskhop run` with it. */
static void sigkilled_compare_leaves_no_run_behind(void **state)
{
	(void)state;
	char dir[] = "/tmp/th_cli_XXXXXX", cmd[128];
	assert_non_null(mkdtemp(dir));
	pid_t pid = fork();
	if (pid == 0) {
		int devnull = open("/dev/null", O_WRONLY);
		dup2(devnull, 1);
		dup2(devnull, 2);
		execl(taskhop_bin(), taskhop_bin(), "compare", "darts", "--no-bpf", "--policies", "sticky",
		      "--repeat", "1", "--workers", "1", "--small", "1e10", "--count", "1", "--out", dir,
		      (char *)NULL);
		_exit(127);
	}
	pid_t run = child_of(pid);
	assert_true(run > 0);
	kill(pid, SIGKILL);
	int st;
	waitpid(pid, &st, 0);
	/* the kernel delivers the parent-death signal at once; give it ample time */
	for (int i = 0; i < 1000 && alive(run); i++)
		usleep(10000);
	bool left = alive(run);
	if (left)
		kill(run, SIGKILL);
	assert_false(left);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(bad_input_gives_one_line_and_exit_2),
		cmocka_unit_test(number_parser_takes_digits_and_1e7_form_only),
		cmocka_unit_test(every_number_flag_refuses_hex_spaces_and_signs),
		cmocka_unit_test(conflicting_options_exit_2_before_running),
		cmocka_unit_test(json_output_is_checked_before_the_run),
		cmocka_unit_test(sigkilled_compare_leaves_no_run_behind),
		cmocka_unit_test(unwritable_out_writes_nothing),
		cmocka_unit_test(corrupt_report_json_is_rejected),
		cmocka_unit_test(help_and_version_succeed_with_examples),
		cmocka_unit_test(every_help_example_works_as_pasted),
		cmocka_unit_test(isprime_counts_the_same_primes_in_every_mode),
		cmocka_unit_test(unprivileged_run_names_the_fix_or_runs_without_bpf),
		cmocka_unit_test(compare_writes_a_complete_report_that_rerenders),
		cmocka_unit_test(ctrl_c_during_compare_still_writes_the_report),
		cmocka_unit_test(preempt_option_is_checked_and_recorded_per_task),
		cmocka_unit_test(compare_preempt_list_refuses_bad_items),
		cmocka_unit_test(compare_preempt_list_interleaves_each_quantum),
	};
	/* TASKHOP_TEST_FILTER=pattern runs only the matching tests (while developing) */
	if (getenv("TASKHOP_TEST_FILTER"))
		cmocka_set_test_filter(getenv("TASKHOP_TEST_FILTER"));
	return cmocka_run_group_tests(tests, NULL, NULL);
}
