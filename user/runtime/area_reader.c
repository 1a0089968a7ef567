/* area_reader.c — draining another process's run logs through its run-log area
 * (bpf/taskhop_abi.h: layout and protocol; the API is th_area_* in taskhop.h). Why not a uprobe per event: a USDT
 * hit traps into the kernel, 1.4 us each here, 150 times a yield; reading a
 * shared ring costs the traced process nothing but its own stores.
 *
 * The process may be anyone's and its area anything: every field is checked
 * against what this recorder computes itself before it sizes or indexes
 * anything, and the rings are read through our own tails, never its. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bigbuf.h"
#include "core.h"
#include "runlog.h"
#include "runpack.h"
#include "stampmap.h"

struct th_area {
	pid_t pid;
	struct th_area_head *h;        /* our mapping of the area */
	size_t size;                   /* of the mapping */
	bool unmap;                    /* th_area_close unmaps h (not a test's memory) */
	uint64_t rings_off;
	uint32_t nworkers, nthreads, cap;
	struct th_area_log *logs;
	const struct th_area_run *rings;
	int claimed;
	struct th_stamp_map map;
	uint64_t *tail;                /* per worker: our tail (the area's is only told) */
	uint64_t *dropped_base;        /* per worker: the ring's dropped when we claimed */
	uint64_t *last_ns;             /* per worker: the end of the last run dated */
	struct th_runpack kept;        /* the runs drained, dated, packed (runpack.h) */
	struct th_runpack_cursor cur;  /* how far th_area_runs has unpacked them */
	struct th_bigbuf recs;         /* unpacked runs (struct th_run_record), cur.n of them */
	uint64_t bad, lost;
};

/* The address range of the newest area in /proc/PID/maps. 0 found, 1 none, -1 error. */
static int find_area(pid_t pid, unsigned long *start, unsigned long *end)
{
	char path[64], *line = NULL;
	size_t len = 0;
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	FILE *f = fopen(path, "re");
	if (!f) {
		th__set_error("cannot read %s: %s", path, strerror(errno));
		return -1;
	}
	int found = 1;
	while (getline(&line, &len, f) > 0) {
		unsigned long s, e;
		if (strstr(line, "/memfd:" TH_AREA_NAME " ") && sscanf(line, "%lx-%lx", &s, &e) == 2 && e > s) {
			*start = s;
			*end = e;
			found = 0;
		}
	}
	free(line);
	fclose(f);
	return found;
}

/* The layout a well-formed head describes, recomputed here: the area must match it. */
static int head_ok(const struct th_area_head *h, size_t mapped)
{
	if (h->magic != TH_AREA_MAGIC || h->version != TH_AREA_VERSION || h->head_size != sizeof(*h) ||
	    h->record_size != sizeof(struct th_area_run))
		return 0;
	if (h->nworkers < 1 || h->nworkers > TH_AREA_MAX_WORKERS || h->nthreads < h->nworkers ||
	    h->nthreads > TH_AREA_MAX_THREADS)
		return 0;
	if (h->ring_cap < 1 || h->ring_cap > TH_AREA_MAX_RING || (h->ring_cap & (h->ring_cap - 1)))
		return 0;
	uint64_t logs = (sizeof(*h) + 127) / 128 * 128;
	uint64_t rings = (logs + (uint64_t)h->nworkers * sizeof(struct th_area_log) + 4095) / 4096 * 4096;
	uint64_t size = rings + (uint64_t)h->nworkers * h->ring_cap * sizeof(struct th_area_run);
	return h->logs_off == logs && h->rings_off == rings && h->size == size && size <= mapped;
}

static int stamps_readable(const struct th_area_head *h)
{
	if (h->stamp_kind == TH_STAMP_NS)
		return 1;
	th__tscclock_calibrate();
	return h->stamp_kind == TH_STAMP_COUNTER && th__ns_per_tick > 0;
}

/* h is our mapping, c the copy of its head that head_ok accepted. */
static struct th_area *area_new(pid_t pid, struct th_area_head *h, size_t size, const struct th_area_head *c)
{
	struct th_area *a = calloc(1, sizeof(*a));
	if (!a)
		return NULL;
	a->pid = pid;
	a->h = h;
	a->size = size;
	/* from the checked copy: the process may change its head at any time */
	a->nworkers = c->nworkers;
	a->nthreads = c->nthreads;
	a->cap = c->ring_cap;
	a->rings_off = c->rings_off;
	a->logs = (struct th_area_log *)((char *)h + c->logs_off);
	a->rings = (const struct th_area_run *)((char *)h + c->rings_off);
	a->tail = calloc(a->nworkers, sizeof(*a->tail));
	a->dropped_base = calloc(a->nworkers, sizeof(*a->dropped_base));
	a->last_ns = calloc(a->nworkers, sizeof(*a->last_ns));
	if (!a->tail || !a->dropped_base || !a->last_ns) {
		a->h = NULL; /* the caller unmaps */
		th_area_close(a);
		return NULL;
	}
	return a;
}

