/* test_hist.c — distributions over task runs and the largest scheduling delay: the log2
 * slots, the runqlat-style text, --hist on run/record/report, the figure on the page, and
 * the range checks of the new report fields. */
#define _GNU_SOURCE
#include <math.h>
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
#include "lib/scratch.h"
#include "report/fsutil.h"
#include "report/hist.h"
#include "report/json.h"
#include "report/report.h"
#include "report/stats.h"

/* ---- log2 slots ------------------------------------------------------------------ */

static void log2_slots_hold_zero_then_powers_of_two(void **state)
{
	(void)state;
	assert_int_equal(stats_log2_slot(0), 0);
	assert_int_equal(stats_log2_slot(0.999), 0);
	assert_int_equal(stats_log2_slot(1), 1);
	assert_int_equal(stats_log2_slot(1.999), 1);
	assert_int_equal(stats_log2_slot(2), 2);
	assert_int_equal(stats_log2_slot(3), 2);
	assert_int_equal(stats_log2_slot(4), 3);
	assert_int_equal(stats_log2_slot(1023), 10);
	assert_int_equal(stats_log2_slot(1024), 11);
	assert_int_equal(stats_log2_slot(ldexp(1, 62)), 63);
	assert_int_equal(stats_log2_slot(ldexp(1, 63) - 1024), 63);
	assert_int_equal(stats_log2_slot(ldexp(1, 63)), 64);
	double lo, hi;
	for (int s = 0; s < STATS_LOG2_SLOTS; s++) { /* every slot's bounds fall in it */
		stats_log2_bounds(s, &lo, &hi);
		assert_int_equal(stats_log2_slot(lo), s);
		if (isfinite(hi))
			assert_int_equal(stats_log2_slot(hi), s + 1);
	}
	stats_log2_bounds(0, &lo, &hi);
	assert_true(lo == 0 && hi == 1);
	stats_log2_bounds(11, &lo, &hi);
	assert_true(lo == 1024 && hi == 2048);
}

static void huge_values_go_to_the_last_slot_and_bad_ones_nowhere(void **state)
{
	(void)state;
	assert_int_equal(stats_log2_slot(ldexp(1, 64)), STATS_LOG2_SLOTS - 1);
	assert_int_equal(stats_log2_slot((double)UINT64_MAX), STATS_LOG2_SLOTS - 1);
	assert_int_equal(stats_log2_slot(1e300), STATS_LOG2_SLOTS - 1);
	assert_int_equal(stats_log2_slot(INFINITY), STATS_LOG2_SLOTS - 1);
	assert_int_equal(stats_log2_slot(-1), -1);
	assert_int_equal(stats_log2_slot(-INFINITY), -1);
	assert_int_equal(stats_log2_slot(NAN), -1);
	double lo, hi;
	stats_log2_bounds(STATS_LOG2_SLOTS - 1, &lo, &hi);
	assert_true(lo == ldexp(1, 63) && isinf(hi));
}

static char *print_to_string(const double *count, int n)
{
	char *s = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&s, &len);
	assert_non_null(f);
	stats_log2_print(f, "usecs", count, n);
	fclose(f);
	return s;
}

static void log2_text_prints_rows_from_first_to_last_filled_slot(void **state)
{
	(void)state;
	double count[STATS_LOG2_SLOTS] = { 0 };
	count[2] = 10; /* [2, 4) */
	count[4] = 5;  /* [8, 16) */
	char *s = print_to_string(count, STATS_LOG2_SLOTS);
	assert_non_null(strstr(s, "usecs"));
	assert_null(strstr(s, "[0, 1)"));
	assert_null(strstr(s, "[1, 2)"));
	assert_non_null(strstr(s, "[2, 4)         10  |****************************************|"));
	assert_non_null(strstr(s, "[4, 8)          0  |                                        |"));
	assert_non_null(strstr(s, "[8, 16)          5  |********************                    |"));
	assert_null(strstr(s, "[16, 32)"));
	free(s);
	memset(count, 0, sizeof(count));
	s = print_to_string(count, STATS_LOG2_SLOTS);
	assert_non_null(strstr(s, "(no data)"));
	free(s);
}

/* ---- a real run: --hist, the JSON fields, the figure ------------------------------- */

static void darts_json(char *json, size_t len)
{
	scratch_path(json, len, "run.json");
	struct result *r = run_taskhop("run", "darts", "--workers", "2", "--small", "1e5", "--large",
				       "1e7", "--json", json, "--hist", NULL);
	if (r->status != 0)
		fail_msg("run exit %d: %s", r->status, r->err);
	assert_non_null(strstr(r->out, "max-delay(ms)"));
	assert_non_null(strstr(r->out, "run-queue wait per run (sch-delay), policy shared: 231 task runs"));
	assert_non_null(strstr(r->out, "on-CPU time per run (run-time), policy shared: 231 task runs"));
	assert_non_null(strstr(r->out, "usecs      count  distribution"));
	free(r);
}

static double hist_total(const struct json *h)
{
	double n = 0;
	for (size_t i = 0; i < json_len(h); i++)
		n += json_num_of(json_at(h, i));
	return n;
}

