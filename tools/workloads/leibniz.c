/* leibniz.c — the article's pmap example: pmap(n -> leibniz(n, n+10^8-1, 1000), [1, 10^8+1])
 * over worker processes (local fork or MPI), th_map over threads, or the serial map; report. */
#include "leibniz.h"

#include <errno.h>
#include <libgen.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include "dist.h"
#include "record.h"
#include "taskhop.h"
#include "numparse.h"
#include "workload.h"

/* ---- the function every process knows ------------------------------------------ */

/* The article sums (-1)^(n+1) * 1/(2n-1) in order and multiplies by 4 at the
 * end; doing exactly that keeps every mode's partial sums bit-identical. */
double lz_group_sum(int64_t i1, int64_t i2)
{
	double s = 0;
	for (int64_t n = i1; n <= i2; n++)
		s += (n & 1 ? 1.0 : -1.0) / (double)(2 * n - 1);
	return 4 * s;
}

static int64_t ngroups(const struct lz_arg *a)
{
	return (a->last - a->first) / a->nterms + 1;
}

static struct lz_triple group_triple(const struct lz_arg *a, int64_t g)
{
	int64_t i1 = a->first + g * a->nterms, i2 = i1 + a->nterms - 1;
	if (i2 > a->last)
		i2 = a->last; /* the article's ranges divide evenly; others end short */
	return (struct lz_triple){ i1, i2, lz_group_sum(i1, i2) };
}

struct emit_ctx {
	const struct lz_arg *a;
	th_dist_out *out;
	int rc;
};

static void *emit_all(void *p)
{
	struct emit_ctx *c = p;
	for (int64_t g = 0, n = ngroups(c->a); g < n && c->rc == 0; g++) {
		struct lz_triple t = group_triple(c->a, g);
		c->rc = th_dist_write(c->out, &t, sizeof t);
	}
	return NULL;
}

static double group_fn(int64_t g, void *arg)
{
	return group_triple(arg, g).sum;
}

/* leibniz(first, last, nterms): one (i1, i2, partial sum) triple per group,
 * streamed to the driver as it is computed. In a worker process that runs
 * the task runtime (-t N), the groups are spread over its N workers. */
static int leibniz(const void *argp, size_t len, th_dist_out *out)
{
	struct lz_arg a;
	if (len != sizeof a)
		return th_dist_fail(out, "leibniz wants a %zu-byte (first, last, nterms), got %zu bytes",
				    sizeof a, len);
	memcpy(&a, argp, sizeof a);
	if (a.first < 1 || a.last < a.first || a.nterms < 1)
		return th_dist_fail(out, "leibniz(%lld, %lld, %lld): need 1 <= first <= last and nterms >= 1",
				    (long long)a.first, (long long)a.last, (long long)a.nterms);
	/* the result's size is known: allocated once where it is gathered (the
	 * driver, or this process in the serial map), never grown by copying */
	if (th_dist_size_hint(out, (size_t)ngroups(&a) * sizeof(struct lz_triple)) != 0)
		return -1;
	struct emit_ctx c = { &a, out, 0 };
	int w = th_nworkers();
	if (w == 0) {
		emit_all(&c);
	} else if (w == 1) {
		/* one runtime worker: the whole call is one task on it, so the
		 * recorder sees the work as a task of that worker */
		th_task *t = th_spawn(emit_all, &c);
		th_fetch(t);
		th_task_free(t);
	} else {
		int64_t n = ngroups(&a);
		double *sums = malloc((size_t)n * sizeof *sums);
		if (!sums)
			return th_dist_fail(out, "out of memory for %lld partial sums", (long long)n);
		th_map(0, n, 0, group_fn, &a, sums);
		for (int64_t g = 0; g < n && c.rc == 0; g++) {
			struct lz_triple t = group_triple(&a, g);
			t.sum = sums[g];
			c.rc = th_dist_write(out, &t, sizeof t);
		}
		free(sums);
	}
	return c.rc;
}
TH_EVERYWHERE(leibniz)

