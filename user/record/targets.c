/* targets.c — what a recording follows: this process, a running pid, or a command forked
 * and held before exec until the recorder is attached (then released, or ended). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "record_int.h"
#include "taskhop.h"

static struct rec_target *new_target(struct th_record *r)
{
	if (r->started) {
		rec_set_error("add targets before th_record_start");
		return NULL;
	}
	if (r->ntg >= TH_REC_MAX_TARGETS) {
		rec_set_error("a recording follows at most %d processes", TH_REC_MAX_TARGETS);
		return NULL;
	}
	struct rec_target *t = &r->tg[r->ntg];
	memset(t, 0, sizeof(*t));
	t->hold_fd = -1;
	return t;
}

int th_record_attach_self(struct th_record *r)
{
	struct rec_target *t = new_target(r);
	if (!t)
		return -1;
	for (int i = 0; i < r->ntg; i++)
		if (r->tg[i].self) {
			rec_set_error("this process is already a target");
			return -1;
		}
	if (th_nworkers() <= 0) {
		rec_set_error("th_record_attach_self: start the runtime first (th_runtime_start)");
		return -1;
	}
	t->self = 1;
	t->pid = getpid();
	ssize_t n = readlink("/proc/self/exe", t->exe, sizeof(t->exe) - 1);
	t->exe[n > 0 ? n : 0] = 0;
	r->ntg++;
	return 0;
}

int th_record_attach_pid(struct th_record *r, pid_t pid)
{
	struct rec_target *t = new_target(r);
	char link[64];

	if (!t)
		return -1;
	if (pid <= 0 || (kill(pid, 0) != 0 && errno == ESRCH)) {
		rec_set_error("no process with pid %d", (int)pid);
		return -1;
	}
	snprintf(link, sizeof(link), "/proc/%d/exe", (int)pid);
	ssize_t n = readlink(link, t->exe, sizeof(t->exe) - 1);
	if (n <= 0) {
		rec_set_error("cannot inspect process %d (%s: %s)", (int)pid, link, strerror(errno));
		return -1;
	}
	t->exe[n] = 0;
	/* the mapped binary, even if its path was replaced since */
	if (rec_has_taskhop_usdt(link) != 1) {
		rec_set_error("process %d (%s) has no taskhop USDT probes: it is not linked with libtaskhop",
			      (int)pid, t->exe);
		return -1;
	}
	t->pid = pid;
	/* Its run logs, read from shared memory; the USDT probes when it has no area
	 * (an older libtaskhop, its runtime not running) or drains it itself, and
	 * with --usdt as well, as a cross-check of the logs. */
	int area = th_area_open(pid, &t->area);
	if (area < 0) {
		rec_set_error("%s", th_last_error());
		return -1;
	}
	if (area == 0 && th_area_busy(t->area)) {
		th_area_close(t->area);
		t->area = NULL;
		area = 1;
	}
	if (area == 1 || r->o.usdt)
		r->use_usdt = 1;
	r->ntg++;
	return 0;
}

const char *th_record_source(struct th_record *r, pid_t pid)
{
	for (int i = 0; i < r->ntg; i++)
		if (r->tg[i].pid == pid)
			return r->tg[i].self ? "its run logs, in process"
			       : r->tg[i].area ? "its run-log area (shared memory)"
					       : "USDT probes";
	return NULL;
}

/* PATH lookup as execvp does, so the USDT notes are read from the file that runs. */
static int resolve_command(const char *cmd, char *out, size_t len)
{
	if (strchr(cmd, '/')) {
		if (!realpath(cmd, out))
			return -1;
		return access(out, X_OK);
	}
	const char *path = getenv("PATH");
	char buf[4096];
	snprintf(buf, sizeof(buf), "%s", path ? path : "/usr/local/bin:/usr/bin:/bin");
	for (char *save, *dir = strtok_r(buf, ":", &save); dir; dir = strtok_r(NULL, ":", &save)) {
		char cand[4096 + 256];
		snprintf(cand, sizeof(cand), "%s/%s", *dir ? dir : ".", cmd);
		if (access(cand, X_OK) == 0 && realpath(cand, out))
			return 0;
	}
	(void)len;
	errno = ENOENT;
	return -1;
}

int th_record_attach_command(struct th_record *r, char *const argv[], pid_t *child)
{
	struct rec_target *t = new_target(r);
	int p[2];

	if (!t)
		return -1;
	if (!argv || !argv[0]) {
		rec_set_error("no command given");
		return -1;
	}
	if (resolve_command(argv[0], t->exe, sizeof(t->exe)) != 0) {
		rec_set_error("cannot run '%s': %s", argv[0], strerror(errno));
		return -1;
	}
	int has = rec_has_taskhop_usdt(t->exe);
	if (has != 1) {
		rec_set_error("%s has no taskhop USDT probes: it is not linked with libtaskhop", t->exe);
		return -1;
	}
	if (pipe2(p, O_CLOEXEC) != 0) {
		rec_set_error("pipe: %s", strerror(errno));
		return -1;
	}
	pid_t pid = fork();
	if (pid < 0) {
		rec_set_error("fork: %s", strerror(errno));
		close(p[0]);
		close(p[1]);
		return -1;
	}
	if (pid == 0) {
		char c;
		close(p[1]);
		/* held until the recorder is attached; EOF without a byte = give up */
		if (read(p[0], &c, 1) != 1)
			_exit(127);
		execv(t->exe, argv);
		fprintf(stderr, "taskhop record: cannot run %s: %s\n", t->exe, strerror(errno));
		_exit(127);
	}
	close(p[0]);
	t->pid = pid;
	t->command = 1;
	t->hold_fd = p[1];
	r->use_usdt = 1;
	r->ntg++;
	if (child)
		*child = pid;
	return 0;
}

void rec_release_commands(struct th_record *r)
{
	for (int i = 0; i < r->ntg; i++)
		if (r->tg[i].hold_fd >= 0) {
			(void)!write(r->tg[i].hold_fd, "g", 1);
			close(r->tg[i].hold_fd);
			r->tg[i].hold_fd = -1;
		}
}

/* Never started: the held child exits on EOF without a byte. */
void rec_abandon_commands(struct th_record *r)
{
	for (int i = 0; i < r->ntg; i++)
		if (r->tg[i].hold_fd >= 0) {
			close(r->tg[i].hold_fd);
			r->tg[i].hold_fd = -1;
			waitpid(r->tg[i].pid, NULL, 0);
		}
}

int th_record_wait_child(struct th_record *r, volatile int *stop)
{
	struct rec_target *t = NULL;
	for (int i = 0; i < r->ntg; i++)
		if (r->tg[i].command && !r->tg[i].exited)
			t = &r->tg[i];
	if (!t) {
		rec_set_error("no command to wait for");
		return -1;
	}
	for (;;) {
		int st;
		pid_t p = waitpid(t->pid, &st, WNOHANG);
		if (p == t->pid) {
			t->exited = 1;
			t->status = st;
			return st;
		}
		if (p < 0 && errno != EINTR) {
			rec_set_error("waitpid %d: %s", (int)t->pid, strerror(errno));
			return -1;
		}
		if (stop && *stop)
			return -2;
		th_record_poll(r, 50);
	}
}
