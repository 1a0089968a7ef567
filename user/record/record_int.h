/* record_int.h — the recorder's private state, shared by its collection files (targets,
 * pidns, load, events, drain), its lifecycle (record.c), queries and JSON. Not
 * installed; users see only record.h. The analysis (join.h) does not see this. */
#ifndef TASKHOP_RECORD_INT_H
#define TASKHOP_RECORD_INT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/types.h>

#include "errbuf.h"
#include "join.h"
#include "record.h"
#include "taskhop_abi.h"
#include "vec.h"

struct rec_target {
	pid_t pid;            /* as this process sees it */
	uint32_t host_tgid;   /* as the scheduler tracepoints see it */
	int self;
	int command;
	int hold_fd;          /* command: write end of the pipe it waits on before exec */
	char exe[4096];       /* the binary carrying the USDT notes */
	int exited;
	int status;
	struct th_area *area; /* its run-log area (taskhop.h: th_area_*), while recording */
	int logged;           /* its runs came from its area (USDT, if on, only checks them) */
};

struct th_record {
	struct th_record_opts o;
	struct rec_target tg[TH_REC_MAX_TARGETS];
	int ntg;
	int use_usdt;

	/* BPF (load.c) */
	struct taskhop_rec_bpf *skel;
	struct bpf_link **links;
	int nlinks;
	struct ring_buffer *rb;
	void *slot_mem;
	size_t slot_len;
	int raw_tp;           /* tp_btf not available: the raw_tp twins are loaded */
	int stats_fd;         /* BPF_ENABLE_STATS while recording, or -1 */

	/* the in-process drain (drain.c) */
	pthread_t poller;
	int poller_on;
	_Atomic int poller_stop;
	pthread_mutex_t lock; /* one consumer of the ring buffer at a time */

	int started, stopped;
	int join_rc;           /* the join at th_record_stop: 0, or -1 (out of memory) */
	uint64_t t_start, t_stop;
	uint64_t dropped_runs;
	int *self_tids;        /* runtime thread i of the self target: its tid (taken at start) */
	int nself;             /* threads, spares included (th_nthreads) */
	int nself_workers;     /* threads i < nself_workers started serving worker i */

	/* what the collectors gathered: the join's input (events.c, drain.c, bindings) */
	struct rec_collected col;
	/* (pid, tid) -> index+1 of the thread's open USDT run in col.uruns: open addressing */
#define REC_OPEN_SLOTS 8192
	struct { int pid, tid; size_t idx1; } open_run[REC_OPEN_SLOTS];

	/* the join's output, from th_record_stop on */
	struct rec_joined res;
};

/* The recorder's error line, read back by th_record_error (errbuf.h, error.c). */
#define rec_set_error(...) th_errbuf_set(TH_ERRBUF_RECORD, __VA_ARGS__)
/* 0 when the figures are ready (th_record_stop joined them), else -1 with the error set. */
int rec_analyse(struct th_record *r);

/* access.c: can this process attach the runtime's USDT probes (CAP_SYS_ADMIN)? */
int rec_can_attach_usdt(void);
/* targets.c: release every held command (it execs now) / end the ones never released. */
void rec_release_commands(struct th_record *r);
void rec_abandon_commands(struct th_record *r);
/* pidns.c: each target's host tgid and our PID namespace's level. 0 or -1. */
int rec_resolve_host_pids(struct th_record *r, uint32_t *level);
/* load.c: load (filters set), attach; publish the self target's slots; detach; free. */
int rec_load(struct th_record *r);
int rec_attach(struct th_record *r);
int rec_bind_self(struct th_record *r);
void rec_detach(struct th_record *r);
void rec_unload(struct th_record *r);
/* events.c: one ring-buffer record into the collected arrays (ring_buffer__new's callback). */
int rec_handle_event(void *ctx, void *data, size_t len);
/* drain.c: the poller thread while recording, and the last drain at stop. */
int rec_consume(struct th_record *r);
int rec_poller_start(struct th_record *r);
void rec_poller_stop(struct th_record *r);
void rec_drain_at_stop(struct th_record *r);
/* drain.c: does a target's run-log area need the poller; the areas' last runs, their
 * workers' threads and their losses, then the areas are let go (logging stops). */
int rec_has_area(const struct th_record *r);
void rec_finish_areas(struct th_record *r);
/* elfnote.c: 1 if the ELF file has `taskhop` USDT notes, 0 if not, -1 unreadable. */
int rec_has_taskhop_usdt(const char *path);

#endif