/* ---- gathering the series --------------------------------------------------------- */
struct series {
	struct lz_outcome *o;
	double total;
	uint64_t hash;
	size_t groups;
	double next_point; /* log-spaced points for the figure */
};

static void series_init(struct series *s, struct lz_outcome *o)
{
	memset(s, 0, sizeof *s);
	s->o = o;
	s->hash = 1469598103934665603ull;
	s->next_point = 1;
}

static void series_add(struct series *s, const struct lz_triple *t, bool last)
{
	const unsigned char *b = (const unsigned char *)t;
	for (size_t i = 0; i < sizeof *t; i++)
		s->hash = (s->hash ^ b[i]) * 1099511628211ull;
	s->total += t->sum;
	s->groups++;
	double terms = (double)t->i2; /* inputs start at 1: i2 terms so far */
	if ((terms >= s->next_point || last) && s->o->npoints < LZ_MAX_POINTS) {
		s->o->pt_terms[s->o->npoints] = terms;
		s->o->pt_estimate[s->o->npoints] = s->total;
		s->o->npoints++;
		while (s->next_point <= terms)
			s->next_point *= 1.025;
	}
}

static int series_add_bytes(struct series *s, const struct th_bytes *b, bool last_input,
			    char *err, size_t errlen)
{
	if (b->len % sizeof(struct lz_triple)) {
		snprintf(err, errlen, "a worker returned %zu bytes, not whole (i1, i2, sum) triples", b->len);
		return -1;
	}
	size_t n = b->len / sizeof(struct lz_triple);
	for (size_t i = 0; i < n; i++) {
		struct lz_triple t;
		memcpy(&t, (const char *)b->data + i * sizeof t, sizeof t);
		series_add(s, &t, last_input && i == n - 1);
	}
	return 0;
}

static void series_done(struct series *s)
{
	s->o->groups = s->groups;
	s->o->estimate = s->total;
	s->o->error = s->total - M_PI;
	s->o->hash = s->hash;
}

/* ---- the modes ------------------------------------------------------------------------- */
static void input_arg(const struct lz_config *c, int i, struct lz_arg *a)
{
	a->first = 1 + (int64_t)i * c->terms;
	a->last = a->first + c->terms - 1;
	a->nterms = c->group;
}

/* map(n -> leibniz(...), inputs) in this process: the article's serial `map`,
 * which, like pmap, returns every input's result before anything reads them.
 * Every mode's run_s is its map alone, the results held in this process:
 * reading the series afterwards is the same work whatever made the results. */
static int run_serial(const struct lz_config *c, struct lz_outcome *o, char *err, size_t errlen)
{
	struct th_bytes *r = calloc((size_t)c->inputs, sizeof *r);
	int rc = r ? 0 : -1;
	if (!r)
		snprintf(err, errlen, "out of memory");
	uint64_t t0 = th_now_ns();
	for (int i = 0; rc == 0 && i < c->inputs; i++) {
		struct lz_arg a;
		input_arg(c, i, &a);
		if (th_dist_call_local("leibniz", &a, sizeof a, &r[i]) != 0) {
			snprintf(err, errlen, "%s", th_dist_last_error());
			rc = -1;
		}
	}
	o->run_s = (double)(th_now_ns() - t0) / 1e9;
	struct series s;
	series_init(&s, o);
	for (int i = 0; rc == 0 && i < c->inputs; i++)
		rc = series_add_bytes(&s, &r[i], i == c->inputs - 1, err, errlen);
	series_done(&s);
	for (int i = 0; r && i < c->inputs; i++)
		th_bytes_free(&r[i]);
	free(r);
	return rc;
}

/* Folds.map style: every group of every input is one index of th_map. */
struct all_groups {
	const struct lz_config *c;
	int64_t per_input;
};

static double all_group_fn(int64_t g, void *arg)
{
	const struct all_groups *ag = arg;
	struct lz_arg a;
	input_arg(ag->c, (int)(g / ag->per_input), &a);
	return group_triple(&a, g % ag->per_input).sum;
}

