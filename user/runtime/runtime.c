/* runtime.c — starting and stopping the worker pool, configuration, errors,
 * and the small services policies and the recorder use (placement, logs, slots). */
#define _GNU_SOURCE
#include <errno.h>
#include <hwloc.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "errbuf.h"
#include "guard.h"
#include "core.h"
#include "core_check.h"
#include "preempt.h"
#include "taskhop_abi.h"
#include "stackcache.h"
#include "waitq.h"

#define DEFAULT_STACK (256 * 1024)
#define MIN_STACK ((size_t)16 * 1024)
#define MAX_STACK ((size_t)1 << 30)

static struct th_runtime runtime; /* static: a finishing thread may still touch it */
struct th_runtime *th__rt;

void th__set_error(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	th_errbuf_vset(TH_ERRBUF_RUNTIME, fmt, ap);
	va_end(ap);
}

const char *th_last_error(void)
{
	return th_errbuf_get(TH_ERRBUF_RUNTIME);
}

uint64_t th_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

void th_config_default(struct th_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->workers = TH_WORKERS_AUTO;
	cfg->policy = "shared";
	cfg->stack_size = DEFAULT_STACK;
	cfg->seed = 1;
	cfg->placement = TH_PLACE_RANDOM;
}

int th_parse_workers(const char *text, int *workers)
{
	if (!text || !*text)
		return -1;
	if (!strcmp(text, "auto")) {
		*workers = TH_WORKERS_AUTO;
		return 0;
	}
	if (!strcmp(text, "cores")) {
		*workers = TH_WORKERS_CORES;
		return 0;
	}
	/* digits only: strtol alone would take " 3", "+3" and "3 " too */
	if (strspn(text, "0123456789") != strlen(text))
		return -1;
	char *end;
	errno = 0;
	long n = strtol(text, &end, 10);
	if (errno || *end || n < 1 || n > TH_MAX_WORKERS)
		return -1;
	*workers = (int)n;
	return 0;
}

static int physical_cores(void)
{
	hwloc_topology_t topo;
	if (hwloc_topology_init(&topo) != 0)
		return -1;
	int n = -1;
	if (hwloc_topology_load(topo) == 0)
		n = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_CORE);
	hwloc_topology_destroy(topo);
	return n;
}

static int resolve_workers(int requested)
{
	if (requested > 0)
		return requested <= TH_MAX_WORKERS ? requested : -1;
	if (requested == TH_WORKERS_AUTO) {
		long n = sysconf(_SC_NPROCESSORS_ONLN);
		return n > 0 ? (int)(n < TH_MAX_WORKERS ? n : TH_MAX_WORKERS) : -1;
	}
	if (requested == TH_WORKERS_CORES) {
		int n = physical_cores();
		return n > 0 ? (n < TH_MAX_WORKERS ? n : TH_MAX_WORKERS) : -1;
	}
	return -1;
}

/* Worker i gets the i-th CPU this process may run on (wrapping around). */
static void assign_cpus(struct th_runtime *rt)
{
	cpu_set_t allowed;
	int cpus[CPU_SETSIZE], n = 0;
	if (sched_getaffinity(0, sizeof(allowed), &allowed) == 0)
		for (int c = 0; c < CPU_SETSIZE; c++)
			if (CPU_ISSET(c, &allowed))
				cpus[n++] = c;
	for (int i = 0; i < rt->nworkers; i++)
		rt->workers[i].cpu = (rt->cfg.pin && n > 0) ? cpus[i % n] : -1;
}

/* Thread i < nworkers starts serving worker i; the others are spares. */
static int init_threads(struct th_runtime *rt)
{
	rt->threads = aligned_alloc(64, sizeof(struct th_os_thread) * (size_t)rt->nthreads);
	if (!rt->threads)
		return -1;
	memset(rt->threads, 0, sizeof(struct th_os_thread) * (size_t)rt->nthreads);
	for (int i = 0; i < rt->nthreads; i++) {
		struct th_os_thread *m = &rt->threads[i];
		m->index = i;
		m->rt = rt;
		m->p = i < rt->nworkers ? &rt->workers[i] : NULL;
		m->fpenv = rt->cfg.task_fpenv;
		m->act_slot = &m->own_line.s;
	}
	return th__act_init_threads(rt);
}

