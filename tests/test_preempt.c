/* test_preempt.c — asynchronous preemption: a spinning task gives way, its results and
 * registers survive, nothing else is interrupted, and every policy keeps every task. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "taskhop.h"

/* Where preemption is refused (TSan, not x86-64) only the refusal is tested. */
#if defined(__x86_64__) && !defined(__SANITIZE_THREAD__)
#define PREEMPT_WORKS 1
#else
#define PREEMPT_WORKS 0
#endif
#if defined(__SANITIZE_ADDRESS__)
#define ASAN 1
#else
#define ASAN 0
#endif

#define US 1000ull
#define MS 1000000ull

static void start(const char *policy, int workers, uint64_t quantum)
{
	struct th_config cfg;
	th_config_default(&cfg);
	cfg.policy = policy;
	cfg.workers = workers;
	cfg.seed = 7;
	cfg.preempt_ns = quantum;
	if (th_runtime_start(&cfg) != 0)
		fail_msg("th_runtime_start(%s, preempt %llu ns): %s", policy, (unsigned long long)quantum,
			 th_last_error());
}

static th_task *spawn_preemptible(th_fn fn, void *arg)
{
	th_task *t = th_spawn_opts(fn, arg, &(struct th_spawn_opts){ .preemptible = true });
	if (!t)
		fail_msg("th_spawn_opts: %s", th_last_error());
	return t;
}

static uint64_t preempted_of(th_task *t)
{
	struct th_task_stats st;
	th_task_stats(t, &st);
	return st.preempted;
}

static bool skip_unless_preemption(void)
{
	if (PREEMPT_WORKS)
		return false;
	print_message("preemption is refused in this build (see preemption_refused_...)\n");
	skip();
	return true;
}

/* ---- a spinning task gives way -------------------------------------------- */

static _Atomic int flag;

/* Spins without a yield until the flag is set, or gives up after 20 s of
 * wall time so that a broken preemption fails instead of hanging. */
static void *spin_until_flag(void *arg)
{
	(void)arg;
	uint64_t until = th_now_ns() + 20000 * MS;
	while (!atomic_load_explicit(&flag, memory_order_relaxed))
		if (th_now_ns() > until)
			return (void *)0;
	return (void *)1;
}

static void *set_flag(void *arg)
{
	(void)arg;
	atomic_store(&flag, 1);
	return NULL;
}

/* One worker: only a preemption of the spinner lets the setter run at all. */
static void spinning_task_is_preempted_and_others_run_on_one_worker(void **state)
{
	(void)state;
	if (skip_unless_preemption())
		return;
	start("shared", 1, 1 * MS);
	atomic_store(&flag, 0);
	th_task *spinner = spawn_preemptible(spin_until_flag, NULL);
	th_task *setter = th_spawn(set_flag, NULL);
	assert_int_equal((intptr_t)th_fetch(spinner), 1);
	th_wait(setter);
	assert_true(preempted_of(spinner) >= 1);
	assert_int_equal(preempted_of(setter), 0);
	th_task_free(spinner);
	th_task_free(setter);
	th_runtime_stop();
}

/* ---- results and registers survive ---------------------------------------- */

/* A floating-point recurrence long enough to be preempted many times at 50 us. */
static void *fp_series(void *arg)
{
	double *out = arg, x = 0.5, s = 0;
	for (long i = 0; i < 20000000; i++) {
		x = 3.9 * x * (1 - x);             /* logistic map: every bit matters */
		s += x / (1.0 + (double)(i & 1023));
	}
	out[0] = s;
	out[1] = x;
	return NULL;
}

static void *spin_ms(void *arg)
{
	uint64_t until = th_now_ns() + (uint64_t)(uintptr_t)arg * MS;
	volatile double junk = 1;
	while (th_now_ns() < until)
		junk = junk * 1.0000001 + 0.5; /* other FP values in the registers */
	return NULL;
}

/* A task alone on its worker: a preemption that finds nothing else to run
 * stretches the tick (up to 16 quanta), so 300 ms alone cost about 22
 * preemptions, not 150 to 300; and a task spawned then (the push brings the
 * tick back to one quantum) still gets the worker. Counts only: a loaded
 * machine delays ticks, which can only lower them. */
static void *spin_alone_then_until_flag(void *arg)
{
	uint64_t *alone = arg;
	spin_ms((void *)(uintptr_t)300);
	struct th_task_stats st;
	th_task_stats(th_self_task(), &st);
	*alone = st.preempted;
	return spin_until_flag(NULL);
}

