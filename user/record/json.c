/* json.c — writes a recording as JSON for library users (th_record_write_json): tasks,
 * workers, runs (with CPUs) and kernel migrations, in the run JSON's field names. */
#include <inttypes.h>
#include <stdio.h>

#include "record_int.h"
#include "taskhop.h"

void th_record_window(struct th_record *r, uint64_t *start_ns, uint64_t *stop_ns)
{
	*start_ns = r->t_start;
	*stop_ns = r->stopped ? r->t_stop : 0;
}

static void cpus(FILE *f, const struct th_rec_task *t)
{
	fputc('[', f);
	int first = 1;
	for (int c = 0; c < TH_REC_MAX_CPUS; c++)
		if (t->cpu_mask[c / 64] & (1ull << (c % 64))) {
			fprintf(f, "%s%d", first ? "" : ",", c);
			first = 0;
		}
	fputc(']', f);
}

/* One thread's kernel figures; `index` is its worker (workers[]) or thread index (threads[]). */
static void thread_json(FILE *f, size_t k, const struct th_rec_worker *w, int index)
{
	fprintf(f, "%s\n    {\"pid\": %d, \"index\": %d, \"tid\": %d, \"host_tid\": %d"
		   ", \"cpu_migrations\": %" PRIu64 ", \"preemptions\": %" PRIu64
		   ", \"on_cpu_ns\": %" PRIu64 ", \"off_cpu_ns\": %" PRIu64
		   ", \"runq_wait_ns\": %" PRIu64 ", \"switches\": %" PRIu64
		   ", \"kernel_blocked_ns\": %" PRIu64 ", \"kernel_blocks\": %" PRIu64 "}",
		k ? "," : "", w->pid, index, w->tid, w->host_tid, w->cpu_migrations, w->preemptions,
		w->on_cpu_ns, w->off_cpu_ns, w->runq_wait_ns, w->switches, w->kernel_blocked_ns,
		w->kernel_blocks);
}

int th_record_write_json(struct th_record *r, FILE *f)
{
	size_t nt, nw, nr, nm;
	const struct th_rec_task *t = th_record_tasks(r, &nt);
	const struct th_rec_worker *w = th_record_workers(r, &nw);
	const struct th_rec_run *x = th_record_runs(r, &nr);
	const struct th_rec_migration *m = th_record_migrations(r, &nm);
	if (!t && nt) /* analysis failed */
		return -1;
	if (rec_analyse(r) != 0)
		return -1;
	fprintf(f, "{\n  \"taskhop_version\": \"%s\",\n  \"schema\": \"taskhop-recording/1\",\n",
		TASKHOP_VERSION);
	fprintf(f, "  \"lost_events\": %" PRIu64 ",\n  \"dropped_runs\": %" PRIu64
		   ",\n  \"tracepoints\": \"%s\",\n  \"usdt\": %s,\n  \"duration_ns\": %" PRIu64
		   ",\n  \"pids\": [",
		th_record_lost_events(r), r->dropped_runs, r->raw_tp ? "raw_tp" : "tp_btf",
		r->use_usdt ? "true" : "false", r->t_stop - r->t_start);
	for (int i = 0; i < r->ntg; i++)
		fprintf(f, "%s%d", i ? ", " : "", (int)r->tg[i].pid);
	fputs("],\n  \"tasks\": [", f);
	for (size_t i = 0; i < nt; i++) {
		fprintf(f, "%s\n    {\"pid\": %d, \"id\": %" PRIu64 ", \"runs\": %" PRIu64
			   ", \"yields\": %" PRIu64 ", \"worker_hops\": %" PRIu64
			   ", \"cpu_migrations\": %" PRIu64 ", \"cpu_migrations_kernel\": %" PRIu64
			   ", \"worker_cpu_changes\": %" PRIu64 ", \"cpus_visited\": ",
			i ? "," : "", t[i].pid, t[i].task_id, t[i].runs, t[i].yields, t[i].worker_hops,
			t[i].cpu_migrations, t[i].cpu_migrations_kernel, t[i].worker_cpu_changes);
		cpus(f, &t[i]);
		fprintf(f, ", \"on_cpu_ns\": %" PRIu64 ", \"runq_wait_ns\": %" PRIu64
			   ", \"preemptions\": %" PRIu64 ", \"kernel_blocked_ns\": %" PRIu64
			   ", \"kernel_blocks\": %" PRIu64 ", \"max_runq_wait_ns\": %" PRIu64
			   ", \"max_runq_wait_at_ns\": %" PRIu64, t[i].on_cpu_ns, t[i].runq_wait_ns,
			t[i].preemptions, t[i].kernel_blocked_ns, t[i].kernel_blocks,
			t[i].max_runq_wait_ns, t[i].max_runq_wait_at_ns);
		if (r->use_usdt)
			fprintf(f, ", \"usdt_runs\": %" PRIu64 ", \"usdt_worker_hops\": %" PRIu64,
				t[i].usdt_runs, t[i].usdt_worker_hops);
		fputc('}', f);
	}
	/* workers[]: one entry per worker (the thread that started serving it) and per
	 * kthread-task thread; threads[]: the self target's runtime threads, spares too */
	fputs("\n  ],\n  \"workers\": [", f);
	for (size_t i = 0, k = 0; i < nw; i++)
		if (w[i].worker >= 0 || w[i].thread < 0)
			thread_json(f, k++, &w[i], w[i].worker);
	fputs("\n  ],\n  \"threads\": [", f);
	for (size_t i = 0, k = 0; i < nw; i++)
		if (w[i].thread >= 0)
			thread_json(f, k++, &w[i], w[i].thread);
	fputs("\n  ],\n  \"runs\": [", f);
	for (size_t i = 0; i < nr; i++)
		fprintf(f, "%s\n    {\"pid\": %d, \"task\": %" PRIu64 ", \"worker\": %d, \"tid\": %d"
			   ", \"cpu\": %d, \"usdt_cpu\": %d, \"start_ns\": %" PRIu64 ", \"end_ns\": %" PRIu64
			   ", \"on_cpu_ns\": %" PRIu64 ", \"runq_wait_ns\": %" PRIu64 "}",
			i ? "," : "", x[i].pid, x[i].task_id, x[i].worker, x[i].tid, x[i].cpu,
			x[i].usdt_cpu, x[i].start_ns, x[i].end_ns, x[i].on_cpu_ns, x[i].runq_wait_ns);
	fputs("\n  ],\n  \"migrations\": [", f);
	for (size_t i = 0; i < nm; i++)
		fprintf(f, "%s\n    {\"pid\": %d, \"tid\": %d, \"worker\": %d, \"task\": %" PRIu64
			   ", \"from_cpu\": %d, \"to_cpu\": %d, \"ts_ns\": %" PRIu64 "}",
			i ? "," : "", m[i].pid, m[i].tid, m[i].worker, m[i].task_id, m[i].orig_cpu,
			m[i].dest_cpu, m[i].ts_ns);
	fputs("\n  ]\n}\n", f);
	return ferror(f) ? -1 : 0;
}
