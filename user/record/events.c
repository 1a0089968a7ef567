/* events.c — decodes the BPF ring buffer's records into the collected arrays: on-CPU
 * intervals, kernel migrations, and USDT events (a run assembled from task_run to the
 * probe that ends it, spawns, worker starts). Runs on the poller or the polling thread. */
#include "record_int.h"
#include "taskhop.h"
#include "taskhop_abi.h"

/* The slot of (pid, tid) in the open-run table: its own, or the empty one to take. */
static size_t open_slot(struct th_record *r, int pid, int tid)
{
	size_t h = ((size_t)(unsigned)tid * 2654435761u + (size_t)(unsigned)pid) % REC_OPEN_SLOTS;
	for (size_t n = 0; n < REC_OPEN_SLOTS; n++, h = (h + 1) % REC_OPEN_SLOTS)
		if (!r->open_run[h].tid || (r->open_run[h].tid == tid && r->open_run[h].pid == pid))
			return h;
	return REC_OPEN_SLOTS; /* full: more live threads than slots */
}

static void usdt_event(struct th_record *r, const struct th_event *e)
{
	size_t h;

	switch (e->probe) {
	case TH_P_TASK_SPAWN: {
		struct rec_spawn *sp = vec_push(&r->col.spawns);
		if (sp)
			*sp = (struct rec_spawn){ .pid = (int)e->tgid, .worker = (int)e->b,
						  .task_id = (uint64_t)e->a };
		return;
	}
	case TH_P_TASK_RUN: {
		struct rec_usdt_run *u = vec_push(&r->col.uruns);
		if (!u)
			return;
		*u = (struct rec_usdt_run){ .pid = (int)e->tgid, .tid = (int)e->tid, .worker = (int)e->b,
					    .cpu = (int)e->cpu, .task_id = (uint64_t)e->a,
					    .start = e->ts, .open = 1 };
		h = open_slot(r, u->pid, u->tid);
		if (h < REC_OPEN_SLOTS) {
			r->open_run[h].pid = u->pid;
			r->open_run[h].tid = u->tid;
			r->open_run[h].idx1 = r->col.uruns.n;
		}
		return;
	}
	case TH_P_TASK_YIELD:
	case TH_P_TASK_BLOCK:
	case TH_P_TASK_DONE:
		h = open_slot(r, (int)e->tgid, (int)e->tid);
		if (h < REC_OPEN_SLOTS && r->open_run[h].idx1) {
			struct rec_usdt_run *u = VAT(r->col.uruns, struct rec_usdt_run, r->open_run[h].idx1 - 1);
			u->open = 0;
			u->end = e->ts;
			u->why = e->probe == TH_P_TASK_YIELD ? TH_WHY_YIELD
				 : e->probe == TH_P_TASK_BLOCK ? TH_WHY_BLOCK : TH_WHY_DONE;
			r->open_run[h].idx1 = 0; /* the slot stays the thread's: no tombstones needed */
		}
		return;
	case TH_P_WORKER_START: {
		struct rec_worker_start *w = vec_push(&r->col.wstart);
		if (w)
			*w = (struct rec_worker_start){ .pid = (int)e->tgid, .worker = (int)e->a,
							.tid = (int)e->tid };
		return;
	}
	default:
		return;
	}
}

int rec_handle_event(void *ctx, void *data, size_t len)
{
	struct th_record *r = ctx;
	const struct th_event *e = data;

	if (len < sizeof(*e))
		return 0;
	if (e->kind == TH_EV_ONCPU) {
		struct rec_ival *iv = vec_push(&r->col.ivals);
		if (iv)
			*iv = (struct rec_ival){ .pid = (int)e->tgid, .tid = (int)e->tid, .cpu = (int)e->cpu,
						 .host_tid = (int)e->host_tid, .flags = e->flags,
						 .start = e->start, .end = e->ts, .wait_ns = e->wait_ns,
						 .task_id = e->task_id, .seq = e->seq };
	} else if (e->kind == TH_EV_MIGRATE) {
		struct th_rec_migration *m = vec_push(&r->col.migs);
		if (m)
			*m = (struct th_rec_migration){ .pid = (int)e->tgid, .tid = (int)e->tid,
							.worker = e->slot, .orig_cpu = (int)e->a,
							.dest_cpu = (int)e->b, .ts_ns = e->ts,
							.task_id = e->task_id };
	} else if (e->kind == TH_EV_USDT) {
		usdt_event(r, e);
	}
	return 0;
}
