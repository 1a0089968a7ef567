/* experiment.c — the article's pmap example, the experiment itself:
 * pmap(n -> leibniz(n, n+10^8-1, 1000), [1, 10^8+1]) over worker processes (local fork
 * or MPI), th_map over the runtime's workers, or the serial map, with time, memory and
 * a hash of every partial sum. Options, output and figures: ../leibniz.c, output.c,
 * figure.c. */
#include "workloads/leibniz.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include "dist.h"
#include "taskhop.h"

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

/* The observer learns the worker processes' pids once they run (the CLI's --bpf
 * follows them with the recorder; the experiment knows nothing of it). */
static int start_observer(const struct lz_config *c, struct lz_outcome *o, char *err, size_t errlen)
{
	pid_t pids[LZ_MAX_PROCS];
	int n = o->nprocs < LZ_MAX_PROCS ? o->nprocs : LZ_MAX_PROCS;
	for (int k = 0; k < n; k++)
		pids[k] = th_proc_pid(k + 1);
	return c->observer.started(c->observer.ctx, pids, n, err, errlen);
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
	if (c->observer.started && start_observer(c, o, err, errlen) != 0) {
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
	if (c->observer.stopped)
		c->observer.stopped(c->observer.ctx, o);
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
