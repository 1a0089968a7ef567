/* cmd_compare.c — `taskhop compare WORKLOAD --policies a,b --repeat N --out DIR`: every policy
 * N times, interleaved, each run in a fresh `taskhop run` process; writes the whole report. */
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"
#include "cmd.h"
#include "record.h"
#include "report/fsutil.h"
#include "report/report.h"
#include "report/run.h"

static volatile sig_atomic_t interrupts;
static volatile pid_t running_child;

/* First Ctrl-C: finish the current run, then write the report of the runs done.
 * Second: stop the current run too (its process group gets SIGINT). */
static void on_sigint(int sig)
{
	/* SIGTERM/SIGHUP: no second chance, the run in progress is stopped at once. */
	interrupts += sig == SIGINT ? 1 : 2;
	static const char msg[] = "\ntaskhop compare: stopping after the current run "
				  "(Ctrl-C again to abort it)\n";
	if (interrupts == 1) {
		ssize_t rc = write(2, msg, sizeof(msg) - 1);
		(void)rc;
	}
	if (interrupts >= 2 && running_child > 0)
		kill(-running_child, SIGINT);
}

static void compare_help(FILE *f)
{
	char pols[256], wls[256];
	fprintf(f,
		"usage: taskhop compare WORKLOAD [--policies a,b,...] [--repeat N] [--out DIR]\n"
		"                       [--workers N|auto|cores] [--pin] [--seed S] [--no-bpf] [--force]\n"
		"                       [--preempt MS,...] [--activations a,b,...] [--timeline-seed S|all]\n"
		"                       [--timeline-color worker|cpu]\n"
		"                       [workload options]\n"
		"\n"
		"Runs WORKLOAD with every policy N times, interleaved (a,b,a,b,... so machine drift\n"
		"hits all policies equally; repeat r uses seed S+r for every policy), each run in a\n"
		"fresh process. Progress goes to stderr. Writes into DIR: report.json (the source\n"
		"of truth), report.md, report.html (one self-contained page), runs.csv, the SVG\n"
		"figures and trace.json (open in https://ui.perfetto.dev). Ctrl-C stops after the\n"
		"current run and still writes the report of the runs done.\n"
		"\n"
		"  --policies L   comma-separated (default: all): %s\n"
		"  --repeat N     runs per policy (default 5)\n"
		"  --out DIR      output directory, created if needed (default report)\n"
		"  --force        DIR holds an older report: replace it (all its files go)\n"
		"  --timeline-seed S|all  which run's trace (and timeline) to draw per policy: the\n"
		"                 run with seed S, or every run (default: the median run by mean\n"
		"                 completion); trace.json says which it drew\n"
		"  --timeline-color worker|cpu  colour the timeline figures' run bars by worker\n"
		"                 (default) or by CPU (BPF data)\n"
		"  --workers, --pin, --seed, --no-bpf: as for 'taskhop run'\n"
		"  --preempt L    comma-separated quanta in ms, each 0 (no preemption) or as for\n"
		"                 'taskhop run --preempt' (0.01..10000): one value applies to every\n"
		"                 run; with more, every policy (and mode) runs with each, interleaved,\n"
		"                 labelled POLICY/pMS, '_' for the decimal point (fcfs/p1, fcfs/p0,\n"
		"                 fcfs/p0_25); a serial baseline runs once, with the first value\n"
		"  --activations L  comma-separated modes (off,bpf,explicit,auto): every policy runs\n"
		"                 in each (runs labelled POLICY/MODE); with darts --blockers K each\n"
		"                 also runs without blockers (POLICY/MODE/no-blockers), and a table\n"
		"                 of compute tasks' mean completion with and without is printed\n"
		"Workloads with a serial baseline (isprime) also get a 'serial' run per repeat.\n"
		"\n"
		"workloads: %s\n"
		"\n"
		"example:\n"
		"  taskhop compare darts --policies sticky,shared --repeat 3 --small 1e6 --large 1e8 --no-bpf --out /tmp/darts-report\n"
		"  taskhop compare darts --policies fcfs --preempt 1,0 --repeat 3 --small 1e6 --large 1e8 --no-bpf --force --out /tmp/darts-report\n",
		cli_policy_list(pols, sizeof(pols)), cli_workload_list(wls, sizeof(wls)));
}

