/* context.c — task stacks (mmap + guard page) and building a task's first frame.
 * The frame matches what th_ctx_switch pops, so the first switch "returns" into
 * th_ctx_trampoline, which calls entry(arg). */
#define _GNU_SOURCE
#include "context.h"
#include "sanitizer.h"

#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

void th_ctx_trampoline(void);

static size_t page_size(void)
{
	return (size_t)sysconf(_SC_PAGESIZE); /* a vDSO-free libc read, no syscall */
}

#ifndef MADV_GUARD_INSTALL
#define MADV_GUARD_INSTALL 102 /* Linux 6.13 uapi; older headers lack it */
#endif

/* A guard region the madvise() accepted but that does not guard: qemu-user
 * (make test-arm64) answers 0 to any advice it does not emulate, and a task
 * overflowing its stack would then write on into the next mapping. So the
 * first stack asks the kernel itself: it cannot copy from a real guard region
 * (write() from it fails with EFAULT). Probed once; two racing probes agree. */
static int probe_guard_regions(void)
{
	size_t ps = page_size();
	int works = 0, fds[2];
	void *m = mmap(NULL, ps, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED)
		return 0;
	if (madvise(m, ps, MADV_GUARD_INSTALL) == 0 && pipe2(fds, O_CLOEXEC | O_NONBLOCK) == 0) {
		works = write(fds[1], m, 1) < 0 && errno == EFAULT;
		close(fds[0]);
		close(fds[1]);
	}
	munmap(m, ps);
	return works;
}

bool th_stack_guard_regions(void)
{
	static _Atomic int known; /* 0: not probed, 1: no, 2: yes */
	int k = atomic_load_explicit(&known, memory_order_relaxed);
	if (k == 0) {
		k = probe_guard_regions() ? 2 : 1;
		atomic_store_explicit(&known, k, memory_order_relaxed);
	}
	return k == 2;
}

/* A PROT_NONE guard splits the mapping in two, and the PROT_NONE and
 * read-write halves of neighbouring stacks cannot merge either: two VMAs per
 * stack, so a breadth-first policy holding tens of thousands of blocked
 * tasks (fib(30) under shared) hit vm.max_map_count (65,530) and aborted.
 * A guard region (MADV_GUARD_INSTALL, Linux 6.13) faults the same way
 * without changing the mapping's protection, so stacks mapped side by side
 * merge (test a_blocked_task_costs_one_mapping). Older kernels refuse it
 * (EINVAL): mprotect then. */
static int install_guard(void *m, size_t guard)
{
	if (th_stack_guard_regions() && madvise(m, guard, MADV_GUARD_INSTALL) == 0)
		return 0;
	return mprotect(m, guard, PROT_NONE);
}

int th_stack_map(struct th_stack *st, size_t size)
{
	size_t ps = page_size();
	/* 64 KiB of guard, not one page: a frame larger than a page (a big local
	 * array) would otherwise jump over the guard into the next mapping. */
	size_t guard = ps > 65536 ? ps : 65536;
	size = (size + ps - 1) & ~(ps - 1);
	size_t total = size + guard;
	/* MAP_NORESERVE|MAP_STACK: pages are touched lazily, as a thread's stack */
	void *m = mmap(NULL, total, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK, -1, 0);
	if (m == MAP_FAILED)
		return -1;
	if (install_guard(m, guard) != 0) {
		munmap(m, total);
		return -1;
	}
	st->map = m;
	st->map_size = total;
	st->lo = (char *)m + guard;
	st->hi = (char *)m + total;
	return 0;
}

void th_stack_unmap(struct th_stack *st)
{
	/* ASan keeps the poison of frames that never returned (a task parked in
	 * its stack loop) after the munmap: memory mapped there later (the next
	 * runtime's run-log area, seen) would look like a stack's redzone. */
	if (st->map) {
		th_asan_unpoison(st->lo, (size_t)((char *)st->hi - (char *)st->lo));
		munmap(st->map, st->map_size);
	}
	memset(st, 0, sizeof(*st));
}

/* arm64's first frame is in context_aarch64.c. */
#if defined(__x86_64__)
void th_ctx_make(struct th_ctx *ctx, const struct th_stack *st,
		 void (*entry)(void *), void *arg)
{
	/* Layout from the top: [ret = trampoline][rbp rbx r12 r13 r14 r15][mxcsr|fpucw].
	 * After the pops, `ret` leaves rsp == top, 16-aligned, which is what the
	 * trampoline's `call` needs. */
	uintptr_t top = (uintptr_t)st->hi & ~(uintptr_t)15;
	uint64_t *sp = (uint64_t *)top;
	*--sp = (uint64_t)(uintptr_t)th_ctx_trampoline;
	*--sp = 0;                               /* rbp */
	*--sp = 0;                               /* rbx */
	*--sp = (uint64_t)(uintptr_t)entry;      /* r12 */
	*--sp = (uint64_t)(uintptr_t)arg;        /* r13 */
	*--sp = 0;                               /* r14 */
	*--sp = 0;                               /* r15 */
	uint32_t mxcsr;
	uint16_t fpucw;
	__asm__ volatile("stmxcsr %0" : "=m"(mxcsr));
	__asm__ volatile("fnstcw %0" : "=m"(fpucw));
	--sp;
	memcpy(sp, &mxcsr, 4);
	memcpy((char *)sp + 4, &fpucw, 2);
	ctx->sp = sp;
}
#elif !defined(__aarch64__)
#error "taskhop switches tasks on x86-64 and arm64 only (context_*.S)"
#endif