static void a_task_alone_pays_fewer_and_fewer_ticks(void **state)
{
	(void)state;
	if (skip_unless_preemption())
		return;
	start("shared", 1, 1 * MS);
	atomic_store(&flag, 0);
	uint64_t alone = UINT64_MAX;
	th_task *spinner = spawn_preemptible(spin_alone_then_until_flag, &alone);
	while (__atomic_load_n(&alone, __ATOMIC_RELAXED) == UINT64_MAX)
		usleep(1000);
	print_message("  preempted %llu times in 300 ms alone at a 1 ms quantum\n", (unsigned long long)alone);
	assert_true(alone >= 1);
	assert_true(alone <= 40);
	th_task *setter = th_spawn(set_flag, NULL);
	assert_int_equal((intptr_t)th_fetch(spinner), 1); /* the setter ran: the spinner gave way */
	th_wait(setter);
	th_task_free(spinner);
	th_task_free(setter);
	th_runtime_stop();
}

static void preempted_result_is_bit_identical(void **state)
{
	(void)state;
	if (skip_unless_preemption())
		return;
	double quiet[2], preempted[2];
	start("shared", 1, 0);
	th_task *t = th_spawn(fp_series, quiet);
	th_wait(t);
	th_task_free(t);
	th_runtime_stop();

	start("shared", 1, 50 * US);
	t = spawn_preemptible(fp_series, preempted);
	th_task *other = spawn_preemptible(spin_ms, (void *)(uintptr_t)(ASAN ? 400 : 200));
	th_wait(t);
	th_wait(other);
	uint64_t n = preempted_of(t);
	print_message("  the series was preempted %llu times\n", (unsigned long long)n);
	assert_true(n >= 1);
	assert_memory_equal(quiet, preempted, sizeof(quiet));
	th_task_free(t);
	th_task_free(other);
	th_runtime_stop();
}

#if PREEMPT_WORKS
/* Loads xmm0-15 (and the upper halves of ymm0-15 where there is AVX) with
 * known values, spins in registers until *stop is set, stores them back. No
 * call, no memory but *stop: only the trampoline may save and restore them. */
static void *hold_vector_registers(void *arg)
{
	volatile int *stop = arg;
	static _Alignas(32) uint64_t in[16][4], out[16][4];
	for (int r = 0; r < 16; r++)
		for (int k = 0; k < 4; k++)
			in[r][k] = 0x0123456789abcdefull * (uint64_t)(r + 1) + (uint64_t)k;
	memset(out, 0, sizeof(out));
	bool avx = __builtin_cpu_supports("avx");
#define LOAD(op, w) __asm__ volatile(                                                       \
	op " 0(%0), %%" w "0\n\t" op " 32(%0), %%" w "1\n\t" op " 64(%0), %%" w "2\n\t"     \
	op " 96(%0), %%" w "3\n\t" op " 128(%0), %%" w "4\n\t" op " 160(%0), %%" w "5\n\t"  \
	op " 192(%0), %%" w "6\n\t" op " 224(%0), %%" w "7\n\t" op " 256(%0), %%" w "8\n\t" \
	op " 288(%0), %%" w "9\n\t" op " 320(%0), %%" w "10\n\t" op " 352(%0), %%" w "11\n\t" \
	op " 384(%0), %%" w "12\n\t" op " 416(%0), %%" w "13\n\t" op " 448(%0), %%" w "14\n\t" \
	op " 480(%0), %%" w "15\n\t"                                                         \
	"1: pause\n\tcmpl $0, (%1)\n\tje 1b\n\t"                                              \
	op " %%" w "0, 0(%2)\n\t" op " %%" w "1, 32(%2)\n\t" op " %%" w "2, 64(%2)\n\t"     \
	op " %%" w "3, 96(%2)\n\t" op " %%" w "4, 128(%2)\n\t" op " %%" w "5, 160(%2)\n\t"  \
	op " %%" w "6, 192(%2)\n\t" op " %%" w "7, 224(%2)\n\t" op " %%" w "8, 256(%2)\n\t" \
	op " %%" w "9, 288(%2)\n\t" op " %%" w "10, 320(%2)\n\t" op " %%" w "11, 352(%2)\n\t" \
	op " %%" w "12, 384(%2)\n\t" op " %%" w "13, 416(%2)\n\t" op " %%" w "14, 448(%2)\n\t" \
	op " %%" w "15, 480(%2)\n\t"                                                         \
	: : "r"(in), "r"(stop), "r"(out)                                                     \
	: "memory", "cc", "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7",     \
	  "xmm8", "xmm9", "xmm10", "xmm11", "xmm12", "xmm13", "xmm14", "xmm15")
	if (avx)
		LOAD("vmovdqu", "ymm");
	else
		LOAD("movdqu", "xmm");
