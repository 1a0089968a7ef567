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
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "report/fsutil.h"
#include "report/json.h"
#include "report/report.h"
#include "report/stats.h"
#include "taskhop.h"
#include "workload.h"

/* cmocka 1.1 has no double comparison. */
#define assert_near(a, b, eps)                                                        \
	do {                                                                          \
		double a_ = (a), b_ = (b);                                            \
		if (!(fabs(a_ - b_) <= (eps)))                                        \
			fail_msg("%s = %.17g, expected %.17g", #a, a_, b_);           \
	} while (0)

static bool json_equal(const struct json *a, const struct json *b)
{
	enum json_type t = json_type_of(a);
	if (!a || !b || t != json_type_of(b) || json_len(a) != json_len(b))
		return false;
	switch (t) {
	case JSON_NULL: return true;
	case JSON_BOOL: return json_bool_of(a) == json_bool_of(b);
	case JSON_NUM: return json_num_of(a) == json_num_of(b);
	case JSON_STR: return strcmp(json_str_of(a), json_str_of(b)) == 0;
	default: break;
	}
	for (size_t i = 0; i < json_len(a); i++) {
		if (t == JSON_OBJ && strcmp(json_key_at(a, i), json_key_at(b, i)) != 0)
			return false;
		if (!json_equal(json_at(a, i), json_at(b, i)))
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
			      "[1] x", "", "{\"a\": 01x}",
			      /* what json-c alone would take: RFC 8259 has none of these */
			      "[NaN]", "[1e400]", "[\"a\tb\"]", "[18446744073709551616]", "[-9223372036854775809]",
			      "/* c */ 1", "[1,]", "[1]\0" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = 0;
		size_t len = strlen(bad[i]) + (strcmp(bad[i], "[1]") == 0); /* the NUL byte too */
		struct json *v = json_parse(bad[i], len, err, sizeof(err));
		if (v)
			fail_msg("accepted corrupt JSON: %s", bad[i]);
		assert_non_null(strstr(err, "line 1 col"));
	}
	struct json *v = json_parse("{\n  \"a\": [1,\n  ]\n}", 16, err, sizeof(err));
	assert_null(v);
	assert_non_null(strstr(err, "line 3"));
}

/* A number, null or a literal alone is a document too (json-c needs to be told it ended). */
static void json_parse_takes_a_lone_scalar(void **state)
{
	(void)state;
	char err[256];
	unsigned long long u = 0;
	struct json *v = json_parse("12", 2, err, sizeof(err));
	assert_true(json_as_u64(v, &u) && u == 12);
	json_free(v);
	v = json_parse(" null\n", 6, err, sizeof(err));
	assert_non_null(v);
	assert_true(json_is_null(v));
	json_free(v);
	v = json_parse("true", 4, err, sizeof(err));
	assert_true(json_bool_of(v));
	json_free(v);
}

/* Two million empty objects are a 6 MB file but gigabytes of hash tables: refused from the
 * text alone, where the limit is crossed. */
static void json_parse_refuses_a_tree_over_the_memory_limit(void **state)
{
	(void)state;
	size_t n = 2000000, len = 3 * n + 1;
	char *text = malloc(len), err[256];
	assert_non_null(text);
	text[0] = '[';
	for (size_t i = 0; i < n; i++)
		memcpy(text + 1 + 3 * i, i + 1 < n ? "{}," : "{}]", 3);
	assert_null(json_parse(text, len, err, sizeof(err)));
	assert_non_null(strstr(err, "line 1 col "));
	assert_non_null(strstr(err, "more than " JSON_MAX_TREE_TEXT " in memory"));
	free(text);
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
	assert_string_equal(json_key_at(pols, 0), "sticky");
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
	json_set(task, "completion", json_clone(json_get(task, "completion_s")));
	assert_int_equal(json_remove(task, "completion_s"), 0);
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
	assert_string_equal(json_get_str(trace, "taskhop_version", ""), TASKHOP_VERSION);
	assert_string_equal(json_get_str(trace, "schema", ""), REPORT_SCHEMA_TRACE);
	const struct json *ev = json_get(trace, "traceEvents");
	/* 2 policies -> 2 processes (their median runs); each: 3 task runs on worker and task
	 * tracks; no CPU tracks, as the fake runs have no kernel on-CPU intervals */
	int slices = 0;
	for (size_t i = 0; i < json_len(ev); i++)
		slices += strcmp(json_get_str(json_at(ev, i), "ph", ""), "X") == 0;
	assert_int_equal(slices, 2 * 3 * 2);
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

/* Into the caller's buffer: a buffer local to a helper trips gcc's dangling-pointer check. */
static void render_to_string(const struct json *r, bool html, char **out, size_t *len)
{
	FILE *f = open_memstream(out, len);
	if (html)
		report_html(r, NULL, "/nonexistent", f);
	else
		report_markdown(r, NULL, f);
	fclose(f);
}

static int count_of(const char *s, const char *end, const char *what)
{
	int n = 0;
	for (const char *p = strstr(s, what); p && p < end; p = strstr(p + 1, what))
		n++;
	return n;
}

/* A reader of report.html finds the data files one click away and the runs table with every
 * column report.md has, in the same order, one cell per column in each row. */
static void html_links_data_files_and_has_markdown_runs_columns(void **state)
{
	(void)state;
	struct json *r = fake_report(true);
	char *md = NULL, *html = NULL;
	size_t mdlen, htmllen;
	render_to_string(r, false, &md, &mdlen);
	render_to_string(r, true, &html, &htmllen);
	for (const char *const *file = (const char *const[]){ "report.json", "runs.csv", "trace.json", NULL };
	     *file; file++) {
		char link[64];
		snprintf(link, sizeof(link), "<a href=\"%s\">", *file);
		assert_non_null(strstr(html, link));
	}
	const char *mdh = strstr(md, "\n## Runs\n\n|");
	const char *table = strstr(html, "<h2>Runs</h2>");
	assert_non_null(mdh);
	assert_non_null(table);
	const char *table_end = strstr(table, "</table>");
	assert_non_null(table_end);
	mdh += strlen("\n## Runs\n\n|");
	const char *at = table;
	int columns = 0;
	for (const char *eol = strchr(mdh, '\n'); mdh < eol; columns++) {
		const char *bar = strchr(mdh, '|');
		char th[96];
		snprintf(th, sizeof(th), "<th>%.*s</th>", (int)(bar - mdh - 2), mdh + 1);
		at = strstr(at, th);
		assert_non_null(at);  /* present, and after the previous column */
		assert_true(at < table_end);
		mdh = bar + 1;
	}
	assert_int_equal(columns, 11);
	assert_int_equal(count_of(table, table_end, "<th>"), columns);
	int rows = count_of(table, table_end, "<tr>") - 1;
	assert_int_equal(rows, (int)json_len(json_get(r, "runs")));
	assert_int_equal(count_of(table, table_end, "<td>"), rows * columns);
	free(md);
	free(html);
	json_free(r);
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

/* ---- hostile reports ---------------------------------------------------------- */

/* Sets a member of a task / run reached by path-like indices: the fake report's run r. */
static struct json *run_of(struct json *r, size_t i)
{
	return (struct json *)json_at(json_get(r, "runs"), i);
}

static struct json *task_of(struct json *r, size_t run, size_t task)
{
	return (struct json *)json_at(json_get(run_of(r, run), "tasks"), task);
}

static void expect_refused(struct json *r, const char *msg)
{
	char err[256] = "";
	if (report_validate(r, err, sizeof(err)) == 0)
		fail_msg("accepted a report that must be refused with \"%s\"", msg);
	if (!strstr(err, msg))
		fail_msg("error \"%s\" does not say \"%s\"", err, msg);
	assert_null(strchr(err, '\n'));
	json_free(r);
}

static void validate_refuses_more_than_ten_means(void **state)
{
	(void)state;
	struct json *r = fake_report(true);
	struct json *means = (struct json *)json_get(task_of(r, 1, 0), "means");
	json_push(means, json_num(0.5));
	expect_refused(r, "run 2 task 1: 'means' has more than 10 entries");
}

static void rm_rf(const char *dir);

/* --timeline-color: "worker" or "cpu", set only through the setter; a report file with
 * anything else is refused; the timelines say which colouring they use */
static void timeline_color_is_worker_or_cpu(void **state)
{
	(void)state;
	struct json *r = fake_report(true);
	assert_int_equal(report_set_timeline_color(r, "gpu"), -1);
	assert_int_equal(report_set_timeline_color(r, "cpu"), 0);
	char dir[] = "/tmp/th_test_report_XXXXXX", err[512];
	assert_non_null(mkdtemp(dir));
	if (report_write_all(r, dir, true, err, sizeof(err)))
		fail_msg("not written: %s", err);
	assert_true(file_starts_with(dir, "timeline-sticky.svg", "CPU 0"));
	assert_true(file_starts_with(dir, "report.html", "coloured by CPU"));
	rm_rf(dir);
	json_set_str(r, "timeline_color", "x'; system('id')");
	expect_refused(r, "'timeline_color' must be \"worker\" or \"cpu\"");
}

static void validate_refuses_extreme_histogram_values(void **state)
{
	(void)state;
	const double bad[] = { 1e308, -1e308, -0.5, 2 };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct json *r = fake_report(true);
		struct json *means = (struct json *)json_get(task_of(r, 0, 2), "means");
		json_put_at(means, 3, json_num(bad[i]));
		expect_refused(r, "run 1 task 3: 'means' must be a number in [0, 1]");
	}
}

static struct json *timeline_row(struct json *r, size_t run, const char *which, size_t row)
{
	return (struct json *)json_at(json_get(json_get(run_of(r, run), "timeline"), which), row);
}

/* A fake run's timeline with one "oncpu" row and "run_ends" of `end` for every run. */
static struct json *with_kernel_timeline(struct json *r, const double *row, int ncol, const char *end)
{
	struct json *tl = (struct json *)json_get(run_of(r, 0), "timeline");
	struct json *rows = json_arr(), *x = json_arr(), *ends = json_arr();
	for (int k = 0; k < ncol; k++)
		json_push(x, json_num(row[k]));
	json_push(rows, x);
	json_set(tl, "oncpu", rows);
	for (size_t i = 0; i < json_len(json_get(tl, "runs")); i++)
		json_push(ends, json_str(end));
	json_set(tl, "run_ends", ends);
	return r;
}

/* The trace's kernel rows (oncpu: [tid, worker, cpu, start, end, wait, ended, task]) and
 * run ends are range-checked like every other timeline row. */
static void validate_refuses_bad_oncpu_rows_and_run_ends(void **state)
{
	(void)state;
	const double good[] = { 11, 0, 1, 0, 0.5, 0.001, 1, 3 }, ended3[] = { 11, 0, 1, 0, 0.5, 0.001, 3, 3 };
	const double wait_neg[] = { 11, 0, 1, 0, 0.5, -1, 1, 3 };
	char err[256];
	struct json *r = with_kernel_timeline(fake_report(true), good, 8, "yield");
	assert_int_equal(report_validate(r, err, sizeof(err)), 0);
	json_free(r);
	expect_refused(with_kernel_timeline(fake_report(true), good, 7, "yield"),
		       "run 1: 'timeline oncpu' rows must be arrays of 8 numbers");
	expect_refused(with_kernel_timeline(fake_report(true), ended3, 8, "yield"),
		       "run 1: 'timeline oncpu' must be a whole number in [0, 2], not 3");
	expect_refused(with_kernel_timeline(fake_report(true), wait_neg, 8, "yield"), "'timeline oncpu'");
	expect_refused(with_kernel_timeline(fake_report(true), good, 8, "rm -rf"),
		       "run 1: 'timeline run_ends' entries must be yield, block, done, preempt or unknown");
}

static void validate_refuses_timeline_cpu_and_worker_of_2e9(void **state)
{
	(void)state;
	struct json *r = fake_report(true);
	json_put_at(timeline_row(r, 0, "runs", 1), 2, json_num(2e9));
	expect_refused(r, "run 1: 'timeline runs' must be a whole number in [-1, 1023], not 2000000000");
	r = fake_report(true);
	json_put_at(timeline_row(r, 2, "runs", 0), 1, json_num(2e9));
	expect_refused(r, "run 3: 'timeline runs' must be a whole number in [-1, 1], not 2000000000");
	r = fake_report(true);
	struct json *m = json_arr();
	const double row[] = { 0.1, 0, 1, 0, 2e9 };
	for (int k = 0; k < 5; k++)
		json_push(m, json_num(row[k]));
	json_push((struct json *)json_get(json_get(run_of(r, 1), "timeline"), "migrations"), m);
	expect_refused(r, "run 2: 'timeline migrations' must be a whole number in [-1, 1023]");
	/* a row too short to hold [task, worker, cpu, start, end] */
	r = fake_report(true);
	struct json *row0 = timeline_row(r, 0, "runs", 0);
	assert_int_equal(json_pop(row0), 0);
	expect_refused(r, "run 1: 'timeline runs' rows must be arrays of 5 numbers");
}

static void validate_refuses_workers_outside_worker_count(void **state)
{
	(void)state;
	struct json *r = fake_report(true);
	json_set_num(task_of(r, 0, 1), "first_worker", 2);
	expect_refused(r, "run 1 task 2: 'first_worker' must be a whole number in [-1, 1], not 2");
	r = fake_report(true);
	json_set_num(run_of(r, 3), "worker_count", 2e9);
	expect_refused(r, "run 4: 'worker_count' must be a whole number in [1, 256]");
	r = fake_report(true);
	json_set_num(run_of(r, 0), "worker_count", 1);
	expect_refused(r, "run 1: 'workers' must have one entry per worker");
	r = fake_report(true);
	json_set_num(task_of(r, 0, 0), "worker_hops", 12);
	expect_refused(r, "run 1 task 1: 'worker_hops' exceeds 'runs'");
	r = fake_report(true);
	json_set_num(task_of(r, 0, 0), "id", 1e300);
	expect_refused(r, "run 1 task 1: 'id' must be a whole number in [0, 9007199254740992]");
	r = fake_report(true);
	json_set_num(task_of(r, 0, 0), "id", 2.5);
	expect_refused(r, "run 1 task 1: 'id' must be a whole number");
}

/* Ids beyond 2^31 are valid (the runtime counts tasks in 64 bits): the trace keeps them
 * exact instead of wrapping them through an int. */
static void trace_keeps_task_ids_beyond_int_range(void **state)
{
	(void)state;
	struct json *r = fake_report(true);
	const double big = 30000000001.0;
	json_set_num(task_of(r, 0, 0), "id", big);
	json_put_at(timeline_row(r, 0, "runs", 0), 0, json_num(big));
	char err[256];
	assert_int_equal(report_validate(r, err, sizeof(err)), 0);
	struct json *trace = report_trace(r);
	const struct json *ev = json_get(trace, "traceEvents");
	int found = 0;
	for (size_t i = 0; i < json_len(ev); i++) {
		const struct json *e = json_at(ev, i);
		if (strcmp(json_get_str(e, "name", ""), "worker 0, CPU 0") == 0 &&
		    json_get_num(e, "tid", 0) == big + 1e9) /* TID_TASK in trace.c */
			found++;
	}
	assert_int_equal(found, 1);
	json_free(trace);
	json_free(r);
}

static void validate_refuses_control_characters_in_names(void **state)
{
	(void)state;
	struct json *r = fake_report(true);
	json_set_str(run_of(r, 0), "policy", "x\nsystem \"touch /tmp/th_pwned_nl\"");
	expect_refused(r, "run 1: 'policy' contains a control character");
	r = fake_report(true);
	json_set_str(task_of(r, 1, 1), "label", "\x1b]2;title\x07");
	expect_refused(r, "run 2 task 2: 'label' contains a control character");
}

static void seed_above_2_53_round_trips_exactly(void **state)
{
	(void)state;
	const char *text = "{\"seed\": 18446744073709551557, \"small\": 9007199254740993, \"neg\": -3}";
	char err[256];
	struct json *v = json_parse(text, strlen(text), err, sizeof(err));
	assert_non_null(v);
	unsigned long long seed = 0;
	assert_true(json_as_u64(json_get(v, "seed"), &seed));
	assert_true(seed == 18446744073709551557ull);
	char *out = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);
	json_write(f, v, 0);
	fclose(f);
	assert_string_equal(out, "{\"seed\":18446744073709551557,\"small\":9007199254740993,\"neg\":-3}");
	free(out);
	/* a copy keeps it too, and 2^64 itself is not an exact integer any more */
	struct json *c = json_clone(v);
	assert_true(json_as_u64(json_get(c, "seed"), &seed) && seed == 18446744073709551557ull);
	json_free(c);
	json_free(v);
	v = json_parse("18446744073709551616", 20, err, sizeof(err));
	assert_false(json_as_u64(v, &seed));
	json_free(v);
}

static void renderings_print_the_exact_seed(void **state)
{
	(void)state;
	struct json *r = fake_report(true);
	json_set_u64(run_of(r, 0), "seed", 18446744073709551557ull);
	char *md = NULL, *csv = NULL;
	size_t l1, l2;
	FILE *f1 = open_memstream(&md, &l1), *f2 = open_memstream(&csv, &l2);
	report_markdown(r, NULL, f1);
	report_csv(r, f2);
	fclose(f1);
	fclose(f2);
	assert_non_null(strstr(md, "| 1 | sticky | 18446744073709551557 |"));
	assert_non_null(strstr(csv, "1,\"sticky\",18446744073709551557,2,"));
	struct json *trace = report_trace(r);
	char *tr = NULL;
	size_t l3;
	FILE *f3 = open_memstream(&tr, &l3);
	json_write(f3, trace, 0);
	fclose(f3);
	assert_non_null(strstr(tr, "seed 18446744073709551557"));
	free(md);
	free(csv);
	free(tr);
	json_free(trace);
	json_free(r);
}

/* ---- hostile strings and gnuplot ------------------------------------------------ */

static bool file_exists(const char *path)
{
	return access(path, F_OK) == 0;
}

static void rm_rf(const char *dir)
{
	char cmd[1200];
	snprintf(cmd, sizeof(cmd), "rm -rf -- '%s'", dir);
	assert_int_equal(system(cmd), 0);
}

static void fig_quote_keeps_quotes_and_backslashes_and_flattens_newlines(void **state)
{
	(void)state;
	char *out = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);
	fig_quote(f, "it's \"a\" \\ `b` @c\nEOD\r\x1b");
	fclose(f);
	assert_string_equal(out, "'it''s \"a\" \\ `b` @c EOD  '");
	free(out);
}

