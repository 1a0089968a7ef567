/* rec_probe_cost.c — `make bench`: ns per event of the recorder's paths: a taskhop USDT
 * probe (1- and 5-byte nop sites) not attached vs attached to our real BPF handler, and a
 * store into the mmap'd slot. */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/sdt.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "../../tests/lib/rec_darts.h"
#include "record.h"
#include "taskhop.h"
#include "taskhop_abi.h"

#define N 200000
#define REPEAT 5

/* One site of the runtime's own task_yield probe, so the recorder attaches to it. */
static __attribute__((noinline)) double loop_usdt(void)
{
	uint64_t t0 = th_now_ns();
	for (long i = 0; i < N; i++) {
		DTRACE_PROBE2(taskhop, task_yield, i, 0);
		__asm__ volatile("" ::: "memory");
	}
	return (double)(th_now_ns() - t0) / N;
}

/* The same probe on a 5-byte nop instead of sdt.h's 1-byte one: kernels with the uprobe
 * nop5 optimisation trap far less on it. sdt.h expands _SDT_NOP where a probe is used,
 * so redefining it here changes only the sites below. */
#undef _SDT_NOP
#define _SDT_NOP .byte 0x0f; .byte 0x1f; .byte 0x44; .byte 0x00; .byte 0x00
static __attribute__((noinline)) double loop_usdt5(void)
{
	uint64_t t0 = th_now_ns();
	for (long i = 0; i < N; i++) {
		DTRACE_PROBE2(taskhop, task_yield, i, 0);
		__asm__ volatile("" ::: "memory");
	}
	return (double)(th_now_ns() - t0) / N;
}

static __attribute__((noinline)) double loop_empty(void)
{
	uint64_t t0 = th_now_ns();
	for (long i = 0; i < N; i++)
		__asm__ volatile("" ::: "memory");
	return (double)(th_now_ns() - t0) / N;
}

/* What a worker does at each switch: task id, then the sequence with release order. */
static __attribute__((noinline)) double loop_slot(volatile uint64_t *slot)
{
	uint64_t t0 = th_now_ns();
	for (long i = 0; i < N; i++) {
		slot[0] = (uint64_t)i;
		__atomic_store_n(&slot[1], (uint64_t)i, __ATOMIC_RELEASE);
	}
	return (double)(th_now_ns() - t0) / N;
}

static double median(double (*f)(void))
{
	double v[REPEAT];
	for (int i = 0; i < REPEAT; i++)
		v[i] = f();
	for (int i = 0; i < REPEAT; i++)
		for (int j = i + 1; j < REPEAT; j++)
			if (v[j] < v[i]) {
				double t = v[i];
				v[i] = v[j];
				v[j] = t;
			}
	return v[REPEAT / 2];
}

static volatile uint64_t *slot_mem;
static double slot_once(void)
{
	return loop_slot(slot_mem);
}

int main(void)
{
	const char *why = th_record_unavailable();
	if (why) {
		fprintf(stderr, "rec_probe_cost: %s\n", why);
		return 1;
	}
	printf("bench: rec_loop_empty_ns %.2f ns/event\n", median(loop_empty));
	printf("bench: rec_usdt_unattached_ns %.2f ns/event\n", median(loop_usdt));
	printf("bench: rec_usdt_nop5_unattached_ns %.2f ns/event\n", median(loop_usdt5));

	/* the slot path: the same kind of map the recorder creates */
	LIBBPF_OPTS(bpf_map_create_opts, mo, .map_flags = BPF_F_MMAPABLE);
	int fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "th_bench_slots", 4, TH_SLOT_STRIDE, 64, &mo);
	void *m = fd >= 0 ? mmap(NULL, 64 * TH_SLOT_STRIDE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0)
			  : MAP_FAILED;
	if (m == MAP_FAILED) {
		perror("rec_probe_cost: slot map");
		return 1;
	}
	slot_mem = m;
	printf("bench: rec_slot_store_ns %.2f ns/event\n", median(slot_once));

	/* attached: the recorder following this process with --usdt */
	struct th_config cfg;
	th_config_default(&cfg);
	cfg.workers = 1;
	if (th_runtime_start(&cfg) != 0)
		return 1;
	struct th_record_opts o;
	th_record_opts_default(&o);
	o.usdt = true;
	o.prog_stats = true;
	struct th_record *r = th_record_open(&o);
	if (!r || th_record_attach_self(r) != 0 || th_record_start(r) != 0) {
		fprintf(stderr, "rec_probe_cost: %s\n", th_record_error());
		return 1;
	}
	printf("bench: rec_usdt_attached_ns %.2f ns/event\n", median(loop_usdt));
	printf("bench: rec_usdt_nop5_attached_ns %.2f ns/event\n", median(loop_usdt5));
	th_record_stop(r);
	struct th_rec_prog_stats ps;
	th_record_prog_stats(r, &ps);
	if (ps.usdt_runs)
		printf("bench: rec_usdt_handler_bpf_ns %.1f ns/event\n", (double)ps.usdt_ns / (double)ps.usdt_runs);
	printf("bench: rec_usdt_attached_lost_events %llu events\n",
	       (unsigned long long)th_record_lost_events(r));
	th_record_close(r);
	th_runtime_stop();

	/* the default path's kernel side: tracepoint programs per event during darts, all
	 * context switches of the machine included (most only fail the tgid filter) */
	cfg.workers = 2;
	cfg.run_log_cap = 1 << 16;
	if (th_runtime_start(&cfg) != 0)
		return 1;
	th_record_opts_default(&o);
	o.prog_stats = true;
	r = th_record_open(&o);
	if (!r || th_record_attach_self(r) != 0 || th_record_start(r) != 0) {
		fprintf(stderr, "rec_probe_cost: %s\n", th_record_error());
		return 1;
	}
	struct rec_darts d;
	th_task *tasks[REC_DARTS_MAX];
	rec_darts_default(&d);
	int n = rec_darts_run(&d, tasks);
	for (int i = 0; i < n; i++)
		th_task_free(tasks[i]);
	th_record_stop(r);
	th_record_prog_stats(r, &ps);
	printf("# BPF program run time (BPF_ENABLE_STATS) over a darts run, every context switch of\n"
	       "# the machine included; rec_usdt_handler_bpf_ns is the handler's part of a USDT hit\n");
	if (ps.switch_runs) {
		printf("bench: rec_sched_switch_prog_ns %.1f ns/switch\n", (double)ps.switch_ns / (double)ps.switch_runs);
		printf("bench: rec_sched_switch_prog_runs %llu switches\n", (unsigned long long)ps.switch_runs);
	}
	if (ps.other_runs)
		printf("bench: rec_sched_wakeup_migrate_prog_ns %.1f ns/event\n",
		       (double)ps.other_ns / (double)ps.other_runs);
	th_record_close(r);
	th_runtime_stop();
	return 0;
}
