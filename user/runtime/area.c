/* area.c — the run-log area: the shared memory file that holds the workers' run
 * logs, so that a recorder in another process can drain them without a uprobe per
 * event (bpf/taskhop_abi.h has the layout and the protocol). */
#define _GNU_SOURCE
#include <errno.h>
#include <stddef.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "core.h"
#include "runlog.h"

/* The default ring for a recorder in another process: 1,048,576 runs (32 MiB)
 * per worker, fewer past 4 workers so that all rings together hold at most
 * 4 Mi runs (128 MiB), and never fewer than 65,536. Why this big: the
 * drainer looks every millisecond, but a millisecond is a wish on a loaded
 * machine. A 65,536-run ring (2 ms at a switch every 30 ns) dropped a quarter
 * of a yield loop's runs here, and fib(30) under steal dropped 442,145 of 2.7
 * million. 262,144 runs were enough at 30 ns a switch; on a guest that
 * switches every 17 ns (4.5 ms to fill), drains that stalled a few ms dropped
 * runs in 11 of 20 attached yield loops (up to 293,478 of 1e6), and in none
 * of 25 with 1 Mi. A ring for a recorder that attaches later costs address
 * space only, until the recorder turns logging on and populates it
 * (th_area_claim).
 *
 * A process that records itself (TH_RUN_LOG_AUTO) keeps 262,144 (8 MiB): its
 * rings are populated when the runtime starts, and 1 Mi cost every recorded
 * `taskhop run` 50 ms and 48 MiB more for workloads that switch a hundred
 * times less often than a yield loop. */
#define AREA_RING_MAX (1u << 20)
#define SELF_RING_MAX (1u << 18)
#define AREA_RING_MIN (1u << 16)
#define AREA_RUNS_ALL_RINGS (1u << 22)

static size_t default_ring(int nworkers, size_t max)
{
	size_t per = AREA_RUNS_ALL_RINGS / (size_t)(nworkers > 0 ? nworkers : 1);
	return per > max ? max : per < AREA_RING_MIN ? AREA_RING_MIN : per;
}

static uint32_t pow2_at_least(size_t n)
{
	uint32_t c = 1;
	while (c < n && c < TH_AREA_MAX_RING)
		c <<= 1;
	return c;
}

static size_t round_up(size_t n, size_t to)
{
	return (n + to - 1) / to * to;
}

/* A memfd that a recorder can open through /proc/PID/map_files; without one
 * (an old kernel, a seccomp filter) private memory, recordable in process only. */
static void *map_area(size_t size)
{
	int fd = memfd_create(TH_AREA_NAME, MFD_CLOEXEC);
	if (fd >= 0) {
		void *p = MAP_FAILED;
		if (ftruncate(fd, (off_t)size) == 0)
			p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		close(fd);
		if (p != MAP_FAILED)
			return p;
	}
	void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	return p == MAP_FAILED ? NULL : p;
}

static void fill_head(struct th_area_head *h, const struct th_runtime *rt, uint32_t cap)
{
	h->magic = TH_AREA_MAGIC;
	h->version = TH_AREA_VERSION;
	h->head_size = sizeof(*h);
	h->nworkers = (uint32_t)rt->nworkers;
	h->nthreads = (uint32_t)rt->nthreads;
	h->ring_cap = cap;
	h->record_size = sizeof(struct th_area_run);
	h->stamp_kind = th__ns_per_tick > 0 ? TH_STAMP_COUNTER : TH_STAMP_NS;
	h->pid = (int32_t)getpid();
	h->logs_off = round_up(sizeof(*h), 128);
	h->rings_off = round_up(h->logs_off + (size_t)rt->nworkers * sizeof(struct th_area_log), 4096);
	h->size = h->rings_off + (uint64_t)rt->nworkers * cap * sizeof(struct th_area_run);
}

/* MADV_POPULATE_WRITE faults pages in without a trap per page, but on the
 * KVM guest measured it leaves each page's first store slow, about 3.3 us a
 * page that no guest fault counter shows (host-side backing, presumably):
 * the first lap of a 262,144-run ring then cost 16.2 ns a run instead of
 * 10.8. So each page also gets one store here (13.7 ms for 8 MiB, the same as
 * a memset; 2.6 ms without): an atomic add of 0, which leaves the bytes as
 * they are, since an attaching recorder touches rings a worker may still be
 * finishing a record in (the one a detached drainer left behind). */
