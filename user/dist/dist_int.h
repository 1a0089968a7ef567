/* dist_int.h — private pieces of user/dist shared by the pool, the worker loop and the
 * two transports (local fork+socketpair, MPI through a dlopen'ed plugin). */
#ifndef TASKHOP_DIST_INT_H
#define TASKHOP_DIST_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "dist.h"
#include "errbuf.h"
#include "frame.h"

/* The pool's error line, read back by th_dist_last_error (errbuf.h). */
#define th_dist__set_error(...) th_errbuf_set(TH_ERRBUF_DIST, __VA_ARGS__)

uint64_t th_dist__now_ns(void);

struct th_worker_link;

/* Where a registered function's output goes: kept whole (th_dist_call_local)
 * or sent in PART frames as it fills (a worker), so a worker never holds a
 * large result. */
struct th_dist_out {
	char *buf;
	size_t room;          /* bytes kept free at the front of buf for a frame header */
	size_t len, cap;      /* len bytes of output at buf + room */
	uint64_t call_id;
	/* NULL: keep all bytes. Else sends the piece (the header is written
	 * into the room, so the bytes are never copied) and hands buf over to
	 * the link; last marks the final piece. 0 or -1. */
	int (*flush)(struct th_dist_out *o, bool last);
	/* NULL: th_dist_size_hint reserves buf. Else tells the receiver. 0 or -1. */
	int (*hint)(struct th_dist_out *o, uint64_t total);
	const struct th_worker_link *link;
	int write_failed;
	char err[256];
};

/* ---- driver side of a transport ----------------------------------------- */
enum th_tr_event { TH_EV_TIMEOUT = 0, TH_EV_FRAME = 1, TH_EV_GONE = 2, TH_EV_FAIL = -1 };

struct th_dist_transport {
	const char *name;
	/* Sends one built frame to worker proc. 0, or -1 (the worker is gone). */
	int (*send)(int proc, const void *buf, size_t len);
	/* Waits up to timeout_ms (-1: forever) for the next event: a frame from
	 * *proc (TH_EV_FRAME), a worker that hung up or sent garbage (TH_EV_GONE,
	 * why in err), nothing (TH_EV_TIMEOUT), or a broken transport (TH_EV_FAIL). */
	int (*recv)(int *proc, struct th_frame *f, int timeout_ms, char *err, size_t errlen);
	/* The worker left or must leave: kill it if `kill`, then reap it within
	 * grace_ms (then SIGKILL). Fills *status (waitpid) and rusage figures. */
	void (*reap)(int proc, bool kill, int grace_ms, int *status, long *maxrss_kb,
		     uint64_t *utime_us, uint64_t *stime_us);
	void (*finish)(void); /* all workers reaped */
};

/* The pool's answer to "where does this frame's body go?" for a frame from
 * worker proc: into the result of the call it continues (no copy), or NULL. */
void *th_dist__frame_dest(int proc, const struct th_frame_hdr *h);

/* Local transport: forks n workers; each child runs th_dist__worker_main. */
int th_dist__local_start(int n, const struct th_procs_config *cfg, pid_t *pids,
			 const struct th_dist_transport **tr);
/* MPI transport: loads the plugin, initializes MPI. On a worker rank it
 * serves and exits; on rank 0 it returns the number of workers. */
int th_dist__mpi_start(const struct th_procs_config *cfg, int *nworkers,
		       const struct th_dist_transport **tr);

/* ---- worker side ---------------------------------------------------------- */
struct th_worker_link {
	int (*send)(const void *buf, size_t len);  /* takes a built frame; 0 or -1 */
	/* 1 frame, 0 the driver hung up, -1 error (err) */
	int (*recv)(struct th_frame *f, char *err, size_t errlen);
	int (*flush)(void);                         /* pending sends done; may be NULL */
};
/* Says hello, serves CALL frames until STOP (answers BYE) or hang-up.
 * Returns the exit status the worker process should use. */
int th_dist__worker_main(const struct th_worker_link *link, const struct th_procs_config *cfg);

/* ---- the MPI plugin (built with mpicc into libthdist_mpi.so) -------------- */
#define TH_MPI_PLUGIN_ABI 1
#define TH_MPI_PLUGIN_SYMBOL "th_mpi_plugin_ops"
struct th_mpi_ops {
	int abi;
	int (*init)(int *rank, int *size, char *err, size_t errlen);
	/* Blocking send of one message (the driver's CALL/STOP). */
	int (*send)(int dest, const void *buf, size_t len);
	/* Non-blocking send: takes ownership of buf (malloc'd), frees it when done.
	 * The worker streams result pieces this way and keeps computing. */
	int (*isend)(int dest, void *buf, size_t len);
	int (*flush)(void);                          /* completes every isend */
	/* 1 and (*from, *len) when a message waits, 0 when none, -1 on error. */
	int (*poll)(int src, int *from, size_t *len);
	int (*recv)(int from, void *buf, size_t len);
	void (*finalize)(void);
	const char *(*library)(void);                /* MPI library version text */
};
typedef const struct th_mpi_ops *(*th_mpi_plugin_fn)(void);

#endif
