/* cmd_run.c — `taskhop run WORKLOAD`: one run on the chosen policy, recorded with BPF when
 * privileged; prints the per-task table and writes the run JSON (--json). */
#define _GNU_SOURCE
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "act_monitor.h"
#include "cli.h"
#include "cmd.h"
#include "rec_json.h"
#include "record.h"
#include "report/fsutil.h"
#include "report/hist.h"
#include "report/report.h"
#include "report/run.h"

static void run_help(FILE *f)
{
	char pols[256], wls[256];
	fprintf(f,
		"usage: taskhop run WORKLOAD [--policy P] [--workers N|auto|cores] [--pin] [--seed S]\n"
		"                   [--json FILE] [--no-bpf] [--activations M] [--preempt MS] [--quiet]\n"
		"                   [--hist] [workload options]\n"
		"\n"
		"Runs WORKLOAD once on the task runtime and prints one row per task (worker hops,\n"
		"CPU migrations, run time, run-queue wait) and a summary: mean completion, makespan\n"
		"and the SPT lower bound. With root, the BPF recorder is on (kernel view: CPUs,\n"
		"migrations, preemptions); --no-bpf leaves those fields null.\n"
		"\n"
		"  --policy P     migration policy (default shared): %s\n"
		"  --workers N    worker threads: a number, auto (all CPUs) or cores (default auto)\n"
		"  --pin          pin worker i to the i-th allowed CPU\n"
		"  --seed S       run seed: task RNGs and random placement (default 1)\n"
		"  --json FILE    also write the run as JSON (atomically)\n"
		"  --no-bpf       do not record with BPF\n"
		"  --activations M  off (default), bpf, explicit or auto: a spare thread takes over a\n"
		"                 worker whose thread blocks in the kernel inside a task\n"
		"  --quiet        no table on stdout\n"
		"  --hist         also print, as log2 histograms (runqlat), each run's run-queue\n"
		"                 wait and on-CPU time over the tasks' runs (BPF)\n"
		"  --preempt MS   preempt a task after MS ms without a yield (0.01..10000; darts\n"
		"                 and isprime only: their tasks hold no locks)\n"
		"Numbers, here and in workload options: digits or the 1e7 form (2.5e6), whole,\n"
		"without sign, spaces or hex.\n"
		"\n"
		"workloads: %s ('taskhop run WORKLOAD --help' shows its options)\n"
		"\n"
		"example:\n"
		"  taskhop run darts --policy shared --workers 2 --small 1e6 --large 1e8 --no-bpf\n",
		cli_policy_list(pols, sizeof(pols)), cli_workload_list(wls, sizeof(wls)));
}

static void workload_help(const struct th_workload *wl, FILE *f)
{
	fprintf(f, "usage: taskhop run %s [run options] [%s options]\n\n%s: %s\n\n%s options:\n%s"
		   "\nrun options: see 'taskhop run --help'\n\nexample:\n  %s\n",
		wl->name, wl->name, wl->name, wl->description, wl->name,
		wl->options_help ? wl->options_help : "  (none)\n", wl->example);
}

/* --preempt MS: the quantum, for workloads whose tasks may be interrupted anywhere. */
static int parse_preempt(struct cli_run *o, const char *v)
{
	if (cli_parse_preempt(v, false, &o->cfg.preempt_ns))
		return cli_usage(cli_cmd_name, "--preempt must be milliseconds in [0.01, 10000], not '%s'", v);
	if (!o->wl->preemptible)
		return cli_usage(cli_cmd_name, "--preempt: %s's tasks are not preemptible (darts and "
				 "isprime are)", o->wl->name);
	return 0;
}

void cli_run_free(struct cli_run *o)
{
	free(o->params);
	free(o->wl_argv);
	memset(o, 0, sizeof(*o));
}