static const char *const pwned[] = { "/tmp/th_pwned_w", "/tmp/th_pwned_a", "/tmp/th_pwned_b",
				     "/tmp/th_pwned_l", "/tmp/th_pwned_s" };

/* A report whose names try every way out of a gnuplot string. */
static struct json *hostile_report(const char *workload)
{
	static const char *const policies[] = {
		"p\"; system(\"touch /tmp/th_pwned_a\") #",
		"it's `touch /tmp/th_pwned_b` \\ EOD",
		"EOD",
		"serial",
	};
	char *argv[] = { "taskhop", "compare" };
	struct json *r = report_new(workload, NULL, 2, argv);
	struct json *runs = (struct json *)json_get(r, "runs");
	for (int p = 0; p < 4; p++) {
		struct json *run = fake_run(policies[p], p + 1, 1.0 + p, true);
		json_set_str(run, "workload", workload);
		json_set_str((struct json *)json_at(json_get(run, "tasks"), 1), "label",
			     "l'); system('touch /tmp/th_pwned_l");
		json_push(runs, run);
	}
	report_aggregate(r);
	return r;
}

static void hostile_names_reach_gnuplot_only_as_quoted_text(void **state)
{
	(void)state;
	const char *workloads[] = { "darts", "x' . system('touch /tmp/th_pwned_w') . '",
				    "w\\' . system(\"touch /tmp/th_pwned_s\") . \\'" };
	for (size_t w = 0; w < 3; w++) {
		for (size_t i = 0; i < sizeof(pwned) / sizeof(pwned[0]); i++)
			unlink(pwned[i]);
		char dir[] = "/tmp/th_test_report_XXXXXX", err[512];
		assert_non_null(mkdtemp(dir));
		struct json *r = hostile_report(workloads[w]);
		if (report_write_all(r, dir, true, err, sizeof(err)))
			fail_msg("hostile report not written: %s", err);
		for (size_t i = 0; i < sizeof(pwned) / sizeof(pwned[0]); i++)
			if (file_exists(pwned[i]))
				fail_msg("gnuplot ran a command from the report: %s exists", pwned[i]);
		/* the figures are drawn, with the names as plain text */
		assert_true(file_starts_with(dir, "returns.svg", "touch /tmp/th_pwned_a"));
		assert_true(file_starts_with(dir, "migrations.svg", "</svg>"));
		assert_true(file_starts_with(dir, "speedup.svg", "touch /tmp/th_pwned_b"));
		if (w == 0)
			assert_true(file_starts_with(dir, "histogram.svg", "touch /tmp/th_pwned_a"));
		/* a timeline per policy: a name that is not [A-Za-z0-9_-] is not put in a file
		 * name (its index is), and is drawn as plain text in the title */
		assert_true(file_starts_with(dir, "timeline-1.svg", "touch /tmp/th_pwned_a"));
		assert_true(file_starts_with(dir, "timeline-2.svg", "</svg>"));
		assert_true(file_starts_with(dir, "timeline-EOD.svg", "</svg>"));
		json_free(r);
		rm_rf(dir);
	}
}

