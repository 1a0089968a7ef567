/* preempt.c — asynchronous preemption of compute tasks: a timer per worker signals
 * it, and a task that has run a whole quantum is sent to a trampoline that yields. */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "core.h"
#include "preempt.h"

/* How it works, after Go 1.14's asynchronous preemption (signal_unix.go,
 * preempt_amd64.s), with a timer per worker instead of sysmon:
 *
 * Each worker thread has a CLOCK_MONOTONIC timer that sends it SIGURG every
 * quantum Q. The runtime bumps m->run_seq whenever a run begins (a switch,
 * or a yield the policy let go on). A tick that finds the same run_seq as
 * the tick before knows the task has run at least Q without giving the
 * policy a say: it then preempts it, if the thread is in the own code of a
 * preemptible task (th__preempt_on, see preempt.h) and nothing else looks
 * odd (the interrupted stack pointer is inside the task's stack with room
 * left, the signal mask is the worker's usual one, so no other handler is
 * running). So a task runs between Q and 2Q before it is interrupted, as a
 * goroutine runs 10 to 20 ms before sysmon asks.
 *
 * Preempting means rewriting the interrupted context: the handler pushes
 * the interrupted pc below the 128-byte red zone (C code may keep data
 * there; Go's ABI has no red zone, so Go pushes it right at sp) and sets pc
 * to th_preempt_trampoline. When the handler returns, the kernel resumes
 * the task in the trampoline as if the interrupted instruction had called
 * it; the trampoline saves every register the yield may change, yields
 * through the policy (th__yield_preempted), restores them and returns with
 * `ret $128`, which also gives back the red zone.
 *
 * Why SIGURG: Go's reasons. Its default action is to ignore it, so a late
 * tick after the runtime stopped is harmless; programs rarely use it; and
 * debuggers pass it through without stopping. A SIGURG that is not ours
 * (not from our timer) goes to whatever handler was there before.
 *
 * Why a timer per worker, not a monitor thread: the kernel fires the timer
 * from its own hrtimer interrupt on the worker's CPU, so a tick costs one
 * signal delivery; a monitor thread would wake every Q and take a CPU from
 * a worker on a 2-CPU machine. The timer stops while its worker sleeps, so
 * idle workers are not woken to find nothing to do.
 *
 * Where it cannot work it is refused at th_runtime_start: other
 * architectures (no trampoline yet), and ThreadSanitizer, which delays an
 * asynchronous signal to its own safe points and gives the handler a copy
 * of the interrupted context, so the task cannot be redirected. */

#define MIN_QUANTUM_NS 10000ull           /* 10 us: a tick costs about a microsecond */
#define MAX_QUANTUM_NS 10000000000ull     /* 10 s */
#define PREEMPT_SIGNAL SIGURG

__thread bool th__preempt_on __attribute__((tls_model("initial-exec")));
__thread uint64_t th__preempt_pending __attribute__((tls_model("initial-exec")));

/* Why a stretched tick: a tick costs a signal (26 us on this VM), and a task
 * alone on a machine with nothing else to run pays it every quantum for
 * nothing (darts under fcfs: the long task's last second, alone, lost 3% to
 * its ticks). A preemption that finds nothing else to run doubles the
 * worker's period, up to MAX_STRETCH quanta; a task pushed anywhere brings
 * every stretched worker back to one quantum (th__preempt_unstretch), so new
 * work waits at most one quantum more than it would have, once. */
#define MAX_STRETCH 16u

struct th_preempt_worker {
	timer_t timer;
	struct itimerspec period;  /* one quantum */
	_Atomic unsigned stretch;  /* the timer's period in quanta: 1 .. MAX_STRETCH */
	uint64_t seen_seq;         /* run_seq at the last tick */
	unsigned long usual_mask;  /* first word of the worker's signal mask */
};

static const char timer_tag;      /* sigev_value of our timers */

uint64_t th__thread_cpu_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

uint64_t th_task_cpu_ns(void)
{
	bool preempt = th__nopreempt_begin(); /* the clock and the skew of one thread */
	struct th_task *t = th__thread_task;
	uint64_t ns = th__thread_cpu_ns() + (uint64_t)(t ? t->cpu_skew_ns : 0);
	th__nopreempt_end(preempt);
	return ns;
}

#if defined(__x86_64__) && !defined(__SANITIZE_THREAD__)
#include <cpuid.h>
#include <ucontext.h>

void th_preempt_trampoline(void); /* preempt_x86_64.S */

static struct sigaction previous; /* the SIGURG handler we replaced */

/* A SIGURG someone else sent: theirs, as if we were not here. */
static void forward(int sig, siginfo_t *si, void *uc)
{
	if ((previous.sa_flags & SA_SIGINFO) && previous.sa_sigaction)
		previous.sa_sigaction(sig, si, uc);
	else if (previous.sa_handler != SIG_DFL && previous.sa_handler != SIG_IGN && previous.sa_handler)
		previous.sa_handler(sig);
}


/* Read by the trampoline: which state components xsave saves, and how many
 * bytes that takes (CPUID leaf 0xD for the enabled features). */
