/* activation.c — spare threads that take a worker over while the thread serving
 * it is blocked in the kernel inside a task (scheduler activations, Go's handoffp).
 *
 * Each thread has a state word (enum th_slot_state in bpf/taskhop_abi.h) in a
 * slot line: its own, or a line of the BPF backend's mmap'd map. The thread
 * writes RUNTIME, TASK, PARKED; while it is off the CPU inside a task, the
 * kernel side turns TASK into BLOCKED (th_blocking_begin writes BLOCKING).
 * Whoever wants the worker must turn BLOCKED/BLOCKING into TAKEN with a
 * compare-and-swap, and the thread itself turns them back into RUNTIME (at a
 * runtime call, th__act_enter_runtime) or TASK (the kernel side at switch-in,
 * th_blocking_end) with a compare-and-swap too. So exactly one party wins:
 * either the thread keeps its worker, or a spare gets it and the thread, when
 * it comes back, never touches the worker again (a Chase-Lev deque's owner
 * operations from two threads would corrupt it): at its next scheduling point
 * it requeues its task as a wake from no worker and parks as a spare.
 *
 * All spare threads exist from the start (cfg.max_spares, default = workers),
 * so the thread count is bounded by construction: workers + max_spares. */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core.h"
#include "waitq.h"

/* Latency samples kept per run: enough for a median and a p99. */
#define MAX_LATENCY_SAMPLES 65536

static const struct th_activation_backend *backend;

void th_set_activation_backend(const struct th_activation_backend *b)
{
	backend = b;
}

static const char *const mode_names[] = { "off", "bpf", "explicit", "auto" };

const char *th_activations_name(int mode)
{
	return mode >= 0 && mode <= TH_ACT_AUTO ? mode_names[mode] : "?";
}

int th_parse_activations(const char *text, int *mode)
{
	for (int i = 0; text && i <= TH_ACT_AUTO; i++)
		if (!strcmp(text, mode_names[i])) {
			*mode = i;
			return 0;
		}
	return -1;
}

static _Atomic uint32_t *state_word(struct th_os_thread *m)
{
	return (_Atomic uint32_t *)&m->act_slot->state;
}

/* Opens the kernel side for bpf/auto. Returns 0 (rt->act_backend set or
 * auto fell back to explicit) or -1 with the error set (bpf asked, no bpf). */
static int open_backend(struct th_runtime *rt, void **base)
{
	char err[200] = "no BPF activation backend linked in (th_set_activation_backend)";
	*base = backend ? backend->open(rt->nworkers + rt->nspares, err, sizeof(err)) : NULL;
	if (*base) {
		rt->act_backend = backend;
		rt->act_mode = TH_ACT_BPF;
		return 0;
	}
	if (rt->act_mode == TH_ACT_AUTO) {
		rt->act_mode = TH_ACT_EXPLICIT;
		return 0;
	}
	th__set_error("activations=bpf: %s", err);
	return -1;
}

/* Before th_runtime_start creates the threads: the mode in effect, the spare
 * count, and where the state words live. Sets rt->nthreads. */
int th__act_configure(struct th_runtime *rt)
{
	const struct th_config *cfg = &rt->cfg;
	if (cfg->activations < TH_ACT_OFF || cfg->activations > TH_ACT_AUTO) {
		th__set_error("bad activations mode %d", cfg->activations);
		return -1;
	}
	if (cfg->max_spares < 0 || cfg->max_spares > TH_MAX_WORKERS) {
		th__set_error("bad max_spares %d: give 0 (as many as workers) to %d", cfg->max_spares,
			      TH_MAX_WORKERS);
		return -1;
	}
	rt->act_mode = cfg->activations;
	/* kthread runs every task on its own kernel thread: nothing to hand over */
	if (rt->policy->start_task)
		rt->act_mode = TH_ACT_OFF;
	rt->nspares = rt->act_mode == TH_ACT_OFF ? 0 : cfg->max_spares ? cfg->max_spares : rt->nworkers;
	rt->nthreads = rt->nworkers + rt->nspares;
	return 0;
}