static int run_threads(const struct lz_config *c, struct lz_outcome *o, char *err, size_t errlen)
{
	struct lz_arg a;
	input_arg(c, 0, &a);
	struct all_groups ag = { c, ngroups(&a) };
	int64_t n = ag.per_input * c->inputs;
	double *sums = malloc((size_t)n * sizeof *sums);
	if (!sums) {
		snprintf(err, errlen, "out of memory for %lld partial sums", (long long)n);
		return -1;
	}
	uint64_t t0 = th_now_ns();
	th_map(0, n, c->chunk, all_group_fn, &ag, sums);
	o->run_s = (double)(th_now_ns() - t0) / 1e9;
	struct series s;
	series_init(&s, o);
	for (int64_t g = 0; g < n; g++) {
		input_arg(c, (int)(g / ag.per_input), &a);
		struct lz_triple t = group_triple(&a, 0);
		t.i1 = a.first + (g % ag.per_input) * a.nterms;
		t.i2 = t.i1 + a.nterms - 1 > a.last ? a.last : t.i1 + a.nterms - 1;
		t.sum = sums[g];
		series_add(&s, &t, g == n - 1);
	}
	free(sums);
	series_done(&s);
	return 0;
}

/* Follows every worker process with the BPF recorder (USDT + sched events). */
static struct th_record *record_workers(int n, char *err, size_t errlen)
{
	const char *why = th_record_unavailable();
	if (why) {
		snprintf(err, errlen, "--bpf: %s", why);
		return NULL;
	}
	if (n > TH_REC_MAX_TARGETS) {
		snprintf(err, errlen, "--bpf follows at most %d worker processes, not %d", TH_REC_MAX_TARGETS, n);
		return NULL;
	}
	struct th_record *r = th_record_open(NULL);
	for (int k = 1; r && k <= n; k++)
		if (th_record_attach_pid(r, th_proc_pid(k)) != 0)
			goto fail;
	if (r && th_record_start(r) == 0)
		return r;
fail:
	snprintf(err, errlen, "--bpf: %s", th_record_error());
	th_record_close(r);
	return NULL;
}

static void record_results(struct th_record *r, struct lz_outcome *o)
{
	size_t nw;
	const struct th_rec_worker *w = th_record_workers(r, &nw);
	for (int k = 0; k < o->nprocs; k++) {
		struct lz_proc *p = &o->procs[k];
		p->migrations = p->on_cpu_ms = p->runq_wait_ms = p->preemptions = 0;
		for (size_t i = 0; i < nw; i++)
			if (w[i].pid == p->pid) {
				p->migrations += (long long)w[i].cpu_migrations;
				p->on_cpu_ms += (long long)(w[i].on_cpu_ns / 1000000);
				p->runq_wait_ms += (long long)(w[i].runq_wait_ns / 1000000);
				p->preemptions += (long long)w[i].preemptions;
			}
	}
	o->recorded = true;
}

