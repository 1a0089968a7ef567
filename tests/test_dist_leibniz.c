/* test_dist_leibniz.c — the article's Leibniz pmap: every mode (serial, th_map, pmap over
 * processes with or without their own runtime, MPI via `taskhop run`) gives the same partial sums. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "dist.h"
#include "lib/need_bpf.h"
#include "record.h"
#include "report/json.h"
#include "taskhop.h"
#include "workload.h"
#include "workloads/leibniz.h"

extern const struct th_workload th_workload_leibniz;

static void small(struct lz_config *c, enum lz_mode mode)
{
	lz_config_default(c);
	c->mode = mode;
	c->terms = 300000;
	c->inputs = 3;
	c->group = 1000;
	c->procs = 2;
	c->baseline = true;
}

static void group_sums_follow_the_article_formula(void **state)
{
	(void)state;
	assert_true(lz_group_sum(1, 1) == 4.0);
	assert_true(fabs(lz_group_sum(1, 2) - 4.0 * (1 - 1.0 / 3)) < 1e-15);
	assert_true(fabs(lz_group_sum(2, 3) - 4.0 * (-1.0 / 3 + 1.0 / 5)) < 1e-15);
}

static void the_serial_map_converges_to_pi(void **state)
{
	(void)state;
	struct lz_config c;
	struct lz_outcome *o = calloc(1, sizeof *o);
	char err[256];
	small(&c, LZ_SERIAL);
	assert_int_equal(lz_experiment(&c, o, err, sizeof err), 0);
	assert_int_equal(o->groups, 900);
	/* the Leibniz error after N terms is about 1/N */
	assert_true(fabs(o->error) < 2.0 / 900000 && fabs(o->error) > 0.5 / 900000);
	assert_true(o->npoints > 10);
	assert_true(o->pt_terms[o->npoints - 1] == 900000);
	free(o);
}

static void pmap_over_processes_gives_the_serial_partial_sums(void **state)
{
	(void)state;
	struct lz_config c;
	struct lz_outcome *o = calloc(1, sizeof *o);
	char err[256];
	small(&c, LZ_PMAP);
	assert_int_equal(lz_experiment(&c, o, err, sizeof err), 0);
	assert_true(o->have_serial);
	assert_true(o->hash == o->serial_hash);
	assert_int_equal(o->nprocs, 2);
	assert_int_equal(o->procs[0].inputs + o->procs[1].inputs, 3);
	assert_true(o->procs[0].maxrss_kb > 0 && o->rss_kb > o->driver_rss_kb);
	free(o);
}

static void worker_processes_running_their_own_runtime_give_the_same_sums(void **state)
{
	(void)state;
	struct lz_config c;
	struct lz_outcome *o = calloc(1, sizeof *o);
	char err[256];
	for (int t = 1; t <= 2; t++) { /* 1: one task per call; 2: th_map inside the worker */
		small(&c, LZ_PMAP);
		c.proc_threads = t;
		c.batch = 2;
		assert_int_equal(lz_experiment(&c, o, err, sizeof err), 0);
		assert_true(o->hash == o->serial_hash);
	}
	free(o);
}

static void th_map_over_threads_gives_the_same_sums(void **state)
{
	(void)state;
	struct th_config rc;
	th_config_default(&rc);
	rc.workers = 2;
	assert_int_equal(th_runtime_start(&rc), 0);
	struct lz_config c;
	struct lz_outcome *o = calloc(1, sizeof *o);
	char err[256];
	small(&c, LZ_THREADS);
	assert_int_equal(lz_experiment(&c, o, err, sizeof err), 0);
	th_runtime_stop();
	assert_true(o->hash == o->serial_hash);
	free(o);
}

static int parse_args(void *params, int argc, char **argv, char *err, size_t errlen)
{
	for (int i = 0; i < argc; i++) {
		int r = th_workload_leibniz.parse(params, argc, argv, &i, err, errlen);
		if (r != 1)
			return r;
	}
	return 0;
}

static void procs_0_and_bad_arguments_are_refused(void **state)
{
	(void)state;
	void *p = malloc(th_workload_leibniz.params_size);
	char err[256];
	th_workload_leibniz.defaults(p);
	char *a0[] = { "--procs", "0" };
	assert_int_equal(parse_args(p, 2, a0, err, sizeof err), -1);
	assert_non_null(strstr(err, "--procs must be 1..64"));
	char *a1[] = { "--procs", "two" };
	assert_int_equal(parse_args(p, 2, a1, err, sizeof err), -1);
	char *a2[] = { "--group" };
	assert_int_equal(parse_args(p, 1, a2, err, sizeof err), -1);
	assert_non_null(strstr(err, "needs a value"));
	free(p);
	/* the registered function checks its own argument */
	struct lz_arg bad = { 10, 5, 1000 };
	struct th_bytes out;
	assert_int_equal(th_dist_call_local("leibniz", &bad, sizeof bad, &out), -1);
	assert_non_null(strstr(th_dist_last_error(), "first <= last"));
	assert_int_equal(th_dist_call_local("leibniz", &bad, 3, &out), -1);
}