static void report_into_a_directory_named_with_quotes_draws_every_figure(void **state)
{
	(void)state;
	char base[] = "/tmp/th_test_report_XXXXXX", dir[256], err[512];
	assert_non_null(mkdtemp(base));
	snprintf(dir, sizeof(dir), "%s/it's \"quoted\" `x`", base);
	struct json *r = fake_report(true);
	if (report_write_all(r, dir, true, err, sizeof(err)))
		fail_msg("not written: %s", err);
	assert_true(file_starts_with(dir, "returns.svg", "</svg>"));
	assert_true(file_starts_with(dir, "migrations.svg", "</svg>"));
	assert_true(file_starts_with(dir, "histogram.svg", "</svg>"));
	json_free(r);
	rm_rf(base);
}

/* ---- a full disk ------------------------------------------------------------------ */

/* The tmpfs a test mounted, unmounted by the teardown even when the test failed. */
static char mounted[64];

/* A tmpfs of size bytes mounted on a fresh directory; skips the test without root. */
static void mount_small_fs(char *dir, const char *size)
{
	assert_non_null(mkdtemp(dir));
	char opts[64];
	snprintf(opts, sizeof(opts), "size=%s,mode=0755", size);
	if (mount("th_test", dir, "tmpfs", 0, opts) != 0) {
		rmdir(dir);
		skip();
	}
	snprintf(mounted, sizeof(mounted), "%s", dir);
}