uint64_t th__xsave_mask;
uint32_t th__xsave_size;

/* x87, SSE, AVX and the three AVX-512 parts: all the registers C code or
 * its libraries may use in a task. Left out: MPX (gone from CPUs and
 * compilers), PKRU (a thread's protection keys are the thread's, not the
 * task's: restoring them on another worker would be wrong), AMX tiles (off
 * unless a thread asks the kernel for them). */
#define XSAVE_USER_FEATURES 0xe7ull

static const char *xsave_setup(void)
{
	unsigned a, b, c, d;
	if (!__get_cpuid(1, &a, &b, &c, &d) || !(c & bit_OSXSAVE))
		return "this CPU or kernel has no XSAVE, which the preemption trampoline needs";
	uint32_t lo, hi;
	__asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
	uint64_t xcr0 = (uint64_t)hi << 32 | lo;
	__cpuid_count(0xd, 0, a, b, c, d);
	th__xsave_mask = xcr0 & XSAVE_USER_FEATURES;
	th__xsave_size = (b + 63) & ~63u; /* size for all of XCR0: enough for our part */
	return NULL;
}

/* Room the trampoline and the yield below it need on the task's stack. */
static uintptr_t stack_room(void)
{
	return 128 + 8 + 256 + th__xsave_size + 16384;
}

static bool preempt_here(struct th_os_thread *m, ucontext_t *uc)
{
	struct th_task *t = m->cur;
	greg_t *g = uc->uc_mcontext.gregs;
	uintptr_t sp = (uintptr_t)g[REG_RSP];
	if (!t || sp > (uintptr_t)t->stack.hi || sp < (uintptr_t)t->stack.lo + stack_room())
		return false; /* on another stack (a signal stack), or too little room */
	if (uc->uc_sigmask.__val[0] != m->preempt->usual_mask)
		return false; /* another handler is running on the task's stack */
	sp -= 128 + 8;
	*(uint64_t *)sp = (uint64_t)g[REG_RIP];
	g[REG_RSP] = (greg_t)sp;
	g[REG_RIP] = (greg_t)(uintptr_t)th_preempt_trampoline;
	return true;
}

static void on_tick(int sig, siginfo_t *si, void *uc)
{
	if (si->si_code != SI_TIMER || si->si_value.sival_ptr != &timer_tag) {
		forward(sig, si, uc);
		return;
	}
	struct th_os_thread *m = th__self_thread();
	struct th_preempt_worker *p = m ? m->preempt : NULL;
	if (!p)
		return;
	uint64_t seq = m->run_seq;
	if (seq != p->seen_seq) { /* a run began since the last tick */
		p->seen_seq = seq;
		return;
	}
	/* the trampoline runs with the flag off: a tick during it does nothing.
	 * The next run, which begins right after, is the one the next tick
	 * should find: it will have run a whole quantum. */
	if (th__preempt_on && preempt_here(m, uc)) {
		th__preempt_on = false;
		th__preempt_pending = 0;
		p->seen_seq = seq + 1;
	} else if (!th__preempt_on && m->cur && m->cur->preemptible) {
		th__preempt_pending = seq + 1; /* in the runtime: at its exit */
	}
}

static int install_handler(void)
{
	struct sigaction cur;
	sigaction(PREEMPT_SIGNAL, NULL, &cur);
	if ((cur.sa_flags & SA_SIGINFO) && cur.sa_sigaction == on_tick)
		return 0;
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_tick;
	/* SA_ONSTACK: the kernel's signal frame goes on the worker's signal
	 * stack (guard.c), not on the task's; SA_RESTART: a system call the
	 * tick interrupts is restarted, preempted or not. */
	sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_RESTART;
	sigemptyset(&sa.sa_mask);
	if (sigaction(PREEMPT_SIGNAL, &sa, &previous) != 0) {
		th__set_error("preemption: cannot install the SIGURG handler: %s", strerror(errno));
		return -1;
	}
	return 0;
}

static const char *unsupported(void)
{
	return xsave_setup();
}
#else
static const char *unsupported(void)
{
#if defined(__SANITIZE_THREAD__)
	return "preemption is not available under ThreadSanitizer: it delays asynchronous signals "
	       "to its own safe points and hands the handler a copy of the interrupted context, "
	       "so the handler cannot redirect a task";
#else
	return "preemption is implemented for x86-64 only";
#endif
}

static int install_handler(void)
{
	return -1;
}
#endif

/* The trampoline's call, with the task's registers saved on its stack. The
 * thread CPU clocks on both sides keep th_task_cpu_ns the task's own. */
void th__preempt_yield(void)
{
	struct th_task *t = th__thread_task;
	int64_t left = (int64_t)th__thread_cpu_ns();
	th__yield_preempted();
	t->cpu_skew_ns += left - (int64_t)th__thread_cpu_ns();
	th__preempt_on = true; /* back to the task's own code, on this thread */
}