static void run_hist_and_json_give_each_task_its_largest_wait(void **state)
{
	(void)state;
	NEED_BPF();
	char json[256];
	darts_json(json, sizeof(json));
	struct json *run = scratch_parse(json);
	const struct json *tasks = json_get(run, "tasks");
	assert_int_equal(json_len(tasks), 21);
	for (size_t i = 0; i < json_len(tasks); i++) {
		const struct json *t = json_at(tasks, i);
		double max = json_get_num(t, "max_runq_wait_ns", -1), sum = json_get_num(t, "runq_wait_ns", -1);
		assert_true(max >= 0 && max <= sum);
		/* when it waited, the wait ended inside the run */
		if (max > 0) {
			double at = json_get_num(t, "max_runq_wait_at_s", -1);
			assert_true(at >= 0 && at <= json_get_num(run, "wall_s", 0));
		} else {
			assert_true(json_is_null(json_get(t, "max_runq_wait_at_s")));
		}
		/* one count per run in each histogram */
		assert_true(hist_total(json_get(t, "runq_wait_hist_us")) == json_get_num(t, "runs", 0));
		assert_true(hist_total(json_get(t, "on_cpu_hist_us")) == json_get_num(t, "runs", 0));
	}
	json_free(run);
}

static void report_hist_prints_the_distributions_of_a_run(void **state)
{
	(void)state;
	NEED_BPF();
	char json[256];
	darts_json(json, sizeof(json));
	struct result *r = run_taskhop("report", json, "--no-files", "--hist", NULL);
	if (r->status != 0)
		fail_msg("report exit %d: %s", r->status, r->err);
	assert_non_null(strstr(r->out, "run-queue wait per run (sch-delay), policy shared: 231 task runs in 1 run"));
	assert_non_null(strstr(r->out, "on-CPU time per run (run-time), policy shared"));
	assert_non_null(strstr(r->out, "|****************************************|"));
	free(r);
	r = run_taskhop("report", json, "--no-files", NULL); /* only when asked */
	assert_int_equal(r->status, 0);
	assert_null(strstr(r->out, "usecs"));
	free(r);
}

static void record_hist_prints_the_distributions_with_its_tables(void **state)
{
	(void)state;
	NEED_BPF();
	struct result *r = run_taskhop("record", "--hist", "--", taskhop_bin(), "run", "darts",
				       "--workers", "2", "--small", "1e5", "--large", "1e6", "--no-bpf",
				       "--quiet", NULL);
	if (r->status != 0)
		fail_msg("record exit %d: %s", r->status, r->err);
	/* a command's stdout is its own: record's tables and histograms go to stderr */
	assert_non_null(strstr(r->err, "max-delay(ms)"));
	assert_non_null(strstr(r->err, "run-queue wait per run (sch-delay), policy unknown: 231 task runs"));
	assert_non_null(strstr(r->err, "on-CPU time per run (run-time), policy unknown: 231 task runs"));
	assert_null(strstr(r->out, "usecs"));
	free(r);
}

static void hist_is_refused_by_compare_with_the_way_to_get_it(void **state)
{
	(void)state;
	expect_usage_error(run_taskhop("compare", "darts", "--hist", NULL), "--hist");
}

static void distributions_figure_is_written_and_shown_on_the_page(void **state)
{
	(void)state;
	NEED_BPF();
	char json[256], out[256], path[512], err[256];
	darts_json(json, sizeof(json));
	scratch_path(out, sizeof(out), "rep");
	struct result *r = run_taskhop("report", json, "--out", out, NULL);
	if (r->status != 0)
		fail_msg("report exit %d: %s", r->status, r->err);
	free(r);
	snprintf(path, sizeof(path), "%s/distributions.svg", out);
	char *svg = fs_read_all(path, NULL, err, sizeof(err));
	if (!svg)
		fail_msg("%s", err);
	assert_non_null(strstr(svg, "<svg"));
	assert_non_null(strstr(svg, "run-queue wait per run"));
	free(svg);
	snprintf(path, sizeof(path), "%s/report.md", out);
	char *md = fs_read_all(path, NULL, err, sizeof(err));
	assert_non_null(md);
	assert_non_null(strstr(md, "](distributions.svg)"));
	assert_non_null(strstr(md, "## Largest scheduling delays"));
	assert_non_null(strstr(md, "| policy | run | task | label | max sch-delay ms | at s |"));
	free(md);
	snprintf(path, sizeof(path), "%s/report.html", out);
	char *html = fs_read_all(path, NULL, err, sizeof(err));
	assert_non_null(html);
	char *h2 = strstr(html, "<h2>Run-queue wait and on-CPU time per task run");
	assert_non_null(h2); /* the figure inlined right under its title */
	assert_true(strncmp(strchr(h2, '\n') + 1, "<svg", 4) == 0);
	assert_non_null(strstr(html, "<h2>Largest scheduling delays</h2>"));
	free(html);
}

/* ---- hostile reports ---------------------------------------------------------------- */