static void unmount_small_fs(const char *dir)
{
	umount2(dir, MNT_DETACH);
	rmdir(dir);
	mounted[0] = 0;
}

static int unmount_leftover(void **state)
{
	(void)state;
	if (mounted[0])
		unmount_small_fs(mounted);
	return 0;
}

/* Fills the filesystem of dir, then frees `keep` bytes. */
static void fill_fs(const char *dir, long keep)
{
	char path[300];
	snprintf(path, sizeof(path), "%s/filler", dir);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	setvbuf(f, NULL, _IONBF, 0);
	static char block[4096];
	while (fwrite(block, 1, sizeof(block), f) == sizeof(block))
		;
	long size = ftell(f);
	fclose(f);
	assert_int_equal(truncate(path, size > keep ? size - keep : 0), 0);
}

static char *slurp_file(const char *dir, const char *name)
{
	char path[512], err[256];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return fs_read_all(path, NULL, err, sizeof(err));
}

static const char *const report_files[] = { "report.json", "report.md", "report.html", "runs.csv",
					    "trace.json", "returns.svg", "migrations.svg",
					    "histogram.svg", NULL };

static void expect_old_report_intact(const char *dir, char *const *old)
{
	for (int i = 0; report_files[i]; i++) {
		char *now = slurp_file(dir, report_files[i]);
		if (!now || strcmp(now, old[i]) != 0)
			fail_msg("%s/%s changed although the new report failed", dir, report_files[i]);
		free(now);
	}
}

