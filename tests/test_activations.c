/* test_activations.c — a worker whose thread blocks inside a task is handed to a
 * spare thread (explicit th_blocking_begin/end, and the BPF backend as root). */
#define _GNU_SOURCE
#include <dirent.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "taskhop.h"
#include "act_monitor.h"
#include "core.h"
#include "taskhop_abi.h"
#include "lib/need_bpf.h"

static char self_exe[4096]; /* this binary, run again inside a PID namespace */

#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
#define MANY_TASKS 5000
#else
#define MANY_TASKS 100000
#endif

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
	while (nanosleep(&ts, &ts) != 0)
		;
}

static void sleep_us(long us)
{
	struct timespec ts = { 0, us * 1000L };
	while (nanosleep(&ts, &ts) != 0)
		;
}

/* The gate's fast path is a restartable sequence: a signal (or a switch-out)
 * between its load and its store must abort it with the word untouched, and an
 * abort must land where the kernel expects (a wrong signature there would kill
 * the process with SIGSEGV). A 20 us timer signal hits the three instructions
 * now and then; the loop runs until it has seen aborts, or gives up where this
 * libc registered no rseq (the CAS path is then the only one). */
static void count_signal(int sig)
{
	(void)sig;
}

static void act_gate_fast_path_survives_aborts_and_leaves_the_word_untouched(void **state)
{
	(void)state;
	struct sigaction sa = { .sa_handler = count_signal }, old;
	sigemptyset(&sa.sa_mask);
	assert_int_equal(sigaction(SIGURG, &sa, &old), 0);
	timer_t tm;
	struct sigevent ev = { .sigev_notify = SIGEV_THREAD_ID, .sigev_signo = SIGURG };
	ev._sigev_un._tid = (pid_t)syscall(SYS_gettid);
	assert_int_equal(timer_create(CLOCK_MONOTONIC, &ev, &tm), 0);
	struct itimerspec it = { { 0, 20000 }, { 0, 20000 } };
	assert_int_equal(timer_settime(tm, 0, &it, NULL), 0);
	_Atomic uint32_t word;
	long taken = 0, aborted = 0, i;
	for (i = 0; i < 2000000000L && aborted < 20; i++) {
		atomic_store(&word, TH_SLOT_TASK);
		if (th__act_gate_fast(&word)) {
			taken++;
			assert_int_equal(atomic_load(&word), TH_SLOT_RUNTIME);
		} else {
			aborted++;
			assert_int_equal(atomic_load(&word), TH_SLOT_TASK);
		}
		if (i == 1000 && taken == 0)
			break; /* no rseq here: every call says no */
	}
	timer_delete(tm);
	sigaction(SIGURG, &old, NULL);
	/* not TASK: never moved, whatever the path */
	atomic_store(&word, TH_SLOT_TAKEN);
	assert_false(th__act_gate_fast(&word));
	assert_int_equal(atomic_load(&word), TH_SLOT_TAKEN);
	if (taken == 0)
		skip(); /* no rseq registered by this libc or kernel */
	assert_int_equal(aborted, 20);
}

static int count_threads(void)
{
	DIR *d = opendir("/proc/self/task");
	int n = 0;
	for (struct dirent *e; d && (e = readdir(d));)
		n += e->d_name[0] != '.';
	if (d)
		closedir(d);
	return n;
}

static void start(int workers, const char *policy, int mode)
{
	struct th_config cfg;
	th_config_default(&cfg);
	cfg.workers = workers;
	cfg.policy = policy;
	cfg.activations = mode;
	th_set_activation_backend(&rec_act_backend);
	if (th_runtime_start(&cfg) != 0)
		fail_msg("runtime start: %s", th_last_error());
}

/* ---- a compute task advances while another blocks ------------------------ */

static atomic_long progress;
static atomic_int stop_compute;
static long progress_during_sleep;

static void *compute(void *arg)
{
	(void)arg;
	while (!atomic_load(&stop_compute)) {
		atomic_fetch_add(&progress, 1);
		th_yield();
	}
	return NULL;
}

