/* darts.c — the article's task-migration experiment: 20 tasks of n=1e7 and one of n=1e9, each
 * 10 cycles of { yield; mean of n/10 task-RNG draws }, placed like `@tspawnat rand(1:W)`. */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "report/report.h"
#include "workload.h"

struct darts_params {
	double small, large;  /* draws per task: 10 cycles of n/10 */
	int count;            /* tasks of size `small`; one task of size `large` follows */
	bool large_first;     /* spawn the large task first instead of last */
	int blockers;         /* tasks labelled "blocker": 10 blocking calls of block_ms each */
	double block_ms;
	bool block_read;      /* read from a pipe fed every block_ms (else nanosleep) */
};

/* Index of the large task in spawn order. */
static int large_index(const struct darts_params *p)
{
	return p->large_first ? 0 : p->count;
}

/* One task's input and output (the article's darts(n) return tuple). */
struct dart {
	double n;
	double means[10];
	double work_s;        /* thread CPU time spent drawing: the task's own work */
};

static void darts_defaults(void *p)
{
	struct darts_params *d = p;
	d->small = 1e7;
	d->large = 1e9;
	d->count = 20;
	d->block_ms = 50;
}

/* --blockers K, --block-ms M, --block-kind sleep|read */
static int blocker_parse(struct darts_params *d, const char *opt, const char *val, char *err,
			 size_t errlen)
{
	double x;
	if (strcmp(opt, "--block-kind") == 0) {
		if (strcmp(val, "sleep") && strcmp(val, "read")) {
			snprintf(err, errlen, "--block-kind must be sleep or read, not '%s'", val);
			return -1;
		}
		d->block_read = strcmp(val, "read") == 0;
	} else if (strcmp(opt, "--blockers") == 0) {
		if (wl_parse_count(val, 0, &x) || x > 1000) {
			snprintf(err, errlen, "--blockers must be a whole number in [0, 1000], not '%s'", val);
			return -1;
		}
		d->blockers = (int)x;
	} else {
		if (wl_parse_count(val, 1, &x) || x > 10000) {
			snprintf(err, errlen, "--block-ms must be a whole number in [1, 10000], not '%s'", val);
			return -1;
		}
		d->block_ms = x;
	}
	return 1;
}

static int darts_parse(void *p, int argc, char **argv, int *i, char *err, size_t errlen)
{
	struct darts_params *d = p;
	const char *opt = argv[*i];
	double *dst = strcmp(opt, "--small") == 0 ? &d->small
		    : strcmp(opt, "--large") == 0 ? &d->large : NULL;
	bool count = strcmp(opt, "--count") == 0;
	if (strcmp(opt, "--large-first") == 0) {
		d->large_first = true;
		return 1;
	}
	if (!strcmp(opt, "--blockers") || !strcmp(opt, "--block-ms") || !strcmp(opt, "--block-kind")) {
		if (*i + 1 >= argc) {
			snprintf(err, errlen, "%s needs a value", opt);
			return -1;
		}
		++*i;
		return blocker_parse(d, opt, argv[*i], err, errlen);
	}
	if (!dst && !count)
		return 0;
	if (*i + 1 >= argc) {
		snprintf(err, errlen, "%s needs a value", opt);
		return -1;
	}
	const char *val = argv[++*i];
	double x;
	if (count) {
		if (wl_parse_count(val, 0, &x) || x > 100000) {
			snprintf(err, errlen, "--count must be a whole number in [0, 100000], not '%s'", val);
			return -1;
		}
		d->count = (int)x;
		return 1;
	}
	/* darts(n) only works for multiples of 10: each of the 10 cycles draws n/10. */
	if (wl_parse_count(val, 10, &x) || fmod(x, 10) != 0) {
		snprintf(err, errlen, "%s must be a positive multiple of 10 (e.g. 1e7), not '%s'", opt, val);
		return -1;
	}
	*dst = x;
	return 1;
}

static void *darts_task(void *arg)
{
	struct dart *d = arg;
	int64_t m = (int64_t)(d->n / 10);
	for (int cyc = 0; cyc < 10; cyc++) {
		th_yield();
		/* the task's CPU clock, not the thread's: with --preempt a cycle
		 * may be interrupted and finish on another worker */
		uint64_t c0 = th_task_cpu_ns();
		double s = 0;
		/* the task's own generator, drawn inline: the same stream as
		 * th_rand_double() without a call and a TLS lookup per draw */
		struct th_rng *rng = th_self_rng();
		for (int64_t i = 0; i < m; i++)
			s += th_rng_double(rng);
		d->means[cyc] = s / (double)m;
		d->work_s += (double)(th_task_cpu_ns() - c0) / 1e9;
	}
	return NULL;
}