/* Only the report and the filler: no staging directory or temp file left behind. */
static void expect_no_leftovers(const char *fs)
{
	char cmd[400];
	snprintf(cmd, sizeof(cmd), "test \"$(ls -A '%s' | tr '\\n' ' ')\" = 'filler rep '", fs);
	if (system(cmd) != 0)
		fail_msg("leftovers in %s", fs);
}

static void full_disk_leaves_the_old_report_intact(void **state)
{
	(void)state;
	char fs[] = "/tmp/th_test_fullfs_XXXXXX", dir[256], err[512];
	mount_small_fs(fs, "4m");
	snprintf(dir, sizeof(dir), "%s/rep", fs);
	struct json *r = fake_report(true);
	assert_int_equal(report_write_all(r, dir, true, err, sizeof(err)), 0);
	char *old[16] = { 0 };
	for (int i = 0; report_files[i]; i++)
		assert_non_null(old[i] = slurp_file(dir, report_files[i]));
	/* the new report differs in every file, and finds room for some files only */
	struct json *r2 = fake_report(false);
	json_set_str(r2, "workload", "darts");
	const long room[] = { 0, 8192, 40960, 98304 };
	for (size_t k = 0; k < sizeof(room) / sizeof(room[0]); k++) {
		fill_fs(fs, room[k]);
		err[0] = 0;
		if (report_write_all(r2, dir, true, err, sizeof(err)) == 0)
			fail_msg("a report was written into a full filesystem (%ld bytes free)", room[k]);
		/* the error names a file of the target and why */
		if (!strstr(err, dir) || !(strstr(err, "No space left") || strstr(err, "truncated") ||
					   strstr(err, "empty")))
			fail_msg("unclear error: %s", err);
		assert_null(strchr(err, '\n'));
		expect_old_report_intact(dir, old);
		expect_no_leftovers(fs);
	}
	for (int i = 0; report_files[i]; i++)
		free(old[i]);
	json_free(r);
	json_free(r2);
	unmount_small_fs(fs);
}