/* --bpf: the recorder follows each worker process and sees its runtime
 * worker run the call on a CPU. Needs root; CI (TASKHOP_REQUIRE_BPF=1) must run it. */
static void the_recorder_follows_every_worker_process(void **state)
{
	(void)state;
	NEED_BPF();
	struct lz_config c;
	struct lz_outcome *o = calloc(1, sizeof *o);
	char err[256];
	small(&c, LZ_PMAP);
	c.terms = 30000000; /* tens of ms per input: visible on-CPU time */
	c.inputs = 2;
	c.bpf = true;
	c.proc_threads = 1;
	c.baseline = false;
	if (lz_experiment(&c, o, err, sizeof err) != 0)
		fail_msg("%s", err);
	assert_true(o->recorded);
	for (int k = 0; k < 2; k++) {
		assert_int_not_equal(o->procs[k].pid, getpid());
		assert_true(o->procs[k].migrations >= 0);
		assert_true(o->procs[k].on_cpu_ms > 0);
	}
	free(o);
}

/* `taskhop run leibniz` end to end: the local pmap and `mpirun -n 3 ... --mpi`
 * report the same partial sums (their FNV-1a hash) in the run JSON. */
static char *run_hash(const char *cmd, const char *json)
{
	int st = system(cmd);
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
		print_error("command failed (status %d): %s\n", st, cmd);
		return NULL;
	}
	char err[256];
	struct json *j = json_parse_file(json, err, sizeof err);
	if (!j) {
		print_error("%s: %s\n", json, err);
		return NULL;
	}
	const struct json *x = json_get(j, "extra");
	const char *h = json_get_str(x, "partial_sums_fnv1a", NULL);
	bool same = json_get(x, "identical_to_serial") && json_bool_of(json_get(x, "identical_to_serial"));
	char *r = h && same ? strdup(h) : NULL;
	json_free(j);
	return r;
}

static void taskhop_run_leibniz_local_and_under_mpirun_agree(void **state)
{
	(void)state;
	const char *bin = getenv("TASKHOP_BIN");
	bool ci = getenv("TASKHOP_REQUIRE_BPF") && strcmp(getenv("TASKHOP_REQUIRE_BPF"), "1") == 0;
	if (!bin || access(bin, X_OK) != 0) {
		if (ci)
			fail_msg("TASKHOP_BIN is not set to the taskhop binary (run through make test)");
		skip();
	}
	if (system("command -v mpirun >/dev/null 2>&1") != 0) {
		if (ci)
			fail_msg("mpirun not found: `make deps` installs openmpi-bin");
		skip();
	}
	char dir[] = "/tmp/taskhop-lz-XXXXXX", cmd[8192], j1[128], j2[128];
	assert_non_null(mkdtemp(dir));
	snprintf(j1, sizeof j1, "%s/local.json", dir);
	snprintf(j2, sizeof j2, "%s/mpi.json", dir);
	snprintf(cmd, sizeof cmd, "'%s' run leibniz --procs 2 --terms 2e6 --json %s >/dev/null", bin, j1);
	char *h1 = run_hash(cmd, j1);
	assert_non_null(h1);
	snprintf(cmd, sizeof cmd,
		 "ASAN_OPTIONS=detect_leaks=0 timeout 120 mpirun --allow-run-as-root --oversubscribe -n 3 "
		 "'%s' run leibniz --mpi --terms 2e6 --json %s >/dev/null", bin, j2);
	char *h2 = run_hash(cmd, j2);
	assert_non_null(h2);
	assert_string_equal(h1, h2);
	free(h1);
	free(h2);
	unlink(j1);
	unlink(j2);
	rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(group_sums_follow_the_article_formula),
		cmocka_unit_test(the_serial_map_converges_to_pi),
		cmocka_unit_test(pmap_over_processes_gives_the_serial_partial_sums),
		cmocka_unit_test(worker_processes_running_their_own_runtime_give_the_same_sums),
		cmocka_unit_test(th_map_over_threads_gives_the_same_sums),
		cmocka_unit_test(procs_0_and_bad_arguments_are_refused),
		cmocka_unit_test(the_recorder_follows_every_worker_process),
		cmocka_unit_test(taskhop_run_leibniz_local_and_under_mpirun_agree),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
