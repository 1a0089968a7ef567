/* local.c — the default transport: worker processes forked from the driver, one
 * socketpair each, frames written whole; a hang-up (EOF) is how the driver learns a worker died. */
#include "dist_int.h"
#include "taskhop.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int fds[TH_DIST_MAX_PROCS + 1]; /* driver's end per worker, -1 when closed */
static pid_t pids[TH_DIST_MAX_PROCS + 1];
static int nprocs;
static int rr_next; /* fairness: poll() results are scanned from a rotating start */

/* ---- worker side ------------------------------------------------------------ */
static int child_fd = -1;

static int child_send(const void *buf, size_t len)
{
	int rc = th_frame_write_fd(child_fd, buf, len);
	free((void *)buf);
	return rc;
}

static int child_recv(struct th_frame *f, char *err, size_t errlen)
{
	return th_frame_read_fd(child_fd, f, err, errlen);
}

static const struct th_worker_link child_link = { child_send, child_recv, NULL };

static void child_main(int fd, pid_t driver, const struct th_procs_config *cfg)
{
	/* Only this worker's socket may stay open: a sibling's end held here would
	 * hide that sibling's death from the driver (no EOF while a copy lives). */
	for (int k = 1; k < TH_DIST_MAX_PROCS + 1; k++)
		if (fds[k] >= 0)
			close(fds[k]);
	/* A worker must not outlive its driver. */
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != driver)
		_exit(1);
	signal(SIGPIPE, SIG_IGN);
	/* Ctrl-C reaches the whole process group: the driver decides what a
	 * run does about it, its workers just keep serving until told. */
	signal(SIGINT, SIG_IGN);
	child_fd = fd;
	int status = th_dist__worker_main(&child_link, cfg);
	/* _exit: the driver's atexit handlers and stdio buffers are not ours */
	_exit(status);
}

/* ---- driver side ------------------------------------------------------------ */
static int local_send(int proc, const void *buf, size_t len)
{
	if (proc < 1 || proc > nprocs || fds[proc] < 0)
		return -1;
	return th_frame_write_fd(fds[proc], buf, len);
}

/* Result pieces are read straight into the call's result buffer: the driver
 * takes in every byte of every result, a second copy would be pure cost. */
static void *dest_of(void *ctx, const struct th_frame_hdr *h)
{
	return th_dist__frame_dest(*(int *)ctx, h);
}

static int local_recv(int *proc, struct th_frame *f, int timeout_ms, char *err, size_t errlen)
{
	struct pollfd pfd[TH_DIST_MAX_PROCS];
	int who[TH_DIST_MAX_PROCS], n = 0;
	for (int i = 0; i < nprocs; i++) {
		int k = 1 + (rr_next + i) % nprocs;
		if (fds[k] >= 0) {
			pfd[n] = (struct pollfd){ .fd = fds[k], .events = POLLIN };
			who[n++] = k;
		}
	}
	if (n == 0) {
		snprintf(err, errlen, "no worker process is left");
		return TH_EV_FAIL;
	}
	int r;
	do
		r = poll(pfd, (nfds_t)n, timeout_ms);
	while (r < 0 && errno == EINTR);
	if (r < 0) {
		snprintf(err, errlen, "poll: %s", strerror(errno));
		return TH_EV_FAIL;
	}
	for (int i = 0; i < n; i++) {
		if (!pfd[i].revents)
			continue;
		int k = who[i];
		rr_next = k % nprocs; /* next time start after this worker */
		*proc = k;
		int got = th_frame_read_fd_to(fds[k], f, dest_of, &k, err, errlen);
		if (got == 1)
			return TH_EV_FRAME;
		if (got == 0)
			snprintf(err, errlen, "hung up");
		else {
			/* keep the reason: the caller names the worker */
			char why[256];
			snprintf(why, sizeof why, "sent a bad frame (%s)", err);
			snprintf(err, errlen, "%s", why);
		}
		return TH_EV_GONE;
	}
	return TH_EV_TIMEOUT;
}

static void fill_rusage(const struct rusage *ru, long *maxrss_kb, uint64_t *utime_us, uint64_t *stime_us)
{
	*maxrss_kb = ru->ru_maxrss;
	*utime_us = (uint64_t)ru->ru_utime.tv_sec * 1000000u + (uint64_t)ru->ru_utime.tv_usec;
	*stime_us = (uint64_t)ru->ru_stime.tv_sec * 1000000u + (uint64_t)ru->ru_stime.tv_usec;
}