/* Called by init_threads once rt->threads exist (not yet running). */
int th__act_init_threads(struct th_runtime *rt)
{
	if (rt->act_mode == TH_ACT_OFF)
		return 0;
	void *base = NULL;
	if ((rt->act_mode == TH_ACT_BPF || rt->act_mode == TH_ACT_AUTO) && open_backend(rt, &base) != 0)
		return -1;
	rt->idle = calloc((size_t)rt->nthreads, sizeof(int));
	rt->act_lat = calloc(MAX_LATENCY_SAMPLES, sizeof(uint64_t));
	if (!rt->idle || !rt->act_lat) {
		th__set_error("out of memory for %d spare threads", rt->nspares);
		return -1;
	}
	for (int i = 0; i < rt->nthreads; i++) {
		struct th_os_thread *m = &rt->threads[i];
		m->act = true;
		if (base)
			m->act_slot = &((struct th_slot_line *)base)[i].s;
		th__act_set(m, i < rt->nworkers ? TH_SLOT_RUNTIME : TH_SLOT_PARKED);
		if (i >= rt->nworkers)
			rt->idle[rt->nidle++] = i;
	}
	return 0;
}

int th__act_start(struct th_runtime *rt)
{
	if (!rt->act_backend)
		return 0;
	char err[200] = "cannot start";
	if (rt->act_backend->start(err, sizeof(err)) == 0)
		return 0;
	th__set_error("activations=bpf: %s", err);
	return -1;
}

/* A backend that lets spares sleep on its events (park/kick) is woken its way;
 * a spare handing a worker to itself is awake already. */
static void wake_spare(struct th_runtime *rt, struct th_os_thread *m)
{
	atomic_store_explicit(&m->spare_word, 1, memory_order_release);
	if (m == th__self_thread())
		return;
	if (rt->act_backend && rt->act_backend->kick)
		rt->act_backend->kick(m->index);
	else
		th_futex_wake(&m->spare_word, 1);
}

/* Stopping (no task is live, so no thread is blocked in one): every parked
 * spare returns. The backend stays open until the threads are joined: they
 * write their state words in its map to the end. */
void th__act_stop(struct th_runtime *rt)
{
	for (int i = 0; rt->act_mode != TH_ACT_OFF && i < rt->nthreads; i++)
		wake_spare(rt, &rt->threads[i]);
}

/* After the threads are joined, before they are freed (the monitor reads them). */
void th__act_free(struct th_runtime *rt)
{
	if (rt->act_backend)
		rt->act_backend->close();
	rt->act_backend = NULL;
	free(rt->idle);
	free(rt->act_lat);
	rt->idle = NULL;
	rt->act_lat = NULL;
}

/* A taker won m's worker while m was coming back from the kernel (the kernel side
 * missed the switch-in, or the take raced the return): the taker is on a CPU
 * reading m's fields; m must not change them (or free its task) before TAKEN. */
static uint32_t wait_taken(_Atomic uint32_t *st)
{
	uint32_t s;
	while ((s = atomic_load_explicit(st, memory_order_acquire)) == TH_SLOT_TAKING)
		th_cpu_relax();
	return s;
}

/* The gate at every runtime call from a task (th__self_worker): a thread may
 * only act as its worker's owner after turning its state into RUNTIME, which
 * fails once a spare has taken the worker. worker_of has tried the fast path
 * (act_gate.h) already: here are the cases it leaves, by compare-and-swap. */
bool th__act_enter_runtime(struct th_os_thread *m)
{
	_Atomic uint32_t *st = state_word(m);
	uint32_t s = atomic_load_explicit(st, memory_order_acquire);
	for (;;) {
		if (s == TH_SLOT_TAKING) {
			s = wait_taken(st);
			continue;
		}
		if (s == TH_SLOT_TAKEN)
			return false;
		if (s != TH_SLOT_TASK && s != TH_SLOT_BLOCKED && s != TH_SLOT_BLOCKING)
			return true; /* already in the runtime */
		if (atomic_compare_exchange_weak_explicit(st, &s, TH_SLOT_RUNTIME, memory_order_acq_rel,
							  memory_order_acquire))
			return true;
	}
}