static void *blocker(void *arg)
{
	bool explicit = arg != NULL;
	long before = atomic_load(&progress);
	if (explicit)
		th_blocking_begin();
	sleep_ms(200);
	long after = atomic_load(&progress);
	if (explicit)
		th_blocking_end();
	progress_during_sleep = after - before;
	atomic_store(&stop_compute, 1);
	return NULL;
}

/* One worker: the blocker starts first (spawned first, one FIFO queue), so
 * the compute task can only run during the sleep if a spare serves the worker. */
static long progress_while_blocked(int mode, bool explicit_calls)
{
	atomic_store(&progress, 0);
	atomic_store(&stop_compute, 0);
	progress_during_sleep = -1;
	start(1, "shared", mode);
	th_task *b = th_spawn(blocker, explicit_calls ? (void *)1 : NULL);
	th_task *c = th_spawn(compute, NULL);
	th_wait(b);
	th_wait(c);
	struct th_task_stats st;
	th_task_stats(b, &st);
	th_task_free(b);
	th_task_free(c);
	th_runtime_stop();
	if (mode != TH_ACT_OFF && progress_during_sleep > 0 && st.activations == 0)
		fail_msg("progress without an activation counted on the blocker");
	return progress_during_sleep;
}

static void explicit_blocking_lets_a_spare_run_the_queue(void **state)
{
	(void)state;
	long on = progress_while_blocked(TH_ACT_EXPLICIT, true);
	print_message("compute steps during the 200 ms block: explicit %ld\n", on);
	assert_true(on > 0);
}

static void without_activations_the_queue_waits_for_the_blocker(void **state)
{
	(void)state;
	long off = progress_while_blocked(TH_ACT_OFF, true);
	assert_int_equal(off, 0);
}

static void bpf_sees_the_block_and_a_spare_runs_the_queue(void **state)
{
	(void)state;
	NEED_BPF();
	long on = progress_while_blocked(TH_ACT_BPF, false);
	print_message("compute steps during the 200 ms block: bpf %ld\n", on);
	assert_true(on > 0);
}

/* In a container the runtime numbers its threads in its own PID namespace, the
 * kernel's sched_switch in the initial one. The same check, run again by this
 * binary under unshare --pid (as podman and Kubernetes do). */
static void bpf_activations_work_inside_a_pid_namespace(void **state)
{
	(void)state;
	NEED_BPF();
	if (system("unshare --pid --fork --mount-proc true >/dev/null 2>&1") != 0) {
		if (getenv("TASKHOP_REQUIRE_BPF"))
			fail_msg("unshare --pid --fork --mount-proc does not work here");
		skip();
	}
	char cmd[4200];
	snprintf(cmd, sizeof(cmd), "unshare --pid --fork --mount-proc '%s' --bpf-progress", self_exe);
	FILE *p = popen(cmd, "r");
	assert_non_null(p);
	long on = -1;
	int got = fscanf(p, "%ld", &on);
	int st = pclose(p);
	print_message("compute steps during the 200 ms block, in a PID namespace: bpf %ld\n", on);
	assert_int_equal(got, 1);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	assert_true(on > 0);
}

/* As user nobody: auto falls back to explicit, which still works. */
static void explicit_works_without_privileges(void **state)
{
	(void)state;
	pid_t p = fork();
	assert_true(p >= 0);
	if (p == 0) {
		if (geteuid() == 0 && (setresgid(65534, 65534, 65534) != 0 || setresuid(65534, 65534, 65534) != 0))
			_exit(10);
		atomic_store(&progress, 0);
		atomic_store(&stop_compute, 0);
		start(1, "shared", TH_ACT_AUTO);
		struct th_activation_stats st;
		th_activation_stats(&st);
		int mode = st.mode;
		th_task *b = th_spawn(blocker, (void *)1);
		th_task *c = th_spawn(compute, NULL);
		th_wait(b);
		th_wait(c);
		th_runtime_stop();
		if (mode != TH_ACT_EXPLICIT)
			_exit(11);
		_exit(progress_during_sleep > 0 ? 0 : 12);
	}
	int st;
	waitpid(p, &st, 0);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
}

