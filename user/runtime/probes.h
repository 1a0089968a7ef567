/* probes.h — the runtime's USDT probes (provider "taskhop"), one per scheduling event.
 * Unattached, each is a nop; bpftrace, perf and our recorder can attach to them. */
#ifndef TASKHOP_PROBES_H
#define TASKHOP_PROBES_H

#include <sys/sdt.h>

/* A 5-byte nop at each probe site instead of sdt.h's 1-byte one: the kernel
 * can turn an attached uprobe on a nop5 into a call instead of a trap,
 * ~1.4 us instead of ~4.9 us per hit here (tools/bench/rec_probe_cost.c).
 * Unattached, both cost nothing measurable. sdt.h expands _SDT_NOP where a
 * probe is used, so redefining it after the include is enough. */
#if defined(__x86_64__)
#undef _SDT_NOP
#define _SDT_NOP .byte 0x0f; .byte 0x1f; .byte 0x44; .byte 0x00; .byte 0x00
#endif

/* name                  arguments */
/* task_spawn            task id, spawning worker (-1: plain thread), home worker (-1: any) */
#define TH_PROBE_TASK_SPAWN(id, w, home) DTRACE_PROBE3(taskhop, task_spawn, id, w, home)
/* task_run              task id, worker, previous worker (-1: first run) */
#define TH_PROBE_TASK_RUN(id, w, prev) DTRACE_PROBE3(taskhop, task_run, id, w, prev)
/* task_yield            task id, worker */
#define TH_PROBE_TASK_YIELD(id, w) DTRACE_PROBE2(taskhop, task_yield, id, w)
/* task_block            task id, worker */
#define TH_PROBE_TASK_BLOCK(id, w) DTRACE_PROBE2(taskhop, task_block, id, w)
/* task_wake             task id, waking worker (-1: plain thread) */
#define TH_PROBE_TASK_WAKE(id, w) DTRACE_PROBE2(taskhop, task_wake, id, w)
/* task_done             task id, worker */
#define TH_PROBE_TASK_DONE(id, w) DTRACE_PROBE2(taskhop, task_done, id, w)
/* task_steal            task id, thief worker, victim worker */
#define TH_PROBE_TASK_STEAL(id, thief, victim) DTRACE_PROBE3(taskhop, task_steal, id, thief, victim)
/* worker_start          worker, kernel tid */
#define TH_PROBE_WORKER_START(w, tid) DTRACE_PROBE2(taskhop, worker_start, w, tid)
/* worker_park           worker */
#define TH_PROBE_WORKER_PARK(w) DTRACE_PROBE1(taskhop, worker_park, w)
/* worker_unpark         worker */
#define TH_PROBE_WORKER_UNPARK(w) DTRACE_PROBE1(taskhop, worker_unpark, w)

#endif