/* ---- blockers: tasks that block their worker's thread in the kernel ---------- */

struct blocking {
	const struct darts_params *p;
	bool explicit_calls;  /* activations=explicit: say so around each call */
	int pipe_rd, pipe_wr;
	pthread_t feeder;
};

static void sleep_ns(uint64_t ns)
{
	struct timespec ts = { (time_t)(ns / 1000000000u), (long)(ns % 1000000000u) };
	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

/* A plain thread outside the runtime: one byte per blocker every block_ms, 10 rounds. */
static void *feeder_main(void *arg)
{
	struct blocking *b = arg;
	char buf[1000] = { 0 };
	for (int round = 0; round < 10; round++) {
		sleep_ns((uint64_t)(b->p->block_ms * 1e6));
		(void)!write(b->pipe_wr, buf, (size_t)b->p->blockers);
	}
	return NULL;
}

static void *blocker_task(void *arg)
{
	struct blocking *b = arg;
	for (int k = 0; k < 10; k++) {
		th_yield();
		if (b->explicit_calls)
			th_blocking_begin();
		if (b->p->block_read) {
			char c;
			while (read(b->pipe_rd, &c, 1) < 0 && errno == EINTR)
				;
		} else {
			sleep_ns((uint64_t)(b->p->block_ms * 1e6));
		}
		if (b->explicit_calls)
			th_blocking_end();
	}
	return NULL;
}

static int blockers_start(struct blocking *b, const struct darts_params *p)
{
	struct th_activation_stats st;
	th_activation_stats(&st);
	b->p = p;
	b->explicit_calls = st.mode == TH_ACT_EXPLICIT;
	b->pipe_rd = b->pipe_wr = -1;
	if (!p->blockers || !p->block_read)
		return 0;
	int fds[2];
	if (pipe(fds) != 0)
		return -1;
	b->pipe_rd = fds[0];
	b->pipe_wr = fds[1];
	if (pthread_create(&b->feeder, NULL, feeder_main, b) != 0) {
		close(fds[0]);
		close(fds[1]);
		b->pipe_rd = b->pipe_wr = -1;
		return -1;
	}
	return 0;
}

static void blockers_end(struct blocking *b)
{
	if (b->pipe_rd < 0)
		return;
	pthread_join(b->feeder, NULL);
	close(b->pipe_rd);
	close(b->pipe_wr);
}

static void label_of(double n, char *buf, size_t len)
{
	int e = (int)floor(log10(n));
	if (pow(10, e) == n)
		snprintf(buf, len, "n=1e%d", e);
	else
		snprintf(buf, len, "n=%.0f", n);
}

static struct json *means_json(const double *m)
{
	struct json *a = json_arr();
	for (int k = 0; k < 10; k++)
		json_push(a, json_num(m[k]));
	return a;
}

/* The central-limit check the article makes: the small tasks' sample means against the
 * large task's mean and the sd the CLT predicts (sqrt(1/12 / draws per mean)). */
static void darts_summary(const struct darts_params *p, const struct dart *d, struct wl_result *res)
{
	int k = 0;
	double sum = 0, ss = 0, big = 0;
	int L = large_index(p);
	for (int i = 0; i <= p->count; i++)
		for (int c = 0; i != L && c < 10; c++, k++)
			sum += d[i].means[c];
	double mean = k ? sum / k : NAN;
	for (int i = 0; i <= p->count; i++)
		for (int c = 0; i != L && c < 10; c++)
			ss += (d[i].means[c] - mean) * (d[i].means[c] - mean);
	for (int c = 0; c < 10; c++)
		big += d[L].means[c] / 10;
	double sd = k > 1 ? sqrt(ss / (k - 1)) : NAN, clt = sqrt(1.0 / 12 / (p->small / 10));
	char big_label[32];
	label_of(p->large, big_label, sizeof(big_label));
	res->extra = json_obj();
	json_set_num(res->extra, "sample_means", k);
	json_set_num(res->extra, "sample_mean", mean);
	json_set_num(res->extra, "sample_sd", sd);
	json_set_num(res->extra, "clt_sd", clt);
	json_set_num(res->extra, "large_mean", big);
	snprintf(res->summary, sizeof(res->summary),
		 "%d sample means of %.0f draws: mean %.6f, sd %.6f (CLT predicts %.6f); "
		 "the %s task's mean: %.7f\n", k, p->small / 10, mean, sd, clt, big_label, big);
}

static int add_blocker_rows(th_task **bt, int k, struct wl_result *res, char *err, size_t errlen)
{
	int rc = 0;
	for (int i = 0; i < k; i++) {
		if (!bt[i]) {
			snprintf(err, errlen, "spawning blocker %d failed: %s", i + 1, th_last_error());
			rc = -1;
			continue;
		}
		th_wait(bt[i]);
		struct wl_task *row = wl_add_task(res);
		if (row) {
			wl_task_from(row, bt[i], res->t0_ns);
			snprintf(row->label, sizeof(row->label), "blocker");
			row->work_s = 0;
		}
		th_task_free(bt[i]);
	}
	return rc;
}

static int darts_run(const void *params, const struct wl_env *env, struct wl_result *res,
		     char *err, size_t errlen)
{
	const struct darts_params *p = params;
	int n = p->count + 1;
	struct dart *d = calloc((size_t)n, sizeof(*d));
	th_task **t = calloc((size_t)n, sizeof(*t));
	if (!d || !t) {
		free(d);
		free(t);
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	/* rand(1:W) from its own seeded stream, so placement is the same for every policy
	 * under the same --seed (a paired comparison), and independent of the task RNGs. */
	struct th_rng place;
	th_rng_seed(&place, env->seed, 0xda27);
	struct blocking blk;
	th_task *bt[1000] = { 0 };
	if (blockers_start(&blk, p) != 0) {
		free(d);
		free(t);
		snprintf(err, errlen, "cannot start the pipe feeder: %s", strerror(errno));
		return -1;
	}
	res->t0_ns = th_now_ns();
	for (int i = 0; i < p->blockers; i++)
		bt[i] = th_spawn_at((int)(th_rng_next(&place) % (uint64_t)env->workers), blocker_task, &blk);
	for (int i = 0; i < n; i++) {
		d[i].n = i == large_index(p) ? p->large : p->small;
		int w = (int)(th_rng_next(&place) % (uint64_t)env->workers);
		/* --preempt: the loop holds no lock and no per-thread state but the
		 * task's RNG, which th_rand_double finds preemption-safely */
		struct th_spawn_opts o = { .where = TH_START_AT, .worker = w, .preemptible = env->preempt };
		t[i] = th_spawn_opts(darts_task, &d[i], &o);
	}
	int rc = add_blocker_rows(bt, p->blockers, res, err, errlen);
	blockers_end(&blk);
	double compute_sum = 0;
	for (int i = 0; i < n; i++) {
		if (!t[i]) {
			snprintf(err, errlen, "spawning task %d failed: %s", i + 1, th_last_error());
			rc = -1;
			continue;
		}
		th_wait(t[i]);
		struct wl_task *row = wl_add_task(res);
		if (!row) {
			rc = -1;
			snprintf(err, errlen, "out of memory");
			th_task_free(t[i]);
			continue;
		}
		wl_task_from(row, t[i], res->t0_ns);
		compute_sum += row->completion_s;
		th_task_free(t[i]);
		label_of(d[i].n, row->label, sizeof(row->label));
		row->n = d[i].n;
		row->work_s = d[i].work_s;
		row->extra = json_obj();
		json_set(row->extra, "means", means_json(d[i].means));
	}
	if (rc == 0) {
		darts_summary(p, d, res);
		/* the darts tasks only: what blockers cost the compute tasks */
		json_set_num(res->extra, "compute_mean_completion_s", compute_sum / n);
		json_set_num(res->extra, "blockers", p->blockers);
	}
	free(d);
	free(t);
	return rc;
}

/* Figure 2, the article's central-limit histogram: the small tasks' sample means of the
 * first run, with the large task's mean marked and the normal density the CLT predicts. */
static int darts_figures(const struct json *report, const char *dir, struct wl_figures *out)
{
	const struct json *run = json_at(json_get(report, "runs"), 0);
	const struct json *tasks = json_get(run, "tasks");
	size_t nt = json_len(tasks);
	if (nt < 2)
		return 0;
	double big_n = 0, big_mean = NAN, small_n = 0;
	for (size_t i = 0; i < nt; i++) {
		double nn = json_get_num(json_at(tasks, i), "n", 0);
		if (nn > big_n)
			big_n = nn;
	}
	/* sized from the means present: a hand-made report may hold more than 10 per task */
	size_t nm = 0;
	for (size_t i = 0; i < nt; i++)
		nm += json_len(json_get(json_at(tasks, i), "means"));
	double *x = malloc((nm ? nm : 1) * sizeof(*x));
	int k = 0;
	for (size_t i = 0; x && i < nt; i++) {
		const struct json *t = json_at(tasks, i), *m = json_get(t, "means");
		double nn = json_get_num(t, "n", 0), s = 0;
		for (size_t c = 0; c < json_len(m); c++) {
			if (nn == big_n)
				s += json_num_of(json_at(m, c)) / (double)json_len(m);
			else
				x[k++] = json_num_of(json_at(m, c));
		}
		if (nn == big_n)
			big_mean = s;
		else
			small_n = nn;
	}
	if (!x || k < 2) {
		free(x);
		return 0;
	}
	double lo = x[0], hi = x[0];
	for (int i = 1; i < k; i++) {
		lo = x[i] < lo ? x[i] : lo;
		hi = x[i] > hi ? x[i] : hi;
	}
	int nb = 20, cnt[20] = { 0 };
	double width = (hi - lo) / nb > 0 ? (hi - lo) / nb : 1e-9;
	for (int i = 0; i < k; i++) {
		int b = (int)((x[i] - lo) / width);
		cnt[b >= nb ? nb - 1 : b]++;
	}
	char *script = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&script, &len);
	if (!f) {
		free(x);
		return 0;
	}
	double sd = sqrt(1.0 / 12 / (small_n / 10));
	fprintf(f, "$h << EOD\n");
	for (int b = 0; b < nb; b++)
		fprintf(f, "%.9f %d\n", lo + (b + 0.5) * width, cnt[b]);
	char title[256], seed[32];
	snprintf(title, sizeof(title), "%d sample means of %.0f draws (%s, seed %s)", k, small_n / 10,
		 json_get_str(run, "policy", "?"), json_num_text(json_get(run, "seed"), seed, sizeof(seed)));
	fprintf(f, "EOD\nset title ");
	fig_quote(f, title);
	fprintf(f, " noenhanced\n");
	fprintf(f, "set xlabel 'sample mean'\nset ylabel 'count'\nset grid\nset yrange [0:*]\n"
		   "set style fill solid 0.6 border -1\nset boxwidth %.9f absolute\nset key top left\n"
		   "set format x '%%.4f'\nset xtics rotate by -30\nset rmargin 8\n", width * 0.95);
	fprintf(f, "set arrow 1 from %.9f, graph 0 to %.9f, graph 1 nohead lw 3 lc rgb '#ee6677'\n",
		big_mean, big_mean);
	fprintf(f, "normal(x) = %d * %.9f / (%.9f * sqrt(2*pi)) * exp(-0.5*((x-0.5)/%.9f)**2)\n", k,
		width, sd, sd);
	fprintf(f, "plot $h using 1:2 with boxes lc rgb '#4477aa' title 'sample means', "
		   "normal(x) with lines lw 2 lc rgb 'black' title 'CLT: N(0.5, %.2e)', "
		   "NaN with lines lw 3 lc rgb '#ee6677' title 'mean of the n=%.0e task: %.6f'\n",
		sd, big_n, big_mean);
	fclose(f);
	free(x);
	char err[512] = "";
	int rc = fig_gnuplot(dir, "histogram.svg", 900, 520, script, err, sizeof(err));
	free(script);
	if (rc) {
		snprintf(out->err, sizeof(out->err), "%s", err);
		if (rc != FIG_WRITE_FAILED)
			fprintf(stderr, "taskhop: figure histogram.svg skipped: %s\n", err);
		return rc;
	}
	snprintf(out->names[out->n], sizeof(out->names[0]), "histogram.svg");
	snprintf(out->titles[out->n], sizeof(out->titles[0]),
		 "Histogram of the sample means (the article's central-limit figure)");
	out->n++;
	return 0;
}

const struct th_workload th_workload_darts = {
	.name = "darts",
	.description = "the article's migration experiment: 20 tasks n=1e7 + 1 task n=1e9, "
		       "10 yields each, random initial worker",
	.options_help = "  --small N    draws of each small task (multiple of 10, default 1e7)\n"
			"  --large N    draws of the one large task (default 1e9)\n"
			"  --count K    number of small tasks (default 20)\n"
			"  --large-first  spawn the large task first (the article spawns it last)\n"
			"  --blockers K   add K tasks labelled blocker, each making 10 blocking calls\n"
			"  --block-ms M   length of each blocking call (default 50)\n"
			"  --block-kind sleep|read  nanosleep, or read from a pipe a plain thread\n"
			"                 feeds every M ms (default sleep)\n",
	.example = "taskhop run darts --policy shared --workers 2 --small 1e6 --large 1e8 --no-bpf",
	.params_size = sizeof(struct darts_params),
	.defaults = darts_defaults,
	.parse = darts_parse,
	.run = darts_run,
	.figures = darts_figures,
	.preemptible = true,
};