#define MAX_PREEMPTS 8

struct compare_opts {
	const char *workload;
	char *policies[64];
	int npolicies;
	char *policies_text;
	uint64_t repeat, seed;
	const char *out, *workers;
	bool pin, no_bpf, force;
	char **wl_argv;
	int wl_argc;
	const char *modes[4];   /* --activations, or none given */
	int nmodes;
	char *modes_text;
	/* --preempt: each item's text as given ("0": none) and its quantum (0: none);
	 * with more than one, a dimension like --activations */
	const char *preempts[MAX_PREEMPTS];
	uint64_t preempt_ns[MAX_PREEMPTS];
	int npreempts;
	char *preempts_text;
	bool blockers;          /* the workload options add blockers (darts --blockers K>0) */
	const char *timeline_seed; /* --timeline-seed: a seed, "all", or NULL (median) */
	const char *timeline_color; /* --timeline-color: "worker", "cpu", or NULL (worker) */
	uint64_t timeline_seed_n;
};

static int split_modes(struct compare_opts *c, const char *text)
{
	free(c->modes_text);
	c->modes_text = strdup(text);
	c->nmodes = 0;
	for (char *save, *m = strtok_r(c->modes_text, ",", &save); m; m = strtok_r(NULL, ",", &save)) {
		int mode;
		if (th_parse_activations(m, &mode))
			return cli_usage("compare", "--activations: unknown mode '%s' (off, bpf, explicit, auto)", m);
		for (int i = 0; i < c->nmodes; i++)
			if (strcmp(c->modes[i], m) == 0)
				return cli_usage("compare", "activation mode '%s' listed twice", m);
		c->modes[c->nmodes++] = m;
	}
	if (!c->nmodes)
		return cli_usage("compare", "--activations needs at least one mode");
	return 0;
}

static int split_preempts(struct compare_opts *c, const char *text)
{
	free(c->preempts_text);
	c->preempts_text = strdup(text);
	c->npreempts = 0;
	if (!text[0] || text[0] == ',' || text[strlen(text) - 1] == ',' || strstr(text, ",,"))
		return cli_usage("compare", "--preempt: empty item in '%s'", text);
	for (char *save, *m = strtok_r(c->preempts_text, ",", &save); m; m = strtok_r(NULL, ",", &save)) {
		uint64_t ns;
		if (cli_parse_preempt(m, true, &ns))
			return cli_usage("compare", "--preempt: each item must be 0 (none) or milliseconds in "
					 "[0.01, 10000], not '%s'", m);
		for (int i = 0; i < c->npreempts; i++)
			if (c->preempt_ns[i] == ns)
				return strcmp(c->preempts[i], m) == 0
					       ? cli_usage("compare", "--preempt: '%s' listed twice", m)
					       : cli_usage("compare", "--preempt: '%s' is the same quantum as '%s'",
							   m, c->preempts[i]);
		if (c->npreempts == MAX_PREEMPTS)
			return cli_usage("compare", "--preempt: at most %d values", MAX_PREEMPTS);
		c->preempts[c->npreempts] = m;
		c->preempt_ns[c->npreempts++] = ns;
	}
	return 0;
}

/* A run's preempt label (with more than one --preempt value): "p" and the quantum in ms,
 * '_' for the decimal point, as file names take it: p0 (none), p1, p0_25. */
static void preempt_label(char *out, size_t len, uint64_t ns)
{
	char frac[8];
	snprintf(frac, sizeof(frac), "%06llu", (unsigned long long)(ns % 1000000));
	for (size_t l = strlen(frac); l > 0 && frac[l - 1] == '0'; l--)
		frac[l - 1] = 0;
	snprintf(out, len, "p%llu%s%s", (unsigned long long)(ns / 1000000), frac[0] ? "_" : "", frac);
}

/* Runs per policy and repeat: one per activation mode, per --preempt value (when more
 * than one) and, with blockers, with and without them. */
static int variants_of(const struct compare_opts *c)
{
	return (c->nmodes ? c->nmodes : 1) * (c->npreempts > 1 ? c->npreempts : 1) * (c->blockers ? 2 : 1);
}

