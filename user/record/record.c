/* record.c — a recording's life: open, start (load, attach, drain), stop (detach, last
 * drain, then the join, once: join.c), close. The pieces live in files by idea:
 * access.c, targets.c, pidns.c, load.c, events.c, drain.c; the results in query.c. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "record_int.h"
#include "taskhop.h"
#include "taskhop_rec.skel.h"

void th_record_opts_default(struct th_record_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->slots = true;
}

struct th_record *th_record_open(const struct th_record_opts *opts)
{
	struct th_record *r = calloc(1, sizeof(*r));
	if (!r) {
		rec_set_error("out of memory");
		return NULL;
	}
	if (opts)
		r->o = *opts;
	else
		th_record_opts_default(&r->o);
	rec_collected_init(&r->col);
	pthread_mutex_init(&r->lock, NULL);
	r->use_usdt = r->o.usdt;
	r->stats_fd = -1;
	r->join_rc = -1;
	return r;
}

static int has_self(const struct th_record *r)
{
	for (int i = 0; i < r->ntg; i++)
		if (r->tg[i].self)
			return 1;
	return 0;
}

/* May we start? One line naming the fix if not. */
static int check_start(struct th_record *r)
{
	if (r->started) {
		rec_set_error("th_record_start called twice");
		return -1;
	}
	if (r->ntg == 0) {
		rec_set_error("nothing to record: attach to self, a pid or a command first");
		return -1;
	}
	const char *why = th_record_unavailable();
	if (why) {
		rec_set_error("%s", why);
		return -1;
	}
	if (r->use_usdt && !rec_can_attach_usdt()) {
		rec_set_error("attaching the runtime's USDT probes needs CAP_SYS_ADMIN: run as root%s",
			      r->o.usdt ? ", or record without --usdt" : "");
		return -1;
	}
	return 0;
}

/* After the scheduler programs are attached: every run logged has its kernel intervals. */
static int claim_areas(struct th_record *r)
{
	for (int i = 0; i < r->ntg; i++)
		if (r->tg[i].area) {
			if (th_area_claim(r->tg[i].area) != 0) {
				rec_set_error("%s", th_last_error());
				return -1;
			}
			r->tg[i].logged = 1;
		}
	return 0;
}

int th_record_start(struct th_record *r)
{
	if (check_start(r) != 0)
		return -1;
	r->started = 1;
	if (rec_load(r) != 0)
		return -1;
	r->rb = ring_buffer__new(bpf_map__fd(r->skel->maps.events), rec_handle_event, r, NULL);
	if (!r->rb) {
		rec_set_error("ring buffer: %s", strerror(errno));
		return -1;
	}
	if (has_self(r) && rec_bind_self(r) != 0)
		return -1;
	if (rec_attach(r) != 0)
		return -1;
	if (claim_areas(r) != 0)
		return -1;
	if (r->o.prog_stats && (r->stats_fd = bpf_enable_stats(BPF_STATS_RUN_TIME)) < 0) {
		rec_set_error("enabling BPF run-time statistics failed: %s", strerror(errno));
		return -1;
	}
	r->t_start = th_now_ns();
	if ((has_self(r) || rec_has_area(r)) && rec_poller_start(r) != 0)
		return -1;
	rec_release_commands(r);
	return 0;
}

/* The processes as the join knows them: the self target's runs come from its run log
 * and its runtime threads are known by index; a process read through its run-log area
 * has a run log too (its threads are named by the worker starts rec_finish_areas adds). */
static int join_now(struct th_record *r)
{
	struct rec_proc procs[TH_REC_MAX_TARGETS];
	for (int i = 0; i < r->ntg; i++) {
		int self = r->tg[i].self;
		procs[i] = (struct rec_proc){ .pid = r->tg[i].pid, .run_log = self || r->tg[i].logged,
					      .thread_tids = self ? r->self_tids : NULL,
					      .nthreads = self ? r->nself : 0,
					      .nworkers = self ? r->nself_workers : 0 };
	}
	struct rec_scope s = { r->t_start, r->t_stop, procs, r->ntg };
	r->join_rc = rec_join(&s, &r->col, &r->res);
	rec_collected_free(&r->col); /* what the join did not take: read once, never again */
	return r->join_rc;
}

int th_record_stop(struct th_record *r)
{
	if (!r->started) {
		rec_set_error("th_record_stop: not started");
		return -1;
	}
	if (r->stopped)
		return 0;
	r->stopped = 1;
	r->t_stop = th_now_ns();
	rec_poller_stop(r);
	rec_finish_areas(r);
	rec_detach(r);
	if (r->stats_fd >= 0) {
		close(r->stats_fd);
		r->stats_fd = -1;
	}
	rec_drain_at_stop(r);
	if (r->slot_mem)
		th_publish_slots(NULL, 0);
	if (join_now(r) != 0) {
		rec_set_error("out of memory while joining the recording");
		return -1;
	}
	return 0;
}

int th_record_bind_thread(struct th_record *r, uint64_t task_id, int tid)
{
	if (r->stopped) {
		rec_set_error("th_record_bind_thread: bind task %llu before th_record_stop (the "
			      "figures are computed there, once)", (unsigned long long)task_id);
		return -1;
	}
	struct rec_bind *b = vec_push(&r->col.binds);
	if (!b) {
		rec_set_error("out of memory");
		return -1;
	}
	*b = (struct rec_bind){ .pid = r->ntg ? r->tg[0].pid : getpid(), .task_id = task_id,
				.tid = tid };
	return 0;
}

int rec_analyse(struct th_record *r)
{
	if (!r->stopped) {
		rec_set_error("results are ready after th_record_stop");
		return -1;
	}
	if (r->join_rc != 0) {
		rec_set_error("out of memory while joining the recording");
		return -1;
	}
	return 0;
}

uint64_t th_record_lost_events(struct th_record *r)
{
	return r->skel && r->skel->bss ? r->skel->bss->lost_events : 0;
}

uint64_t th_record_dropped_runs(struct th_record *r)
{
	return r->dropped_runs;
}

void th_record_close(struct th_record *r)
{
	if (!r)
		return;
	if (r->started && !r->stopped)
		th_record_stop(r);
	rec_abandon_commands(r);
	for (int i = 0; i < r->ntg; i++)
		th_area_close(r->tg[i].area); /* opened, never started */
	rec_detach(r);
	if (r->stats_fd >= 0)
		close(r->stats_fd);
	ring_buffer__free(r->rb);
	rec_unload(r);
	rec_collected_free(&r->col);
	rec_joined_free(&r->res);
	free(r->self_tids);
	pthread_mutex_destroy(&r->lock);
	free(r);
}
