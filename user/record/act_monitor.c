/* act_monitor.c — activations' kernel side in user space: loads the sched_switch
 * program, maps the threads' state lines, and a monitor thread that wakes on each
 * block the program reports (ring buffer, forced wake-up) and calls th_activate_thread. */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <bpf/libbpf.h>

#include "act_monitor.h"
#include "record.h"
#include "taskhop_abi.h"
#include "taskhop_act.skel.h"

static struct {
	struct taskhop_act_bpf *skel;
	struct ring_buffer *rb;
	void *lines;
	size_t lines_len;
	int nthreads;
	int stop_fd;      /* eventfd: tells the monitor to return */
	int epoll_fd;
	pthread_t monitor;
	bool monitor_running;
} act = { .stop_fd = -1, .epoll_fd = -1 };

/* The program compares kernel tids with the ones gettid() gave the threads:
 * they are the same only in the initial PID namespace. */
/* The initial PID namespace's inode is fixed (PROC_PID_INIT_INO). In any other
 * (a container's) the BPF side matches threads through the namespace. */
static void set_pid_namespace(struct taskhop_act_bpf *skel)
{
	struct stat st;
	if (stat("/proc/self/ns/pid", &st) != 0 || st.st_ino == 0xEFFFFFFCu)
		return;
	skel->rodata->targ_in_ns = true;
	skel->rodata->targ_ns_dev = (__u64)st.st_dev;
	skel->rodata->targ_ns_ino = (__u64)st.st_ino;
}

static void act_close(void)
{
	if (act.monitor_running) {
		uint64_t one = 1;
		(void)!write(act.stop_fd, &one, sizeof(one));
		pthread_join(act.monitor, NULL);
		act.monitor_running = false;
	}
	ring_buffer__free(act.rb);
	act.rb = NULL;
	if (act.lines)
		munmap(act.lines, act.lines_len);
	act.lines = NULL;
	taskhop_act_bpf__destroy(act.skel);
	act.skel = NULL;
	if (act.stop_fd >= 0)
		close(act.stop_fd);
	if (act.epoll_fd >= 0)
		close(act.epoll_fd);
	act.stop_fd = act.epoll_fd = -1;
}

static void *act_open(int nthreads, char *err, size_t errlen)
{
	const char *why = th_record_unavailable();
	if (why && strstr(why, "needs root")) {
		snprintf(err, errlen, "needs root or CAP_BPF+CAP_PERFMON: run as root, or use "
			 "--activations explicit (or auto)");
		return NULL;
	}
	if (why) {
		snprintf(err, errlen, "%s", why);
		return NULL;
	}
	if (nthreads < 1 || nthreads > TH_MAX_SLOTS) {
		snprintf(err, errlen, "%d threads: the activation map holds %d", nthreads, TH_MAX_SLOTS);
		return NULL;
	}
	libbpf_set_print(NULL);
	act.skel = taskhop_act_bpf__open();
	if (!act.skel) {
		snprintf(err, errlen, "cannot open the activation BPF object: %s", strerror(errno));
		return NULL;
	}
	act.skel->rodata->targ_tgid = (__u32)getpid();
	set_pid_namespace(act.skel);
	int e = taskhop_act_bpf__load(act.skel);
	if (!e)
		e = taskhop_act_bpf__attach(act.skel);
	if (e) {
		snprintf(err, errlen, "cannot load or attach the activation BPF program: %s", strerror(-e));
		act_close();
		return NULL;
	}
	act.lines_len = (size_t)TH_MAX_SLOTS * TH_SLOT_STRIDE;
	act.lines = mmap(NULL, act.lines_len, PROT_READ | PROT_WRITE, MAP_SHARED,
			 bpf_map__fd(act.skel->maps.act_slots), 0);
	if (act.lines == MAP_FAILED) {
		act.lines = NULL;
		snprintf(err, errlen, "mmap of the activation map failed: %s", strerror(errno));
		act_close();
		return NULL;
	}
	act.nthreads = nthreads;
	return act.lines;
}

static int on_block(void *ctx, void *data, size_t len)
{
	(void)ctx;
	const struct th_act_event *e = data;
	if (len >= sizeof(*e))
		th_activate_thread((int)e->thread, e->ts);
	return 0;
}

/* Sleeps in epoll until the program reports a block (or stop is asked). */
static void *monitor(void *arg)
{
	(void)arg;
	for (;;) {
		struct epoll_event ev[2];
		int n = epoll_wait(act.epoll_fd, ev, 2, -1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return NULL;
		for (int i = 0; i < n; i++)
			if (ev[i].data.fd == act.stop_fd)
				return NULL;
		ring_buffer__consume(act.rb);
	}
}

static int act_start(char *err, size_t errlen)
{
	for (int i = 0; i < act.nthreads; i++) {
		__u32 tid = (__u32)th_thread_tid(i), idx = (__u32)i;
		if (bpf_map__update_elem(act.skel->maps.act_tids, &tid, sizeof(tid), &idx, sizeof(idx),
					 BPF_ANY) != 0) {
			snprintf(err, errlen, "act_tids update: %s", strerror(errno));
			return -1;
		}
	}
	act.rb = ring_buffer__new(bpf_map__fd(act.skel->maps.act_events), on_block, NULL, NULL);
	act.stop_fd = eventfd(0, EFD_CLOEXEC);
	act.epoll_fd = epoll_create1(EPOLL_CLOEXEC);
	if (!act.rb || act.stop_fd < 0 || act.epoll_fd < 0) {
		snprintf(err, errlen, "activation monitor: %s", strerror(errno));
		return -1;
	}
	struct epoll_event rb_ev = { .events = EPOLLIN, .data.fd = ring_buffer__epoll_fd(act.rb) };
	struct epoll_event stop_ev = { .events = EPOLLIN, .data.fd = act.stop_fd };
	if (epoll_ctl(act.epoll_fd, EPOLL_CTL_ADD, rb_ev.data.fd, &rb_ev) != 0 ||
	    epoll_ctl(act.epoll_fd, EPOLL_CTL_ADD, act.stop_fd, &stop_ev) != 0) {
		snprintf(err, errlen, "activation monitor: epoll: %s", strerror(errno));
		return -1;
	}
	int e = pthread_create(&act.monitor, NULL, monitor, NULL);
	if (e) {
		snprintf(err, errlen, "activation monitor thread: %s", strerror(e));
		return -1;
	}
	act.monitor_running = true;
	/* The latency that counts is block -> spare running, and on a machine whose
	 * CPUs all run workers a normal-priority monitor waits for a time slice
	 * first. It sleeps in epoll and does a few stores per block, so a low
	 * real-time priority costs the workers nothing else. Best effort: without
	 * CAP_SYS_NICE it stays a normal thread. */
	struct sched_param sp = { .sched_priority = 1 };
	pthread_setschedparam(act.monitor, SCHED_FIFO, &sp);
	return 0;
}

unsigned long long rec_act_lost(void)
{
	return act.skel ? act.skel->bss->act_lost : 0;
}

const struct th_activation_backend rec_act_backend = {
	.open = act_open,
	.start = act_start,
	.close = act_close,
};
