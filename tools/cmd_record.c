/* cmd_record.c — `taskhop record`: follow a command or running processes linked with
 * libtaskhop through the BPF recorder, then print and write them as `taskhop run` does. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "cmd.h"
#include "rec_json.h"
#include "report/hist.h"
#include "record.h"
#include "report/report.h"

static volatile int stop_requested;

static void on_signal(int sig)
{
	(void)sig;
	stop_requested = 1;
}

static void usage(FILE *f)
{
	fputs("usage: taskhop record [-o FILE.json] [-q] [--hist] [--usdt] -- CMD [ARGS...]\n"
	      "       taskhop record [-o FILE.json] [-q] [--hist] [--usdt] -p PID [-p PID ...]\n"
	      "Records, for a program linked with libtaskhop, what the kernel did to the threads\n"
	      "running each user task, and prints it with the columns of 'taskhop run': CPU\n"
	      "migrations (migr-k: kernel migrations of a worker, each charged to the task running\n"
	      "then, or to the next one to run on it), CPUs visited, on-CPU time, run-queue wait,\n"
	      "preemptions, time blocked in the kernel; per worker the same. Uses BPF scheduler\n"
	      "tracepoints and the runtime's run logs: a running process (-p) hands them over\n"
	      "through shared memory, which costs it a few stores per task switch; a command\n"
	      "is followed through the runtime's USDT probes (a trap per event). Needs root.\n"
	      "The header line and tables go to stdout, or to stderr when recording a command\n"
	      "(its stdout is yours). Exits with the command's exit status (128+N if signal N\n"
	      "killed it). Ctrl-C stops recording, writes what was recorded and exits 0.\n"
	      "  -o FILE.json   also write the recording as a run JSON (as 'taskhop run --json';\n"
	      "                 'taskhop report FILE.json' renders it)\n"
	      "  -p PID         follow a running process (repeatable, up to 8)\n"
	      "  -q             no header line and no tables\n"
	      "  --usdt         follow -p processes through the USDT probes too (slower: ~1.4 us\n"
	      "                 per event; the cross-check of the run logs)\n"
	      "  --hist         also the run-queue wait and on-CPU time per run of a task, as\n"
	      "                 log2 histograms (as bcc's runqlat), after the tables\n"
	      "example:\n"
	      "  taskhop record -o rec.json -- taskhop run darts --policy shared --small 1e6 --large 1e8 --quiet --no-bpf\n", f);
}

/* ---- options --------------------------------------------------------------- */

struct record_opts {
	const char *out;
	pid_t pids[TH_REC_MAX_TARGETS];
	int npids;
	bool quiet;
	bool hist;
	bool usdt;
	char **cmd;
};

static long pid_max(void)
{
	long v = 0;
	FILE *f = fopen("/proc/sys/kernel/pid_max", "r");
	if (f) {
		if (fscanf(f, "%ld", &v) != 1)
			v = 0;
		fclose(f);
	}
	return v > 0 ? v : 4194304; /* the kernel's PID_MAX_LIMIT on 64-bit */
}

static int parse_pid(const char *text, struct record_opts *o)
{
	uint64_t v;
	if (cli_parse_u64(text, 0, &v))
		return cli_usage("record", "-p needs a process id, not '%s'", text);
	long max = pid_max();
	if (v < 1 || v > (uint64_t)max)
		return cli_usage("record", "-p %s is out of range (1..%ld)", text, max);
	if (o->npids == TH_REC_MAX_TARGETS)
		return cli_usage("record", "at most %d -p", TH_REC_MAX_TARGETS);
	o->pids[o->npids++] = (pid_t)v;
	return 0;
}

/* Fails before the recording, not after it, when -o cannot be written: creates (and
 * removes) a file beside it, as the final write will. */
static int check_output(const char *path)
{
	char probe[4200];
	struct stat st;
	if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
		return cli_usage("record", "-o %s is a directory: give a file name", path);
	snprintf(probe, sizeof(probe), "%s.probe.%d", path, (int)getpid());
	int fd = open(probe, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0)
		return cli_usage("record", "cannot write -o %s: %s", path, strerror(errno));
	close(fd);
	unlink(probe);
	return 0;
}

