/* rec_attach.c — `make bench`: what recording costs when the recorder is another
 * process (`taskhop record -p`): it drains the target's run-log area from shared
 * memory, with no uprobe. Prints the yield micro-benchmark in the target with no
 * recorder, attached through the area, and in process (th_record_attach_self) for
 * comparison; a recording of fib(30) under steal (every run kept? peak RSS of
 * both processes); and how many runs per second a drain moves, and a read of the
 * log then unpacks. */
#define _GNU_SOURCE
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "record.h"
#include "taskhop.h"
#include "tscclock.h"

/* 5e5 yields each: 1e6 runs, one lap of a 2-worker process's ring. 5 repeats of 2e6
 * took two minutes of make bench's five (each recording's join at stop); 3 of 2e6
 * 43 s on the slower guest of 2026-12-07, where make bench took 291-344 s */
#define YIELDS 500000
#define REPEAT 3

static void *yielder(void *arg)
{
	(void)arg;
	for (int i = 0; i < YIELDS; i++)
		th_yield();
	return NULL;
}

/* ns per yield: two sticky tasks on worker 0 of 2 taking turns (rec_slowdown's loop). */
static double yield_loop(void)
{
	uint64_t t0 = th_now_ns();
	th_task *a = th_spawn_on(0, yielder, NULL), *b = th_spawn_on(0, yielder, NULL);
	th_wait(a);
	th_wait(b);
	double ns = (double)(th_now_ns() - t0) / (2.0 * YIELDS);
	th_task_free(a);
	th_task_free(b);
	return ns;
}

/* The loop twice, in one runtime (and one recording): the first pays for the
 * ring's first lap after recording started, the second is what a recorded
 * switch costs from then on (see target). Returns the second. */
static double first_loop_ns;

static double yield_loop_twice(void)
{
	first_loop_ns = yield_loop();
	return yield_loop();
}

static void *fib(void *arg)
{
	intptr_t n = (intptr_t)arg;
	if (n < 2)
		return (void *)n;
	th_task *a = th_spawn(fib, (void *)(n - 1));
	intptr_t b = (intptr_t)fib((void *)(n - 2));
	intptr_t r = (intptr_t)th_fetch(a) + b;
	th_task_free(a);
	return (void *)r;
}

static double fib30_ms(void)
{
	uint64_t t0 = th_now_ns();
	th_task *t = th_spawn(fib, (void *)(intptr_t)30);
	if ((intptr_t)th_fetch(t) != 832040)
		exit(1);
	th_task_free(t);
	return (double)(th_now_ns() - t0) / 1e6;
}

static void start(const char *policy, size_t run_log_cap)
{
	struct th_config cfg;
	th_config_default(&cfg);
	cfg.policy = policy;
	cfg.workers = 2;
	cfg.run_log_cap = run_log_cap;
	if (th_runtime_start(&cfg) != 0) {
		fprintf(stderr, "rec_attach: %s\n", th_last_error());
		exit(1);
	}
}

static long peak_rss_kb(pid_t pid)
{
	char path[64], line[256];
	long kb = -1;
	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	FILE *f = fopen(path, "r");
	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "VmHWM: %ld kB", &kb) == 1)
			break;
	if (f)
		fclose(f);
	return kb;
}

/* The target: starts its runtime (no run log of its own), says so on `ready`,
 * waits for a byte on `go`, runs the job and writes its figures to `ready`.
 * The yield job runs its loop twice and reports both: the first is the ring's
 * first lap after the recorder attached (1e6 runs, the ring's size), and it is
 * slower (17-42 ns a yield where the second read 13-21 here): it maps the
 * ring's pages into this process (th__runlog_map_ring, 12-15 ms for 32 MiB)
 * and stores to each page for the first time. In process the first loop is
 * slower too (median 21 vs 17.4 ns in 6 pairs), less so: the runtime maps and
 * touches its rings when it starts. So both lines take the second loop. */
static int target(const char *job, int ready, int go)
{
	start(strcmp(job, "fib") == 0 ? "steal" : "sticky", 0);
	char c = 'r';
	if (write(ready, &c, 1) != 1 || read(go, &c, 1) != 1)
		return 1;
	double v, first = 0;
	if (strcmp(job, "fib") == 0) {
		v = fib30_ms();
	} else {
		v = yield_loop_twice();
		first = first_loop_ns;
	}
	th_runtime_stop();
	/* its own high-water mark: once it exits, /proc has nothing left to read */
	double out[3] = { v, (double)peak_rss_kb(getpid()), first };
	return write(ready, out, sizeof(out)) == sizeof(out) ? 0 : 1;
}

struct attached {
	double figure;         /* the target's: ns per yield, or fib ms */
	double first_lap;      /* yield: ns per yield of the loop before */
	uint64_t dropped, runs;
	long target_rss_kb;
};