static void gnuplot_writing_into_a_full_disk_is_an_error(void **state)
{
	(void)state;
	char fs[] = "/tmp/th_test_fullfs_XXXXXX", err[512] = "";
	mount_small_fs(fs, "1m");
	fill_fs(fs, 4096);
	const char *script = "set title 'a figure larger than the room left'\n"
			     "plot for [i=1:200] sin(x*i) title sprintf('series %d', i)\n";
	int rc = fig_gnuplot(fs, "big.svg", 900, 520, script, err, sizeof(err));
	if (rc == 0)
		fail_msg("fig_gnuplot reported success for a truncated SVG");
	assert_int_equal(rc, FIG_WRITE_FAILED);
	assert_non_null(strstr(err, "big.svg"));
	char path[300];
	snprintf(path, sizeof(path), "%s/big.svg", fs);
	assert_false(file_exists(path));
	unmount_small_fs(fs);
}

static void unwritable_target_leaves_the_old_report_intact(void **state)
{
	(void)state;
	char base[] = "/tmp/th_test_report_XXXXXX", dir[300], err[512];
	assert_non_null(mkdtemp(base));
	/* a file where the directory should be */
	snprintf(dir, sizeof(dir), "%s/file", base);
	assert_int_equal(fs_write_string(dir, "x", err, sizeof(err)), 0);
	struct json *r = fake_report(true);
	assert_int_equal(report_write_all(r, dir, true, err, sizeof(err)), -1);
	assert_non_null(strstr(err, dir));
	assert_non_null(strstr(err, "not a directory"));
	rm_rf(base);
	/* a read-only filesystem (root only: permissions do not stop root) */
	char fs[] = "/tmp/th_test_rofs_XXXXXX";
	mount_small_fs(fs, "4m");
	snprintf(dir, sizeof(dir), "%s/rep", fs);
	assert_int_equal(report_write_all(r, dir, true, err, sizeof(err)), 0);
	char *old[16] = { 0 };
	for (int i = 0; report_files[i]; i++)
		assert_non_null(old[i] = slurp_file(dir, report_files[i]));
	assert_int_equal(mount(NULL, fs, NULL, MS_REMOUNT | MS_RDONLY, NULL), 0);
	struct json *r2 = fake_report(false);
	assert_int_equal(report_write_all(r2, dir, true, err, sizeof(err)), -1);
	if (!strstr(err, fs) || !strstr(err, "Read-only file system"))
		fail_msg("unclear error: %s", err);
	expect_old_report_intact(dir, old);
	for (int i = 0; report_files[i]; i++)
		free(old[i]);
	json_free(r);
	json_free(r2);
	unmount_small_fs(fs);
}

