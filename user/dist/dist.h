/* dist.h — worker processes for taskhop: Julia's -p / @everywhere / @spawnat / pmap.
 * Functions are registered by name in every process; arguments and results travel as bytes. */
#ifndef TASKHOP_DIST_H
#define TASKHOP_DIST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

/* What this header declares is the library's exported API (built -fvisibility=hidden). */
#pragma GCC visibility push(default)

/* ---- the registry (@everywhere) ----------------------------------------
 * C cannot ship closures to another process, so every process of the pool
 * runs the same binary and finds functions by name. Register before
 * th_procs_start: local workers are forked and inherit the registry, MPI
 * ranks run the same main() up to th_procs_start. */

typedef struct th_dist_out th_dist_out;

/* A registered function reads `len` bytes of argument and writes its result
 * with th_dist_write (any number of times: large results stream to the
 * driver in pieces instead of being held whole in the worker). Returns 0, or
 * non-zero after th_dist_fail to report an error for this input. */
typedef int (*th_dist_fn)(const void *arg, size_t len, th_dist_out *out);

int th_dist_write(th_dist_out *out, const void *data, size_t len);
/* Says that about `total` bytes will be written in all (Julia's sizehint!):
 * the result is then allocated once, where it is gathered, instead of grown
 * by doubling — which in a pmap driver means copying it while the workers
 * compute. A hint: writing more or fewer bytes is fine, and a hint that
 * cannot be honoured (too large, out of memory) is ignored. 0, or -1 when
 * the driver is gone. */
