/* test_report.c — the report side of `taskhop`: JSON round trip, the SPT lower bound, the
 * repeat statistics, aggregation, validation and rendering of every report file. */
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

#include "report/fsutil.h"
#include "report/json.h"
#include "report/report.h"
#include "report/stats.h"

/* cmocka 1.1 has no double comparison. */
#define assert_near(a, b, eps)                                                        \
	do {                                                                          \
		double a_ = (a), b_ = (b);                                            \
		if (!(fabs(a_ - b_) <= (eps)))                                        \
			fail_msg("%s = %.17g, expected %.17g", #a, a_, b_);           \
	} while (0)

static bool json_equal(const struct json *a, const struct json *b)
{
	if (!a || !b || a->type != b->type || a->n != b->n)
		return false;
	switch (a->type) {
	case JSON_NULL: return true;
	case JSON_BOOL: return a->b == b->b;
	case JSON_NUM: return a->num == b->num;
	case JSON_STR: return strcmp(a->str, b->str) == 0;
	default: break;
	}
	for (size_t i = 0; i < a->n; i++) {
		if (a->type == JSON_OBJ && strcmp(a->keys[i], b->keys[i]) != 0)
			return false;
		if (!json_equal(a->items[i], b->items[i]))
			return false;
	}
	return true;
}

/* A run as cmd_run writes it: tasks with completion/work, workers, a timeline. */
static struct json *fake_run(const char *policy, int seed, double scale, bool bpf)
{
	struct json *run = json_obj(), *tasks = json_arr(), *ws = json_arr(), *b = json_obj();
	json_set_str(run, "workload", "darts");
	json_set_str(run, "policy", policy);
	json_set_num(run, "worker_count", 2);
	json_set_bool(run, "pin", false);
	json_set_num(run, "seed", seed);
	json_set_bool(b, "enabled", bpf);
	if (bpf)
		json_set_num(b, "lost_events", 0);
	else
		json_set_null(b, "lost_events");
	json_set(run, "bpf", b);
	json_set_num(run, "wall_s", 2.5 * scale);
	json_set_num(run, "peak_rss_kb", 4096);
	struct json *tl = json_obj(), *rows = json_arr();
	for (int i = 0; i < 3; i++) {
		struct json *t = json_obj();
		json_set_num(t, "id", i + 1);
		json_set_str(t, "label", i == 2 ? "n=1e9" : "n=1e7");
		json_set_num(t, "n", i == 2 ? 1e9 : 1e7);
		json_set_num(t, "spawn_worker", -1);
		json_set_num(t, "first_worker", i % 2);
		json_set_num(t, "last_worker", (i + 1) % 2);
		json_set_num(t, "completion_s", scale * (i + 1) * 0.1);
		json_set_num(t, "runs", 11);
		json_set_num(t, "yields", 10);
		json_set_num(t, "worker_hops", i);
		const char *bf[] = { "cpu_migrations", "cpu_migrations_kernel", "on_cpu_ns",
				     "runq_wait_ns", "preemptions" };
		for (int k = 0; k < 5; k++)
			json_set(t, bf[k], bpf ? json_num(k + i) : json_null());
		struct json *cpus = json_arr();
		json_push(cpus, json_num(0));
		json_push(cpus, json_num(1));
		json_set(t, "cpus_visited", bpf ? cpus : (json_free(cpus), json_null()));
		json_set_num(t, "work_s", (i + 1) * 0.05);
		struct json *means = json_arr();
		for (int k = 0; k < 10; k++)
			json_push(means, json_num(0.5 + 0.001 * (k - 5) + 0.0001 * i));
		json_set(t, "means", means);
		json_push(tasks, t);
		struct json *r = json_arr();
		json_push(r, json_num(i + 1));
		json_push(r, json_num(i % 2));
		json_push(r, json_num(bpf ? i % 2 : -1));
		json_push(r, json_num(0.01 * i));
		json_push(r, json_num(0.01 * i + 0.005));
		json_push(rows, r);
	}
	for (int w = 0; w < 2; w++) {
		struct json *o = json_obj();
		json_set_num(o, "index", w);
		json_set_num(o, "tid", 100 + w);
		json_set_num(o, "tasks_run", 3);
		json_set(o, "cpu_migrations", bpf ? json_num(1) : json_null());
		json_set(o, "preemptions", bpf ? json_num(2) : json_null());
		json_set(o, "on_cpu_ns", bpf ? json_num(1e6) : json_null());
		json_set(o, "runq_wait_ns", bpf ? json_num(1e3) : json_null());
		json_push(ws, o);
	}
	json_set(run, "tasks", tasks);
	json_set(run, "workers", ws);
	json_set(tl, "runs", rows);
	json_set(tl, "migrations", json_arr());
	json_set(run, "timeline", tl);
	json_set_str(run, "summary", "grand mean 0.5");
	report_run_derive(run);
	return run;
}

static struct json *fake_report(bool bpf)
{
	char *argv[] = { "taskhop", "compare", "darts", "--policies", "sticky,shared" };
	struct json *r = report_new("darts", NULL, 5, argv);
	struct json *runs = (struct json *)json_get(r, "runs");
	for (int rep = 0; rep < 2; rep++) {
		json_push(runs, fake_run("sticky", rep + 1, 2.0 + rep, bpf));
		json_push(runs, fake_run("shared", rep + 1, 1.0 + rep, bpf));
	}
	report_aggregate(r);
	return r;
}

static void json_round_trip_keeps_every_value(void **state)
{
	(void)state;
	struct json *r = fake_report(true);
	json_set_str(r, "odd \"key\"\n", "tab\there \\ \x01 ünï");
	json_set_num(r, "tiny", 1.2345678901234567e-300);
	json_set_num(r, "big", 9007199254740991.0);
	json_set_num(r, "neg", -0.1);
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	json_write(f, r, 2);
	fclose(f);
	char err[256];
	struct json *back = json_parse(text, len, err, sizeof(err));
	assert_non_null(back);
	assert_true(json_equal(r, back));
	free(text);
	json_free(back);
	json_free(r);
}

static void json_parse_rejects_corrupt_input_with_position(void **state)
{
	(void)state;
	char err[256];
	const char *bad[] = { "{\"a\": 1,}", "[1 2]", "{\"a\" 1}", "\"open", "{\"a\": tru}",
			      "[1] x", "", "{\"a\": 01x}" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = 0;
		struct json *v = json_parse(bad[i], strlen(bad[i]), err, sizeof(err));
		if (v)
			fail_msg("accepted corrupt JSON: %s", bad[i]);
		assert_non_null(strstr(err, "line 1 col"));
	}
	struct json *v = json_parse("{\n  \"a\": [1,\n  ]\n}", 16, err, sizeof(err));
	assert_null(v);
	assert_non_null(strstr(err, "line 3"));
}

static void json_write_file_replaces_atomically(void **state)
{
	(void)state;
	char dir[] = "/tmp/th_test_report_XXXXXX", path[256], err[256];
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/x.json", dir);
	struct json *v = json_obj();
	json_set_num(v, "a", 1);
	assert_int_equal(json_write_file(path, v, 1, err, sizeof(err)), 0);
	/* an unwritable target leaves nothing behind and names the path */
	char bad[300];
	snprintf(bad, sizeof(bad), "%s/x.json/inside.json", dir);
	assert_int_equal(json_write_file(bad, v, 1, err, sizeof(err)), -1);
	assert_non_null(strstr(err, bad));
	struct json *back = json_parse_file(path, err, sizeof(err));
	assert_true(json_equal(v, back));
	json_free(back);
	json_free(v);
	unlink(path);
	rmdir(dir);
}

static void spt_bound_matches_hand_computed_schedules(void **state)
{
	(void)state;
	double w3[] = { 3, 1, 2 }, span;
	/* one machine: 1, 1+2, 1+2+3 */
	assert_near(spt_mean_completion(w3, 3, 1, &span), 10.0 / 3, 1e-12);
	assert_near(span, 6, 1e-12);
	/* two machines: 1 | 2 | then 3 after the 1 -> completions 1, 2, 4 */
	assert_near(spt_mean_completion(w3, 3, 2, &span), 7.0 / 3, 1e-12);
	assert_near(span, 4, 1e-12);
	/* the article's darts: 20 x 0.024 s + 2.4 s on 2 workers -> about 0.25 s */
	double d[21];
	for (int i = 0; i < 20; i++)
		d[i] = 0.024;
	d[20] = 2.4;
	assert_near(spt_mean_completion(d, 21, 2, &span), 5.28 / 21, 1e-9);
	assert_near(span, 2.64, 1e-9);
	/* more machines than tasks: each task alone */
	assert_near(spt_mean_completion(w3, 3, 8, NULL), 2, 1e-12);
	assert_near(spt_mean_completion(w3, 0, 2, NULL), 0, 0);
}

static void stats_give_median_min_max_and_t_interval(void **state)
{
	(void)state;
	double x[] = { 10, 2, 4, 1, 3 };
	struct stat_summary s;
	assert_int_equal(stats_summarize(x, 5, &s), 0);
	assert_near(s.median, 3, 0);
	assert_near(s.min, 1, 0);
	assert_near(s.max, 10, 0);
	assert_near(s.mean, 4, 1e-12);
	double half = 2.776 * sqrt(12.5) / sqrt(5);
	assert_near(s.ci_lo, 4 - half, 1e-9);
	assert_near(s.ci_hi, 4 + half, 1e-9);
	assert_near(x[0], 10, 0); /* input untouched */
	double even[] = { 4, 1, 3, 2 };
	assert_int_equal(stats_summarize(even, 4, &s), 0);
	assert_near(s.median, 2.5, 0);
	double one = 7;
	assert_int_equal(stats_summarize(&one, 1, &s), 0);
	assert_near(s.ci_lo, 7, 0);
	assert_near(s.ci_hi, 7, 0);
	assert_int_equal(stats_summarize(x, 0, &s), -1);
	struct json *j = stats_json(x, 5);
	assert_near(json_get_num(j, "median", 0), 3, 0);
	assert_int_equal(json_len(json_get(j, "ci95")), 2);
	json_free(j);
}

static void aggregate_summarizes_each_policy_over_its_runs(void **state)
{
	(void)state;
	struct json *r = fake_report(true);
	const struct json *pols = json_get(r, "policies");
	assert_int_equal(json_len(pols), 2);
	assert_string_equal(pols->keys[0], "sticky");
	const struct json *mean = json_get(json_get(pols, "shared"), "mean_completion_s");
	/* shared runs: scale 1 and 2 -> means 0.2 and 0.4 */
	assert_near(json_get_num(mean, "median", 0), 0.3, 1e-12);
	assert_near(json_get_num(mean, "min", 0), 0.2, 1e-12);
	assert_near(json_get_num(mean, "max", 0), 0.4, 1e-12);
	for (int i = 0; report_policy_fields[i]; i++)
		assert_non_null(json_get(json_get(pols, "sticky"), report_policy_fields[i]));
	const struct json *hops = json_get(json_get(pols, "sticky"), "worker_hops_per_task");
	assert_near(json_get_num(hops, "median", 0), 1, 1e-12);
	/* the ideal is SPT over work 0.05, 0.10, 0.15 on 2 workers: (0.05+0.10+0.20)/3 */
	const struct json *run0 = json_at(json_get(r, "runs"), 0);
	assert_near(json_get_num(run0, "ideal_mean_completion_s", 0), 0.35 / 3, 1e-12);
	json_free(r);
	/* without BPF the CPU migration figure is null, not zero */
	r = fake_report(false);
	assert_true(json_is_null(json_get(json_get(json_get(r, "policies"), "shared"),
					  "cpu_migrations_per_task")));
	assert_non_null(json_get(json_get(json_get(r, "policies"), "shared"), "cpu_migrations_per_task"));
	json_free(r);
}

static void validate_names_the_missing_field(void **state)
{
	(void)state;
	char err[256];
	struct json *r = fake_report(true);
	assert_int_equal(report_validate(r, err, sizeof(err)), 0);
	struct json *task = (struct json *)json_at(json_get(json_at(json_get(r, "runs"), 1), "tasks"), 2);
	for (size_t i = 0; i < task->n; i++) {
		if (strcmp(task->keys[i], "completion_s") == 0) {
			free(task->keys[i]);
			task->keys[i] = strdup("completion");
		}
	}
	assert_int_equal(report_validate(r, err, sizeof(err)), -1);
	assert_string_equal(err, "run 2 task 3 has no 'completion_s'");
	json_free(r);
	struct json *notreport = json_obj();
	assert_int_equal(report_validate(notreport, err, sizeof(err)), -1);
	json_free(notreport);
}

static bool file_starts_with(const char *dir, const char *name, const char *prefix)
{
	char path[512], err[256];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	char *s = fs_read_all(path, NULL, err, sizeof(err));
	bool ok = s && strstr(s, prefix) != NULL;
	free(s);
	return ok;
}

static void write_all_renders_every_file_from_the_json(void **state)
{
	(void)state;
	char dir[] = "/tmp/th_test_report_XXXXXX", err[256], path[512];
	assert_non_null(mkdtemp(dir));
	struct json *r = fake_report(true);
	assert_int_equal(report_write_all(r, dir, true, err, sizeof(err)), 0);
	/* report.json reads back equal, and the other files are what they claim */
	snprintf(path, sizeof(path), "%s/report.json", dir);
	struct json *back = json_parse_file(path, err, sizeof(err));
	assert_non_null(back);
	assert_true(json_equal(r, back));
	assert_true(file_starts_with(dir, "report.md", "| sticky | 2 |"));
	assert_true(file_starts_with(dir, "report.html", "<!DOCTYPE html>"));
	assert_true(file_starts_with(dir, "report.html", "<svg"));  /* figures inline */
	assert_true(file_starts_with(dir, "runs.csv", "run,policy,seed,worker_count,id,label"));
	assert_true(file_starts_with(dir, "returns.svg", "<svg"));
	assert_true(file_starts_with(dir, "migrations.svg", "<svg"));
	snprintf(path, sizeof(path), "%s/trace.json", dir);
	struct json *trace = json_parse_file(path, err, sizeof(err));
	assert_non_null(trace);
	const struct json *ev = json_get(trace, "traceEvents");
	/* 2 policies -> 2 processes; each: 3 task runs on worker, CPU and task tracks */
	int slices = 0;
	for (size_t i = 0; i < json_len(ev); i++)
		slices += strcmp(json_get_str(json_at(ev, i), "ph", ""), "X") == 0;
	assert_int_equal(slices, 2 * 3 * 3);
	json_free(trace);
	/* rendering again from the read-back JSON gives the same Markdown */
	char *md1 = NULL, *md2 = NULL;
	size_t l1, l2;
	FILE *f1 = open_memstream(&md1, &l1), *f2 = open_memstream(&md2, &l2);
	report_markdown(r, NULL, f1);
	report_markdown(back, NULL, f2);
	fclose(f1);
	fclose(f2);
	assert_string_equal(md1, md2);
	free(md1);
	free(md2);
	json_free(back);
	json_free(r);
	char cmd[600];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
}

static void text_table_shows_ratio_to_ideal_and_sticky(void **state)
{
	(void)state;
	struct json *r = fake_report(true);
	char *t = NULL;
	size_t len;
	FILE *f = open_memstream(&t, &len);
	report_text(r, f);
	fclose(f);
	/* shared mean median 0.3 vs sticky's 0.5 -> 0.60 x sticky */
	char *line = strstr(t, "\nshared");
	assert_non_null(line);
	assert_non_null(strstr(line, "0.60"));
	assert_non_null(strstr(t, "x sticky"));
	free(t);
	json_free(r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(json_round_trip_keeps_every_value),
		cmocka_unit_test(json_parse_rejects_corrupt_input_with_position),
		cmocka_unit_test(json_write_file_replaces_atomically),
		cmocka_unit_test(spt_bound_matches_hand_computed_schedules),
		cmocka_unit_test(stats_give_median_min_max_and_t_interval),
		cmocka_unit_test(aggregate_summarizes_each_policy_over_its_runs),
		cmocka_unit_test(validate_names_the_missing_field),
		cmocka_unit_test(write_all_renders_every_file_from_the_json),
		cmocka_unit_test(text_table_shows_ratio_to_ideal_and_sticky),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