static int run_pmap(const struct lz_config *c, struct lz_outcome *o, char *err, size_t errlen)
{
	struct th_procs_config pc;
	th_procs_config_default(&pc);
	pc.procs = c->procs;
	pc.transport = c->mpi ? TH_TRANSPORT_MPI : TH_TRANSPORT_LOCAL;
	pc.threads = c->proc_threads;
	pc.call_timeout_ms = c->call_timeout_s * 1000;
	uint64_t t0 = th_now_ns();
	if (th_procs_start_cfg(&pc) != 0) {
		snprintf(err, errlen, "%s", th_dist_last_error());
		return -1;
	}
	o->start_s = (double)(th_now_ns() - t0) / 1e9;
	o->transport = th_procs_transport();
	o->nprocs = th_nprocs();
	struct th_record *rec = NULL;
	if (c->bpf && !(rec = record_workers(o->nprocs, err, errlen))) {
		th_procs_stop();
		return -1;
	}
	struct th_bytes *in = calloc((size_t)c->inputs, sizeof *in), *out = calloc((size_t)c->inputs, sizeof *out);
	struct lz_arg *args = calloc((size_t)c->inputs, sizeof *args);
	int *proc_of = calloc((size_t)c->inputs, sizeof *proc_of);
	int rc = -1;
	if (!in || !out || !args || !proc_of) {
		snprintf(err, errlen, "out of memory");
		goto done;
	}
	for (int i = 0; i < c->inputs; i++) {
		input_arg(c, i, &args[i]);
		in[i] = (struct th_bytes){ &args[i], sizeof args[i] };
	}
	struct th_pmap_opts po = { .batch = c->batch, .proc_of = proc_of };
	uint64_t t1 = th_now_ns();
	if (th_pmap("leibniz", in, (size_t)c->inputs, out, &po) != 0) {
		snprintf(err, errlen, "%s", th_dist_last_error());
		goto done;
	}
	o->run_s = (double)(th_now_ns() - t1) / 1e9;
	struct series s;
	series_init(&s, o);
	rc = 0;
	for (int i = 0; i < c->inputs && rc == 0; i++) {
		rc = series_add_bytes(&s, &out[i], i == c->inputs - 1, err, errlen);
		if (proc_of[i] >= 1 && proc_of[i] <= LZ_MAX_PROCS)
			o->procs[proc_of[i] - 1].inputs++;
	}
	series_done(&s);
done:
	for (int i = 0; out && i < c->inputs; i++)
		th_bytes_free(&out[i]);
	free(in);
	free(out);
	free(args);
	free(proc_of);
	uint64_t t2 = th_now_ns();
	th_procs_stop();
	o->stop_s = (double)(th_now_ns() - t2) / 1e9;
	o->driver_rss_kb = th_dist_self_maxrss_kb();
	o->rss_kb = o->driver_rss_kb;
	for (int k = 1; k <= o->nprocs && k <= LZ_MAX_PROCS; k++) {
		struct th_proc_stats st;
		struct lz_proc *p = &o->procs[k - 1];
		th_proc_stats(k, &st);
		p->proc = k;
		p->pid = st.pid;
		memcpy(p->host, st.host, sizeof p->host);
		p->busy_s = (double)st.busy_ns / 1e9;
		p->cpu_s = (double)(st.utime_us + st.stime_us) / 1e6;
		p->maxrss_kb = st.maxrss_kb;
		p->migrations = p->on_cpu_ms = p->runq_wait_ms = p->preemptions = -1;
		o->rss_kb += st.maxrss_kb;
	}
	if (rec) {
		if (th_record_stop(rec) == 0)
			record_results(rec, o);
		else
			fprintf(stderr, "leibniz: BPF recorder: %s (migrations left unknown)\n", th_record_error());
		th_record_close(rec);
	}
	return rc;
}

void lz_config_default(struct lz_config *c)
{
	memset(c, 0, sizeof *c);
	c->mode = LZ_THREADS;
	c->terms = 100000000;
	c->inputs = 2;
	c->group = 1000;
	c->procs = 2;
	c->baseline = true;
}