#undef LOAD
	int lanes = avx ? 4 : 2;
	for (int r = 0; r < 16; r++)
		for (int k = 0; k < lanes; k++)
			if (out[r][k] != in[r][k])
				return (void *)(intptr_t)(r * 10 + k + 1);
	return NULL;
}

/* The other task: different values in every vector register, then lets
 * the holder finish. */
static void *clobber_vectors_then_stop(void *arg)
{
	volatile int *stop = arg;
	double v[16];
	for (int i = 0; i < 16; i++)
		v[i] = -1.5 * i;
	__asm__ volatile("movupd (%0), %%xmm0\n\tmovapd %%xmm0, %%xmm1\n\tmovapd %%xmm0, %%xmm2\n\t"
			 "movapd %%xmm0, %%xmm3\n\tmovapd %%xmm0, %%xmm4\n\tmovapd %%xmm0, %%xmm5\n\t"
			 "movapd %%xmm0, %%xmm6\n\tmovapd %%xmm0, %%xmm7\n\tmovapd %%xmm0, %%xmm8\n\t"
			 "movapd %%xmm0, %%xmm9\n\tmovapd %%xmm0, %%xmm10\n\tmovapd %%xmm0, %%xmm11\n\t"
			 "movapd %%xmm0, %%xmm12\n\tmovapd %%xmm0, %%xmm13\n\tmovapd %%xmm0, %%xmm14\n\t"
			 "movapd %%xmm0, %%xmm15\n\t"
			 : : "r"(v) : "memory", "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6",
			   "xmm7", "xmm8", "xmm9", "xmm10", "xmm11", "xmm12", "xmm13", "xmm14", "xmm15");
	*stop = 1;
	return NULL;
}
#endif

static void vector_registers_survive_a_preemption(void **state)
{
	(void)state;
	if (skip_unless_preemption())
		return;
#if PREEMPT_WORKS
	static volatile int stop;
	stop = 0;
	start("shared", 1, 200 * US);
	th_task *holder = spawn_preemptible(hold_vector_registers, (void *)&stop);
	th_task *other = th_spawn(clobber_vectors_then_stop, (void *)&stop);
	intptr_t bad = (intptr_t)th_fetch(holder);
	th_wait(other);
	if (bad)
		fail_msg("register %ld, lane %ld changed across the preemption", (long)(bad - 1) / 10,
			 (long)(bad - 1) % 10);
	assert_true(preempted_of(holder) >= 1);
	th_task_free(holder);
	th_task_free(other);
	th_runtime_stop();
#endif
}

/* ---- what is never preempted ---------------------------------------------- */

static void non_preemptible_task_is_never_preempted(void **state)
{
	(void)state;
	if (skip_unless_preemption())
		return;
	start("shared", 1, 50 * US);
	th_task *plain = th_spawn(spin_ms, (void *)(uintptr_t)100);
	th_task *pre = spawn_preemptible(spin_ms, (void *)(uintptr_t)100);
	th_wait(plain);
	th_wait(pre);
	assert_int_equal(preempted_of(plain), 0);
	assert_true(preempted_of(pre) >= 1); /* the timer did run */
	th_task_free(plain);
	th_task_free(pre);
	th_runtime_stop();
}

/* Preemptible tasks that call into the runtime all the time, on every policy,
 * with a 50 us quantum and spinners for load: a tick landing inside the
 * runtime (a policy lock, a worker's task cache, a half-done switch) would
 * deadlock, lose or duplicate a task, or make th_self_task lie. */
struct busy {
	th_mutex m;
	long counter;
	_Atomic long self_wrong, children;
};

static void *child(void *arg)
{
	struct busy *b = arg;
	atomic_fetch_add(&b->children, 1);
	return (void *)(intptr_t)7;
}