/* ---- many tasks, random short blocking calls ------------------------------ */

static atomic_uchar *runs;
static double *results;
static atomic_int running, max_running;

static double work(int64_t i)
{
	uint64_t x = (uint64_t)i * 0x9e3779b97f4a7c15ULL;
	for (int k = 0; k < 50; k++)
		x ^= x >> 13, x *= 0xff51afd7ed558ccdULL;
	return (double)(x >> 11);
}

static void note_running(int delta)
{
	int now = atomic_fetch_add(&running, delta) + delta;
	for (int m = atomic_load(&max_running); now > m;)
		if (atomic_compare_exchange_weak(&max_running, &m, now))
			break;
}

static void *short_task(void *arg)
{
	int64_t i = (int64_t)(intptr_t)arg;
	bool explicit = i < 0;
	if (explicit)
		i = -i - 1;
	note_running(1);
	atomic_fetch_add(&runs[i], 1);
	if (th_rand_u64() % 16 == 0) {
		note_running(-1);
		if (explicit)
			th_blocking_begin();
		sleep_us((long)(th_rand_u64() % 100) + 1);
		if (explicit)
			th_blocking_end();
		note_running(1);
	}
	if (th_rand_u64() % 8 == 0) {
		note_running(-1); /* a yielded task is queued, not running */
		th_yield();
		note_running(1);
	}
	results[i] = work(i);
	note_running(-1);
	return NULL;
}

static void many_blocking_tasks(const char *policy, int mode, bool explicit_calls)
{
	int n = MANY_TASKS;
	runs = calloc((size_t)n, sizeof(*runs));
	results = calloc((size_t)n, sizeof(*results));
	atomic_store(&running, 0);
	atomic_store(&max_running, 0);
	int before = count_threads();
	start(2, policy, mode);
	struct th_activation_stats as;
	th_activation_stats(&as);
	int threads = th_nthreads();
	assert_int_equal(threads, 2 + as.spares);
	th_group g = TH_GROUP_INIT;
	int most = 0;
	for (int64_t i = 0; i < n; i++) {
		th_group_spawn(&g, short_task, (void *)(intptr_t)(explicit_calls ? -i - 1 : i));
		if (i % 4096 == 0) {
			int c = count_threads() - before;
			most = c > most ? c : most;
		}
	}
	th_group_wait(&g);
	th_activation_stats(&as);
	print_message("%s %s: %d tasks, %llu activations, %llu missed, at most %d threads in tasks, %d threads\n",
		      policy, th_activations_name(mode), n, (unsigned long long)as.activations,
		      (unsigned long long)as.missed, atomic_load(&max_running), most);
	th_runtime_stop();
	assert_int_equal(count_threads(), before);
	assert_true(most <= threads); /* workers + spares: no monitor thread */
	assert_true(atomic_load(&max_running) <= threads);
	for (int i = 0; i < n; i++) {
		if (runs[i] != 1)
			fail_msg("task %d ran %d times", i, runs[i]);
		if (results[i] != work(i))
			fail_msg("task %d: result differs from the serial one", i);
	}
	if (mode != TH_ACT_OFF)
		assert_true(as.activations > 0);
	free(runs);
	free(results);
}

static const char *const migrating[] = { "shared", "steal", "multiqueue", "fcfs", "sticky" };

static void every_policy_runs_each_task_once_with_explicit_blocking(void **state)
{
	(void)state;
	for (size_t p = 0; p < sizeof(migrating) / sizeof(migrating[0]); p++)
		many_blocking_tasks(migrating[p], TH_ACT_EXPLICIT, true);
}

static void every_policy_runs_each_task_once_with_bpf_activations(void **state)
{
	(void)state;
	NEED_BPF();
	for (size_t p = 0; p < sizeof(migrating) / sizeof(migrating[0]); p++)
		many_blocking_tasks(migrating[p], TH_ACT_BPF, false);
}

