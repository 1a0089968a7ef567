/* leibniz.c — the `leibniz` workload: its options, --bpf (the CLI follows the worker
 * processes with the BPF recorder), and the run. The experiment is in leibniz/experiment.c,
 * its output in leibniz/output.c and leibniz/figure.c. */
#include "workloads/leibniz.h"

#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "numparse.h"
#include "rec_procs.h"
#include "taskhop.h"
#include "workload.h"

/* ---- the workload -------------------------------------------------------------------- */
struct lz_params {
	struct lz_config c;
	bool mode_set;
	char fig[4096];
};

static void lz_defaults(void *p)
{
	struct lz_params *d = p;
	memset(d, 0, sizeof *d);
	lz_config_default(&d->c);
}

/* A day: longer than any input of this workload, and far from overflowing ms in an int. */
#define MAX_CALL_TIMEOUT_S 86400

static int int_value(int argc, char **argv, int *i, double min, double max, double *out, char *err,
		     size_t errlen)
{
	const char *opt = argv[*i];
	if (*i + 1 >= argc) {
		snprintf(err, errlen, "%s needs a value", opt);
		return -1;
	}
	uint64_t v;
	if (num_flag_u64(opt, argv[++*i], (uint64_t)min, (uint64_t)max, &v, err, errlen))
		return -1;
	*out = (double)v;
	return 1;
}

static int lz_parse(void *p, int argc, char **argv, int *i, char *err, size_t errlen)
{
	struct lz_params *d = p;
	const char *opt = argv[*i];
	double v;
	int r;
	if (strcmp(opt, "--serial") == 0) {
		d->c.mode = LZ_SERIAL;
		return 1;
	}
	if (strcmp(opt, "--mpi") == 0) {
		d->c.mode = LZ_PMAP;
		d->c.mpi = true;
		if (!d->mode_set)
			d->c.procs = 0; /* the MPI world decides */
		return 1;
	}
	if (strcmp(opt, "--no-baseline") == 0) {
		d->c.baseline = false;
		return 1;
	}
	if (strcmp(opt, "--bpf") == 0) {
		d->c.bpf = true;
		return 1;
	}
	if (strcmp(opt, "--fig") == 0) {
		if (*i + 1 >= argc || !argv[*i + 1][0]) {
			snprintf(err, errlen, "--fig needs a file name (e.g. leibniz.svg)");
			return -1;
		}
		snprintf(d->fig, sizeof d->fig, "%s", argv[++*i]);
		return 1;
	}
	if (strcmp(opt, "--call-timeout") == 0) {
		if ((r = int_value(argc, argv, i, 0, MAX_CALL_TIMEOUT_S, &v, err, errlen)) < 0)
			return r;
		d->c.call_timeout_s = (int)v;
		return 1;
	}
	if (strcmp(opt, "--procs") == 0) {
		/* 0 is read as a number first so the message can say why it is refused */
		if ((r = int_value(argc, argv, i, 0, 1e9, &v, err, errlen)) < 0)
			return r;
		if (v < 1 || v > LZ_MAX_PROCS) {
			snprintf(err, errlen, "--procs must be 1..%d worker processes, not %.0f", LZ_MAX_PROCS, v);
			return -1;
		}
		d->c.mode = LZ_PMAP;
		d->c.procs = (int)v;
		d->mode_set = true;
		return 1;
	}
	struct {
		const char *name;
		double min, max;
	} nums[] = { { "--terms", 1, 4e15 }, { "--inputs", 1, 1e6 }, { "--group", 1, 4e15 },
		     { "--proc-threads", 0, TH_MAX_WORKERS }, { "--batch", 1, 1e6 }, { "--chunk", 1, 1e12 } };
	for (size_t k = 0; k < sizeof nums / sizeof nums[0]; k++) {
		if (strcmp(opt, nums[k].name) != 0)
			continue;
		if ((r = int_value(argc, argv, i, nums[k].min, nums[k].max, &v, err, errlen)) < 0)
			return r;
		switch (k) {
		case 0: d->c.terms = (int64_t)v; break;
		case 1: d->c.inputs = (int)v; break;
		case 2: d->c.group = (int64_t)v; break;
		case 3: d->c.proc_threads = (int)v; break;
		case 4: d->c.batch = (size_t)v; break;
		default: d->c.chunk = (int64_t)v; break;
		}
		return 1;
	}
	return 0;
}

static int lz_check(const void *params, char *err, size_t errlen)
{
	const struct lz_config *c = &((const struct lz_params *)params)->c;
	if (c->group > c->terms) {
		snprintf(err, errlen, "--group (%lld) is above --terms (%lld)", (long long)c->group,
			 (long long)c->terms);
		return -1;
	}
	if (c->bpf && c->mode != LZ_PMAP) {
		snprintf(err, errlen, "--bpf is for the pmap modes (--procs N / --mpi); the th_map mode "
				      "is recorded by taskhop run itself");
		return -1;
	}
	return 0;
}

static bool lz_needs_runtime(const void *p)
{
	/* worker processes are forked before any thread starts */
	return ((const struct lz_params *)p)->c.mode == LZ_THREADS;
}

