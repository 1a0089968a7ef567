/* act_monitor.h — the BPF backend of the runtime's activations: loads
 * bpf/taskhop_act.bpf.c; parked spares sleep on its ring buffer and take over the
 * worker of a thread it reports blocked. */
#ifndef TASKHOP_ACT_MONITOR_H
#define TASKHOP_ACT_MONITOR_H

#include "taskhop.h"

/* Pass to th_set_activation_backend() before th_runtime_start() with
 * cfg.activations bpf or auto. Needs root or CAP_BPF+CAP_PERFMON and BTF
 * (a PID namespace is fine); otherwise open() fails with the reason (auto then
 * falls back to explicit). */
extern const struct th_activation_backend rec_act_backend;

/* Blocks the kernel side saw that the ring buffer had no room for (a count). */
unsigned long long rec_act_lost(void);

/* How often the kernel side has run, and for how long in all (ns), since it was
 * loaded at th_runtime_start: counted only while BPF run-time statistics are on
 * (bpf_enable_stats(BPF_STATS_RUN_TIME), or sysctl kernel.bpf_stats_enabled=1).
 * 0, or -1 when it is not loaded (activations not bpf, or the runtime stopped). */
int rec_act_prog_stats(unsigned long long *runs, unsigned long long *ns);

#endif
