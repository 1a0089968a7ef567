/* leibniz.h — the article's pmap experiment: pi from the Leibniz series in groups of terms,
 * computed serially, with th_map, or with pmap over worker processes (local or MPI). */
#ifndef TASKHOP_LEIBNIZ_H
#define TASKHOP_LEIBNIZ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

enum lz_mode { LZ_SERIAL, LZ_THREADS, LZ_PMAP };

struct lz_outcome;

/* Told when pmap's worker processes run and after they stopped: the CLI's --bpf
 * follows them with the BPF recorder (lz_follow_with_recorder); the experiment
 * itself knows nothing of recording. started returns 0, or -1 with err set. */
struct lz_observer {
	int (*started)(void *ctx, const pid_t *pids, int n, char *err, size_t errlen);
	void (*stopped)(void *ctx, struct lz_outcome *o);
	void *ctx;
};

struct lz_config {
	enum lz_mode mode;
	int64_t terms;      /* terms per input (the article: 10^8) */
	int inputs;         /* inputs [1, terms+1, 2*terms+1, ...] (the article: 2) */
	int64_t group;      /* terms per partial sum (the article: 1000) */
	int procs;          /* pmap: local worker processes (0 with mpi: the world's) */
	bool mpi;           /* pmap over MPI ranks (under mpirun) */
	int proc_threads;   /* pmap: task-runtime workers in each worker process (-t) */
	size_t batch;       /* pmap batch option */
	bool baseline;      /* pmap/threads: also run the serial map for time, memory, check */
	bool bpf;           /* pmap: follow every worker process with the BPF recorder */
	struct lz_observer observer; /* pmap: told about the worker processes; zero: none */
	int64_t chunk;      /* threads: th_map chunk in groups, 0 = automatic */
	int call_timeout_s; /* pmap: a worker taking longer on one input is killed; 0 = none */
};
void lz_config_default(struct lz_config *c);

#define LZ_MAX_POINTS 1024
#define LZ_MAX_PROCS 64

struct lz_proc {
	int proc;
	pid_t pid;
	char host[64];
	int inputs;          /* inputs it ran */
	double busy_s, cpu_s;
	long maxrss_kb;
	long long migrations; /* CPU migrations of its threads (BPF), -1 unknown */
	long long on_cpu_ms;  /* BPF, -1 unknown */
	long long runq_wait_ms; /* BPF: runnable but waiting for a CPU (sch-delay), -1 unknown */
	long long preemptions;  /* BPF: involuntary switch-outs, -1 unknown */
};

/* What a run found: the series and the measurements. */
struct lz_outcome {
	size_t groups;       /* partial sums gathered */
	double estimate;     /* sum of all partial sums, in order */
	double error;        /* estimate - pi */
	uint64_t hash;       /* FNV-1a over every (i1, i2, sum) triple: equal runs, equal hash */
	size_t npoints;      /* convergence figure: cumulative estimate after `terms` terms */
	double pt_terms[LZ_MAX_POINTS], pt_estimate[LZ_MAX_POINTS];
	double run_s;        /* the mode's own map (pmap without start/stop) */
	double start_s, stop_s; /* pmap: starting and stopping the worker processes */
	long rss_kb;         /* peak RSS of all processes of the run: driver + sum of workers */
	long driver_rss_kb;
	/* the serial baseline, when asked for */
	bool have_serial;
	double serial_s;
	long serial_rss_kb;
	uint64_t serial_hash;
	int nprocs;
	struct lz_proc procs[LZ_MAX_PROCS];
	bool recorded;       /* BPF figures present */
	const char *transport;
};

/* Runs the experiment. 0, or -1 with a one-line message in err. Under MPI, on
 * ranks other than 0 it serves and exits the process. */
int lz_experiment(const struct lz_config *c, struct lz_outcome *o, char *err, size_t errlen);

/* --bpf (leibniz.c): sets c->observer so that the BPF recorder follows every
 * worker process of the next lz_experiment and fills the outcome's per-process
 * kernel figures (o->recorded). One experiment at a time. */
void lz_follow_with_recorder(struct lz_config *c);

/* ---- output (leibniz/output.c) ---- */
struct json;
struct wl_figures;
const char *lz_mode_name(const struct lz_config *c);
/* The run JSON's "extra" object and the summary line under the table. */
struct json *lz_outcome_json(const struct lz_config *c, const struct lz_outcome *o);
void lz_outcome_summary(const struct lz_config *c, const struct lz_outcome *o, char *buf, size_t len);
/* Prints the serial-vs-pmap table and one row per worker process. */
void lz_print_table(FILE *f, const struct lz_config *c, const struct lz_outcome *o);
/* The convergence figure of a report (a run's "extra", or a compare's runs), if any. */
int lz_report_figures(const struct json *report, const char *dir, struct wl_figures *out);

/* The registered function's argument: leibniz(first, last, nterms). */
struct lz_arg {
	int64_t first, last, nterms;
};
/* One partial sum, as the workers send it: 4 * sum_{n=i1}^{i2} (-1)^(n+1) / (2n-1). */
struct lz_triple {
	int64_t i1, i2;
	double sum;
};
double lz_group_sum(int64_t i1, int64_t i2);

/* The convergence figure (leibniz/figure.c): cumulative estimate and
 * |error| against the number of terms, drawn with gnuplot into dir/name. */
int lz_figure(const char *dir, const char *name, const double *terms, const double *estimate,
	      size_t n, char *err, size_t errlen);

#endif