/* The first --preempt item with a quantum (NULL: none), for checking the options. */
static const char *first_preempt(const struct compare_opts *c)
{
	for (int i = 0; i < c->npreempts; i++)
		if (c->preempt_ns[i])
			return c->preempts[i];
	return NULL;
}

/* One run's workload options into args: the ones given, less every --preempt pair (and
 * --blockers K with no_blockers), then --preempt MS when the run has a quantum (preempt:
 * an item's text, NULL for none). Returns how many; at most wl_argc + 2. */
static int child_options(const struct compare_opts *c, const char **args, bool no_blockers,
			 const char *preempt)
{
	int n = 0;
	for (int i = 0; i < c->wl_argc; i++) {
		const char *a = c->wl_argv[i];
		if (strcmp(a, "--preempt") == 0 || (no_blockers && strcmp(a, "--blockers") == 0)) {
			i++; /* and its value */
			continue;
		}
		args[n++] = a;
	}
	if (preempt) {
		args[n++] = "--preempt";
		args[n++] = preempt;
	}
	return n;
}

static int split_policies(struct compare_opts *c, const char *text)
{
	char buf[256];
	free(c->policies_text);
	c->policies_text = strdup(text);
	c->npolicies = 0;
	for (char *save, *p = strtok_r(c->policies_text, ",", &save); p; p = strtok_r(NULL, ",", &save)) {
		if (!cli_policy_known(p))
			return cli_usage("compare", "unknown policy '%s' (one of: %s)", p,
					 cli_policy_list(buf, sizeof(buf)));
		for (int i = 0; i < c->npolicies; i++)
			if (strcmp(c->policies[i], p) == 0)
				return cli_usage("compare", "policy '%s' listed twice", p);
		if (c->npolicies == 64)
			return cli_usage("compare", "too many policies");
		c->policies[c->npolicies++] = p;
	}
	if (!c->npolicies)
		return cli_usage("compare", "--policies needs at least one policy");
	return 0;
}