static int map_area(pid_t pid, unsigned long start, unsigned long end, struct th_area_head **h, size_t *size)
{
	char path[96];
	snprintf(path, sizeof(path), "/proc/%d/map_files/%lx-%lx", (int)pid, start, end);
	int fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		th__set_error("cannot open process %d's run logs (%s): %s%s", (int)pid, path, strerror(errno),
			      errno == EPERM || errno == EACCES ? " (needs root: CAP_SYS_ADMIN)" : "");
		return -1;
	}
	struct stat st;
	if (fstat(fd, &st) != 0 || st.st_size < (off_t)sizeof(struct th_area_head) ||
	    (uint64_t)st.st_size > ((uint64_t)1 << 40)) {
		th__set_error("process %d's run-log area is not one taskhop writes", (int)pid);
		close(fd);
		return -1;
	}
	*size = (size_t)st.st_size;
	*h = mmap(NULL, *size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (*h == MAP_FAILED) {
		th__set_error("cannot map process %d's run logs: %s", (int)pid, strerror(errno));
		return -1;
	}
	return 0;
}

int th__area_adopt(void *mem, size_t size, pid_t pid, bool unmap, struct th_area **out)
{
	struct th_area_head *h = mem;
	struct th_area_head copy; /* checked once, used after: never the live head */
	const char *why = NULL;
	if (size < sizeof(copy)) {
		why = "is too small";
	} else {
		memcpy(&copy, h, sizeof(copy));
		why = !head_ok(&copy, size)     ? "is not one this taskhop can read (another version?)"
		      : !stamps_readable(&copy) ? "is stamped with a CPU counter this process cannot read"
						: NULL;
	}
	if (why) {
		th__set_error("process %d's run-log area %s", (int)pid, why);
		return -1;
	}
	*out = area_new(pid, h, size, &copy);
	if (!*out) {
		th__set_error("out of memory");
		return -1;
	}
	(*out)->unmap = unmap;
	return 0;
}

int th_area_open(pid_t pid, struct th_area **out)
{
	unsigned long start, end;
	int rc = find_area(pid, &start, &end);
	if (rc != 0)
		return rc;
	struct th_area_head *h;
	size_t size;
	if (map_area(pid, start, end, &h, &size) != 0)
		return -1;
	if (th__area_adopt(h, size, pid, true, out) != 0) {
		munmap(h, size);
		return -1;
	}
	return 0;
}

/* pid comes from the area: 0 or less would make kill() name a process group */
static int alive(int32_t pid)
{
	return pid > 0 && !(kill(pid, 0) != 0 && errno == ESRCH);
}

int th_area_busy(const struct th_area *a)
{
	int32_t cur = __atomic_load_n(&a->h->owner, __ATOMIC_ACQUIRE);
	return cur != 0 && cur != (int32_t)getpid() && alive(cur);
}

/* Takes the area from nobody, or from a drainer that is gone (a recorder killed
 * without letting go); never from a live one. */