int cli_parse_run(int argc, char **argv, struct cli_run *o)
{
	char buf[512];
	memset(o, 0, sizeof(*o));
	th_config_default(&o->cfg);
	if (argc < 1 || strcmp(argv[0], "--help") == 0 || strcmp(argv[0], "-h") == 0) {
		if (argc < 1)
			return cli_usage(cli_cmd_name, "missing WORKLOAD (one of: %s)",
					 cli_workload_list(buf, sizeof(buf)));
		run_help(stdout);
		return 3;
	}
	o->wl = wl_find(argv[0]);
	if (!o->wl)
		return cli_usage(cli_cmd_name, "unknown workload '%s' (one of: %s)", argv[0],
				 cli_workload_list(buf, sizeof(buf)));
	o->params = calloc(1, o->wl->params_size ? o->wl->params_size : 1);
	o->wl_argv = calloc((size_t)argc + 1, sizeof(char *));
	if (!o->params || !o->wl_argv)
		return cli_fail(cli_cmd_name, "out of memory");
	o->wl->defaults(o->params);
	o->workers_text = "auto";
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		bool has_val = i + 1 < argc;
		if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
			workload_help(o->wl, stdout);
			return 3;
		} else if (strcmp(a, "--pin") == 0) {
			o->cfg.pin = true;
		} else if (strcmp(a, "--no-bpf") == 0) {
			o->no_bpf = true;
		} else if (strcmp(a, "--quiet") == 0) {
			o->quiet = true;
		} else if (strcmp(a, "--hist") == 0) {
			o->hist = true;
		} else if (strcmp(a, "--activations") == 0) {
			if (!has_val || th_parse_activations(argv[i + 1], &o->cfg.activations) != 0)
				return cli_usage(cli_cmd_name, "--activations must be off, bpf, explicit or auto%s%s%s",
						 has_val ? ", not '" : "", has_val ? argv[i + 1] : "", has_val ? "'" : "");
			i++;
		} else if (strcmp(a, "--policy") == 0 || strcmp(a, "--workers") == 0 ||
			   strcmp(a, "--seed") == 0 || strcmp(a, "--json") == 0 ||
			   strcmp(a, "--preempt") == 0) {
			if (!has_val)
				return cli_usage(cli_cmd_name, "%s needs a value", a);
			const char *v = argv[++i];
			if (strcmp(a, "--policy") == 0) {
				if (!cli_policy_known(v))
					return cli_usage(cli_cmd_name, "unknown policy '%s' (one of: %s)", v,
							 cli_policy_list(buf, sizeof(buf)));
				o->cfg.policy = v;
			} else if (strcmp(a, "--workers") == 0) {
				if (cli_parse_workers(v, &o->cfg.workers))
					return cli_usage(cli_cmd_name, "--workers must be 1..%d, auto or cores, not '%s'",
							 TH_MAX_WORKERS, v);
				o->workers_text = v;
			} else if (strcmp(a, "--preempt") == 0) {
				int rc = parse_preempt(o, v);
				if (rc)
					return rc;
			} else if (strcmp(a, "--seed") == 0) {
				if (cli_number("--seed", v, 0, UINT64_MAX, &o->cfg.seed))
					return 2;
			} else {
				o->json_path = v;
			}
		} else {
			char err[256] = "";
			int start = i;
			int rc = o->wl->parse(o->params, argc, argv, &i, err, sizeof(err));
			if (rc < 0)
				return cli_usage(cli_cmd_name, "%s", err);
			if (rc == 0)
				return cli_usage(cli_cmd_name, "unknown option '%s' for %s", a, o->wl->name);
			for (int k = start; k <= i; k++)
				o->wl_argv[o->wl_argc++] = argv[k];
		}
	}
	char err[256] = "";
	if (o->wl->check && o->wl->check(o->params, err, sizeof(err)) != 0)
		return cli_usage(cli_cmd_name, "%s", err);
	return 0;
}

/* ---- one run ------------------------------------------------------------------ */

/* The run log of every worker, copied before the recorder takes it. */
struct runlog {
	struct th_run_record *r;
	size_t n;
	uint64_t dropped;
};