/* Files of a report directory that the report does not write stay; stale figures go. */
static void rewriting_a_report_keeps_foreign_files(void **state)
{
	(void)state;
	char dir[] = "/tmp/th_test_report_XXXXXX", path[300], err[512];
	assert_non_null(mkdtemp(dir));
	struct json *r = fake_report(true);
	assert_int_equal(report_write_all(r, dir, true, err, sizeof(err)), 0);
	snprintf(path, sizeof(path), "%s/notes.txt", dir);
	assert_int_equal(fs_write_string(path, "mine", err, sizeof(err)), 0);
	snprintf(path, sizeof(path), "%s/old.svg", dir);
	assert_int_equal(fs_write_string(path, "<svg>", err, sizeof(err)), 0);
	assert_int_equal(report_write_all(r, dir, false, err, sizeof(err)), 0);
	assert_true(file_starts_with(dir, "notes.txt", "mine"));
	assert_true(file_starts_with(dir, "report.json", "taskhop_report"));
	assert_false(file_exists(path));
	json_free(r);
	rm_rf(dir);
}

/* ---- the command line ------------------------------------------------------------- */

static const char *taskhop_bin(char *buf, size_t len)
{
	const char *env = getenv("TASKHOP_BIN");
	if (env && *env)
		return env;
	char self[256] = "";
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	self[n > 0 ? n : 0] = 0;
	char *slash = strrchr(self, '/');
	if (slash)
		*slash = 0;
	snprintf(buf, len, "%s/../taskhop", self);
	return buf;
}

