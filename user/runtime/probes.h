/* probes.h — the runtime's USDT probes (provider "taskhop"), one per scheduling event.
 * Unattached, each is a nop; bpftrace, perf and our recorder can attach to them. */
#ifndef TASKHOP_PROBES_H
#define TASKHOP_PROBES_H

#include <sys/sdt.h>

#include "taskhop_abi.h"

/* A 5-byte nop at each probe site instead of sdt.h's 1-byte one: the kernel
 * can turn an attached uprobe on a nop5 into a call instead of a trap,
 * ~1.4 us instead of ~4.9 us per hit here (tools/bench/rec_probe_cost.c).
 * Unattached, both cost nothing measurable. sdt.h expands _SDT_NOP where a
 * probe is used, so redefining it after the include is enough. */
#if defined(__x86_64__)
#undef _SDT_NOP
#define _SDT_NOP .byte 0x0f; .byte 0x1f; .byte 0x44; .byte 0x00; .byte 0x00
#endif

/* TH_PROBE(name, args...) fires USDT probe taskhop:name. It compiles only for a row of
 * TH_USDT_PROBES in bpf/taskhop_abi.h (which says what the arguments mean), called with
 * that row's number of arguments. */
#define TH_PROBE(name, ...)                                                              \
	do {                                                                             \
		_Static_assert(TH_PROBE_NARGS_##name == TH_ARG_COUNT(__VA_ARGS__),      \
			       "probe taskhop:" #name ": arguments differ from taskhop_abi.h"); \
		TH_PROBE_SDT(TH_ARG_COUNT(__VA_ARGS__), name, __VA_ARGS__);               \
	} while (0)
#define TH_PROBE_SDT(n, name, ...) TH_PROBE_SDT_(n, name, __VA_ARGS__)
#define TH_PROBE_SDT_(n, name, ...) DTRACE_PROBE##n(taskhop, name, __VA_ARGS__)

/* The runtime's spelling of each probe site. */
#define TH_PROBE_TASK_SPAWN(id, w, home) TH_PROBE(task_spawn, id, w, home)
#define TH_PROBE_TASK_RUN(id, w, prev) TH_PROBE(task_run, id, w, prev)
#define TH_PROBE_TASK_YIELD(id, w) TH_PROBE(task_yield, id, w)
#define TH_PROBE_TASK_BLOCK(id, w) TH_PROBE(task_block, id, w)
#define TH_PROBE_TASK_WAKE(id, w) TH_PROBE(task_wake, id, w)
#define TH_PROBE_TASK_DONE(id, w) TH_PROBE(task_done, id, w)
#define TH_PROBE_TASK_STEAL(id, thief, victim) TH_PROBE(task_steal, id, thief, victim)
#define TH_PROBE_WORKER_START(w, tid) TH_PROBE(worker_start, w, tid)
#define TH_PROBE_WORKER_PARK(w) TH_PROBE(worker_park, w)
#define TH_PROBE_WORKER_UNPARK(w) TH_PROBE(worker_unpark, w)

#endif