static void snapshot_log(struct runlog *log, int workers)
{
	size_t total = 0;
	for (int w = 0; w < workers; w++) {
		size_t n;
		uint64_t d;
		th_run_log(w, &n, &d);
		total += n;
	}
	log->r = calloc(total ? total : 1, sizeof(*log->r));
	log->n = 0;
	log->dropped = 0;
	for (int w = 0; w < workers && log->r; w++) {
		size_t n;
		uint64_t d;
		const struct th_run_record *r = th_run_log(w, &n, &d);
		if (n) /* a worker that ran nothing has no log (NULL) */
			memcpy(log->r + log->n, r, n * sizeof(*r));
		log->n += n;
		log->dropped += d;
	}
}

static int cmp_run(const void *a, const void *b)
{
	const struct th_run_record *x = a, *y = b;
	return (x->start_ns > y->start_ns) - (x->start_ns < y->start_ns);
}

/* A task the workload did not report (e.g. th_map's): its row from the run log. */
static void row_from_log(struct wl_task *row, uint64_t id, const struct runlog *log, uint64_t t0)
{
	row->st.id = id;
	snprintf(row->label, sizeof(row->label), "task");
	double work = 0;
	int prev = -1;
	for (size_t i = 0; i < log->n; i++) {
		const struct th_run_record *r = &log->r[i];
		if (r->task_id != id)
			continue;
		if (row->st.runs == 0)
			row->st.first_worker = (int)r->worker;
		else if ((int)r->worker != prev)
			row->st.worker_hops++;
		prev = row->st.last_worker = (int)r->worker;
		row->st.runs++;
		row->st.yields += r->why == TH_WHY_YIELD;
		row->st.preempted += r->why == TH_WHY_PREEMPT;
		work += (double)(r->end_ns - r->start_ns) / 1e9;
		if (r->why == TH_WHY_DONE)
			row->completion_s = r->end_ns > t0 ? (double)(r->end_ns - t0) / 1e9 : 0;
	}
	row->work_s = work;
}

static int fill_task(struct run_task *o, const struct wl_task *t, struct th_record *rec, uint64_t t0)
{
	struct th_rec_task rt;
	bool k = rec && th_record_task(rec, 0, t->st.id, &rt) == 0;
	o->id = (double)t->st.id;
	o->label = t->label;
	o->n = t->n > 0 ? t->n : NAN;
	o->spawn_worker = t->st.spawn_worker;
	o->first_worker = t->st.first_worker;
	o->last_worker = t->st.last_worker;
	o->completion_s = t->completion_s;
	o->runs = (double)t->st.runs;
	o->yields = (double)t->st.yields;
	o->preempted = (double)t->st.preempted; /* by the runtime */
	o->worker_hops = (double)t->st.worker_hops;
	/* SPT input: the workload's own measure, else the kernel's on-CPU time. */
	double work = t->work_s >= 0 ? t->work_s : k ? (double)rt.on_cpu_ns / 1e9 : -1;
	o->work_s = work >= 0 ? work : NAN;
	o->blocks = (double)t->st.blocks;
	o->activations = (double)t->st.activations;
	o->extra = t->extra; /* the workload's own figures (darts: means) */
	return rec_run_task_kernel(o, k ? &rt : NULL) | rec_run_task_slices(o, rec, k ? &rt : NULL, t0);
}

static void fill_workers(struct run *r, const int *tids, const struct runlog *log, struct th_record *rec)
{
	for (size_t w = 0; w < r->nworkers; w++) {
		struct run_worker *o = &r->workers[w];
		struct th_rec_worker rw;
		bool k = rec && th_record_worker(rec, 0, (int)w, &rw) == 0;
		size_t ran = 0;
		for (size_t i = 0; i < log->n; i++)
			ran += log->r[i].worker == (uint32_t)w;
		o->index = (double)w;
		o->tid = tids[w];
		rec_run_worker_kernel(o, k ? &rw : NULL);
		o->tasks_run = (double)ran;
	}
}