static int parse_compare(int argc, char **argv, struct compare_opts *c)
{
	char buf[256];
	memset(c, 0, sizeof(*c));
	c->repeat = 5;
	c->seed = 1;
	c->out = "report";
	c->workers = "auto";
	if (argc < 2)
		return cli_usage("compare", "missing WORKLOAD (one of: %s)", cli_workload_list(buf, sizeof(buf)));
	if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
		compare_help(stdout);
		return 3;
	}
	c->workload = argv[1];
	if (!wl_find(c->workload))
		return cli_usage("compare", "unknown workload '%s' (one of: %s)", c->workload,
				 cli_workload_list(buf, sizeof(buf)));
	c->wl_argv = calloc((size_t)argc + 1, sizeof(char *));
	if (!c->wl_argv)
		return cli_fail("compare", "out of memory");
	for (int i = 2; i < argc; i++) {
		const char *a = argv[i];
		bool val = strcmp(a, "--policies") == 0 || strcmp(a, "--repeat") == 0 ||
			   strcmp(a, "--out") == 0 || strcmp(a, "--workers") == 0 || strcmp(a, "--seed") == 0 ||
			   strcmp(a, "--activations") == 0 || strcmp(a, "--timeline-seed") == 0 ||
			   strcmp(a, "--timeline-color") == 0 || strcmp(a, "--preempt") == 0;
		if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
			compare_help(stdout);
			return 3;
		}
		if (strcmp(a, "--pin") == 0) {
			c->pin = true;
			continue;
		}
		if (strcmp(a, "--no-bpf") == 0) {
			c->no_bpf = true;
			continue;
		}
		if (strcmp(a, "--force") == 0) {
			c->force = true;
			continue;
		}
		if (strcmp(a, "--policy") == 0 || strcmp(a, "--json") == 0 || strcmp(a, "--quiet") == 0 ||
		    strcmp(a, "--hist") == 0)
			return cli_usage("compare", "%s is an option of 'taskhop run'; compare takes "
					 "--policies and --out", a);
		if (!val) {
			c->wl_argv[c->wl_argc++] = argv[i];
			continue;
		}
		if (i + 1 >= argc)
			return cli_usage("compare", "%s needs a value", a);
		const char *v = argv[++i];
		int w;
		if (strcmp(a, "--policies") == 0) {
			int rc = split_policies(c, v);
			if (rc)
				return rc;
		} else if (strcmp(a, "--activations") == 0) {
			int rc = split_modes(c, v);
			if (rc)
				return rc;
		} else if (strcmp(a, "--preempt") == 0) {
			/* kept among the workload options too, as given: the report's options
			 * show it; each run gets its own value (child_options) */
			c->wl_argv[c->wl_argc++] = argv[i - 1];
			c->wl_argv[c->wl_argc++] = argv[i];
			int rc = split_preempts(c, v);
			if (rc)
				return rc;
		} else if (strcmp(a, "--repeat") == 0) {
			if (cli_number("--repeat", v, 1, 10000, &c->repeat))
				return 2;
		} else if (strcmp(a, "--seed") == 0) {
			if (cli_number("--seed", v, 0, UINT64_MAX, &c->seed))
				return 2;
		} else if (strcmp(a, "--timeline-seed") == 0) {
			c->timeline_seed = v;
		} else if (strcmp(a, "--timeline-color") == 0) {
			if (strcmp(v, "worker") != 0 && strcmp(v, "cpu") != 0)
				return cli_usage("compare", "--timeline-color must be worker or cpu, not '%s'", v);
			c->timeline_color = v;
		} else if (strcmp(a, "--workers") == 0) {
			if (cli_parse_workers(v, &w))
				return cli_usage("compare", "--workers must be 1..%d, auto or cores, not '%s'",
						 TH_MAX_WORKERS, v);
			c->workers = v;
		} else {
			c->out = v;
		}
	}
	uint64_t last_seed = c->seed + c->repeat - 1 < c->seed ? UINT64_MAX : c->seed + c->repeat - 1;
	if (c->timeline_seed && strcmp(c->timeline_seed, "all") != 0 &&
	    cli_number("--timeline-seed", c->timeline_seed, c->seed, last_seed, &c->timeline_seed_n))
		return 2; /* one of the seeds run: S .. S+repeat-1 */
	for (int i = 0; i + 1 < c->wl_argc; i++)
		if (strcmp(c->wl_argv[i], "--blockers") == 0)
			c->blockers = strcmp(c->wl_argv[i + 1], "0") != 0;
	if (!c->npolicies) {
		const char *const *names = th_policy_names();
		for (int i = 0; names[i] && i < 64; i++)
			c->policies[c->npolicies++] = (char *)names[i];
	}
	bool serial = wl_find(c->workload)->baseline_option != NULL;
	int labels = c->npolicies * variants_of(c) + serial;
	if (labels > REPORT_MAX_POLICIES)
		return cli_usage("compare", "%d policies x %d variants%s = %d labels; a report holds at "
				 "most %d (fewer --policies, --activations or --preempt values)",
				 c->npolicies, variants_of(c), serial ? " + serial" : "", labels,
				 REPORT_MAX_POLICIES);
	/* Check the workload options now, with run's parser, rather than in the first child
	 * (--preempt: a value with a quantum, which the workload must take). */
	const char *probe[c->wl_argc + 4];
	probe[0] = c->workload;
	int nprobe = 1 + child_options(c, probe + 1, false, first_preempt(c));
	struct cli_run o;
	int rc = cli_parse_run(nprobe, (char **)probe, &o);
	cli_run_free(&o);
	return rc == 3 ? 2 : rc;
}

/* Runs `taskhop run` for one (policy, seed) in its own process group, so that a Ctrl-C
 * at the terminal reaches only us and the run in progress can finish. */