/* ---- a thread back from a block is a spare before its task runs again ------ */

/* One blocker in a loop of short blocks, on 1 worker with 1 spare: at every
 * block the thread that came back from the last one must already be a parked
 * spare, or the block finds none ("missed") and the worker waits in the kernel
 * with the blocker. Its task is requeued when it comes back: if the requeue
 * came first, the other thread could run the blocker into its next block
 * before this one had offered itself as a spare (19 to 78 of 2000 blocks
 * missed so, in 3 runs on the 2-vCPU guest). The bpf case could not show
 * that order (0 missed before too: the kernel side's notice comes some 30 us
 * after the block, time enough for the thread to park); it checks the same
 * promise where the kernel reports the blocks. */
enum { BACK_TO_BACK_BLOCKS = 2000 };

static void *block_in_a_loop(void *arg)
{
	bool explicit = arg != NULL;
	for (int i = 0; i < BACK_TO_BACK_BLOCKS; i++) {
		if (explicit)
			th_blocking_begin();
		sleep_us(explicit ? 20 : 200);
		if (explicit)
			th_blocking_end();
		th_yield(); /* bpf: where the thread finds out that it lost its worker */
	}
	return NULL;
}

static void back_to_back_blocks(int mode)
{
	struct th_config cfg;
	th_config_default(&cfg);
	cfg.workers = 1;
	cfg.max_spares = 1;
	cfg.policy = "shared";
	cfg.activations = mode;
	th_set_activation_backend(&rec_act_backend);
	if (th_runtime_start(&cfg) != 0)
		fail_msg("runtime start: %s", th_last_error());
	atomic_store(&stop_compute, 0);
	th_task *b = th_spawn(block_in_a_loop, mode == TH_ACT_EXPLICIT ? (void *)1 : NULL);
	/* bpf hands a worker over only when work waits (explicit: always); the
	 * explicit case runs without it, where the old order missed most often */
	th_task *c = mode == TH_ACT_BPF ? th_spawn(compute, NULL) : NULL;
	th_wait(b);
	struct th_activation_stats as;
	th_activation_stats(&as);
	atomic_store(&stop_compute, 1);
	if (c)
		th_wait(c);
	th_task_free(b);
	th_task_free(c);
	unsigned long long count = as.activations, missed = as.missed;
	th_runtime_stop();
	print_message("%s: %d blocks: %llu activations, %llu missed\n", th_activations_name(mode),
		      BACK_TO_BACK_BLOCKS, count, missed);
	assert_int_equal(missed, 0);
	if (mode == TH_ACT_EXPLICIT)
		assert_int_equal(count, BACK_TO_BACK_BLOCKS);
}

static void a_thread_back_from_a_block_is_a_spare_before_its_task_runs_again(void **state)
{
	(void)state;
	back_to_back_blocks(TH_ACT_EXPLICIT);
}

static void bpf_a_thread_back_from_a_block_is_a_spare_before_its_task_runs_again(void **state)
{
	(void)state;
	NEED_BPF();
	back_to_back_blocks(TH_ACT_BPF);
}

/* ---- long blocks, stop while blocked -------------------------------------- */

static atomic_int blocker_done;
static uint64_t blocker_woke_ns;

/* arg: milliseconds; negative: the same without th_blocking_begin/end (bpf) */
static void *long_blocker(void *arg)
{
	long ms = (long)(intptr_t)arg;
	bool explicit = ms > 0;
	if (explicit)
		th_blocking_begin();
	sleep_ms(explicit ? ms : -ms);
	blocker_woke_ns = th_now_ns();
	if (explicit)
		th_blocking_end();
	atomic_store(&blocker_done, 1);
	return NULL;
}

static void *tiny(void *arg)
{
	return arg;
}