static double rel_s(uint64_t ns, uint64_t t0)
{
	return ((double)ns - (double)t0) / 1e9;
}

/* The recorder's timeline; without BPF, the run log's runs and their ends. */
static int fill_timeline(struct run *r, const struct runlog *log, struct th_record *rec, uint64_t t0)
{
	size_t n = 0;
	r->timeline.known = r->timeline.run_ends.known = true; /* none is still a list */
	r->timeline.dropped_runs = (double)log->dropped;
	if (rec && th_record_runs(rec, &n) && n)
		return rec_run_timeline(rec, 0, t0, r);
	for (size_t i = 0; i < log->n; i++) {
		const struct th_run_record *x = &log->r[i];
		struct run_tl_run row = { (double)x->task_id, x->worker, -1, rel_s(x->start_ns, t0),
					  rel_s(x->end_ns, t0) };
		if (run_push_tl_run(r, &row, rec_run_end(x->why)))
			return -1;
	}
	return 0;
}

static int cmp_u64(const void *a, const void *b);

/* Adds rows for tasks that ran but that the workload did not report. The
 * reported ids are sorted once: a streamed run log holds millions of runs. */
static void add_log_rows(struct wl_result *res, const struct runlog *log)
{
	size_t nk = res->ntasks;
	uint64_t *known = malloc((nk ? nk : 1) * sizeof(*known));
	uint64_t *unknown = malloc((log->n ? log->n : 1) * sizeof(*unknown));
	size_t nu = 0;
	if (!known || !unknown)
		goto out;
	for (size_t k = 0; k < nk; k++)
		known[k] = res->tasks[k].st.id;
	qsort(known, nk, sizeof(*known), cmp_u64);
	for (size_t i = 0; i < log->n; i++) {
		uint64_t id = log->r[i].task_id;
		if (!bsearch(&id, known, nk, sizeof(*known), cmp_u64))
			unknown[nu++] = id;
	}
	qsort(unknown, nu, sizeof(*unknown), cmp_u64);
	for (size_t i = 0; i < nu; i++) {
		if (i > 0 && unknown[i] == unknown[i - 1])
			continue;
		struct wl_task *row = wl_add_task(res);
		if (row)
			row_from_log(row, unknown[i], log, res->t0_ns);
	}
out:
	free(known);
	free(unknown);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return (x > y) - (x < y);
}

/* `activations`: the mode in effect (auto resolved); `activation`: spares, how many
 * started, blocks no spare was free for, latency from the block to a spare serving the
 * worker (BPF timestamps in bpf mode), per worker how often it was taken over. */
static struct json *num_or_null(bool ok, double x)
{
	return ok ? json_num(x) : json_null();
}

static struct json *activation_json(struct run *run, bool runtime, int workers)
{
	struct th_activation_stats st;
	th_activation_stats(&st);
	run->activations = runtime ? th_activations_name(st.mode) : "off";
	struct json *a = json_obj(), *per = json_arr();
	json_set_num(a, "spares", st.spares);
	json_set_num(a, "count", (double)st.activations);
	json_set_num(a, "missed", (double)st.missed);
	uint64_t *lat = st.nlatency ? malloc(st.nlatency * sizeof(*lat)) : NULL;
	if (lat) {
		memcpy(lat, st.latency_ns, st.nlatency * sizeof(*lat));
		qsort(lat, st.nlatency, sizeof(*lat), cmp_u64);
	}
	json_set(a, "latency_us_median", num_or_null(lat, lat ? (double)lat[st.nlatency / 2] / 1e3 : 0));
	json_set(a, "latency_us_p99", num_or_null(lat, lat ? (double)lat[st.nlatency * 99 / 100] / 1e3 : 0));
	free(lat);
	for (int w = 0; runtime && w < workers; w++)
		json_push(per, json_num((double)th_worker_activations(w)));
	json_set(a, "per_worker", per);
	return a;
}