/* A run JSON as `taskhop run --json` writes it (no BPF: the new fields given by hand). */
static void write_run_with(const char *path, const char *field, struct json *value)
{
	char out[256];
	scratch_path(out, sizeof(out), "base.json");
	struct result *r = run_taskhop("run", "darts", "--workers", "2", "--small", "1e4", "--large",
				       "1e5", "--no-bpf", "--quiet", "--json", out, NULL);
	assert_int_equal(r->status, 0);
	free(r);
	struct json *run = scratch_parse(out);
	struct json *t = (struct json *)json_at(json_get(run, "tasks"), 2);
	json_set_num(t, "runq_wait_ns", 5e6);
	json_set(t, field, value);
	char err[256];
	if (json_write_file(path, run, 1, err, sizeof(err)))
		fail_msg("%s", err);
	json_free(run);
}

static void refused(const char *field, struct json *value, const char *needle)
{
	char path[256];
	scratch_path(path, sizeof(path), "bad.json");
	write_run_with(path, field, value);
	struct result *r = run_taskhop("report", path, "--no-files", "--hist", NULL);
	if (!strstr(r->err, "run 1 task 3") || !strstr(r->err, field))
		fail_msg("no run and field named: %s", r->err);
	expect_usage_error(r, needle);
}

static void negative_or_huge_max_runq_wait_is_refused_naming_run_and_field(void **state)
{
	(void)state;
	refused("max_runq_wait_ns", json_num(-1), "'max_runq_wait_ns' must be a whole number");
	refused("max_runq_wait_ns", json_num(1e300), "not 1.0000000000000001e+300");
	refused("max_runq_wait_ns", json_num(6e6), "'max_runq_wait_ns' exceeds 'runq_wait_ns'");
	refused("max_runq_wait_at_s", json_num(-2e9), "'max_runq_wait_at_s' must be a number");
	refused("max_runq_wait_at_s", json_str("1"), "'max_runq_wait_at_s' must be a number");
}

static void crafted_histograms_are_refused_before_any_count_is_used(void **state)
{
	(void)state;
	struct json *neg = json_arr(), *frac = json_arr(), *long_arr = json_arr();
	json_push(neg, json_num(-5));
	json_push(frac, json_num(0.5));
	for (int i = 0; i < STATS_LOG2_SLOTS + 1; i++)
		json_push(long_arr, json_num(1));
	refused("runq_wait_hist_us", neg, "'runq_wait_hist_us' must be a whole number in [0");
	refused("on_cpu_hist_us", frac, "'on_cpu_hist_us' must be a whole number");
	refused("on_cpu_hist_us", long_arr, "'on_cpu_hist_us' has more than 65 slots");
	refused("runq_wait_hist_us", json_num(3), "'runq_wait_hist_us' must be an array");
}

static void a_full_histogram_sums_without_overflowing(void **state)
{
	(void)state;
	/* every slot at the largest count validation lets through */
	struct json *run = json_obj(), *tasks = json_arr(), *t = json_obj(), *h = json_arr();
	for (int i = 0; i < STATS_LOG2_SLOTS; i++)
		json_push(h, json_num(9007199254740992.0));
	json_set(t, "runq_wait_hist_us", h);
	json_push(tasks, t);
	json_set(run, "tasks", tasks);
	json_set_str(run, "policy", "p");
	double count[STATS_LOG2_SLOTS] = { 0 };
	struct json *report = json_obj(), *runs = json_arr();
	json_push(runs, run);
	json_set(report, "runs", runs);
	double n = hist_sum(runs, "p", "runq_wait_hist_us", count);
	assert_true(n == 65 * 9007199254740992.0 && count[64] == 9007199254740992.0);
	char *s = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&s, &len);
	hist_text(report, f);
	fclose(f);
	assert_non_null(strstr(s, "policy p: 585467951558164480 task runs in 1 run\n"));
	assert_non_null(strstr(s, "[9223372036854775808, inf) 9007199254740992  |****"));
	free(s);
	json_free(report);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(log2_slots_hold_zero_then_powers_of_two),
		cmocka_unit_test(huge_values_go_to_the_last_slot_and_bad_ones_nowhere),
		cmocka_unit_test(log2_text_prints_rows_from_first_to_last_filled_slot),
		cmocka_unit_test(a_full_histogram_sums_without_overflowing),
		cmocka_unit_test_setup_teardown(run_hist_and_json_give_each_task_its_largest_wait, scratch_setup, scratch_teardown),
		cmocka_unit_test_setup_teardown(report_hist_prints_the_distributions_of_a_run, scratch_setup, scratch_teardown),
		cmocka_unit_test_setup_teardown(record_hist_prints_the_distributions_with_its_tables, scratch_setup, scratch_teardown),
		cmocka_unit_test(hist_is_refused_by_compare_with_the_way_to_get_it),
		cmocka_unit_test_setup_teardown(distributions_figure_is_written_and_shown_on_the_page, scratch_setup, scratch_teardown),
		cmocka_unit_test_setup_teardown(negative_or_huge_max_runq_wait_is_refused_naming_run_and_field, scratch_setup, scratch_teardown),
		cmocka_unit_test_setup_teardown(crafted_histograms_are_refused_before_any_count_is_used, scratch_setup, scratch_teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