static struct json *one_run(const struct compare_opts *c, const char *policy, bool serial,
			    const char *mode, const char *preempt, bool no_blockers, uint64_t seed,
			    const char *tmp, int *status)
{
	char seedtxt[32];
	snprintf(seedtxt, sizeof(seedtxt), "%llu", (unsigned long long)seed);
	const char *args[32 + c->wl_argc];
	int n = 0;
	args[n++] = "taskhop";
	args[n++] = "run";
	args[n++] = c->workload;
	args[n++] = "--policy";
	args[n++] = policy;
	args[n++] = "--workers";
	args[n++] = c->workers;
	args[n++] = "--seed";
	args[n++] = seedtxt;
	args[n++] = "--quiet";
	args[n++] = "--json";
	args[n++] = tmp;
	if (c->pin)
		args[n++] = "--pin";
	if (c->no_bpf)
		args[n++] = "--no-bpf";
	if (mode) {
		args[n++] = "--activations";
		args[n++] = mode;
	}
	n += child_options(c, args + n, no_blockers, preempt);
	if (serial)
		args[n++] = wl_find(c->workload)->baseline_option;
	args[n] = NULL;
	pid_t parent = getpid();
	pid_t pid = fork();
	if (pid < 0) {
		*status = -1;
		return NULL;
	}
	if (pid == 0) {
		/* A SIGKILLed compare runs no handler: the kernel must end the run for us.
		 * The death signal survives exec; a parent that died before prctl took effect
		 * shows as a changed getppid(). */
		if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != parent)
			_exit(127);
		setpgid(0, 0);
		signal(SIGINT, SIG_DFL);
		execv("/proc/self/exe", (char *const *)args);
		fprintf(stderr, "taskhop compare: cannot run /proc/self/exe: %s\n", strerror(errno));
		_exit(127);
	}
	setpgid(pid, pid);
	running_child = pid;
	while (waitpid(pid, status, 0) < 0 && errno == EINTR)
		;
	running_child = 0;
	if (!WIFEXITED(*status) || WEXITSTATUS(*status) != 0) {
		unlink(tmp);
		return NULL;
	}
	char err[512];
	struct json *run = json_parse_file(tmp, err, sizeof(err));
	unlink(tmp);
	if (!run)
		fprintf(stderr, "taskhop compare: %s\n", err);
	return run;
}

/* The child's run, checked by the run reader into r (release it), relabelled (the report
 * groups runs by policy) and numbered by its repeat, written again by the run writer.
 * NULL: it fails the reader. */
static struct json *relabel(const struct json *child, const char *policy, uint64_t repeat,
			    struct run *r)
{
	char err[512];
	if (run_read(child, 0, r, err, sizeof(err))) {
		fprintf(stderr, "taskhop compare: the run's JSON: %s\n", err);
		return NULL;
	}
	if (policy)
		r->policy = policy;
	r->repeat = (double)repeat;
	return run_to_json(r);
}

/* Mean over repeats of the compute tasks' mean completion of the runs labelled `label`
 * (darts with --blockers puts it in the run's extra). */
static double compute_mean(const struct report_view *v, const char *label, int *n)
{
	double sum = 0;
	*n = 0;
	for (size_t i = 0; i < v->nruns; i++) {
		const struct run *run = &v->runs[i];
		double x = json_get_num(run->extra, "compute_mean_completion_s", -1);
		if (x >= 0 && strcmp(run->policy, label) == 0) {
			sum += x;
			(*n)++;
		}
	}
	return *n ? sum / *n : -1;
}

/* blockers[]: per policy (and activation mode), the compute tasks' mean completion
 * with the blockers and without (the POLICY.../no-blockers runs), and their ratio. */
static struct json *blockers_table(const struct json *report)
{
	static const char suffix[] = "/no-blockers";
	struct json *rows = json_arr();
	struct report_view v;
	char err[256];
	if (report_view_read_partial(report, &v, err, sizeof(err)))
		return rows;
	for (size_t i = 0; i < v.nruns; i++) {
		const char *label = v.runs[i].policy;
		size_t len = strlen(label);
		if (len <= sizeof(suffix) - 1 || strcmp(label + len - (sizeof(suffix) - 1), suffix))
			continue;
		char with[128];
		snprintf(with, sizeof(with), "%.*s", (int)(len - (sizeof(suffix) - 1)), label);
		bool seen = false;
		for (size_t j = 0; j < json_len(rows) && !seen; j++)
			seen = !strcmp(json_get_str(json_at(rows, j), "label", ""), with);
		int nw, nb;
		double without = compute_mean(&v, label, &nb), blk = compute_mean(&v, with, &nw);
		if (seen || !nw || !nb)
			continue;
		struct json *row = json_obj();
		json_set_str(row, "label", with);
		json_set_num(row, "compute_mean_completion_s_without", without);
		json_set_num(row, "compute_mean_completion_s_with", blk);
		json_set_num(row, "slowdown", without > 0 ? blk / without : 0);
		json_push(rows, row);
	}
	report_view_free(&v);
	return rows;
}

