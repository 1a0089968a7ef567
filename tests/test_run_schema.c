/* test_run_schema.c — the run schema (user/record/run_schema.h, tools/report/run*.c): a run
 * built with every field of every list set reads back through the reader field for field,
 * what the reader does not know survives a read and a write, and the fields that must be
 * there are refused, in one line, when they are not. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "report/json.h"
#include "report/report.h"
#include "report/run.h"
#include "report/run_fields.h"

static const double cpus[] = { 0, 5 }, hist[] = { 1, 0, 3 }, means[] = { 0.5, 0.25 };
static const char *const opts[] = { "--small", "1e6" };

/* A value of kind k inside its range, different for each field i. */
static double number_of(enum run_kind k, size_t i, size_t index)
{
	switch (k) {
	case RUN_KIND_SIZE: return 1e6 + (double)i;
	case RUN_KIND_SECS: return 0.5 + 0.001 * (double)i;
	case RUN_KIND_TIME: return -0.25 + 0.001 * (double)i;
	case RUN_KIND_WORKER: return (double)(i % 2);
	case RUN_KIND_WINDEX: return (double)index;
	case RUN_KIND_WCOUNT: return 2;
	case RUN_KIND_TID: return 1000 + (double)i;
	case RUN_KIND_CPU: return 3;
	case RUN_KIND_END: return 1;
	default: return 7 + (double)i; /* COUNT */
	}
}

/* Every field of a table set to a value of its kind; json: the JSON kinds' value. */
static void fill(const struct run_fields *t, void *base, size_t index, const struct json *json)
{
	for (size_t i = 0; i < t->n; i++) {
		char *at = (char *)base + t->f[i].off;
		enum run_kind k = t->f[i].kind;
		if (run_kind_is_number(k)) {
			*(double *)at = number_of(k, i, index);
			continue;
		}
		switch (k) {
		case RUN_KIND_NAME: *(const char **)at = t->f[i].key; break;
		case RUN_KIND_TEXT: *(const char **)at = "two\nlines"; break;
		case RUN_KIND_BOOL: *(int *)at = 1; break;
		case RUN_KIND_CPUS: *(struct run_nums *)at = (struct run_nums){ run_nums_dup(cpus, 2), 2, true }; break;
		case RUN_KIND_HIST: *(struct run_nums *)at = (struct run_nums){ run_nums_dup(hist, 3), 3, true }; break;
		case RUN_KIND_MEANS: *(struct run_nums *)at = (struct run_nums){ run_nums_dup(means, 2), 2, true }; break;
		case RUN_KIND_SEED: *(struct run_seed *)at = (struct run_seed){ true, 18446744073709551557ull }; break;
		case RUN_KIND_JSON: *(const struct json **)at = json; break;
		default: break; /* nested parts: filled below */
		}
	}
}

/* A run with every field of every list set, two tasks, two workers and timeline rows. */
static struct run *full_run(const struct json *json)
{
	struct run *r = run_new(2, 2);
	assert_non_null(r);
	fill(&run_fields_run, r, 0, json);
	r->worker_count = 2;
	const char **o = malloc(sizeof(opts));
	memcpy(o, opts, sizeof(opts));
	r->options = (struct run_names){ o, 2 };
	fill(&run_fields_bpf, &r->bpf, 0, json);
	for (size_t k = 0; k < 2; k++) {
		struct run_task *t = &r->tasks[k];
		fill(&run_fields_task, t, 0, json);
		t->id = (double)k + 1;
		t->worker_hops = t->runs - 1; /* the reader's cross-checks */
		t->max_runq_wait_ns = floor(t->runq_wait_ns / 2);
		fill(&run_fields_worker, &r->workers[k], k, json);
	}
	struct run_tl_run run = { 1, 0, 1, 0.001, 0.002 }, run2 = { 2, 1, -1, 0.002, 0.004 };
	struct run_tl_migration mig = { 0.003, 1, 2, 0, 1 };
	struct run_tl_oncpu oncpu = { 1001, -1, 0, 0.0, 0.005, 0.0001, 2, 0 };
	assert_int_equal(run_push_tl_run(r, &run, RUN_END_yield), 0);
	assert_int_equal(run_push_tl_run(r, &run2, RUN_END_done), 0);
	assert_int_equal(run_push_tl_migration(r, &mig), 0);
	assert_int_equal(run_push_tl_oncpu(r, &oncpu), 0);
	r->timeline.dropped_runs = 4;
	return r;
}