int lz_experiment(const struct lz_config *c, struct lz_outcome *o, char *err, size_t errlen)
{
	memset(o, 0, sizeof *o);
	o->transport = "none";
	if (c->terms < 1 || c->group < 1 || c->inputs < 1 || c->group > c->terms) {
		snprintf(err, errlen, "need terms >= 1, inputs >= 1 and 1 <= group <= terms");
		return -1;
	}
	if (c->mode == LZ_PMAP && !c->mpi && (c->procs < 1 || c->procs > LZ_MAX_PROCS)) {
		snprintf(err, errlen, "--procs must be 1..%d, not %d", LZ_MAX_PROCS, c->procs);
		return -1;
	}
	/* every phase's peak memory is measured from its own start */
	th_dist_reset_peak_rss();
	int rc;
	if (c->mode == LZ_PMAP)
		rc = run_pmap(c, o, err, errlen);
	else if (c->mode == LZ_THREADS)
		rc = run_threads(c, o, err, errlen);
	else
		rc = run_serial(c, o, err, errlen);
	if (rc)
		return -1;
	if (c->mode != LZ_PMAP)
		o->rss_kb = o->driver_rss_kb = th_dist_self_maxrss_kb();
	if (c->mode != LZ_SERIAL && c->baseline) {
		struct lz_outcome *so = malloc(sizeof *so);
		if (!so) {
			snprintf(err, errlen, "out of memory");
			return -1;
		}
		memset(so, 0, sizeof *so);
		th_dist_reset_peak_rss();
		rc = run_serial(c, so, err, errlen);
		o->serial_s = so->run_s;
		o->serial_rss_kb = th_dist_self_maxrss_kb();
		o->serial_hash = so->hash;
		o->have_serial = rc == 0;
		free(so);
		if (rc)
			return -1;
	}
	return 0;
}

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

static const char *mode_name(const struct lz_config *c)
{
	return c->mode == LZ_SERIAL ? "serial" : c->mode == LZ_THREADS ? "th_map" : c->mpi ? "pmap-mpi" : "pmap";
}

static struct json *outcome_json(const struct lz_config *c, const struct lz_outcome *o)
{
	struct json *x = json_obj();
	char hash[32];
	json_set_str(x, "mode", mode_name(c));
	json_set_str(x, "transport", o->transport);
	json_set_num(x, "terms_per_input", (double)c->terms);
	json_set_num(x, "inputs", c->inputs);
	json_set_num(x, "group", (double)c->group);
	json_set_num(x, "partial_sums", (double)o->groups);
	json_set_num(x, "estimate", o->estimate);
	json_set_num(x, "error", o->error);
	snprintf(hash, sizeof hash, "%016llx", (unsigned long long)o->hash);
	json_set_str(x, "partial_sums_fnv1a", hash);
	json_set_num(x, "run_s", o->run_s);
	json_set_num(x, "peak_rss_all_kb", (double)o->rss_kb);
	json_set_num(x, "driver_rss_kb", (double)o->driver_rss_kb);
	if (c->mode == LZ_PMAP) {
		json_set_num(x, "procs", o->nprocs);
		json_set_num(x, "proc_threads", c->proc_threads);
		json_set_num(x, "start_s", o->start_s);
		json_set_num(x, "stop_s", o->stop_s);
		struct json *ps = json_arr();
		for (int k = 0; k < o->nprocs && k < LZ_MAX_PROCS; k++) {
			const struct lz_proc *p = &o->procs[k];
			struct json *j = json_obj();
			json_set_num(j, "proc", p->proc);
			json_set_num(j, "pid", p->pid);
			json_set_str(j, "host", p->host);
			json_set_num(j, "inputs", p->inputs);
			json_set_num(j, "busy_s", p->busy_s);
			json_set_num(j, "cpu_s", p->cpu_s);
			json_set_num(j, "peak_rss_kb", (double)p->maxrss_kb);
			if (p->migrations >= 0) {
				json_set_num(j, "cpu_migrations", (double)p->migrations);
				json_set_num(j, "on_cpu_ms", (double)p->on_cpu_ms);
				json_set_num(j, "runq_wait_ms", (double)p->runq_wait_ms);
				json_set_num(j, "preemptions", (double)p->preemptions);
			} else {
				json_set_null(j, "cpu_migrations");
			}
			json_push(ps, j);
		}
		json_set(x, "processes", ps);
	}
	if (o->have_serial) {
		json_set_num(x, "serial_s", o->serial_s);
		json_set_num(x, "serial_peak_rss_kb", (double)o->serial_rss_kb);
		json_set_num(x, "speedup", o->serial_s / o->run_s);
		json_set_num(x, "memory_ratio", (double)o->rss_kb / (double)o->serial_rss_kb);
		json_set_bool(x, "identical_to_serial", o->serial_hash == o->hash);
	}
	struct json *conv = json_obj(), *tx = json_arr(), *ex = json_arr();
	for (size_t i = 0; i < o->npoints; i++) {
		json_push(tx, json_num(o->pt_terms[i]));
		json_push(ex, json_num(o->pt_estimate[i]));
	}
	json_set(conv, "terms", tx);
	json_set(conv, "estimate", ex);
	json_set(x, "convergence", conv);
	return x;
}