static void print_blockers(const struct json *report, FILE *f)
{
	const struct json *rows = json_get(report, "blockers");
	if (!json_len(rows))
		return;
	fprintf(f, "compute tasks' mean completion, mean over repeats:\n%-28s %12s %12s %8s\n",
		"policy/activations", "without s", "blockers s", "ratio");
	for (size_t i = 0; i < json_len(rows); i++) {
		const struct json *r = json_at(rows, i);
		fprintf(f, "%-28s %12.3f %12.3f %8.2f\n", json_get_str(r, "label", "?"),
			json_get_num(r, "compute_mean_completion_s_without", 0),
			json_get_num(r, "compute_mean_completion_s_with", 0), json_get_num(r, "slowdown", 0));
	}
}

static void progress(int k, int total, const struct run *run, double elapsed)
{
	char seed[32];
	double mean = run->mean_completion_s, ideal = run->ideal_mean_completion_s;
	fprintf(stderr, "[%*d/%d] %-10s seed %-3s", total >= 100 ? 3 : 2, k, total, run->policy,
		run_seed_text(seed, sizeof(seed), run));
	if (!isnan(mean))
		fprintf(stderr, " mean completion %.3f s", mean);
	if (ideal > 0)
		fprintf(stderr, " (x%.2f ideal)", mean / ideal);
	double eta = k ? elapsed / k * (total - k) : 0;
	fprintf(stderr, "%s wall %.2f s, eta %.0f s\n", isnan(mean) ? "" : ",",
		isnan(run->wall_s) ? 0 : run->wall_s, eta);
}

static void compare_opts_free(struct compare_opts *c)
{
	free(c->wl_argv);
	free(c->policies_text);
	free(c->modes_text);
	free(c->preempts_text);
}