/* Maps size bytes at mem in, faulting in the kernel (no trap per page);
 * refused before Linux 5.14, and then the first stores fault instead. */
static void populate(void *mem, size_t size)
{
	(void)madvise(mem, size, MADV_POPULATE_WRITE);
}

void th__area_touch(void *mem, size_t size)
{
	char *p = mem;
	populate(p, size);
	long page = sysconf(_SC_PAGESIZE);
	size_t step = page > 0 ? (size_t)page : 4096;
	for (size_t off = 0; off < size; off += step)
		__atomic_fetch_add(p + off, 0, __ATOMIC_RELAXED);
}

void th__runlog_map_ring(struct th_runlog *l)
{
	/* no error to report from the switch path: a failure leaves the faults */
	populate(l->ring, (size_t)(l->mask + 1) * sizeof(*l->ring));
	l->ring_mapped = 1;
}

int th__area_create(struct th_runtime *rt)
{
	if (rt->nworkers > TH_AREA_MAX_WORKERS || rt->nthreads > TH_AREA_MAX_THREADS) {
		th__set_error("%d workers and %d threads: the run-log area holds %d and %d", rt->nworkers,
			      rt->nthreads, TH_AREA_MAX_WORKERS, TH_AREA_MAX_THREADS);
		return -1;
	}
	bool auto_cap = rt->cfg.run_log_cap == TH_RUN_LOG_AUTO;
	size_t want = auto_cap ? 0 : rt->cfg.run_log_cap;
	if (!want)
		want = rt->cfg.run_log_ring;
	if (!want)
		want = default_ring(rt->nworkers, auto_cap ? SELF_RING_MAX : AREA_RING_MAX);
	uint32_t cap = pow2_at_least(want);
	struct th_area_head proto;
	memset(&proto, 0, sizeof(proto));
	fill_head(&proto, rt, cap);
	struct th_area_head *h = map_area(proto.size);
	if (!h) {
		th__set_error("no memory for the run logs (%llu bytes): %s", (unsigned long long)proto.size,
			      strerror(errno));
		return -1;
	}
	/* a child forked without exec must not share (and corrupt) our logs */
	(void)madvise(h, proto.size, MADV_DONTFORK);
	*h = proto;
	int logging = rt->cfg.run_log_cap > 0;
	if (logging) {
		/* touched now, not by the first lap of runs: a page fault on the
		 * switch path (one per 128 runs, 5 to 80 us each on the VMs
		 * measured) is the recorder perturbing what it records */
		th__area_touch((char *)h + h->rings_off, h->size - h->rings_off);
		__atomic_store_n(&h->owner, h->pid, __ATOMIC_RELEASE);
	}
	for (int i = 0; i < rt->nworkers; i++) {
		struct th_runlog *l = (struct th_runlog *)((char *)h + h->logs_off) + i;
		l->ring = (struct th_area_run *)((char *)h + h->rings_off) + (size_t)i * cap;
		l->mask = cap - 1;
		l->ring_mapped = (uint32_t)logging; /* touched above */
		l->tail_seen = logging ? 0 : (uint64_t)0 - cap; /* unmapped: looks full */
		atomic_store_explicit(&l->on, (uint32_t)logging, memory_order_release);
		rt->workers[i].log = l;
	}
	rt->area = h;
	rt->area_size = proto.size; /* not h->size: a drainer can write the area */
	return 0;
}

void th__area_destroy(struct th_runtime *rt)
{
	struct th_area_head *h = rt->area;
	if (!h)
		return;
	for (int i = 0; i < rt->nworkers; i++)
		rt->workers[i].log = NULL;
	munmap(h, rt->area_size);
	rt->area = NULL;
}

void th__area_set_tid(struct th_runtime *rt, int thread, int tid)
{
	struct th_area_head *h = rt->area;
	if (h && thread >= 0 && thread < (int)h->nthreads)
		__atomic_store_n(&h->tids[thread], tid, __ATOMIC_RELEASE);
}