/* Runs `job` in a child, recorded from here through its area when rec is set. */
static struct attached run_target(const char *self, const char *job, int rec)
{
	struct attached out = { 0 };
	int up[2], down[2];
	if (pipe(up) != 0 || pipe(down) != 0)
		exit(1);
	fflush(NULL);
	pid_t pid = fork();
	if (pid == 0) {
		char a[16], b[16];
		snprintf(a, sizeof(a), "%d", up[1]);
		snprintf(b, sizeof(b), "%d", down[0]);
		execl(self, self, "--target", job, a, b, (char *)NULL);
		_exit(127);
	}
	char c;
	if (read(up[0], &c, 1) != 1)
		exit(1);
	struct th_record *r = NULL;
	if (rec) {
		r = th_record_open(NULL);
		if (!r || th_record_attach_pid(r, pid) != 0 || th_record_start(r) != 0) {
			fprintf(stderr, "rec_attach: %s\n", th_record_error());
			exit(1);
		}
	}
	double got[3];
	if (write(down[1], "g", 1) != 1 || read(up[0], got, sizeof(got)) != sizeof(got))
		exit(1);
	out.figure = got[0];
	out.target_rss_kb = (long)got[1];
	out.first_lap = got[2];
	if (r) {
		th_record_stop(r);
		out.dropped = th_record_dropped_runs(r);
		size_t n;
		th_record_runs(r, &n);
		out.runs = n;
		th_record_close(r);
	}
	waitpid(pid, NULL, 0);
	close(up[0]);
	close(up[1]);
	close(down[0]);
	close(down[1]);
	return out;
}

static void *nothing(void *arg)
{
	return arg;
}

#define SPAWNS 200000

/* ns per spawn + fetch of an empty task, from a task on a worker (steal, 2 workers). */
static void *spawn_loop(void *arg)
{
	double *ns = arg;
	uint64_t t0 = th_now_ns();
	for (int i = 0; i < SPAWNS; i++) {
		th_task *t = th_spawn(nothing, NULL);
		th_fetch(t);
		th_task_free(t);
	}
	*ns = (double)(th_now_ns() - t0) / SPAWNS;
	return NULL;
}

static double spawn_fetch(void)
{
	double ns = 0;
	th_task *t = th_spawn(spawn_loop, &ns);
	th_wait(t);
	th_task_free(t);
	return ns;
}

/* A job recorded in process, for the in-process lines beside the attached ones. */
static double job_self(const char *policy, double (*job)(void), int rec)
{
	start(policy, rec ? TH_RUN_LOG_AUTO : 0); /* as taskhop run does */
	struct th_record *r = NULL;
	if (rec && (!(r = th_record_open(NULL)) || th_record_attach_self(r) != 0 || th_record_start(r) != 0)) {
		fprintf(stderr, "rec_attach: %s\n", th_record_error());
		exit(1);
	}
	double ns = job();
	if (r) {
		th_record_stop(r);
		th_record_close(r);
	}
	th_runtime_stop();
	return ns;
}

#define READS 10000000

/* ns per counter reading, the one a recorded switch adds (th__stamp_unordered;
 * th__stamp where the task last ran on another worker): back to back, so each
 * waits for the one before, as a switch's single reading does not. */
static double counter_read_ns(int ordered)
{
	uint64_t sum = 0, t0 = th_now_ns();
	for (int i = 0; i < READS; i++)
		sum += ordered ? th__stamp() : th__stamp_unordered();
	__asm__ volatile("" : : "r"(sum)); /* the readings are used */
	return (double)(th_now_ns() - t0) / READS;
}

static double per_s(size_t n, uint64_t ns)
{
	return n && ns ? (double)n * 1e9 / (double)ns : 0;
}

/* Runs per second a drain moves (copies, dates, packs: what the poller does while
 * the tasks run, which decides whether a ring overflows) and th_run_log then reads
 * back (unpacks, once, at the end): a ring filled while nobody drains. */
static void drain_rate(double *drained, double *read)
{
	start("sticky", (size_t)1 << 22);
	th_run_log_clear();
	yield_loop(); /* 4e6 runs into a ring of 4,194,304 */
	uint64_t t0 = th_now_ns();
	size_t n = th_run_log_drain(), kept;
	uint64_t t1 = th_now_ns();
	th_run_log(0, &kept, NULL);
	uint64_t t2 = th_now_ns();
	th_runtime_stop();
	*drained = per_s(n, t1 - t0);
	*read = per_s(kept, t2 - t1);
}

static int dcmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static double med(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), dcmp);
	return v[n / 2];
}

