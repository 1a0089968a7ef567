/* guard.c — turns a hit on a task stack's guard page into a message that names
 * the task, instead of a bare "Segmentation fault" or silent corruption. */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "guard.h"
#include "core.h"

static struct sigaction previous;

static void put(const char *s)
{
	(void)!write(2, s, strlen(s));
}

static void put_u64(uint64_t v)
{
	char buf[24];
	int i = sizeof(buf);
	buf[--i] = 0;
	do
		buf[--i] = (char)('0' + v % 10);
	while ((v /= 10) && i > 0);
	put(buf + i);
}

static void put_worker(int worker)
{
	if (worker < 0)
		put("-1 (its own thread)");
	else
		put_u64((uint64_t)worker);
}

/* A kthread task runs on a pthread stack with glibc's guard region at its
 * low end; the thread notes where (th__guard_enter_task_thread). */
static __thread char *thread_guard_lo, *thread_guard_hi;
static __thread size_t thread_stack_bytes;

/* Is addr in the guard of the running task's stack? Sets the task, its
 * stack's size and its worker (-1: a kthread task on its own thread). */
static bool task_overflowed(const char *addr, struct th_task **task, size_t *bytes, int *worker)
{
	/* not th__self_worker(): with activations it changes the thread's state */
	struct th_task *t = th__current_task();
	if (t && t->stack.map && addr >= (char *)t->stack.map && addr < (char *)t->stack.lo) {
		*task = t;
		*bytes = (size_t)((char *)t->stack.hi - (char *)t->stack.lo);
		*worker = t->last_worker;
		return true;
	}
	t = th__self_thread() ? NULL : th_self_task();
	if (t && addr >= thread_guard_lo && addr < thread_guard_hi) {
		*task = t;
		*bytes = thread_stack_bytes;
		*worker = -1;
		return true;
	}
	return false;
}

/* Says which task overflowed, then dies of the SIGSEGV itself (a shell
 * prints "Segmentation fault", a core is dumped where enabled): the signal
 * is blocked while its handler runs, so unblock it before raising. */
static void report_overflow(const struct th_task *t, size_t bytes, int worker)
{
	put("taskhop: task ");
	put_u64(t->id);
	put(" overflowed its stack (");
	put_u64((uint64_t)bytes / 1024);
	put(" KiB) on worker ");
	put_worker(worker);
	put("; give it more with th_config.stack_size\n");
	signal(SIGSEGV, SIG_DFL);
	sigset_t segv;
	sigemptyset(&segv);
	sigaddset(&segv, SIGSEGV);
	pthread_sigmask(SIG_UNBLOCK, &segv, NULL);
	raise(SIGSEGV);
	_exit(128 + SIGSEGV);
}

/* Runs on the thread's alternate signal stack: the faulting stack is full. */
static void on_segv(int sig, siginfo_t *si, void *uc)
{
	struct th_task *t;
	size_t bytes;
	int worker;
	if (task_overflowed(si->si_addr, &t, &bytes, &worker))
		report_overflow(t, bytes, worker);
	/* Not ours: hand over to whoever was there before (e.g. ASan), or die. */
	if (previous.sa_flags & SA_SIGINFO && previous.sa_sigaction) {
		previous.sa_sigaction(sig, si, uc);
		return;
	}
	if (previous.sa_handler != SIG_DFL && previous.sa_handler != SIG_IGN && previous.sa_handler) {
		previous.sa_handler(sig);
		return;
	}
	signal(SIGSEGV, SIG_DFL); /* returning re-faults and takes the default */
}

/* At each runtime start: someone (a test harness, ASan) may have replaced
 * our handler since the last one; chain to whatever is there now. */
void th__guard_install_process(void)
{
	struct sigaction cur;
	sigaction(SIGSEGV, NULL, &cur);
	if ((cur.sa_flags & SA_SIGINFO) && cur.sa_sigaction == on_segv)
		return;
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_segv;
	sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGSEGV, &sa, &previous);
}

/* Gives the calling thread an alternate signal stack, so that the handler
 * can run when the thread's own stack is the one that is full. */
static void *altstack_on(void)
{
	size_t size = SIGSTKSZ > 65536 ? SIGSTKSZ : 65536;
	void *mem = malloc(size);
	if (!mem)
		return NULL;
	stack_t ss = { .ss_sp = mem, .ss_size = size, .ss_flags = 0 };
	sigaltstack(&ss, NULL);
	return mem;
}

static void altstack_off(void *mem)
{
	stack_t ss = { .ss_flags = SS_DISABLE };
	sigaltstack(&ss, NULL);
	free(mem);
}

void th__guard_install_thread(void **altstack)
{
	*altstack = altstack_on();
}

void th__guard_remove_thread(void **altstack)
{
	altstack_off(*altstack);
	*altstack = NULL;
}

void *th__guard_enter_task_thread(size_t stack_bytes)
{
	pthread_attr_t attr;
	if (pthread_getattr_np(pthread_self(), &attr) == 0) {
		void *lo;
		size_t size, guard = 0;
		pthread_attr_getstack(&attr, &lo, &size);
		pthread_attr_getguardsize(&attr, &guard);
		pthread_attr_destroy(&attr);
		/* The guard is just below the stack glibc reports (2.36), or the
		 * low end of it (older glibc): take both, as the usable part
		 * of the stack never faults. */
		thread_guard_lo = (char *)lo - guard;
		thread_guard_hi = (char *)lo + guard;
		thread_stack_bytes = stack_bytes;
	}
	return altstack_on();
}

void th__guard_leave_task_thread(void *altstack)
{
	altstack_off(altstack);
	thread_guard_lo = thread_guard_hi = NULL;
}