/* What one run borrows for its JSON: freed once it is written. */
struct run_parts {
	struct json *activation, *extra, *command, *machine;
};

static void parts_free(struct run_parts *p)
{
	json_free(p->activation);
	json_free(p->extra);
	json_free(p->command);
	json_free(p->machine);
}

static double cpu_seconds(const struct rusage *ru)
{
	return (double)ru->ru_utime.tv_sec + (double)ru->ru_utime.tv_usec / 1e6 +
	       (double)ru->ru_stime.tv_sec + (double)ru->ru_stime.tv_usec / 1e6;
}

static struct json *build_run(const struct cli_run *o, const struct wl_result *res, int workers,
			      const int *tids, const struct runlog *log, struct th_record *rec,
			      double wall, bool runtime, int argc, char **argv)
{
	struct run *r = run_new(res->ntasks, (size_t)workers);
	const char **opts = calloc((size_t)o->wl_argc + 1, sizeof(*opts));
	struct run_parts p = { 0 };
	struct json *j = NULL;
	int rc = r && opts ? 0 : -1;
	if (rc)
		goto out;
	r->workload = o->wl->name;
	memcpy(opts, o->wl_argv, (size_t)o->wl_argc * sizeof(*opts));
	r->options = (struct run_names){ opts, (size_t)o->wl_argc };
	opts = NULL; /* the run's now */
	r->policy = runtime ? (o->cfg.policy ? o->cfg.policy : "shared") : "none";
	/* per worker its thread and kernel figures (a serial run: the main thread, which
	 * ran the loop) */
	r->pin = o->cfg.pin;
	r->seed = (struct run_seed){ true, o->cfg.seed };
	r->preempt_ms = o->cfg.preempt_ns ? (double)o->cfg.preempt_ns / 1e6 : NAN;
	r->bpf.enabled = rec != NULL;
	r->bpf.lost_events = rec ? (double)th_record_lost_events(rec) : NAN;
	/* runs past the run log's capacity: the per-task kernel figures miss them */
	r->bpf.dropped_runs = (double)log->dropped;
	r->activation = p.activation = activation_json(r, runtime, workers);
	r->wall_s = wall;
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	r->peak_rss_kb = (double)ru.ru_maxrss;
	/* CPU time this process got; over wall_s x workers it shows whether the run had its
	 * CPUs or shared them with other processes. */
	r->cpu_s = cpu_seconds(&ru);
	for (size_t i = 0; i < res->ntasks; i++)
		rc |= fill_task(&r->tasks[i], &res->tasks[i], rec, res->t0_ns);
	fill_workers(r, tids, log, rec);
	rc |= fill_timeline(r, log, rec, res->t0_ns);
	r->extra = p.extra = res->extra ? json_clone(res->extra) : json_obj();
	r->summary = res->summary;
	p.command = report_command(argc, argv);
	r->command = json_str_of(p.command);
	r->machine = p.machine = report_machine();
	run_derive(r);
	if (rc == 0)
		j = run_to_json(r);
out:
	free(opts);
	run_free(r);
	parts_free(&p);
	return j;
}

static struct th_record *record_begin(int *rc)
{
	struct th_record *rec = th_record_open(NULL);
	if (!rec || th_record_attach_self(rec) || th_record_start(rec)) {
		*rc = cli_fail("run", "BPF recorder: %s", th_record_error());
		th_record_close(rec);
		return NULL;
	}
	return rec;
}