int main(int argc, char **argv)
{
	if (argc == 5 && strcmp(argv[1], "--target") == 0)
		return target(argv[2], atoi(argv[3]), atoi(argv[4]));
	const char *why = th_record_unavailable();
	if (why) {
		fprintf(stderr, "rec_attach: %s\n", why);
		return 1;
	}
	char self[4096];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n <= 0)
		return 1;
	self[n] = 0;
	/* First, while this process has held nothing else: its peak RSS is then the
	 * recorder's own for this recording. */
	struct attached f0 = run_target(self, "fib", 0), f1 = run_target(self, "fib", 1);
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	double off[REPEAT], att[REPEAT], att1[REPEAT], soff[REPEAT], son[REPEAT], son1[REPEAT];
	double sp0[REPEAT], sp1[REPEAT];
	uint64_t att_dropped = 0;
	for (int i = 0; i < REPEAT; i++) { /* interleaved: drift hits every mode alike */
		off[i] = run_target(self, "yield", 0).figure;
		struct attached a = run_target(self, "yield", 1);
		att[i] = a.figure;
		att1[i] = a.first_lap;
		att_dropped += a.dropped;
		soff[i] = job_self("sticky", yield_loop_twice, 0);
		son[i] = job_self("sticky", yield_loop_twice, 1);
		son1[i] = first_loop_ns;
		sp0[i] = job_self("steal", spawn_fetch, 0);
		sp1[i] = job_self("steal", spawn_fetch, 1);
	}
	double mo = med(off, REPEAT), ma = med(att, REPEAT), mso = med(soff, REPEAT), mson = med(son, REPEAT);
	printf("# rec_attach: medians of %d; yield = 2 sticky tasks on worker 0 of 2, %d yields each, "
	       "the second of two such loops\n", REPEAT, YIELDS);
	printf("bench: rec_attached_yield_off_ns %.1f ns/yield\n", mo);
	printf("bench: rec_attached_yield_on_ns %.1f ns/yield\n", ma);
	printf("bench: rec_attached_yield_on_over_off %.2f x (goal <= 1.5)\n", ma / mo);
	printf("bench: rec_attached_yield_dropped_runs %llu runs (of %d recordings of 2 loops)\n",
	       (unsigned long long)att_dropped, REPEAT);
	printf("bench: rec_attached_yield_first_lap_ns %.1f ns/yield (the loop before, right after "
	       "attaching: the ring's first lap)\n", med(att1, REPEAT));
	printf("bench: rec_self_yield_off_ns %.1f ns/yield\n", mso);
	printf("bench: rec_self_yield_on_ns %.1f ns/yield\n", mson);
	printf("bench: rec_self_yield_on_over_off %.2f x (goal <= 1.5)\n", mson / mso);
	printf("bench: rec_self_yield_first_loop_ns %.1f ns/yield (the loop before, right after "
	       "recording started)\n", med(son1, REPEAT));
	th__tscclock_calibrate();
	double rd = counter_read_ns(0), rdo = counter_read_ns(1);
	printf("bench: rec_counter_read_ns %.1f ns (ordered: %.1f ns)\n", rd, rdo);
	printf("#   a recorded switch reads the counter once: alone that is %.2fx the unrecorded yield "
	       "here (%.1f ns)\n", (mso + rd) / mso, mso);
	double msp0 = med(sp0, REPEAT), msp1 = med(sp1, REPEAT);
	printf("bench: rec_self_spawn_fetch_off_ns %.1f ns/task\n", msp0);
	printf("bench: rec_self_spawn_fetch_on_ns %.1f ns/task\n", msp1);
	printf("bench: rec_self_spawn_fetch_on_over_off %.2f x\n", msp1 / msp0);

	double fs0 = job_self("steal", fib30_ms, 0), fs1 = job_self("steal", fib30_ms, 1);
	printf("bench: rec_self_fib30_steal_off_ms %.1f ms\n", fs0);
	printf("bench: rec_self_fib30_steal_on_ms %.1f ms\n", fs1);
	printf("bench: rec_attached_fib30_steal_off_ms %.1f ms\n", f0.figure);
	printf("bench: rec_attached_fib30_steal_on_ms %.1f ms\n", f1.figure);
	printf("bench: rec_attached_fib30_runs %llu runs\n", (unsigned long long)f1.runs);
	printf("bench: rec_attached_fib30_dropped_runs %llu runs\n", (unsigned long long)f1.dropped);
	printf("bench: rec_attached_fib30_target_peak_rss_kb %ld kB (unrecorded: %ld kB)\n", f1.target_rss_kb,
	       f0.target_rss_kb);
	printf("bench: rec_attached_recorder_peak_rss_kb %ld kB\n", ru.ru_maxrss);
	double drained, read;
	drain_rate(&drained, &read);
	printf("bench: rec_runs_per_s_drained %.3g runs/s\n", drained);
	printf("bench: rec_runs_per_s_read %.3g runs/s\n", read);
	return 0;
}
