/* act_monitor.c — activations' kernel side in user space: loads the sched_switch
 * program, maps the threads' state lines, and lets parked spares sleep on the ring
 * buffer the program writes each block to (forced wake-up): the spare that wakes
 * reads the block and takes the worker over itself.
 *
 * Why no monitor thread: a block -> monitor -> spare chain costs two wake-ups in a
 * row, and on this VM each is 50-100 us (median block -> spare running was 160 us
 * with a SCHED_FIFO monitor; the monitor's own wake-up was ~75 us of it). A spare
 * woken straight from the ring buffer usually lands on the CPU the blocked thread
 * just left idle. The ring buffer wakes every poller (wake_up_all), so with k
 * spares parked k wake; one reads the events (a mutex keeps libbpf's consumer
 * single), the others find nothing and sleep again. */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <stdatomic.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "act_monitor.h"
#include "record.h"
#include "taskhop_abi.h"
#include "taskhop_act.skel.h"

static struct {
	struct taskhop_act_bpf *skel;
	struct ring_buffer *rb;
	pthread_mutex_t consume_lock; /* libbpf's consumer is single-threaded */
	void *lines;
	size_t lines_len;
	int nthreads;
	int ring_fd;                  /* the ring buffer map: readable when blocks wait */
	int *kick_fds;                /* per thread, an eventfd: kick() */
} act = { .consume_lock = PTHREAD_MUTEX_INITIALIZER, .ring_fd = -1 };

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

static void close_kick_fds(void)
{
	for (int i = 0; act.kick_fds && i < act.nthreads; i++)
		if (act.kick_fds[i] >= 0)
			close(act.kick_fds[i]);
	free(act.kick_fds);
	act.kick_fds = NULL;
}

/* After the runtime joined its threads: no spare sleeps in park any more. */
static void act_close(void)
{
	ring_buffer__free(act.rb);
	act.rb = NULL;
	act.ring_fd = -1;
	close_kick_fds();
	act.nthreads = 0;
	if (act.lines)
		munmap(act.lines, act.lines_len);
	act.lines = NULL;
	taskhop_act_bpf__destroy(act.skel);
	act.skel = NULL;
}

static int on_block(void *ctx, void *data, size_t len)
{
	(void)ctx;
	const struct th_act_event *e = data;
	if (len >= sizeof(*e))
		th_activate_thread((int)e->thread, e->ts);
	return 0;
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
	/* before the threads start: a spare parks on the ring buffer from its first sleep */
	act.rb = ring_buffer__new(bpf_map__fd(act.skel->maps.act_events), on_block, NULL, NULL);
	if (!act.rb) {
		snprintf(err, errlen, "activation ring buffer: %s", strerror(errno));
		act_close();
		return NULL;
	}
	act.ring_fd = bpf_map__fd(act.skel->maps.act_events);
	act.kick_fds = malloc((size_t)nthreads * sizeof(int));
	for (int i = 0; act.kick_fds && i < nthreads; i++)
		act.kick_fds[i] = -1;
	act.nthreads = nthreads;
	for (int i = 0; act.kick_fds && i < nthreads; i++)
		if ((act.kick_fds[i] = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) < 0)
			break;
	if (!act.kick_fds || act.kick_fds[nthreads - 1] < 0) {
		snprintf(err, errlen, "eventfds for %d spare threads: %s", nthreads, strerror(errno));
		act_close();
		return NULL;
	}
	return act.lines;
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
	return 0;
}

/* Sleeps until kicked or until the program reports blocks, then reads them
 * (th_activate_thread may hand a worker to this very spare, setting *word). */
static void act_park(int thread, _Atomic uint32_t *word)
{
	struct pollfd p[2] = {
		{ .fd = act.kick_fds[thread], .events = POLLIN },
		{ .fd = act.ring_fd, .events = POLLIN },
	};
	if (atomic_load_explicit(word, memory_order_acquire))
		return;
	int n = poll(p, 2, -1);
	if (n <= 0)
		return; /* EINTR: the caller looks at *word and comes back */
	if (p[0].revents & POLLIN) {
		uint64_t v;
		(void)!read(p[0].fd, &v, sizeof(v));
	}
	if (p[1].revents & POLLIN) {
		pthread_mutex_lock(&act.consume_lock);
		ring_buffer__consume(act.rb);
		pthread_mutex_unlock(&act.consume_lock);
	}
}

static void act_kick(int thread)
{
	uint64_t one = 1;
	if (thread >= 0 && thread < act.nthreads)
		(void)!write(act.kick_fds[thread], &one, sizeof(one));
}

unsigned long long rec_act_lost(void)
{
	return act.skel ? act.skel->bss->act_lost : 0;
}

const struct th_activation_backend rec_act_backend = {
	.open = act_open,
	.start = act_start,
	.close = act_close,
	.park = act_park,
	.kick = act_kick,
};

int rec_act_prog_stats(unsigned long long *runs, unsigned long long *ns)
{
	*runs = *ns = 0;
	if (!act.skel)
		return -1;
	struct bpf_prog_info info;
	__u32 len = sizeof(info);
	memset(&info, 0, sizeof(info));
	if (bpf_obj_get_info_by_fd(bpf_program__fd(act.skel->progs.act_switch), &info, &len) != 0)
		return -1;
	*runs = info.run_cnt;
	*ns = info.run_time_ns;
	return 0;
}