/* Waits for pid up to grace_ms, then kills it and waits for good: a worker
 * is always reaped, so none is left a zombie. */
static void local_reap(int proc, bool kill_it, int grace_ms, int *status, long *maxrss_kb,
		       uint64_t *utime_us, uint64_t *stime_us)
{
	*status = -1;
	if (proc < 1 || proc > nprocs || pids[proc] <= 0)
		return;
	pid_t pid = pids[proc];
	if (fds[proc] >= 0) {
		close(fds[proc]); /* EOF tells an idle worker to leave */
		fds[proc] = -1;
	}
	if (kill_it)
		kill(pid, SIGKILL);
	struct rusage ru;
	int st;
	uint64_t deadline = th_dist__now_ns() + (uint64_t)grace_ms * 1000000u;
	for (;;) {
		pid_t r = wait4(pid, &st, WNOHANG, &ru);
		if (r == pid)
			break;
		if (r < 0 && errno != EINTR) {
			pids[proc] = 0; /* already reaped elsewhere: nothing to report */
			return;
		}
		if (th_dist__now_ns() >= deadline) {
			kill(pid, SIGKILL);
			while ((r = wait4(pid, &st, 0, &ru)) < 0 && errno == EINTR)
				;
			if (r != pid) {
				pids[proc] = 0;
				return;
			}
			break;
		}
		nanosleep(&(struct timespec){ 0, 2 * 1000 * 1000 }, NULL);
	}
	*status = st;
	fill_rusage(&ru, maxrss_kb, utime_us, stime_us);
	pids[proc] = 0;
}

static void local_finish(void)
{
	for (int k = 1; k <= nprocs; k++)
		if (fds[k] >= 0) {
			close(fds[k]);
			fds[k] = -1;
		}
	nprocs = 0;
}

static const struct th_dist_transport local_transport = {
	.name = "local", .send = local_send, .recv = local_recv, .reap = local_reap,
	.finish = local_finish,
};

/* Threads other than this one: fork would copy their locks but not them.
 * ThreadSanitizer runs a background thread of its own once any thread has
 * existed; it is not ours to worry about. */
static int other_threads(void)
{
#ifdef __SANITIZE_THREAD__
	const int hidden = 1;
#else
	const int hidden = 0;
#endif
	char buf[512];
	FILE *f = fopen("/proc/self/status", "r");
	int threads = 1;
	if (!f)
		return 0;
	while (fgets(buf, sizeof buf, f))
		if (sscanf(buf, "Threads: %d", &threads) == 1)
			break;
	fclose(f);
	return threads - 1 - hidden > 0 ? threads - 1 - hidden : 0;
}

int th_dist__local_start(int n, const struct th_procs_config *cfg, pid_t *out_pids,
			 const struct th_dist_transport **tr)
{
	if (th_nworkers() > 0) {
		th_dist__set_error("cannot fork worker processes while the task runtime runs in this process "
				   "(start them before th_runtime_start)");
		return -1;
	}
	int others = other_threads();
	if (others > 0) {
		th_dist__set_error("cannot fork worker processes: this process already runs %d other thread%s "
				   "(start the worker processes before th_runtime_start or any thread)",
				   others, others == 1 ? "" : "s");
		return -1;
	}
	for (int k = 0; k <= TH_DIST_MAX_PROCS; k++) {
		fds[k] = -1;
		pids[k] = 0;
	}
	nprocs = n;
	rr_next = 0;
	pid_t driver = getpid();
	fflush(NULL); /* buffered output would be printed again by every child */
	for (int k = 1; k <= n; k++) {
		int sv[2];
		if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
			th_dist__set_error("socketpair: %s", strerror(errno));
			goto undo;
		}
		pid_t pid = fork();
		if (pid < 0) {
			th_dist__set_error("fork: %s", strerror(errno));
			close(sv[0]);
			close(sv[1]);
			goto undo;
		}
		if (pid == 0) {
			close(sv[0]);
			child_main(sv[1], driver, cfg);
		}
		close(sv[1]);
		fds[k] = sv[0];
		pids[k] = pid;
		out_pids[k] = pid;
	}
	*tr = &local_transport;
	return 0;
undo:
	for (int k = 1; k <= n; k++)
		if (pids[k] > 0) {
			int st;
			long rss;
			uint64_t u, s;
			local_reap(k, true, 0, &st, &rss, &u, &s);
		}
	local_finish();
	return -1;
}