/* A parked spare, the caller itself when it is one (it is awake and on a CPU:
 * handing the worker to it saves a wake-up). */
static struct th_os_thread *pop_spare(struct th_runtime *rt)
{
	struct th_os_thread *self = th__self_thread(), *m = NULL;
	th_spin_lock(&rt->spare_lock);
	for (int i = 0; self && i < rt->nidle; i++)
		if (rt->idle[i] == self->index) {
			rt->idle[i] = rt->idle[--rt->nidle];
			m = self;
			break;
		}
	if (!m && rt->nidle > 0)
		m = &rt->threads[rt->idle[--rt->nidle]];
	th_spin_unlock(&rt->spare_lock);
	return m;
}

static void push_spare(struct th_runtime *rt, struct th_os_thread *m)
{
	th_spin_lock(&rt->spare_lock);
	rt->idle[rt->nidle++] = m->index;
	th_spin_unlock(&rt->spare_lock);
}

/* Hands the worker of m, blocked inside a task since blocked_ns, to a parked
 * spare, if m is still blocked (the compare-and-swap decides) and a spare is
 * free. m cannot touch its worker, task or run log meanwhile: it is off the
 * CPU, or it will find TAKEN at its next runtime call. */
bool th__act_take_over(struct th_runtime *rt, struct th_os_thread *m, uint64_t blocked_ns)
{
	_Atomic uint32_t *st = state_word(m);
	uint32_t s = atomic_load_explicit(st, memory_order_acquire);
	if (s != TH_SLOT_BLOCKED && s != TH_SLOT_BLOCKING)
		return false;
	struct th_os_thread *spare = pop_spare(rt);
	if (!spare) {
		th_spin_lock(&rt->spare_lock);
		rt->act_missed++;
		th_spin_unlock(&rt->spare_lock);
		return false;
	}
	if (!atomic_compare_exchange_strong_explicit(st, &s, TH_SLOT_TAKING, memory_order_acq_rel,
						     memory_order_acquire)) {
		push_spare(rt, spare); /* it came back first */
		return false;
	}
	struct th_worker *w = m->p;
	struct th_task *t = m->cur;
	/* m's run of t ends in w's log now: m will not write w's log again. The
	 * run is m's (the caller may be the monitor thread), as is its tid. */
	th__log_run(w, m, t, m->run_start_ns, blocked_ns, TH_WHY_BLOCK);
	t->activations++;
	w->activations++;
	/* from here on m may go on (and find its worker gone) */
	atomic_store_explicit(st, TH_SLOT_TAKEN, memory_order_release);
	spare->p = w;
	spare->handoff_ns = blocked_ns;
	wake_spare(rt, spare);
	return true;
}

int th_activate_thread(int thread, uint64_t blocked_ns)
{
	struct th_runtime *rt = th__rt;
	if (!rt || rt->act_mode == TH_ACT_OFF || thread < 0 || thread >= rt->nthreads)
		return 0;
	return th__act_take_over(rt, &rt->threads[thread], blocked_ns);
}

