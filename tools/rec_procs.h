/* rec_procs.h — the CLI follows a workload's worker processes with the BPF recorder
 * (USDT + sched events of every thread of each), for workloads that fork them (pmap). */
#ifndef TASKHOP_REC_PROCS_H
#define TASKHOP_REC_PROCS_H

#include <stddef.h>
#include <sys/types.h>

struct th_record;

/* What the kernel did to one process's threads while it was followed. */
struct rec_proc_totals {
	long long cpu_migrations;
	long long on_cpu_ms;
	long long runq_wait_ms; /* runnable but waiting for a CPU (sch-delay) */
	long long preemptions;  /* involuntary switch-outs */
};

/* Starts following pids[0..n-1]. NULL with a one-line reason in err (no BPF,
 * no privileges, more processes than the recorder follows). */
struct th_record *rec_procs_follow(const pid_t *pids, int n, char *err, size_t errlen);

/* Stops; 0 and the totals of pid, or -1 with the reason in err. */
int rec_procs_stop(struct th_record *r, char *err, size_t errlen);
void rec_procs_totals(struct th_record *r, pid_t pid, struct rec_proc_totals *out);
void rec_procs_close(struct th_record *r);

#endif