static double square(int64_t i, void *arg)
{
	(void)arg;
	return (double)(i * i);
}

static double add(double a, double b)
{
	return a + b;
}

static void *runtime_heavy(void *arg)
{
	struct busy *b = arg;
	th_task *me = th_self_task();
	for (int i = 0; i < (ASAN ? 200 : 1000); i++) {
		th_task *c = spawn_preemptible(child, b);
		if ((intptr_t)th_fetch(c) != 7)
			atomic_fetch_add(&b->self_wrong, 1000);
		th_task_free(c);
		th_mutex_lock(&b->m);
		b->counter++;
		th_mutex_unlock(&b->m);
		for (int k = 0; k < 100; k++)
			if (th_self_task() != me)
				atomic_fetch_add(&b->self_wrong, 1);
		if (i % 100 == 0) {
			if (th_reduce(0, 1000, 0, square, NULL, add, 0) != 999.0 * 1000 * 1999 / 6)
				atomic_fetch_add(&b->self_wrong, 1000000);
		}
		th_yield();
	}
	return NULL;
}

static void *reduce_check(void *arg)
{
	(void)arg;
	double s = th_reduce(0, 2000, 7, square, NULL, add, 0);
	return (void *)(intptr_t)(s == 1999.0 * 2000 * 3999 / 6);
}

static const char *const policies[] = { "sticky", "shared", "steal", "multiqueue", "fcfs",
					"feedback", "kthread" };
#define NPOL (sizeof(policies) / sizeof(policies[0]))

static void runtime_code_is_never_interrupted_at_50us(void **state)
{
	(void)state;
	if (skip_unless_preemption())
		return;
	for (size_t p = 0; p < NPOL; p++) {
		start(policies[p], 2, 50 * US);
		struct busy b = { .m = TH_MUTEX_INIT };
		enum { N = 4 };
		th_task *t[N], *spin[2], *red;
		for (int i = 0; i < N; i++)
			t[i] = spawn_preemptible(runtime_heavy, &b);
		for (int i = 0; i < 2; i++)
			spin[i] = spawn_preemptible(spin_ms, (void *)(uintptr_t)30);
		red = spawn_preemptible(reduce_check, NULL);
		uint64_t preempted = 0;
		for (int i = 0; i < N; i++) {
			th_wait(t[i]);
			preempted += preempted_of(t[i]);
			th_task_free(t[i]);
		}
		for (int i = 0; i < 2; i++) {
			th_wait(spin[i]);
			preempted += preempted_of(spin[i]);
			th_task_free(spin[i]);
		}
		assert_int_equal((intptr_t)th_fetch(red), 1);
		th_task_free(red);
		th_runtime_stop();
		long per = ASAN ? 200 : 1000;
		print_message("  %s: %llu preemptions\n", policies[p], (unsigned long long)preempted);
		assert_int_equal(b.counter, N * per);
		assert_int_equal(atomic_load(&b.children), N * per);
		assert_int_equal(atomic_load(&b.self_wrong), 0);
		if (strcmp(policies[p], "kthread") != 0) /* kthread: the kernel preempts */
			assert_true(preempted >= 1);
	}
}

/* ---- many tasks, every policy --------------------------------------------- */

/* Every 1000th task spins 2 ms so that some are preempted; each must
 * complete exactly once with its own result. */
static _Atomic int *runs_of;

static void *numbered(void *arg)
{
	intptr_t i = (intptr_t)arg;
	atomic_fetch_add(&runs_of[i], 1);
	if (i % 1000 == 0)
		spin_ms((void *)(uintptr_t)2);
	return (void *)(i * 3 + 1);
}

static void hundred_thousand_preemptible_tasks_complete_once_on_every_policy(void **state)
{
	(void)state;
	if (skip_unless_preemption())
		return;
	enum { BATCH = 1000 };
	long n = ASAN ? 20000 : 100000;
	runs_of = calloc((size_t)n, sizeof(*runs_of));
	assert_non_null(runs_of);
	for (size_t p = 0; p < NPOL; p++) {
		long kn = strcmp(policies[p], "kthread") == 0 ? n / 20 : n; /* a thread each */
		memset(runs_of, 0, (size_t)n * sizeof(*runs_of));
		start(policies[p], 2, 50 * US);
		th_task *t[BATCH];
		for (long base = 0; base < kn; base += BATCH) {
			for (long i = 0; i < BATCH; i++)
				t[i] = spawn_preemptible(numbered, (void *)(intptr_t)(base + i));
			for (long i = 0; i < BATCH; i++) {
				if ((intptr_t)th_fetch(t[i]) != (base + i) * 3 + 1)
					fail_msg("%s: task %ld returned a wrong result", policies[p], base + i);
				th_task_free(t[i]);
			}
		}
		th_runtime_stop();
		for (long i = 0; i < kn; i++)
			if (atomic_load(&runs_of[i]) != 1)
				fail_msg("%s: task %ld ran %d times", policies[p], i, atomic_load(&runs_of[i]));
	}
	free(runs_of);
}