static void same_nums(const struct run_nums *a, const struct run_nums *b, const char *key)
{
	if (a->known != b->known || a->n != b->n)
		fail_msg("'%s': %zu numbers (known %d), read back %zu (known %d)", key, a->n, a->known,
			 b->n, b->known);
	for (size_t i = 0; i < a->n; i++)
		if (a->v[i] != b->v[i])
			fail_msg("'%s'[%zu]: %.17g, read back %.17g", key, i, a->v[i], b->v[i]);
}

/* Every field of table t is equal in a (built) and b (read back). */
static void same_fields(const struct run_fields *t, const void *a, const void *b)
{
	for (size_t i = 0; i < t->n; i++) {
		const char *x = (const char *)a + t->f[i].off, *y = (const char *)b + t->f[i].off;
		const char *key = t->f[i].key;
		enum run_kind k = t->f[i].kind;
		if (run_kind_is_number(k)) {
			double u = *(const double *)x, v = *(const double *)y;
			if (!(u == v || (isnan(u) && isnan(v))))
				fail_msg("'%s': %.17g, read back %.17g", key, u, v);
			continue;
		}
		switch (k) {
		case RUN_KIND_NAME:
		case RUN_KIND_TEXT:
			assert_string_equal(*(const char *const *)x, *(const char *const *)y);
			break;
		case RUN_KIND_BOOL: assert_int_equal(*(const int *)x, *(const int *)y); break;
		case RUN_KIND_CPUS:
		case RUN_KIND_HIST:
		case RUN_KIND_MEANS:
			same_nums((const struct run_nums *)x, (const struct run_nums *)y, key);
			break;
		case RUN_KIND_NAMES: {
			const struct run_names *p = (const void *)x, *q = (const void *)y;
			assert_int_equal(p->n, q->n);
			for (size_t j = 0; j < p->n; j++)
				assert_string_equal(p->v[j], q->v[j]);
			break;
		}
		case RUN_KIND_SEED:
			assert_true(((const struct run_seed *)x)->known == ((const struct run_seed *)y)->known);
			assert_true(((const struct run_seed *)x)->v == ((const struct run_seed *)y)->v);
			break;
		case RUN_KIND_JSON:
			assert_non_null(*(const struct json *const *)y);
			assert_true(json_get_num(*(const struct json *const *)y, "k", 0) == 1);
			break;
		default: break; /* nested parts: compared by the caller */
		}
	}
}

static void same_rows(const struct run_rows *a, const struct run_rows *b, size_t size)
{
	assert_int_equal(a->n, b->n);
	assert_memory_equal(a->v, b->v, a->n * size);
}