int cmd_compare(int argc, char **argv)
{
	struct compare_opts c;
	cli_cmd_name = "compare";
	int rc = parse_compare(argc, argv, &c);
	if (rc) {
		compare_opts_free(&c);
		return rc == 3 ? 0 : rc;
	}
	char err[512], tmp[4200];
	const struct th_workload *wl = wl_find(c.workload);
	if (!c.no_bpf) {
		const char *why = th_record_unavailable();
		if (why) {
			rc = cli_fail("compare", "%s", why);
			goto out;
		}
	}
	/* "report/" and "report" are the same directory; keep paths in messages clean. */
	char outbuf[4096];
	snprintf(outbuf, sizeof(outbuf), "%s", c.out);
	for (size_t l = strlen(outbuf); l > 1 && outbuf[l - 1] == '/'; l--)
		outbuf[l - 1] = 0;
	c.out = outbuf;
	snprintf(tmp, sizeof(tmp), "%s/report.json", c.out);
	if (!c.force && access(tmp, F_OK) == 0) {
		rc = cli_usage("compare", "%s holds an older report: --force replaces it", c.out);
		goto out;
	}
	if (fs_mkdir_p(c.out, err, sizeof(err))) {
		rc = cli_usage("compare", "--out: %s", err);
		goto out;
	}
	if ((rc = cli_check_output_dir("--out", c.out)) != 0)
		goto out;
	snprintf(tmp, sizeof(tmp), "%s/.run.%d.json", c.out, (int)getpid());
	struct json *opts = json_arr();
	for (int i = 0; i < c.wl_argc; i++)
		json_push(opts, json_str(c.wl_argv[i]));
	char **full = calloc((size_t)argc + 2, sizeof(char *));
	if (!full) {
		json_free(opts);
		rc = cli_fail("compare", "out of memory");
		goto out;
	}
	full[0] = "taskhop";
	memcpy(full + 1, argv, (size_t)argc * sizeof(*argv));
	struct json *report = report_new(c.workload, opts, argc + 1, full);
	free(full);
	json_free(opts);
	json_set_num(report, "repeat", (double)c.repeat);
	if (c.timeline_seed)
		report_set_timeline_seed(report, strcmp(c.timeline_seed, "all") == 0, c.timeline_seed_n);
	if (c.timeline_color)
		report_set_timeline_color(report, c.timeline_color);
	struct json *runs = (struct json *)json_get(report, "runs");
	bool serial = wl->baseline_option != NULL;
	int variants = variants_of(&c), nblk = c.blockers ? 2 : 1;
	int npre = c.npreempts > 1 ? c.npreempts : 1;
	int per_round = c.npolicies * variants + serial, total = (int)c.repeat * per_round, k = 0;
	struct sigaction sa = { .sa_handler = on_sigint }, old[3];
	sigaction(SIGINT, &sa, &old[0]);
	sigaction(SIGTERM, &sa, &old[1]);
	sigaction(SIGHUP, &sa, &old[2]);
	char vtxt[32] = "";
	if (variants > 1)
		snprintf(vtxt, sizeof(vtxt), " x %d variants", variants);
	fprintf(stderr, "taskhop compare: %s, %d policies%s%s x %llu repeats = %d runs -> %s/\n",
		c.workload, c.npolicies, vtxt, serial ? " + serial" : "", (unsigned long long)c.repeat,
		total, c.out);
	uint64_t t0 = th_now_ns();
	for (uint64_t r = 0; r < c.repeat && !interrupts && rc == 0; r++) {
		for (int p = 0; p < per_round && !interrupts; p++) {
			bool base = serial && p == 0;
			int q = base ? 0 : p - serial, v = q % variants;
			const char *pol = c.policies[q / variants];
			/* v: mode, then preempt value, then blockers, the innermost */
			const char *mode = c.nmodes && !base ? c.modes[v / (npre * nblk)] : NULL;
			int pi = base ? 0 : v / nblk % npre; /* the serial baseline: the first value */
			const char *pre = c.npreempts && c.preempt_ns[pi] ? c.preempts[pi] : NULL;
			bool no_blk = c.blockers && !base && v % nblk == 1;
			char label[128], plabel[32] = "";
			if (npre > 1 && !base) {
				plabel[0] = '/';
				preempt_label(plabel + 1, sizeof(plabel) - 1, c.preempt_ns[pi]);
			}
			snprintf(label, sizeof(label), "%s%s%s%s%s", pol, mode ? "/" : "", mode ? mode : "",
				 plabel, no_blk ? "/no-blockers" : "");
			int status;
			struct json *child = one_run(&c, pol, base, mode, pre, no_blk, c.seed + r, tmp, &status);
			struct run parsed = { 0 };
			bool relabelled = mode || no_blk || plabel[0];
			struct json *run = child ? relabel(child, base ? REPORT_SERIAL : relabelled ? label : NULL,
							   r + 1, &parsed) : NULL;
			if (!run) {
				json_free(child);
				if (interrupts)
					break;
				rc = cli_fail("compare", "run %d (%s, seed %llu) failed (exit status %d); "
					      "writing the report of the %d runs done", k + 1,
					      base ? REPORT_SERIAL : label, (unsigned long long)(c.seed + r),
					      WIFEXITED(status) ? WEXITSTATUS(status) : -1, k);
				break;
			}
			json_push(runs, run);
			progress(++k, total, &parsed, (double)(th_now_ns() - t0) / 1e9);
			run_release(&parsed);
			json_free(child);
		}
	}
	sigaction(SIGINT, &old[0], NULL);
	sigaction(SIGTERM, &old[1], NULL);
	sigaction(SIGHUP, &old[2], NULL);
	json_set_bool(report, "interrupted", interrupts > 0 || k < total);
	report_aggregate(report);
	if (c.blockers)
		json_set(report, "blockers", blockers_table(report));
	if (k == 0) {
		if (!rc)
			rc = cli_fail("compare", "no run finished; nothing written");
	} else if (report_write_all(report, c.out, true, err, sizeof(err))) {
		/* report_write_all stages the whole report beside c.out and swaps it
		 * in, dropping the older report's pages and figures (--force's promise)
		 * only once the new one is complete. */
		rc = cli_fail("compare", "%s", err);
	} else {
		report_text(report, stdout);
		print_blockers(report, stdout);
		printf("wrote %s/report.json, report.md, report.html, runs.csv, *.svg, trace.json\n", c.out);
		if (interrupts && !rc)
			rc = 130;
	}
	json_free(report);
out:
	compare_opts_free(&c);
	return rc;
}