struct json *cli_execute(const struct cli_run *o, int argc, char **argv, int *rc)
{
	bool runtime = !o->wl->needs_runtime || o->wl->needs_runtime(o->params);
	bool bpf = runtime && !o->no_bpf;
	*rc = 0;
	if (bpf) {
		const char *why = th_record_unavailable();
		if (why) {
			*rc = cli_fail("run", "%s", why);
			return NULL;
		}
	}
	struct th_config cfg = o->cfg;
	cfg.run_log_cap = TH_RUN_LOG_AUTO;
	th_set_activation_backend(&rec_act_backend);
	if (runtime && th_runtime_start(&cfg) != 0) {
		*rc = cli_fail("run", "cannot start the runtime: %s", th_last_error());
		return NULL;
	}
	int workers = runtime ? th_nworkers() : 1;
	int *tids = calloc((size_t)workers, sizeof(*tids));
	for (int w = 0; runtime && tids && w < workers; w++)
		tids[w] = th_worker_tid(w);
	if (!runtime && tids)
		tids[0] = (int)gettid(); /* the serial loop runs on this thread */
	struct th_record *rec = bpf ? record_begin(rc) : NULL;
	if (bpf && !rec) {
		th_runtime_stop();
		free(tids);
		return NULL;
	}
	struct wl_env env = { workers, cfg.seed, cfg.policy ? cfg.policy : "shared", o->quiet,
			      cfg.preempt_ns > 0 };
	struct wl_result res;
	memset(&res, 0, sizeof(res));
	char err[512] = "";
	uint64_t w0 = th_now_ns();
	int wrc = o->wl->run(o->params, &env, &res, err, sizeof(err));
	double wall = (double)(th_now_ns() - w0) / 1e9;
	struct runlog log = { 0 };
	if (runtime)
		snapshot_log(&log, workers);
	/* kthread policy: a task's own thread is bound before the stop computes the figures */
	for (size_t i = 0; rec && i < res.ntasks; i++)
		if (res.tasks[i].st.kernel_tid)
			th_record_bind_thread(rec, res.tasks[i].st.id, (int)res.tasks[i].st.kernel_tid);
	if (rec && th_record_stop(rec)) {
		fprintf(stderr, "taskhop run: BPF recorder: %s (BPF fields left null)\n", th_record_error());
		th_record_close(rec);
		rec = NULL;
	}
	struct json *run = NULL;
	if (wrc != 0) {
		*rc = cli_fail("run", "%s: %s", o->wl->name, err[0] ? err : "failed");
	} else {
		if (log.n)
			qsort(log.r, log.n, sizeof(*log.r), cmp_run);
		add_log_rows(&res, &log);
		run = build_run(o, &res, workers, tids, &log, rec, wall, runtime, argc, argv);
	}
	th_record_close(rec);
	if (runtime)
		th_runtime_stop();
	wl_result_free(&res);
	free(log.r);
	free(tids);
	return run;
}

int cmd_run(int argc, char **argv)
{
	struct cli_run o;
	int rc = cli_parse_run(argc - 1, argv + 1, &o);
	if (rc) {
		cli_run_free(&o);
		return rc == 3 ? 0 : rc;
	}
	char err[512];
	/* Fail before a long run, not after it, when the JSON cannot be written. */
	if (o.json_path && (rc = cli_check_output_file("--json", o.json_path)) != 0) {
		cli_run_free(&o);
		return rc;
	}
	if (!o.quiet && isatty(2))
		fprintf(stderr, "taskhop run: %s, policy %s, %s workers, seed %llu%s ...\n", o.wl->name,
			o.cfg.policy ? o.cfg.policy : "shared", o.workers_text,
			(unsigned long long)o.cfg.seed, o.no_bpf ? ", no BPF" : "");
	char *full[argc + 2];
	full[0] = "taskhop";
	memcpy(full + 1, argv, (size_t)argc * sizeof(*argv));
	struct json *run = cli_execute(&o, argc + 1, full, &rc);
	if (run) {
		if (!o.quiet)
			report_run_text(run, stdout);
		if (!o.quiet && o.hist)
			hist_text(run, stdout);
		fflush(stdout);
		if (o.json_path && json_write_file(o.json_path, run, 1, err, sizeof(err)))
			rc = cli_fail("run", "%s", err);
	}
	json_free(run);
	cli_run_free(&o);
	return rc;
}