static void a_built_run_reads_back_field_for_field(void **state)
{
	(void)state;
	struct json *value = json_obj();
	json_set_num(value, "k", 1);
	struct run *r = full_run(value);
	run_derive(r);
	struct json *j = run_to_json(r);
	assert_string_equal(json_get_str(j, "schema", ""), REPORT_SCHEMA_RUN);
	struct run back;
	char err[256] = "";
	if (run_read(j, 0, &back, err, sizeof(err)))
		fail_msg("the reader refuses the writer's run: %s", err);
	same_fields(&run_fields_run, r, &back);
	same_fields(&run_fields_bpf, &r->bpf, &back.bpf);
	assert_int_equal(back.ntasks, 2);
	assert_int_equal(back.nworkers, 2);
	for (size_t k = 0; k < 2; k++) {
		same_fields(&run_fields_task, &r->tasks[k], &back.tasks[k]);
		same_fields(&run_fields_worker, &r->workers[k], &back.workers[k]);
	}
	assert_true(back.timeline.known);
	same_rows(&r->timeline.runs, &back.timeline.runs, sizeof(struct run_tl_run));
	same_rows(&r->timeline.migrations, &back.timeline.migrations, sizeof(struct run_tl_migration));
	same_rows(&r->timeline.oncpu, &back.timeline.oncpu, sizeof(struct run_tl_oncpu));
	assert_int_equal(back.timeline.run_ends.n, 2);
	assert_int_equal(back.timeline.run_ends.v[0], RUN_END_yield);
	assert_int_equal(back.timeline.run_ends.v[1], RUN_END_done);
	assert_true(back.timeline.dropped_runs == 4);
	run_release(&back);
	json_free(j);
	run_free(r);
	json_free(value);
}

/* Every key of every object in a, with the same value, is in b (and the other way round). */
static bool json_same(const struct json *a, const struct json *b)
{
	enum json_type t = json_type_of(a);
	if (t != json_type_of(b) || json_len(a) != json_len(b))
		return false;
	if (t == JSON_NUM)
		return json_num_of(a) == json_num_of(b);
	if (t == JSON_STR)
		return strcmp(json_str_of(a), json_str_of(b)) == 0;
	if (t == JSON_BOOL)
		return json_bool_of(a) == json_bool_of(b);
	for (size_t i = 0; i < json_len(a); i++) {
		const struct json *x = json_at(a, i);
		const struct json *y = t == JSON_OBJ ? json_get(b, json_key_at(a, i)) : json_at(b, i);
		if (!y || !json_same(x, y))
			return false;
	}
	return true;
}

static void reading_and_writing_again_keeps_what_the_schema_does_not_list(void **state)
{
	(void)state;
	struct json *value = json_obj();
	json_set_num(value, "k", 1);
	struct run *r = full_run(value);
	struct json *j = run_to_json(r);
	/* a workload's own members, on the run and on a task */
	json_set_str(j, "workload_note", "kept");
	json_set_num((struct json *)json_at(json_get(j, "tasks"), 1), "darts_cycle", 3);
	struct run back;
	char err[256];
	assert_int_equal(run_read(j, 0, &back, err, sizeof(err)), 0);
	struct json *again = run_to_json(&back);
	if (!json_same(j, again))
		fail_msg("the run written again differs from the run read");
	run_release(&back);
	json_free(again);
	json_free(j);
	run_free(r);
	json_free(value);
}

static void every_required_field_is_refused_when_missing(void **state)
{
	(void)state;
	struct json *value = json_obj();
	json_set_num(value, "k", 1);
	struct run *r = full_run(value);
	struct json *j = run_to_json(r);
	const struct run_fields *lists[] = { &run_fields_run, &run_fields_task };
	for (int l = 0; l < 2; l++) {
		for (size_t i = 0; i < lists[l]->n; i++) {
			const struct run_field *f = &lists[l]->f[i];
			if (f->need > RUN_NEED_NUL)
				continue;
			struct json *c = json_clone(j);
			struct json *o = l ? (struct json *)json_at(json_get(c, "tasks"), 0) : c;
			assert_int_equal(json_remove(o, f->key), 0);
			struct run back;
			char err[256] = "", want[128];
			assert_int_equal(run_read(c, 2, &back, err, sizeof(err)), -1);
			snprintf(want, sizeof(want), "run 3%s has no '%s'", l ? " task 1" : "", f->key);
			if (strcmp(err, want) != 0)
				fail_msg("without '%s': \"%s\", not \"%s\"", f->key, err, want);
			json_free(c);
		}
	}
	json_free(j);
	run_free(r);
	json_free(value);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(a_built_run_reads_back_field_for_field),
		cmocka_unit_test(reading_and_writing_again_keeps_what_the_schema_does_not_list),
		cmocka_unit_test(every_required_field_is_refused_when_missing),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
