/* drain.c — moves what the recording gathers into the collected arrays: the BPF ring
 * buffer (a poller thread in process, th_record_poll otherwise), the run logs of the
 * self target and of processes read through their run-log areas (drained while tasks
 * run, taken at stop), and the intervals still open at stop. */
#define _GNU_SOURCE
#include <errno.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "record_int.h"
#include "taskhop.h"
#include "taskhop_rec.skel.h"

int rec_consume(struct th_record *r)
{
	pthread_mutex_lock(&r->lock);
	int n = ring_buffer__consume(r->rb);
	pthread_mutex_unlock(&r->lock);
	return n;
}

/* Self target: nobody calls poll while the workload runs, so a thread drains the ring
 * buffer and the workers' run logs (their rings, th_run_log_drain). It sleeps instead of
 * waiting for wakeups: records are submitted without wakeups (cheaper), and a poller
 * woken by each record would itself switch, be recorded, and wake itself again. While
 * runs keep coming it looks every POLL_BUSY_MS: a worker switching every 15 ns (a recorded
 * yield on the faster test guest) fills the smallest ring (65,536 runs) in 1 ms, the
 * default 1 Mi in 16 ms. With nothing to drain it backs off, but only to half the time
 * the smallest ring takes to fill at that pace (poll_idle_ms): the poller cannot see a
 * workload start, and a fixed 20 ms back-off lost 80,000 to 360,000 runs of each
 * attached yield loop before its first look. */
#define POLL_BUSY_MS 1
#define POLL_IDLE_MS_MAX 20
#define FASTEST_SWITCH_NS 15

static size_t smaller(size_t ring, size_t other)
{
	return other && (!ring || other < ring) ? other : ring;
}

static long poll_idle_ms(struct th_record *r)
{
	size_t ring = th_run_log_ring_runs();
	pthread_mutex_lock(&r->lock);
	for (int i = 0; i < r->ntg; i++)
		if (r->tg[i].area)
			ring = smaller(ring, th_area_ring_runs(r->tg[i].area));
	pthread_mutex_unlock(&r->lock);
	long ms = (long)(ring * FASTEST_SWITCH_NS / 2 / 1000000);
	return !ring || ms > POLL_IDLE_MS_MAX ? POLL_IDLE_MS_MAX : ms < 1 ? 1 : ms;
}

/* Moves the runs other processes logged since the last call into their areas' logs. */
static size_t drain_areas(struct th_record *r)
{
	size_t moved = 0;
	pthread_mutex_lock(&r->lock);
	for (int i = 0; i < r->ntg; i++)
		if (r->tg[i].area) {
			long n = th_area_drain(r->tg[i].area);
			moved += n > 0 ? (size_t)n : 0;
		}
	pthread_mutex_unlock(&r->lock);
	return moved;
}

int rec_has_area(const struct th_record *r)
{
	for (int i = 0; i < r->ntg; i++)
		if (r->tg[i].area)
			return 1;
	return 0;
}

static void *poller_main(void *arg)
{
	struct th_record *r = arg;
	while (!r->poller_stop) {
		size_t runs = th_run_log_drain() + drain_areas(r);
		rec_consume(r);
		long ms = runs ? POLL_BUSY_MS : poll_idle_ms(r);
		if (r->o.drain_stall_ms > 0)
			ms = r->o.drain_stall_ms; /* tests: a drain that falls behind */
		struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
		nanosleep(&ts, NULL);
	}
	return NULL;
}

int rec_poller_start(struct th_record *r)
{
	if (pthread_create(&r->poller, NULL, poller_main, r) != 0) {
		rec_set_error("cannot start the ring-buffer thread");
		return -1;
	}
	r->poller_on = 1;
	return 0;
}

void rec_poller_stop(struct th_record *r)
{
	if (!r->poller_on)
		return;
	r->poller_stop = 1;
	pthread_join(r->poller, NULL);
	r->poller_on = 0;
}