static void long_block_does_not_stall(int mode)
{
	start(1, "steal", mode);
	th_task *b = th_spawn(long_blocker, (void *)(intptr_t)(mode == TH_ACT_BPF ? -1500 : 1500));
	sleep_ms(50); /* the blocker is in its sleep */
	enum { N = 50 };
	th_task *t[N];
	for (int i = 0; i < N; i++)
		t[i] = th_spawn(tiny, NULL);
	uint64_t last_done = 0;
	for (int i = 0; i < N; i++) {
		th_wait(t[i]);
		struct th_task_stats st;
		th_task_stats(t[i], &st);
		last_done = st.done_ns > last_done ? st.done_ns : last_done;
		th_task_free(t[i]);
	}
	assert_false(atomic_load(&blocker_done));
	th_wait(b);
	th_task_free(b);
	th_runtime_stop();
	assert_true(last_done < blocker_woke_ns);
	atomic_store(&blocker_done, 0);
}

static void a_task_blocked_for_seconds_does_not_stall_the_others(void **state)
{
	(void)state;
	long_block_does_not_stall(TH_ACT_EXPLICIT);
}

static void bpf_a_task_blocked_for_seconds_does_not_stall_the_others(void **state)
{
	(void)state;
	NEED_BPF();
	long_block_does_not_stall(TH_ACT_BPF);
}

static void stop_while_blocked(int mode)
{
	int before = count_threads();
	start(2, "shared", mode);
	th_task *b = th_spawn(long_blocker, (void *)(intptr_t)(mode == TH_ACT_BPF ? -300 : 300));
	th_task_free(b);
	sleep_ms(20);
	th_runtime_stop();
	assert_true(atomic_load(&blocker_done));
	assert_int_equal(count_threads(), before);
	atomic_store(&blocker_done, 0);
}

static void stop_while_a_worker_is_blocked_returns_after_it_with_no_thread_left(void **state)
{
	(void)state;
	stop_while_blocked(TH_ACT_EXPLICIT);
}

static void bpf_stop_while_a_worker_is_blocked_in_the_kernel_leaves_no_thread(void **state)
{
	(void)state;
	NEED_BPF();
	stop_while_blocked(TH_ACT_BPF);
}

static void activations_mode_names_parse_back(void **state)
{
	(void)state;
	for (int m = TH_ACT_OFF; m <= TH_ACT_AUTO; m++) {
		int back = -1;
		assert_int_equal(th_parse_activations(th_activations_name(m), &back), 0);
		assert_int_equal(back, m);
	}
	int x;
	assert_int_equal(th_parse_activations("on", &x), -1);
}

int main(int argc, char **argv)
{
	if (!realpath("/proc/self/exe", self_exe))
		return 1;
	if (argc == 2 && !strcmp(argv[1], "--bpf-progress")) {
		printf("%ld\n", progress_while_blocked(TH_ACT_BPF, false));
		return 0;
	}
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(activations_mode_names_parse_back),
		cmocka_unit_test(act_gate_fast_path_survives_aborts_and_leaves_the_word_untouched),
		cmocka_unit_test(without_activations_the_queue_waits_for_the_blocker),
		cmocka_unit_test(explicit_blocking_lets_a_spare_run_the_queue),
		cmocka_unit_test(explicit_works_without_privileges),
		cmocka_unit_test(a_task_blocked_for_seconds_does_not_stall_the_others),
		cmocka_unit_test(stop_while_a_worker_is_blocked_returns_after_it_with_no_thread_left),
		cmocka_unit_test(every_policy_runs_each_task_once_with_explicit_blocking),
		cmocka_unit_test(a_thread_back_from_a_block_is_a_spare_before_its_task_runs_again),
		cmocka_unit_test(bpf_sees_the_block_and_a_spare_runs_the_queue),
		cmocka_unit_test(bpf_activations_work_inside_a_pid_namespace),
		cmocka_unit_test(every_policy_runs_each_task_once_with_bpf_activations),
		cmocka_unit_test(bpf_a_thread_back_from_a_block_is_a_spare_before_its_task_runs_again),
		cmocka_unit_test(bpf_a_task_blocked_for_seconds_does_not_stall_the_others),
		cmocka_unit_test(bpf_stop_while_a_worker_is_blocked_in_the_kernel_leaves_no_thread),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