/* 0, 2 after a one-line usage error, or 3 after --help. */
static int parse_record(int argc, char **argv, struct record_opts *o)
{
	static const struct option longopts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "pid", required_argument, NULL, 'p' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "hist", no_argument, NULL, 'H' },
		{ "usdt", no_argument, NULL, 'U' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c, rc;
	memset(o, 0, sizeof(*o));
	optind = 1;
	opterr = 0; /* our own one-line messages, not getopt's plus the usage text */
	while ((c = getopt_long(argc, argv, "+:o:p:qh", longopts, NULL)) != -1) {
		switch (c) {
		case 'o':
			o->out = optarg;
			break;
		case 'p':
			if ((rc = parse_pid(optarg, o)))
				return rc;
			break;
		case 'q':
			o->quiet = true;
			break;
		case 'H':
			o->hist = true;
			break;
		case 'U':
			o->usdt = true;
			break;
		case 'h':
			usage(stdout);
			return 3;
		case ':':
			return cli_usage("record", "%s needs a value", argv[optind - 1]);
		default:
			return cli_usage("record", "unknown option '%s'", argv[optind - 1]);
		}
	}
	o->cmd = argv + optind;
	if ((o->npids == 0) == (optind >= argc))
		return cli_usage("record", "give either -p PID or -- CMD ARGS");
	return o->out ? check_output(o->out) : 0;
}

/* ---- what the recorder says, for this command ---------------------------------- */

/* The recorder's messages name the fixes of `taskhop run` (--no-bpf); record has no
 * way to go on without BPF, so that part of the hint is dropped. */
static void fail_line(const char *msg)
{
	static const char *const tails[] = { ", or use --no-bpf", "; use --no-bpf", ": use --no-bpf" };
	size_t n = strlen(msg);
	for (int i = 0; i < 3; i++) {
		size_t t = strlen(tails[i]);
		if (n >= t && strcmp(msg + n - t, tails[i]) == 0)
			n -= t;
	}
	cli_fail("record", "%.*s", (int)n, msg);
}

/* ---- output -------------------------------------------------------------------- */

/* A followed process's command line from /proc, shell-quoted; "" when it is gone. */
static void proc_cmdline(pid_t pid, char *out, size_t len)
{
	char path[64], buf[4096];
	snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)pid);
	out[0] = 0;
	FILE *f = fopen(path, "r");
	if (!f)
		return;
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	char *args[256];
	int argc = 0;
	for (size_t i = 0; i < n && argc < 256; i += strlen(buf + i) + 1)
		args[argc++] = buf + i;
	struct json *q = report_command(argc, args);
	snprintf(out, len, "%s", json_str_of(q) ? json_str_of(q) : "");
	json_free(q);
}

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');
	return s ? s + 1 : path;
}

struct followed {
	int pid;
	const char *source;  /* th_record_source */
	char command[4096];
	char name[256];
};

/* The run JSON of each followed process: one run, or a report of several. */
static struct json *recording_json(struct th_record *r, const struct followed *fw, int n,
				   const char *attached_at)
{
	if (n == 1) {
		struct rec_target_info ti = { fw[0].pid, fw[0].command, fw[0].name, attached_at };
		return rec_json_run(r, &ti);
	}
	struct json *report = json_obj(), *runs = json_arr();
	json_set_num(report, "taskhop_report", 1);
	report_stamp(report, REPORT_SCHEMA_REPORT);
	json_set_str(report, "workload", fw[0].name);
	json_set(report, "machine", report_machine());
	for (int i = 0; i < n; i++) {
		struct rec_target_info ti = { fw[i].pid, fw[i].command, fw[i].name, attached_at };
		json_push(runs, rec_json_run(r, &ti));
	}
	json_set(report, "runs", runs);
	report_aggregate(report);
	return report;
}

static void print_recording(const struct json *j, const struct followed *fw, int n,
			    const char *attached_at, bool hist, FILE *f)
{
	const struct json *runs = json_get(j, "runs");
	for (int i = 0; i < n; i++) {
		const struct json *run = runs ? json_at(runs, (size_t)i) : j;
		fprintf(f, "taskhop record: pid %d (%s) attached at %s, recorded for %.3f s, runs from %s\n",
			fw[i].pid, fw[i].command[0] ? fw[i].command : "?", attached_at,
			json_get_num(run, "wall_s", 0), fw[i].source);
		report_run_text(run, f);
		if (hist)
			hist_text(run, f);
	}
}