/* The short summary the CLI prints under its table (and keeps in the JSON). */
static void outcome_summary(const struct lz_config *c, const struct lz_outcome *o, char *buf, size_t len)
{
	size_t n = 0;
#define OUT(...) (n += (size_t)snprintf(buf + n, n < len ? len - n : 0, __VA_ARGS__))
	OUT("leibniz %s: %zu partial sums of %d x %.0e terms, estimate %.15f, error %+.3e\n",
	    mode_name(c), o->groups, c->inputs, (double)c->terms, o->estimate, o->error);
	if (o->have_serial)
		OUT("serial %.3f s %.1f MiB | %s %.3f s %.1f MiB (all processes) | speedup %.2f, memory x%.2f | "
		    "identical partial sums: %s\n",
		    o->serial_s, o->serial_rss_kb / 1024.0, mode_name(c), o->run_s, o->rss_kb / 1024.0,
		    o->serial_s / o->run_s, (double)o->rss_kb / o->serial_rss_kb,
		    o->serial_hash == o->hash ? "yes" : "NO");
	else
		OUT("%s %.3f s, peak RSS of all processes %.1f MiB\n", mode_name(c), o->run_s, o->rss_kb / 1024.0);
#undef OUT
}

/* The full table: the article's serial-vs-pmap comparison and one row per
 * worker process. */
void lz_print_table(FILE *f, const struct lz_config *c, const struct lz_outcome *o)
{
	fprintf(f, "leibniz: %d input%s x %.0e terms in groups of %lld = %zu partial sums (%s)\n", c->inputs,
		c->inputs == 1 ? "" : "s", (double)c->terms, (long long)c->group, o->groups, mode_name(c));
	fprintf(f, "  estimate %.15f   error %+.3e   (pi = %.15f)\n", o->estimate, o->error, M_PI);
	fprintf(f, "  %-9s %9s %8s %22s\n", "map", "time_s", "speedup", "peak_rss_MiB(all procs)");
	if (o->have_serial)
		fprintf(f, "  %-9s %9.3f %8.2f %22.1f\n", "serial", o->serial_s, 1.0, o->serial_rss_kb / 1024.0);
	char speedup[16] = "-";
	if (o->have_serial)
		snprintf(speedup, sizeof speedup, "%.2f", o->serial_s / o->run_s);
	fprintf(f, "  %-9s %9.3f %8s %22.1f\n", mode_name(c), o->run_s, speedup, o->rss_kb / 1024.0);
	if (c->mode == LZ_PMAP) {
		fprintf(f, "  memory: driver %.1f MiB + workers", o->driver_rss_kb / 1024.0);
		for (int k = 0; k < o->nprocs && k < LZ_MAX_PROCS; k++)
			fprintf(f, " %s%.1f", k ? "+ " : "", o->procs[k].maxrss_kb / 1024.0);
		fprintf(f, " MiB (sum of per-process peaks)");
		if (o->have_serial)
			fprintf(f, " = %.2f x serial", (double)o->rss_kb / o->serial_rss_kb);
		fprintf(f, "\n  worker processes (%s transport; start %.3f s, stop %.3f s):\n", o->transport,
			o->start_s, o->stop_s);
		fprintf(f, "  %4s %8s %-12s %6s %7s %7s %8s %9s %12s %8s\n", "proc", "pid", "host", "inputs",
			"busy_s", "cpu_s", "rss_MiB", "cpu_migr", "sch-delay_ms", "preempt");
		for (int k = 0; k < o->nprocs && k < LZ_MAX_PROCS; k++) {
			const struct lz_proc *p = &o->procs[k];
			char mig[32] = "-", wait[32] = "-", pre[32] = "-";
			if (p->migrations >= 0) {
				snprintf(mig, sizeof mig, "%lld", p->migrations);
				snprintf(wait, sizeof wait, "%lld", p->runq_wait_ms);
				snprintf(pre, sizeof pre, "%lld", p->preemptions);
			}
			fprintf(f, "  %4d %8d %-12.12s %6d %7.3f %7.3f %8.1f %9s %12s %8s\n", p->proc, (int)p->pid,
				p->host, p->inputs, p->busy_s, p->cpu_s, p->maxrss_kb / 1024.0, mig, wait, pre);
		}
		if (!o->recorded)
			fprintf(f, "  (cpu_migr, sch-delay, preempt: add --bpf to follow every worker process with the "
				   "BPF recorder)\n");
	}
	if (o->have_serial)
		fprintf(f, "  partial sums identical to the serial map: %s (fnv1a %016llx)\n",
			o->serial_hash == o->hash ? "yes" : "NO", (unsigned long long)o->hash);
}

