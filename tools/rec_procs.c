/* rec_procs.c — the CLI follows a workload's worker processes with the BPF recorder. */
#include "rec_procs.h"

#include <stdio.h>
#include <string.h>

#include "record.h"

struct th_record *rec_procs_follow(const pid_t *pids, int n, char *err, size_t errlen)
{
	const char *why = th_record_unavailable();
	if (why) {
		snprintf(err, errlen, "--bpf: %s", why);
		return NULL;
	}
	if (n < 1 || n > TH_REC_MAX_TARGETS) {
		snprintf(err, errlen, "--bpf follows 1 to %d worker processes, not %d", TH_REC_MAX_TARGETS, n);
		return NULL;
	}
	struct th_record *r = th_record_open(NULL);
	for (int k = 0; r && k < n; k++)
		if (th_record_attach_pid(r, pids[k]) != 0)
			goto fail;
	if (r && th_record_start(r) == 0)
		return r;
fail:
	snprintf(err, errlen, "--bpf: %s", th_record_error());
	th_record_close(r);
	return NULL;
}

int rec_procs_stop(struct th_record *r, char *err, size_t errlen)
{
	if (th_record_stop(r) == 0)
		return 0;
	snprintf(err, errlen, "BPF recorder: %s", th_record_error());
	return -1;
}

/* A process's figures are the sum over its threads (workers, spares, others). */
void rec_procs_totals(struct th_record *r, pid_t pid, struct rec_proc_totals *out)
{
	size_t nw;
	const struct th_rec_worker *w = th_record_workers(r, &nw);
	memset(out, 0, sizeof(*out));
	for (size_t i = 0; i < nw; i++) {
		if (w[i].pid != pid)
			continue;
		out->cpu_migrations += (long long)w[i].cpu_migrations;
		out->on_cpu_ms += (long long)(w[i].on_cpu_ns / 1000000);
		out->runq_wait_ms += (long long)(w[i].runq_wait_ns / 1000000);
		out->preemptions += (long long)w[i].preemptions;
	}
}

void rec_procs_close(struct th_record *r)
{
	th_record_close(r);
}
