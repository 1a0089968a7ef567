/* guard.c — turns a hit on a task stack's guard page into a message that names
 * the task, instead of a bare "Segmentation fault" or silent corruption. */
#define _GNU_SOURCE
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"

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

/* Runs on the worker's alternate signal stack: the faulting stack is full. */
static void on_segv(int sig, siginfo_t *si, void *uc)
{
	struct th_task *t = th__current_task();
	char *addr = si->si_addr;
	if (t && t->stack.map && addr >= (char *)t->stack.map && addr < (char *)t->stack.lo) {
		put("taskhop: task ");
		put_u64(t->id);
		put(" overflowed its stack (");
		put_u64((uint64_t)((char *)t->stack.hi - (char *)t->stack.lo) / 1024);
		put(" KiB) on worker ");
		put_u64((uint64_t)t->last_worker);
		put("; give it more with th_config.stack_size\n");
		signal(SIGSEGV, SIG_DFL);
		raise(SIGSEGV);
		_exit(128 + SIGSEGV);
	}
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

void th__guard_install_thread(void **altstack)
{
	size_t size = SIGSTKSZ > 65536 ? SIGSTKSZ : 65536;
	*altstack = malloc(size);
	if (!*altstack)
		return;
	stack_t ss = { .ss_sp = *altstack, .ss_size = size, .ss_flags = 0 };
	sigaltstack(&ss, NULL);
}

void th__guard_remove_thread(void **altstack)
{
	stack_t ss = { .ss_flags = SS_DISABLE };
	sigaltstack(&ss, NULL);
	free(*altstack);
	*altstack = NULL;
}