static void pin_to(int cpu)
{
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

/* A parked spare: returns true with m->p set when a worker was handed over,
 * false when the runtime stops. */
bool th__act_wait_for_worker(struct th_runtime *rt, struct th_os_thread *m)
{
	th__act_set(m, TH_SLOT_PARKED);
	const struct th_activation_backend *b = rt->act_backend;
	while (!atomic_load_explicit(&m->spare_word, memory_order_acquire)) {
		if (atomic_load_explicit(&rt->stopping, memory_order_acquire))
			return false;
		if (b && b->park)
			b->park(m->index, &m->spare_word);
		else
			th_futex_wait(&m->spare_word, 0);
	}
	atomic_store_explicit(&m->spare_word, 0, memory_order_relaxed);
	if (!m->p)
		return false; /* woken to stop */
	uint64_t lat = th_now_ns() - m->handoff_ns;
	th_spin_lock(&rt->spare_lock);
	rt->act_count++;
	if (rt->act_nlat < MAX_LATENCY_SAMPLES)
		rt->act_lat[rt->act_nlat++] = lat;
	th_spin_unlock(&rt->spare_lock);
	if (m->p->cpu >= 0)
		pin_to(m->p->cpu); /* the blocked thread's CPU is the one free now */
	th__act_set(m, TH_SLOT_RUNTIME);
	__atomic_store_n(&m->p->tid, m->tid, __ATOMIC_RELEASE);
	return true;
}

/* m came back from a block and found its worker taken: it offers itself as a
 * spare before it requeues its task (finish_switch), so that the task's next
 * block finds one. Requeued first, the task could run on another thread and
 * block again before m was on the list: 1 to 4 % of back-to-back blocks on 1
 * worker with 1 spare found none, and each such block held the worker for the
 * whole call. A taker may hand m a worker from here on (m->p, spare_word):
 * m reads neither until th__act_wait_for_worker. */
void th__act_offer_spare(struct th_runtime *rt, struct th_os_thread *m)
{
	m->p = NULL;
	th__act_set(m, TH_SLOT_PARKED);
	push_spare(rt, m);
}

void th_blocking_begin(void)
{
	struct th_runtime *rt = th__rt;
	struct th_os_thread *m = th__self_thread();
	if (!m || !m->act || !m->cur)
		return;
	_Atomic uint32_t *st = state_word(m);
	uint32_t s = atomic_load_explicit(st, memory_order_relaxed);
	if (s == TH_SLOT_TAKEN || s == TH_SLOT_TAKING ||
	    !atomic_compare_exchange_strong_explicit(st, &s, TH_SLOT_BLOCKING, memory_order_acq_rel,
						     memory_order_relaxed))
		return;
	uint64_t now = th_now_ns();
	m->act_slot->blocked_ns = now;
	/* Go's entersyscallblock: the caller says it will block, so the worker is
	 * handed over now rather than after a monitor notices. */
	th__act_take_over(rt, m, now);
}

void th_blocking_end(void)
{
	struct th_os_thread *m = th__self_thread();
	if (!m || !m->act || !m->cur)
		return;
	_Atomic uint32_t *st = state_word(m);
	uint32_t s = TH_SLOT_BLOCKING;
	if (atomic_compare_exchange_strong_explicit(st, &s, TH_SLOT_TASK, memory_order_acq_rel,
						    memory_order_acquire))
		return;
	if (s == TH_SLOT_TAKING)
		s = wait_taken(st);
	if (s != TH_SLOT_TAKEN) {
		/* a runtime call in between took the word back: still ours */
		th__act_set(m, TH_SLOT_TASK);
		return;
	}
	th__lost_yield(m); /* resumes on whatever thread serves a worker */
}

int th_nthreads(void)
{
	return th__rt ? th__rt->nthreads : 0;
}

int th_thread_tid(int thread)
{
	struct th_runtime *rt = th__rt;
	if (!rt || thread < 0 || thread >= rt->nthreads)
		return -1;
	return __atomic_load_n(&rt->threads[thread].tid, __ATOMIC_ACQUIRE);
}

void th_activation_stats(struct th_activation_stats *out)
{
	struct th_runtime *rt = th__rt;
	memset(out, 0, sizeof(*out));
	if (!rt)
		return;
	th_spin_lock(&rt->spare_lock);
	out->mode = rt->act_mode;
	out->spares = rt->nspares;
	out->activations = rt->act_count;
	out->missed = rt->act_missed;
	out->nlatency = rt->act_nlat;
	out->latency_ns = rt->act_lat;
	th_spin_unlock(&rt->spare_lock);
}

uint64_t th_worker_activations(int worker)
{
	struct th_runtime *rt = th__rt;
	if (!rt || worker < 0 || worker >= rt->nworkers)
		return 0;
	return rt->workers[worker].activations;
}