static void now_iso(char *buf, size_t len)
{
	struct timespec ts;
	struct tm tm;
	clock_gettime(CLOCK_REALTIME, &ts);
	localtime_r(&ts.tv_sec, &tm);
	size_t o = strftime(buf, len, "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(buf + o, len - o, ".%03ld", ts.tv_nsec / 1000000);
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

/* The exit status of record: the command's (128+N for signal N), 0 for -p or Ctrl-C. */
static int child_status(int status)
{
	if (status < 0)
		return 0; /* -2: interrupted by Ctrl-C */
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* Attaches to every target; fills fw[] (pid, command, name). */
static int attach_all(struct th_record *r, const struct record_opts *o, struct followed *fw,
		      pid_t *child)
{
	for (int i = 0; i < o->npids; i++) {
		if (th_record_attach_pid(r, o->pids[i]) != 0)
			return -1;
		fw[i].pid = o->pids[i];
		proc_cmdline(o->pids[i], fw[i].command, sizeof(fw[i].command));
		char exe[4096], link[64];
		snprintf(link, sizeof(link), "/proc/%d/exe", (int)o->pids[i]);
		ssize_t n = readlink(link, exe, sizeof(exe) - 1);
		exe[n > 0 ? n : 0] = 0;
		snprintf(fw[i].name, sizeof(fw[i].name), "%.255s", n > 0 ? base_name(exe) : "?");
	}
	if (o->npids)
		return o->npids;
	if (th_record_attach_command(r, o->cmd, child) != 0)
		return -1;
	int argc = 0;
	while (o->cmd[argc])
		argc++;
	struct json *q = report_command(argc, o->cmd);
	fw[0].pid = *child;
	snprintf(fw[0].command, sizeof(fw[0].command), "%s", json_str_of(q) ? json_str_of(q) : "");
	snprintf(fw[0].name, sizeof(fw[0].name), "%.255s", base_name(o->cmd[0]));
	json_free(q);
	return 1;
}

int cmd_record(int argc, char **argv)
{
	struct record_opts o;
	int rc = parse_record(argc, argv, &o);
	if (rc)
		return rc == 3 ? 0 : rc;
	const char *why = th_record_unavailable();
	if (why) {
		fail_line(why);
		return 1;
	}

	struct th_record_opts ro;
	th_record_opts_default(&ro);
	ro.usdt = o.usdt;
	struct th_record *r = th_record_open(&ro);
	struct followed fw[TH_REC_MAX_TARGETS];
	memset(fw, 0, sizeof(fw));
	pid_t child = -1;
	int nfw = r ? attach_all(r, &o, fw, &child) : -1;
	rc = 1;
	if (nfw < 0)
		goto fail;
	for (int i = 0; i < nfw; i++)
		fw[i].source = th_record_source(r, fw[i].pid);

	/* Ctrl-C (to us and, from a terminal, to the command too): stop, drain, write, exit 0 */
	struct sigaction sa = { .sa_handler = on_signal };
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);

	char attached_at[64];
	if (th_record_start(r) != 0)
		goto fail;
	now_iso(attached_at, sizeof(attached_at));
	int status = -2;
	if (child > 0) {
		status = th_record_wait_child(r, &stop_requested);
		if (status == -1)
			goto fail;
	} else {
		follow_pids(r, o.pids, o.npids);
	}
	th_record_stop(r);
	if (child > 0 && status == -2) { /* interrupted: let the command stop as well */
		kill(child, SIGINT);
		waitpid(child, NULL, 0);
	}
	struct json *j = recording_json(r, fw, nfw, attached_at);
	char err[512];
	if (!j) {
		rc = cli_fail("record", "out of memory");
		goto out;
	}
	/* a command writes to our stdout: keep it clean, the tables go to stderr */
	if (!o.quiet)
		print_recording(j, fw, nfw, attached_at, o.hist, child > 0 ? stderr : stdout);
	if (o.out && json_write_file(o.out, j, 1, err, sizeof(err)))
		rc = cli_fail("record", "%s", err);
	else
		rc = child > 0 ? child_status(status) : 0;
	json_free(j);
	goto out;
fail:
	fail_line(th_record_error());
out:
	th_record_close(r);
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	return rc;
}