/* ---- the task's CPU clock -------------------------------------------------- */

/* A fixed amount of work, not of time: CPU time is what is compared. */
static void *spin_work(void *arg)
{
	volatile double x = 1;
	for (long i = 0; i < (long)(uintptr_t)arg; i++)
		x = x * 1.0000001 + 0.5;
	return NULL;
}

struct own_cpu {
	long work;
	uint64_t ns;
};

static void *measure_own_cpu(void *arg)
{
	struct own_cpu *o = arg;
	uint64_t c0 = th_task_cpu_ns();
	spin_work((void *)(uintptr_t)o->work);
	o->ns = th_task_cpu_ns() - c0;
	return NULL;
}

/* Two spinners on one worker preempt each other. Over the first one's span
 * the thread's CPU clock also counts the other's slices (about twice its own
 * work); the task's clock counts its own, as much as when it ran alone. */
static void task_cpu_clock_excludes_other_tasks_run_in_a_preemption(void **state)
{
	(void)state;
	if (skip_unless_preemption())
		return;
	struct own_cpu solo = { .work = 30000000 }, shared = { .work = 30000000 };
	start("shared", 1, 0);
	th_task *alone = th_spawn(measure_own_cpu, &solo);
	th_wait(alone);
	th_task_free(alone);
	th_runtime_stop();
	start("shared", 1, 1 * MS);
	th_task *a = spawn_preemptible(measure_own_cpu, &shared);
	th_task *b = spawn_preemptible(spin_work, (void *)(uintptr_t)(3 * shared.work));
	th_wait(a);
	th_wait(b);
	print_message("  own CPU %.1f ms alone, %.1f ms preempted %llu times by a 3x longer task\n",
		      solo.ns / 1e6, shared.ns / 1e6, (unsigned long long)preempted_of(a));
	assert_true(preempted_of(a) >= 2);
	assert_true(shared.ns < 1.6 * (double)solo.ns);
	th_task_free(a);
	th_task_free(b);
	th_runtime_stop();
}

/* ---- refusals ------------------------------------------------------------- */

static void preemption_refused_with_a_clear_message_where_it_cannot_work(void **state)
{
	(void)state;
	struct th_config cfg;
	th_config_default(&cfg);
	cfg.workers = 1;
	cfg.preempt_ns = 1 * US; /* below the 10 us floor */
	assert_int_equal(th_runtime_start(&cfg), -1);
	assert_non_null(strstr(th_last_error(), "preempt"));
	cfg.preempt_ns = 1 * MS;
	int rc = th_runtime_start(&cfg);
	if (PREEMPT_WORKS) {
		assert_int_equal(rc, 0);
		th_runtime_stop();
	} else {
		assert_int_equal(rc, -1);
#if defined(__SANITIZE_THREAD__)
		assert_non_null(strstr(th_last_error(), "ThreadSanitizer"));
#else
		assert_non_null(strstr(th_last_error(), "x86-64"));
#endif
		print_message("  refused: %s\n", th_last_error());
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(preemption_refused_with_a_clear_message_where_it_cannot_work),
		cmocka_unit_test(spinning_task_is_preempted_and_others_run_on_one_worker),
		cmocka_unit_test(a_task_alone_pays_fewer_and_fewer_ticks),
		cmocka_unit_test(preempted_result_is_bit_identical),
		cmocka_unit_test(vector_registers_survive_a_preemption),
		cmocka_unit_test(non_preemptible_task_is_never_preempted),
		cmocka_unit_test(task_cpu_clock_excludes_other_tasks_run_in_a_preemption),
		cmocka_unit_test(runtime_code_is_never_interrupted_at_50us),
		cmocka_unit_test(hundred_thousand_preemptible_tasks_complete_once_on_every_policy),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