static int lz_run(const void *params, const struct wl_env *env, struct wl_result *res, char *err,
		  size_t errlen)
{
	const struct lz_params *p = params;
	struct lz_config c = p->c;
	if (c.bpf && c.proc_threads == 0)
		c.proc_threads = 1; /* the recorder follows runtime workers */
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
	res->extra = outcome_json(&c, o);
	outcome_summary(&c, o, res->summary, sizeof res->summary);
	if (!env->quiet) {
		lz_print_table(stdout, &c, o);
		fflush(stdout);
	}
	int rc = 0;
	if (o->have_serial && o->serial_hash != o->hash) {
		snprintf(err, errlen, "the %s partial sums differ from the serial map's", mode_name(&c));
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

/* Finds the convergence series anywhere in a report (a run's "extra", or a
 * compare report's runs) and draws it. */
static const struct json *find_convergence(const struct json *v, int depth)
{
	if (!v || depth > 6)
		return NULL;
	if (json_type_of(v) == JSON_OBJ) {
		const struct json *c = json_get(v, "convergence");
		if (c && json_get(c, "terms") && json_get(c, "estimate"))
			return c;
	}
	if (json_type_of(v) == JSON_OBJ || json_type_of(v) == JSON_ARR)
		for (size_t i = 0; i < json_len(v); i++) {
			const struct json *c = find_convergence(json_at(v, i), depth + 1);
			if (c)
				return c;
		}
	return NULL;
}

static int lz_figures(const struct json *report, const char *dir, struct wl_figures *out)
{
	const struct json *c = find_convergence(report, 0);
	if (!c)
		return 0;
	const struct json *t = json_get(c, "terms"), *e = json_get(c, "estimate");
	size_t n = json_len(t) < json_len(e) ? json_len(t) : json_len(e);
	double *x = malloc((n + 1) * sizeof *x), *y = malloc((n + 1) * sizeof *y);
	if (!x || !y) {
		free(x);
		free(y);
		return -1;
	}
	for (size_t i = 0; i < n; i++) {
		x[i] = json_num_of(json_at(t, i));
		y[i] = json_num_of(json_at(e, i));
	}
	char err[256];
	int rc = lz_figure(dir, "leibniz_convergence.svg", x, y, n, err, sizeof err);
	free(x);
	free(y);
	if (rc) {
		fprintf(stderr, "leibniz figure: %s\n", err);
		return -1;
	}
	if (out->n < 8) {
		snprintf(out->names[out->n], sizeof out->names[0], "leibniz_convergence.svg");
		snprintf(out->titles[out->n], sizeof out->titles[0], "Leibniz series: partial sums vs terms");
		out->n++;
	}
	return 0;
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
	.figures = lz_figures,
};