static int init_workers(struct th_runtime *rt)
{
	rt->workers = aligned_alloc(64, sizeof(struct th_worker) * (size_t)rt->nworkers);
	if (!rt->workers)
		return -1;
	memset(rt->workers, 0, sizeof(struct th_worker) * (size_t)rt->nworkers);
	for (int i = 0; i < rt->nworkers; i++) {
		struct th_worker *w = &rt->workers[i];
		w->index = i;
		w->rt = rt;
		w->tid = 0;
		th_rng_seed(&w->rng, rt->cfg.seed ^ 0x5eed, (uint64_t)i + 1);
		w->stacks = th_stack_cache_new();
		if (!w->stacks)
			return -1;
	}
	assign_cpus(rt);
	if (init_threads(rt) != 0)
		return -1;
	return th__area_create(rt);
}

static void free_workers(struct th_runtime *rt)
{
	th__act_free(rt);
	if (!rt->workers)
		return;
	th__area_destroy(rt);
	for (int i = 0; i < rt->nworkers; i++) {
		th_stack_cache_free(rt->workers[i].stacks);
		th__free_task_cache(&rt->workers[i]);
	}
	free(rt->workers);
	rt->workers = NULL;
	free(rt->threads);
	rt->threads = NULL;
}


static int start_threads(struct th_runtime *rt)
{
	for (int i = 0; i < rt->nthreads; i++) {
		struct th_os_thread *m = &rt->threads[i];
		pthread_attr_t attr;
		pthread_attr_init(&attr);
		if (m->p && m->p->cpu >= 0) {
			cpu_set_t set;
			CPU_ZERO(&set);
			CPU_SET(m->p->cpu, &set);
			pthread_attr_setaffinity_np(&attr, sizeof(set), &set);
		}
		int err = pthread_create(&m->thread, &attr, th__thread_main, m);
		pthread_attr_destroy(&attr);
		if (err) {
			th__set_error("cannot start worker thread %d: %s", i, strerror(err));
			atomic_store(&rt->stopping, true);
			th__wake_all_workers(rt);
			for (int j = 0; j < i; j++)
				pthread_join(rt->threads[j].thread, NULL);
			return -1;
		}
	}
	/* th_worker_tid must be valid on return: wait for each thread's tid */
	for (int i = 0; i < rt->nthreads; i++)
		while (!__atomic_load_n(&rt->threads[i].tid, __ATOMIC_ACQUIRE))
			sched_yield();
	for (int i = 0; i < rt->nworkers; i++)
		while (!__atomic_load_n(&rt->workers[i].tid, __ATOMIC_ACQUIRE))
			sched_yield();
	return 0;
}

/* Stops every thread (no task is live) and frees the runtime. */
static void join_threads(struct th_runtime *rt)
{
	atomic_store(&rt->stopping, true);
	th__act_stop(rt);
	th__wake_all_workers(rt);
	for (int i = 0; i < rt->nthreads; i++)
		pthread_join(rt->threads[i].thread, NULL);
	/* no task is live: each one pushed was handed back (a lost one would
	 * have kept th_runtime_stop waiting for it) */
	TH_CHECK(atomic_load(&rt->queued) == 0, "policy %s: %ld tasks pushed and never handed back",
		 rt->policy->name, (long)atomic_load(&rt->queued));
	if (rt->policy->fini)
		rt->policy->fini(rt);
	th__runlog_detach(rt);
	free_workers(rt);
	th__rt = NULL;
}

