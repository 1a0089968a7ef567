/* cmd_record.c — `taskhop record`: follow a command or running processes linked with
 * libtaskhop through the BPF recorder, then print per-task/per-worker figures (and JSON). */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cmd.h"
#include "record.h"

static volatile int stop_requested;

static void on_signal(int sig)
{
	(void)sig;
	stop_requested = 1;
}

static void usage(FILE *f)
{
	fputs("usage: taskhop record [-o FILE.json] [-q] -- CMD [ARGS...]\n"
	      "       taskhop record [-o FILE.json] [-q] -p PID [-p PID ...]\n"
	      "Records, for a program linked with libtaskhop, what the kernel did to the threads\n"
	      "running each user task: CPU migrations (total, and those the kernel caused by moving\n"
	      "the worker), CPUs visited, on-CPU time, run-queue wait, preemptions; per worker the\n"
	      "same. Uses the runtime's USDT probes and BPF scheduler tracepoints; needs root.\n"
	      "Ctrl-C stops recording, writes what was recorded and exits 0.\n"
	      "  -o FILE.json   also write the recording (tasks, workers, runs, migrations) as JSON\n"
	      "  -p PID         follow a running process (repeatable, up to 8)\n"
	      "  -q             no tables on stdout\n"
	      "example:\n"
	      "  taskhop record -o rec.json -- taskhop run darts --policy shared --small 1e6 --large 1e8 --quiet --no-bpf\n", f);
}

static void print_tables(struct th_record *r, FILE *f)
{
	size_t nt, nw;
	const struct th_rec_task *t = th_record_tasks(r, &nt);
	const struct th_rec_worker *w = th_record_workers(r, &nw);
	char cpus[256];

	fprintf(f, "%7s %6s %6s %6s %6s %6s %-12s %12s %13s %8s\n", "pid", "task", "runs", "hops",
		"migr", "migr_k", "cpus", "run-time(ms)", "sch-delay(ms)", "preempt");
	for (size_t i = 0; i < nt; i++)
		fprintf(f, "%7d %6" PRIu64 " %6" PRIu64 " %6" PRIu64 " %6" PRIu64 " %6" PRIu64
			   " %-12s %12.3f %13.3f %8" PRIu64 "\n",
			t[i].pid, t[i].task_id, t[i].runs, t[i].worker_hops, t[i].cpu_migrations,
			t[i].cpu_migrations_kernel, th_rec_cpu_list(&t[i], cpus, sizeof(cpus)),
			t[i].on_cpu_ns / 1e6, t[i].runq_wait_ns / 1e6, t[i].preemptions);
	fprintf(f, "\n%7s %6s %7s %6s %8s %12s %12s %13s %8s\n", "pid", "worker", "tid", "migr",
		"preempt", "run-time(ms)", "off-cpu(ms)", "sch-delay(ms)", "switches");
	for (size_t i = 0; i < nw; i++)
		fprintf(f, "%7d %6d %7d %6" PRIu64 " %8" PRIu64 " %12.3f %12.3f %13.3f %8" PRIu64 "\n",
			w[i].pid, w[i].worker, w[i].tid, w[i].cpu_migrations, w[i].preemptions,
			w[i].on_cpu_ns / 1e6, w[i].off_cpu_ns / 1e6, w[i].runq_wait_ns / 1e6,
			w[i].switches);
	fprintf(f, "\nlost_events %" PRIu64 "\n", th_record_lost_events(r));
}

static int write_json(struct th_record *r, const char *path)
{
	char tmp[4096];
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	FILE *f = fopen(tmp, "w");
	if (!f) {
		fprintf(stderr, "taskhop record: cannot write %s: %s\n", tmp, strerror(errno));
		return -1;
	}
	int rc = th_record_write_json(r, f);
	if (fclose(f) != 0 || rc != 0 || rename(tmp, path) != 0) {
		fprintf(stderr, "taskhop record: writing %s failed: %s\n", path, strerror(errno));
		unlink(tmp);
		return -1;
	}
	return 0;
}

/* -p: until every followed process is gone, or Ctrl-C. */
static void follow_pids(struct th_record *r, const pid_t *pids, int n)
{
	while (!stop_requested) {
		int alive = 0;
		for (int i = 0; i < n; i++)
			alive += kill(pids[i], 0) == 0 || errno != ESRCH;
		if (!alive)
			return;
		th_record_poll(r, 100);
	}
}

int cmd_record(int argc, char **argv)
{
	const char *out = NULL;
	pid_t pids[TH_REC_MAX_TARGETS];
	int npids = 0, quiet = 0, c;
	static const struct option longopts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "pid", required_argument, NULL, 'p' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};

	optind = 1;
	while ((c = getopt_long(argc, argv, "+o:p:qh", longopts, NULL)) != -1) {
		switch (c) {
		case 'o':
			out = optarg;
			break;
		case 'p': {
			char *end;
			long v = strtol(optarg, &end, 10);
			if (*end || v <= 0) {
				fprintf(stderr, "taskhop record: bad pid '%s'\n", optarg);
				return 2;
			}
			if (npids == TH_REC_MAX_TARGETS) {
				fprintf(stderr, "taskhop record: at most %d -p\n", TH_REC_MAX_TARGETS);
				return 2;
			}
			pids[npids++] = (pid_t)v;
			break;
		}
		case 'q':
			quiet = 1;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	char **cmd = argv + optind;
	if ((npids == 0) == (optind >= argc)) {
		fprintf(stderr, "taskhop record: give either -p PID or -- CMD ARGS (see --help)\n");
		return 2;
	}
	const char *why = th_record_unavailable();
	if (why) {
		fprintf(stderr, "taskhop record: %s\n", why);
		return 1;
	}

	struct th_record_opts o;
	th_record_opts_default(&o);
	o.usdt = true;
	struct th_record *r = th_record_open(&o);
	pid_t child = -1;
	int rc = 1;
	if (!r)
		goto fail;
	for (int i = 0; i < npids; i++)
		if (th_record_attach_pid(r, pids[i]) != 0)
			goto fail;
	if (npids == 0 && th_record_attach_command(r, cmd, &child) != 0)
		goto fail;

	/* Ctrl-C (to us and, from a terminal, to the command too): stop, drain, write, exit 0 */
	struct sigaction sa = { .sa_handler = on_signal };
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);

	if (th_record_start(r) != 0)
		goto fail;
	int status = 0;
	if (child > 0) {
		status = th_record_wait_child(r, &stop_requested);
		if (status == -1)
			goto fail;
	} else {
		follow_pids(r, pids, npids);
	}
	th_record_stop(r);
	if (child > 0 && status == -2) { /* interrupted: let the command stop as well */
		kill(child, SIGINT);
		waitpid(child, NULL, 0);
	}
	if (!quiet)
		print_tables(r, stdout);
	if (out && write_json(r, out) != 0)
		goto out;
	rc = 0;
	if (child > 0 && status >= 0 && !(WIFEXITED(status) && WEXITSTATUS(status) == 0)) {
		fprintf(stderr, "taskhop record: the command %s %d\n",
			WIFEXITED(status) ? "exited with status" : "was killed by signal",
			WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
		rc = 1;
	}
	goto out;
fail:
	fprintf(stderr, "taskhop record: %s\n", th_record_error());
out:
	th_record_close(r);
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	return rc;
}