static int take_owner(struct th_area *a)
{
	int32_t me = (int32_t)getpid();
	for (int tries = 0; tries < 4; tries++) {
		int32_t cur = __atomic_load_n(&a->h->owner, __ATOMIC_ACQUIRE);
		if (cur != 0 && cur != me && alive(cur)) {
			th__set_error("process %d's run logs are drained by process %d already%s", (int)a->pid,
				      (int)cur, cur == a->pid ? " (it records itself)" : " (another recorder)");
			return -1;
		}
		if (__atomic_compare_exchange_n(&a->h->owner, &cur, me, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
			return 0;
	}
	th__set_error("process %d's run logs: their owner keeps changing", (int)a->pid);
	return -1;
}

int th_area_claim(struct th_area *a)
{
	if (take_owner(a) != 0)
		return -1;
	a->claimed = 1;
	/* The rings' pages exist before the workers write them: otherwise the first
	 * lap of runs pays a page fault every 128 runs, in the traced process
	 * (which then still maps each page in on its first store: a minor fault
	 * on a page that exists). */
	th__area_touch((char *)a->h + a->rings_off, a->size - a->rings_off);
	struct th_stamp_anchor now;
	th__stamp_anchor(&now);
	th__stamp_map_reset(&a->map);
	if (th__stamp_map_add(&a->map, &now) != 0) {
		th__set_error("out of memory");
		return -1;
	}
	for (uint32_t i = 0; i < a->nworkers; i++) {
		struct th_area_log *l = &a->logs[i];
		a->tail[i] = __atomic_load_n(&l->head, __ATOMIC_ACQUIRE);
		a->dropped_base[i] = __atomic_load_n(&l->dropped, __ATOMIC_RELAXED);
		__atomic_store_n(&l->tail, a->tail[i], __ATOMIC_RELEASE);
		__atomic_store_n(&l->on, 1, __ATOMIC_RELEASE);
	}
	return 0;
}

/* One worker: the runs [tail, head) copied, dated and packed, tail told. That is all a drain does while the workers run
 * (the recorder makes its bigger records once, at the end, from th_area_runs). */
static long drain_worker(struct th_area *a, uint32_t w, uint64_t head)
{
	uint64_t n = head - a->tail[w];
	if (n == 0)
		return 0;
	if (n > a->cap) {
		/* head went back or leapt past our tail: not the protocol; skip to it */
		a->bad += n > ((uint64_t)1 << 62) ? 0 : n;
		a->tail[w] = head;
		__atomic_store_n(&a->logs[w].tail, head, __ATOMIC_RELEASE);
		return 0;
	}
	size_t kept = th__runlog_pack(a->rings + (size_t)w * a->cap, a->cap - 1, a->tail[w], head, a->nworkers,
				      a->nthreads, &a->map, &a->last_ns[w], &a->kept, &a->bad, &a->lost);
	a->tail[w] = head;
	__atomic_store_n(&a->logs[w].tail, head, __ATOMIC_RELEASE); /* the cells are free again */
	return (long)kept;
}

const struct th_run_record *th_area_runs(struct th_area *a, size_t *n)
{
	size_t done = a->cur.n; /* th__runpack_get moves it on */
	if (a->kept.n > done && th__bigbuf_reserve(&a->recs, a->kept.n * sizeof(struct th_run_record)) == 0)
		th__runpack_get(&a->kept, &a->cur, (struct th_run_record *)a->recs.p + done, a->kept.n - done);
	*n = a->cur.n;
	return a->recs.p;
}

void th_area_forget_runs(struct th_area *a)
{
	th__runpack_clear(&a->kept);
	memset(&a->cur, 0, sizeof(a->cur));
}

long th_area_drain(struct th_area *a)
{
	enum { HEADS = 64 };
	uint64_t heads[HEADS];
	long moved = 0;
	/* heads before the anchor: every stamp copied is older than it (runlog.c) */
	for (uint32_t w0 = 0; w0 < a->nworkers; w0 += HEADS) {
		uint32_t n = a->nworkers - w0 < HEADS ? a->nworkers - w0 : HEADS;
		for (uint32_t i = 0; i < n; i++)
			heads[i] = __atomic_load_n(&a->logs[w0 + i].head, __ATOMIC_ACQUIRE);
		struct th_stamp_anchor now;
		th__stamp_anchor(&now);
		if (th__stamp_map_add(&a->map, &now) != 0)
			return -1;
		for (uint32_t i = 0; i < n; i++) {
			moved += drain_worker(a, w0 + i, heads[i]);
		}
	}
	return moved;
}

uint64_t th_area_lost(const struct th_area *a)
{
	uint64_t d = a->bad + a->lost;
	for (uint32_t i = 0; i < a->nworkers; i++)
		d += __atomic_load_n(&a->logs[i].dropped, __ATOMIC_RELAXED) - a->dropped_base[i];
	return d;
}

int th_area_tid(const struct th_area *a, int thread)
{
	if (thread < 0 || (uint32_t)thread >= a->nthreads)
		return 0;
	int tid = __atomic_load_n(&a->h->tids[thread], __ATOMIC_ACQUIRE);
	return tid > 0 ? tid : 0;
}

int th_area_nthreads(const struct th_area *a)
{
	return (int)a->nthreads;
}

int th_area_nworkers(const struct th_area *a)
{
	return (int)a->nworkers;
}

size_t th_area_ring_runs(const struct th_area *a)
{
	return a->cap;
}

void th_area_close(struct th_area *a)
{
	if (!a)
		return;
	if (a->h && a->claimed) {
		for (uint32_t i = 0; i < a->nworkers; i++)
			__atomic_store_n(&a->logs[i].on, 0, __ATOMIC_RELEASE);
		int32_t me = (int32_t)getpid();
		__atomic_compare_exchange_n(&a->h->owner, &me, 0, false, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED);
	}
	if (a->h && a->unmap)
		munmap(a->h, a->size);
	th__stamp_map_free(&a->map);
	free(a->tail);
	free(a->dropped_base);
	free(a->last_ns);
	th__runpack_free(&a->kept);
	th__bigbuf_free(&a->recs);
	free(a);
}