/* ---- --bpf: the recorder follows the worker processes ------------------------------- */

static struct th_record *following; /* lz_follow_with_recorder: one experiment at a time */

static int follow_started(void *ctx, const pid_t *pids, int n, char *err, size_t errlen)
{
	(void)ctx;
	following = rec_procs_follow(pids, n, err, errlen);
	return following ? 0 : -1;
}

static void follow_stopped(void *ctx, struct lz_outcome *o)
{
	(void)ctx;
	char err[256];
	if (rec_procs_stop(following, err, sizeof err) != 0) {
		fprintf(stderr, "leibniz: %s (migrations left unknown)\n", err);
	} else {
		for (int k = 0; k < o->nprocs && k < LZ_MAX_PROCS; k++) {
			struct lz_proc *p = &o->procs[k];
			struct rec_proc_totals t;
			rec_procs_totals(following, p->pid, &t);
			p->migrations = t.cpu_migrations;
			p->on_cpu_ms = t.on_cpu_ms;
			p->runq_wait_ms = t.runq_wait_ms;
			p->preemptions = t.preemptions;
		}
		o->recorded = true;
	}
	rec_procs_close(following);
	following = NULL;
}

void lz_follow_with_recorder(struct lz_config *c)
{
	c->observer = (struct lz_observer){ .started = follow_started, .stopped = follow_stopped };
}

static int lz_run(const void *params, const struct wl_env *env, struct wl_result *res, char *err,
		  size_t errlen)
{
	const struct lz_params *p = params;
	struct lz_config c = p->c;
	if (c.bpf && c.proc_threads == 0)
		c.proc_threads = 1; /* the recorder follows runtime workers */
	if (c.bpf)
		lz_follow_with_recorder(&c);
	struct lz_outcome *o = malloc(sizeof *o);
	if (!o) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	res->t0_ns = th_now_ns();
	if (lz_experiment(&c, o, err, errlen) != 0) {
		free(o);
		return -1;
	}
	for (int i = 0; i < c.inputs && i < 64; i++) {
		struct wl_task *row = wl_add_task(res);
		if (!row)
			break;
		snprintf(row->label, sizeof row->label, "n=%lld", (long long)(1 + (int64_t)i * c.terms));
		row->n = (double)c.terms;
		row->completion_s = o->run_s;
	}
	res->extra = lz_outcome_json(&c, o);
	lz_outcome_summary(&c, o, res->summary, sizeof res->summary);
	if (!env->quiet) {
		lz_print_table(stdout, &c, o);
		fflush(stdout);
	}
	int rc = 0;
	if (o->have_serial && o->serial_hash != o->hash) {
		snprintf(err, errlen, "the %s partial sums differ from the serial map's", lz_mode_name(&c));
		rc = -1;
	}
	if (rc == 0 && p->fig[0]) {
		char a[4096], b[4096];
		snprintf(a, sizeof a, "%s", p->fig);
		snprintf(b, sizeof b, "%s", p->fig);
		rc = lz_figure(dirname(a), basename(b), o->pt_terms, o->pt_estimate, o->npoints, err, errlen);
	}
	free(o);
	return rc;
}

const struct th_workload th_workload_leibniz = {
	.name = "leibniz",
	.description = "the article's pmap example: pi from the Leibniz series, 2 x 10^8 terms in groups "
		       "of 1000, over worker processes (--procs N, --mpi) or th_map",
	.options_help =
		"  --procs N            pmap over N local worker processes (fork + socketpair)\n"
		"  --mpi                pmap over MPI ranks: mpirun -n 3 taskhop run leibniz --mpi\n"
		"                       (rank 0 drives, ranks 1.. are the workers; as root in a\n"
		"                       container: mpirun --allow-run-as-root --oversubscribe -n 3 ...)\n"
		"  --serial             the plain serial map in this process\n"
		"  (none of these)      th_map over the runtime's --workers threads\n"
		"  --terms N            terms per input (default 1e8)\n"
		"  --inputs K           inputs 1, N+1, 2N+1, ... (default 2)\n"
		"  --group N            terms per partial sum (default 1000)\n"
		"  --proc-threads T     pmap: each worker process runs the task runtime with T\n"
		"                       workers and splits its groups over them (julia -p2 -t2)\n"
		"  --batch B            pmap: inputs per message (default 1)\n"
		"  --call-timeout S     pmap: kill a worker that takes over S seconds on one input\n"
		"                       (stopped or hung) and fail the run naming it (default 0: wait)\n"
		"  --chunk N            th_map: groups per chunk (default automatic)\n"
		"  --no-baseline        skip the serial map run for speedup, memory and the check\n"
		"  --bpf                pmap: follow every worker process with the BPF recorder\n"
		"                       and show per-process CPU migrations (root)\n"
		"  --fig FILE.svg       draw the convergence figure (gnuplot)\n",
	.example = "taskhop run leibniz --procs 2 --fig leibniz.svg",
	.params_size = sizeof(struct lz_params),
	.defaults = lz_defaults,
	.parse = lz_parse,
	.check = lz_check,
	.needs_runtime = lz_needs_runtime,
	.run = lz_run,
	.baseline_option = "--serial",
	.figures = lz_report_figures,
};