int th_record_poll(struct th_record *r, int timeout_ms)
{
	if (!r->started || r->stopped || !r->rb) {
		rec_set_error("th_record_poll: not recording");
		return -1;
	}
	int n = rec_consume(r);
	if (n != 0 || timeout_ms <= 0)
		return n < 0 ? 0 : n;
	/* records come without wakeups (see poller_main): sleep a little, then look again */
	int ms = timeout_ms < 20 ? timeout_ms : 20;
	struct timespec ts = { 0, (long)ms * 1000000L };
	if (nanosleep(&ts, NULL) != 0 && errno == EINTR)
		return 0;
	n = rec_consume(r);
	return n < 0 ? 0 : n;
}

/* Threads still on a CPU at stop: close their interval at t_stop. */
static void close_open_intervals(struct th_record *r)
{
	int fd = bpf_map__fd(r->skel->maps.threads);
	__u32 key, next, *prev = NULL;
	struct th_thread th;

	while (bpf_map_get_next_key(fd, prev, &next) == 0) {
		key = next;
		prev = &key;
		if (bpf_map_lookup_elem(fd, &key, &th) != 0 || !th.on_ts || th.on_ts >= r->t_stop)
			continue;
		struct rec_ival *iv = vec_push(&r->col.ivals);
		if (!iv)
			return;
		iv->pid = (int)th.tgid;
		iv->tid = (int)th.tid;
		iv->cpu = (int)th.cpu;
		iv->host_tid = (int)key;
		iv->start = th.on_ts;
		iv->end = r->t_stop;
		iv->wait_ns = th.wait_ns;
	}
}

static void take_run_logs(struct th_record *r)
{
	int self_pid = getpid();
	for (int w = 0; w < th_nworkers(); w++) {
		size_t n = 0;
		uint64_t dropped = 0;
		const struct th_run_record *log = th_run_log(w, &n, &dropped);
		r->dropped_runs += dropped;
		(void)vec_reserve(&r->col.runs, n); /* else vec_push grows it */
		for (size_t i = 0; log && i < n; i++) {
			struct th_rec_run *run = vec_push(&r->col.runs);
			if (!run)
				return;
			run->pid = self_pid;
			run->task_id = log[i].task_id;
			run->worker = (int)log[i].worker;
			/* the thread that ran it: a spare's runs are joined with its intervals */
			run->tid = log[i].thread < (uint32_t)r->nself ? r->self_tids[log[i].thread] : -1;
			run->start_ns = log[i].start_ns;
			run->end_ns = log[i].end_ns;
			run->why = log[i].why;
		}
	}
}

/* The runs drained from a target's area, as the join's records. */
static void take_area_runs(struct th_record *r, const struct rec_target *t)
{
	size_t n;
	const struct th_run_record *log = th_area_runs(t->area, &n);
	(void)vec_reserve(&r->col.runs, n); /* else vec_push grows it */
	for (size_t i = 0; i < n; i++) {
		struct th_rec_run *run = vec_push(&r->col.runs);
		if (!run) {
			r->dropped_runs += n - i;
			return;
		}
		int tid = th_area_tid(t->area, (int)log[i].thread);
		*run = (struct th_rec_run){
			.pid = t->pid, .task_id = log[i].task_id, .worker = (int)log[i].worker,
			.tid = tid ? tid : -1, .start_ns = log[i].start_ns, .end_ns = log[i].end_ns,
			.why = log[i].why,
		};
	}
}

void rec_finish_areas(struct th_record *r)
{
	drain_areas(r);
	for (int i = 0; i < r->ntg; i++) {
		struct th_area *a = r->tg[i].area;
		if (!a)
			continue;
		for (int w = 0; w < th_area_nworkers(a); w++) {
			struct rec_worker_start *ws = vec_push(&r->col.wstart);
			if (ws)
				*ws = (struct rec_worker_start){ .pid = r->tg[i].pid, .worker = w,
								 .tid = th_area_tid(a, w) };
		}
		take_area_runs(r, &r->tg[i]);
		r->dropped_runs += th_area_lost(a);
		th_area_close(a);
		r->tg[i].area = NULL;
	}
}

/* After detaching: what the ring buffer still holds, the intervals still open, and
 * the self target's run logs. */
void rec_drain_at_stop(struct th_record *r)
{
	if (r->rb)
		rec_consume(r);
	if (!r->skel)
		return;
	close_open_intervals(r);
	for (int i = 0; i < r->ntg; i++)
		if (r->tg[i].self)
			take_run_logs(r);
}