/* th__nopreempt_end found a pending preemption: still the overdue run? */
void th__preempt_at_exit(void)
{
	struct th_os_thread *m = th__self_thread();
	uint64_t pending = th__preempt_pending;
	th__preempt_pending = 0;
	if (!m || !m->cur || pending != m->run_seq + 1)
		return; /* the task has yielded or moved since */
	th__preempt_on = false;
	th__preempt_yield();
}

int th__preempt_check(const struct th_config *cfg)
{
	if (!cfg->preempt_ns)
		return 0;
	if (cfg->preempt_ns < MIN_QUANTUM_NS || cfg->preempt_ns > MAX_QUANTUM_NS) {
		th__set_error("preemption quantum %llu ns is out of range (10 us to 10 s)",
			      (unsigned long long)cfg->preempt_ns);
		return -1;
	}
	const char *why = unsupported();
	if (why) {
		th__set_error("%s", why);
		return -1;
	}
	return install_handler();
}

void th__preempt_thread_start(struct th_os_thread *m)
{
	uint64_t q = m->rt->cfg.preempt_ns;
	if (!q || m->rt->policy->start_task) /* kthread: the kernel preempts its threads */
		return;
	struct th_preempt_worker *p = calloc(1, sizeof(*p));
	if (!p)
		goto fail;
	struct sigevent ev;
	memset(&ev, 0, sizeof(ev));
	ev.sigev_notify = SIGEV_THREAD_ID;
	ev.sigev_signo = PREEMPT_SIGNAL;
	ev.sigev_value.sival_ptr = (void *)&timer_tag;
	ev._sigev_un._tid = (pid_t)syscall(SYS_gettid);
	if (timer_create(CLOCK_MONOTONIC, &ev, &p->timer) != 0)
		goto fail;
	sigset_t mask;
	pthread_sigmask(SIG_SETMASK, NULL, &mask);
	memcpy(&p->usual_mask, &mask, sizeof(p->usual_mask));
	p->period.it_interval.tv_sec = (time_t)(q / 1000000000u);
	p->period.it_interval.tv_nsec = (long)(q % 1000000000u);
	p->period.it_value = p->period.it_interval;
	atomic_init(&p->stretch, 1u);
	m->preempt = p;
	timer_settime(p->timer, 0, &p->period, NULL);
	return;
fail:
	/* the worker runs on unpreempted; say so once, the run is still valid */
	free(p);
	static const char msg[] = "taskhop: a worker could not create its preemption timer; "
				  "its tasks run unpreempted\n";
	(void)!write(2, msg, sizeof(msg) - 1);
}

void th__preempt_thread_stop(struct th_os_thread *m)
{
	struct th_preempt_worker *p = m->preempt;
	if (!p)
		return;
	m->preempt = NULL; /* a tick already on its way finds nothing to do */
	if (atomic_load_explicit(&p->stretch, memory_order_relaxed) > 1u)
		atomic_fetch_sub_explicit(&m->rt->preempt_stretched, 1, memory_order_relaxed);
	timer_delete(p->timer);
	free(p);
}

static void arm(struct th_preempt_worker *p, unsigned k)
{
	uint64_t ns = ((uint64_t)p->period.it_interval.tv_sec * 1000000000u +
		       (uint64_t)p->period.it_interval.tv_nsec) * k;
	struct itimerspec t;
	t.it_interval.tv_sec = (time_t)(ns / 1000000000u);
	t.it_interval.tv_nsec = (long)(ns % 1000000000u);
	t.it_value = t.it_interval;
	timer_settime(p->timer, 0, &t, NULL);
}

/* p back to one quantum; true if it was stretched. */
static bool unstretch(struct th_runtime *rt, struct th_preempt_worker *p)
{
	if (atomic_exchange_explicit(&p->stretch, 1u, memory_order_relaxed) <= 1u)
		return false;
	atomic_fetch_sub_explicit(&rt->preempt_stretched, 1, memory_order_relaxed);
	arm(p, 1);
	return true;
}

void th__preempt_found_nothing(struct th_os_thread *m)
{
	struct th_preempt_worker *p = m->preempt;
	if (!p)
		return;
	unsigned k = atomic_load_explicit(&p->stretch, memory_order_relaxed);
	if (k >= MAX_STRETCH)
		return;
	/* counted before the timer moves: a push that comes now sees it */
	if (k == 1u)
		atomic_fetch_add_explicit(&m->rt->preempt_stretched, 1, memory_order_relaxed);
	atomic_store_explicit(&p->stretch, k * 2u, memory_order_relaxed);
	arm(p, k * 2u);
}

void th__preempt_unstretch(struct th_runtime *rt)
{
	for (int i = 0; i < rt->nthreads; i++) {
		struct th_preempt_worker *p = rt->threads[i].preempt;
		if (p)
			unstretch(rt, p);
	}
}

void th__preempt_idle(struct th_os_thread *m, bool idle)
{
	static const struct itimerspec off;
	struct th_preempt_worker *p = m->preempt;
	if (!p)
		return;
	if (idle)
		timer_settime(p->timer, 0, &off, NULL);
	else if (!unstretch(m->rt, p)) /* woken for work: one quantum */
		timer_settime(p->timer, 0, &p->period, NULL);
}