int th_runtime_start(const struct th_config *cfg_in)
{
	struct th_runtime *rt = &runtime;
	if (th__rt) {
		th__set_error("the taskhop runtime is already running (call th_runtime_stop first)");
		return -1;
	}
	struct th_config cfg;
	if (cfg_in)
		cfg = *cfg_in;
	else
		th_config_default(&cfg);
	if (!cfg.policy)
		cfg.policy = "shared";
	if (!cfg.stack_size)
		cfg.stack_size = DEFAULT_STACK;
	/* Below 16 KiB (glibc's PTHREAD_STACK_MIN) a kthread task cannot start
	 * and a signal frame barely fits; above 1 GiB a few tasks exhaust the
	 * address space, and 2^50 would fail only at the first run. */
	if (cfg.stack_size < MIN_STACK || cfg.stack_size > MAX_STACK) {
		th__set_error("th_config.stack_size %zu bytes is out of range: give 16 KiB..1 GiB (0 means 256 KiB)",
			      cfg.stack_size);
		return -1;
	}
	const struct th_policy *pol = th__policy_resolve(cfg.policy);
	if (!pol)
		return -1;
	if (th__preempt_check(&cfg) != 0)
		return -1;
	int n = resolve_workers(cfg.workers);
	if (n < 1) {
		th__set_error("bad worker count %d: give 1..%d, 'auto' or 'cores'", cfg.workers, TH_MAX_WORKERS);
		return -1;
	}
	memset(rt, 0, sizeof(*rt));
	rt->cfg = cfg;
	rt->nworkers = n;
	rt->policy = pol;
	atomic_init(&rt->next_id, 1);
	th_rng_seed(&rt->place_rng, cfg.seed, UINT64_MAX);
	th__tscclock_calibrate();
	if (th__act_configure(rt) != 0)
		return -1;
	th_errbuf_clear(TH_ERRBUF_RUNTIME);
	if (init_workers(rt) != 0) {
		free_workers(rt);
		if (!*th_last_error())
			th__set_error("out of memory starting %d workers", n);
		return -1;
	}
	if (pol->init && pol->init(rt) != 0) {
		free_workers(rt);
		return -1;
	}
	th__rt = rt;
	th__runlog_attach(rt);
	th__guard_install_process();
	if (start_threads(rt) != 0) {
		if (pol->fini)
			pol->fini(rt);
		th__runlog_detach(rt);
		free_workers(rt);
		th__rt = NULL;
		return -1;
	}
	if (th__act_start(rt) != 0) {
		join_threads(rt);
		return -1;
	}
	return 0;
}

void th_runtime_stop(void)
{
	struct th_runtime *rt = th__rt;
	if (!rt)
		return;
	/* It waits for every task, the caller included: a deadlock. There is
	 * no return value to report it and nothing a caller could do but go
	 * on as if the runtime were stopped, so it is fatal like other misuse. */
	th_task *self = th_self_task();
	if (self || th__self_worker()) {
		fprintf(stderr, "taskhop: th_runtime_stop called from inside task %llu: it waits for every "
			"task to finish, this one included; call it from the thread that started the runtime\n",
			self ? (unsigned long long)th_task_id(self) : 0ULL);
		abort();
	}
	th__wait_for_every_task(rt);
	join_threads(rt);
}

int th_nworkers(void)
{
	return th__rt ? th__rt->nworkers : 0;
}

const char *th_policy_name(void)
{
	return th__rt ? th__rt->policy->name : NULL;
}

int th_worker_tid(int worker)
{
	struct th_runtime *rt = th__rt;
	if (!rt || worker < 0 || worker >= rt->nworkers)
		return -1;
	return rt->workers[worker].tid;
}

/* Placement for tasks spawned without a worker. The lock keeps one seeded
 * sequence, so a run's placements repeat under the same seed. */
int th__place(struct th_runtime *rt)
{
	if (rt->cfg.placement == TH_PLACE_ROUNDROBIN)
		return (int)(atomic_fetch_add(&rt->rr_next, 1) % (uint32_t)rt->nworkers);
	th_spin_lock(&rt->place_lock);
	uint64_t r = th_rng_next(&rt->place_rng);
	th_spin_unlock(&rt->place_lock);
	return (int)(r % (uint64_t)rt->nworkers);
}

/* One slot per thread: thread i < nworkers starts serving worker i, so the
 * recorder's "slot i is worker i" holds until a spare takes a worker over. */
void th_publish_slots(void *base, size_t stride)
{
	struct th_runtime *rt = th__rt;
	for (int i = 0; rt && i < rt->nthreads; i++)
		rt->threads[i].slot = base ? (struct th_slot *)((char *)base + (size_t)i * stride) : NULL;
}