int th_dist_size_hint(th_dist_out *out, size_t total);
/* Sets the error message the driver will see for this call; returns -1. */
int th_dist_fail(th_dist_out *out, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#define TH_DIST_NAME_MAX 63
/* 0, or -1 (th_dist_last_error): bad/duplicate name, registry full. */
int th_everywhere(const char *name, th_dist_fn fn);
th_dist_fn th_dist_lookup(const char *name); /* NULL if not registered */

/* TH_EVERYWHERE(fn): registers fn under the name "fn" before main() runs.
 * From a static library the object must be linked in (something else in it
 * referenced), or its constructor never runs: then call th_everywhere(). */
#define TH_EVERYWHERE(fn)                                                    \
	__attribute__((constructor)) static void th_everywhere_ctor_##fn(void) \
	{                                                                      \
		if (th_everywhere(#fn, fn) != 0)                               \
			th_dist_register_failed(#fn);                          \
	}
void th_dist_register_failed(const char *name); /* prints why and aborts */

/* ---- bytes --------------------------------------------------------------- */
struct th_bytes {
	void *data; /* malloc'd, owned by whoever holds the struct */
	size_t len;
};
void th_bytes_free(struct th_bytes *b);

/* Runs a registered function in this process (the serial `map` baseline and
 * what a worker does for each input). 0, or -1 with th_dist_last_error. */
int th_dist_call_local(const char *name, const void *arg, size_t len, struct th_bytes *out);

/* ---- the pool of worker processes (julia -p N) -------------------------- */

enum th_transport {
	TH_TRANSPORT_LOCAL, /* fork + socketpair, nothing to install (default) */
	TH_TRANSPORT_MPI,   /* OpenMPI under mpirun: rank 0 drives, ranks 1.. work */
};

struct th_procs_config {
	int procs;          /* local: worker processes, 1..TH_DIST_MAX_PROCS; MPI: 0 or world size - 1 */
	enum th_transport transport;
	int threads;        /* >0: each worker runs the task runtime with this many workers (-t) */
	const char *policy; /* that runtime's policy; NULL = its default */
	int stop_grace_ms;  /* th_procs_stop: wait this long for a busy worker, then SIGKILL; 0 = 2000 */
	/* >0: a worker that has not finished one input this many ms after starting it
	 * (stopped, hung) is killed and the call fails naming it; 0 = wait forever. */
	int call_timeout_ms;
};
#define TH_DIST_MAX_PROCS 64

void th_procs_config_default(struct th_procs_config *cfg);

/* Starts the worker processes and waits for each to say hello. Returns 0, or
 * -1 with th_dist_last_error (bad count, pool already running, threads
 * already running in this process, MPI not available, ...).
 * Local: forks, so call it before starting threads (th_runtime_start) in the
 * driver — fork with running threads is unsafe and is refused.
 * MPI: on ranks other than 0 this call serves calls until the driver stops
 * the pool, then finalizes MPI and exits the process: it never returns there. */
int th_procs_start(int n);
int th_procs_start_cfg(const struct th_procs_config *cfg);

/* Stops every worker (letting a busy one finish for stop_grace_ms, then
 * SIGKILL), reaps them all: no zombie is left. Statistics stay readable until
 * the next start. Safe to call when no pool runs. */
void th_procs_stop(void);

int th_nprocs(void);           /* workers of the running pool, 0 if none */
bool th_procs_running(void);
const char *th_procs_transport(void); /* "local", "mpi" */

/* Workers are numbered 1..th_nprocs() as Julia numbers them after the driver
 * (under MPI, worker k is rank k). Their pids let a recorder follow them. */
pid_t th_proc_pid(int proc);   /* -1 if no such worker */
/* Fills pids[0..max) with the live workers' pids; returns how many. */
int th_procs_pids(pid_t *pids, int max);

struct th_proc_stats {
	pid_t pid;
	char host[64];
	bool alive;
	uint64_t calls;      /* inputs it finished */
	uint64_t busy_ns;    /* time the driver saw it busy */
	long maxrss_kb;      /* peak RSS, from the worker's goodbye or wait4 */
	uint64_t utime_us, stime_us;
	int wait_status;     /* waitpid status after it ended, -1 if unknown (MPI, running) */
};
int th_proc_stats(int proc, struct th_proc_stats *out); /* 0, -1 if no such worker */

/* The message of the last failed dist call, e.g.
 * "pmap 'leibniz': input 1 failed: worker 2 (pid 4711) was killed by signal 9 (KILL)". */
const char *th_dist_last_error(void);

/* ---- @spawnat and futures ------------------------------------------------ */
#define TH_ANY 0
typedef struct th_future th_future;

/* Runs `name` on worker `proc` (1..n), or on the first free one (TH_ANY).
 * The argument is copied. NULL with th_dist_last_error on an unknown name,
 * a bad or dead worker, no pool. */
th_future *th_spawnat(int proc, const char *name, const void *arg, size_t len);
/* Waits for the result: 0 and *out filled (caller frees), or -1 with
 * th_dist_last_error (the function failed, its worker died, ...). */
int th_future_fetch(th_future *f, struct th_bytes *out);
int th_future_proc(const th_future *f); /* the worker it went to, 0 if not sent yet */
void th_future_free(th_future *f);      /* a pending call's result is dropped */

/* ---- pmap ---------------------------------------------------------------- */
struct th_pmap_opts {
	size_t batch;  /* inputs per message to a worker; 0 or 1 = one at a time */
	int *proc_of;  /* optional, n entries: the worker that ran input i */
};

/* out[i] = name(in[i]) computed on the workers with dynamic scheduling: the
 * next input (or batch) goes to the first worker that is free. Returns 0, or
 * -1 with th_dist_last_error naming the input and the worker; on error every
 * out[i] is left empty ({NULL, 0}) and calls still running elsewhere are
 * abandoned (their results dropped when they come back). */
int th_pmap(const char *name, const struct th_bytes *in, size_t n, struct th_bytes *out,
	    const struct th_pmap_opts *opts);

/* ---- measuring ----------------------------------------------------------- */
long th_dist_self_maxrss_kb(void); /* this process's peak RSS (VmHWM) */
/* Resets this process's VmHWM to its current RSS (/proc/self/clear_refs),
 * so the next phase of a run can be measured alone. 0 or -1. */
int th_dist_reset_peak_rss(void);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif
#endif
