/* test_fpenv.c — cfg.task_fpenv: with it, each task keeps its own floating-point
 * control state (the rounding mode here) across its switches, on whatever worker it
 * resumes; without it, the tasks of a worker share their thread's (taskhop.h). */
#define _GNU_SOURCE
#include <fenv.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "taskhop.h"

#define YIELDS 2000

static void start(const char *policy, int workers, bool task_fpenv)
{
	struct th_config cfg;
	th_config_default(&cfg);
	cfg.policy = policy;
	cfg.workers = workers;
	cfg.task_fpenv = task_fpenv;
	assert_int_equal(th_runtime_start(&cfg), 0);
}

/* 1/3 as the FPU rounds it now (SSE on x86-64: MXCSR; arm64: FPCR). */
static double third(void)
{
	volatile double one = 1.0, three = 3.0;
	return one / three;
}

struct keeper {
	int mode;             /* the rounding mode this task sets */
	long kept;            /* yields after which the mode was still its own */
	double q;             /* 1/3 rounded its way, before the first yield */
};

static void *keep_mode(void *arg)
{
	struct keeper *k = arg;
	fesetround(k->mode);
	k->q = third();
	for (int i = 0; i < YIELDS; i++) {
		th_yield();
		k->kept += fegetround() == k->mode && third() == k->q;
	}
	fesetround(FE_TONEAREST);
	return NULL;
}

/* Two tasks in opposite rounding modes taking turns, on one worker or two that
 * hand them around. */
static void each_task_keeps_its_mode(const char *policy, int workers)
{
	start(policy, workers, true);
	struct keeper up = { .mode = FE_UPWARD }, down = { .mode = FE_DOWNWARD };
	th_task *a = th_spawn(keep_mode, &up), *b = th_spawn(keep_mode, &down);
	th_wait(a);
	th_wait(b);
	th_task_free(a);
	th_task_free(b);
	th_runtime_stop();
	assert_true(up.q > down.q); /* the modes did round differently */
	assert_int_equal(up.kept, YIELDS);
	assert_int_equal(down.kept, YIELDS);
}

static void with_task_fpenv_each_task_keeps_its_rounding_mode(void **state)
{
	(void)state;
	each_task_keeps_its_mode("sticky", 1);
}

static void with_task_fpenv_the_mode_follows_a_task_across_workers(void **state)
{
	(void)state;
	each_task_keeps_its_mode("shared", 2);
}

static int seen_by_second;

static void *set_upward_and_yield(void *arg)
{
	(void)arg;
	fesetround(FE_UPWARD);
	th_yield(); /* the other task runs now, on this thread */
	fesetround(FE_TONEAREST);
	return NULL;
}

static void *look(void *arg)
{
	(void)arg;
	seen_by_second = fegetround();
	return NULL;
}

static void without_it_a_workers_tasks_share_the_mode(void **state)
{
	(void)state;
	start("sticky", 1, false);
	th_task *a = th_spawn_on(0, set_upward_and_yield, NULL), *b = th_spawn_on(0, look, NULL);
	th_wait(a);
	th_wait(b);
	th_task_free(a);
	th_task_free(b);
	th_runtime_stop();
	assert_int_equal(seen_by_second, FE_UPWARD);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(with_task_fpenv_each_task_keeps_its_rounding_mode),
		cmocka_unit_test(with_task_fpenv_the_mode_follows_a_task_across_workers),
		cmocka_unit_test(without_it_a_workers_tasks_share_the_mode),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