static int sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int sh(const char *fmt, ...)
{
	char cmd[2048];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	int st = system(cmd);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

static void seed_2_64_minus_59_round_trips_through_run_and_report(void **state)
{
	(void)state;
	char dir[] = "/tmp/th_test_report_XXXXXX", bin[300];
	assert_non_null(mkdtemp(dir));
	const char *tb = taskhop_bin(bin, sizeof(bin));
	assert_int_equal(sh("%s run darts --seed 18446744073709551557 --small 1e3 --large 1e4 --count 2 "
			    "--no-bpf --quiet --json %s/run.json >/dev/null", tb, dir), 0);
	assert_true(file_starts_with(dir, "run.json", "\"seed\": 18446744073709551557,"));
	assert_int_equal(sh("%s report %s/run.json > %s/out.txt 2>&1", tb, dir, dir), 0);
	assert_true(file_starts_with(dir, "out.txt", "seed=18446744073709551557"));
	assert_true(file_starts_with(dir, "report.md", "| 18446744073709551557 |"));
	assert_true(file_starts_with(dir, "runs.csv", ",18446744073709551557,"));
	rm_rf(dir);
}

static void report_with_a_newline_in_a_name_is_refused_in_one_line(void **state)
{
	(void)state;
	char dir[] = "/tmp/th_test_report_XXXXXX", bin[300], path[300], err[256];
	assert_non_null(mkdtemp(dir));
	unlink("/tmp/th_pwned_nl");
	struct json *r = fake_report(true);
	json_set_str(r, "workload", "d\nsystem \"touch /tmp/th_pwned_nl\"\n");
	json_set_str(run_of(r, 0), "workload", "d\nsystem \"touch /tmp/th_pwned_nl\"\n");
	snprintf(path, sizeof(path), "%s/report.json", dir);
	assert_int_equal(json_write_file(path, r, 1, err, sizeof(err)), 0);
	assert_int_equal(sh("%s report %s >/dev/null 2>%s/err.txt", taskhop_bin(bin, sizeof(bin)), dir, dir), 2);
	assert_false(file_exists("/tmp/th_pwned_nl"));
	assert_int_equal(sh("test $(wc -l < %s/err.txt) = 1", dir), 0);
	assert_true(file_starts_with(dir, "err.txt", "report: 'workload' contains a control character"));
	json_free(r);
	rm_rf(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(json_round_trip_keeps_every_value),
		cmocka_unit_test(json_parse_rejects_corrupt_input_with_position),
		cmocka_unit_test(json_parse_takes_a_lone_scalar),
		cmocka_unit_test(json_parse_refuses_a_tree_over_the_memory_limit),
		cmocka_unit_test(json_write_file_replaces_atomically),
		cmocka_unit_test(spt_bound_matches_hand_computed_schedules),
		cmocka_unit_test(stats_give_median_min_max_and_t_interval),
		cmocka_unit_test(aggregate_summarizes_each_policy_over_its_runs),
		cmocka_unit_test(validate_names_the_missing_field),
		cmocka_unit_test(write_all_renders_every_file_from_the_json),
		cmocka_unit_test(html_links_data_files_and_has_markdown_runs_columns),
		cmocka_unit_test(text_table_shows_ratio_to_ideal_and_sticky),
		cmocka_unit_test(validate_refuses_more_than_ten_means),
		cmocka_unit_test(timeline_color_is_worker_or_cpu),
		cmocka_unit_test(validate_refuses_extreme_histogram_values),
		cmocka_unit_test(validate_refuses_timeline_cpu_and_worker_of_2e9),
		cmocka_unit_test(validate_refuses_workers_outside_worker_count),
		cmocka_unit_test(trace_keeps_task_ids_beyond_int_range),
		cmocka_unit_test(validate_refuses_bad_oncpu_rows_and_run_ends),
		cmocka_unit_test(validate_refuses_control_characters_in_names),
		cmocka_unit_test(seed_above_2_53_round_trips_exactly),
		cmocka_unit_test(renderings_print_the_exact_seed),
		cmocka_unit_test(fig_quote_keeps_quotes_and_backslashes_and_flattens_newlines),
		cmocka_unit_test(hostile_names_reach_gnuplot_only_as_quoted_text),
		cmocka_unit_test(report_into_a_directory_named_with_quotes_draws_every_figure),
		cmocka_unit_test_teardown(full_disk_leaves_the_old_report_intact, unmount_leftover),
		cmocka_unit_test_teardown(gnuplot_writing_into_a_full_disk_is_an_error, unmount_leftover),
		cmocka_unit_test_teardown(unwritable_target_leaves_the_old_report_intact, unmount_leftover),
		cmocka_unit_test(rewriting_a_report_keeps_foreign_files),
		cmocka_unit_test(seed_2_64_minus_59_round_trips_through_run_and_report),
		cmocka_unit_test(report_with_a_newline_in_a_name_is_refused_in_one_line),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
