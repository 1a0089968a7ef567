/* output.c — what the leibniz workload reports: the run JSON's "extra" object, the
 * summary line, the serial-vs-pmap table with one row per worker process, and the
 * convergence figure found back in a report. */
#include "workloads/leibniz.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "report/json.h"
#include "workload.h"

const char *lz_mode_name(const struct lz_config *c)
{
	return c->mode == LZ_SERIAL ? "serial" : c->mode == LZ_THREADS ? "th_map" : c->mpi ? "pmap-mpi" : "pmap";
}

struct json *lz_outcome_json(const struct lz_config *c, const struct lz_outcome *o)
{
	struct json *x = json_obj();
	char hash[32];
	json_set_str(x, "mode", lz_mode_name(c));
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
void lz_outcome_summary(const struct lz_config *c, const struct lz_outcome *o, char *buf, size_t len)
{
	size_t n = 0;
#define OUT(...) (n += (size_t)snprintf(buf + n, n < len ? len - n : 0, __VA_ARGS__))
	OUT("leibniz %s: %zu partial sums of %d x %.0e terms, estimate %.15f, error %+.3e\n",
	    lz_mode_name(c), o->groups, c->inputs, (double)c->terms, o->estimate, o->error);
	if (o->have_serial)
		OUT("serial %.3f s %.1f MiB | %s %.3f s %.1f MiB (all processes) | speedup %.2f, memory x%.2f | "
		    "identical partial sums: %s\n",
		    o->serial_s, o->serial_rss_kb / 1024.0, lz_mode_name(c), o->run_s, o->rss_kb / 1024.0,
		    o->serial_s / o->run_s, (double)o->rss_kb / o->serial_rss_kb,
		    o->serial_hash == o->hash ? "yes" : "NO");
	else
		OUT("%s %.3f s, peak RSS of all processes %.1f MiB\n", lz_mode_name(c), o->run_s, o->rss_kb / 1024.0);
#undef OUT
}

/* The full table: the article's serial-vs-pmap comparison and one row per
 * worker process. */
void lz_print_table(FILE *f, const struct lz_config *c, const struct lz_outcome *o)
{
	fprintf(f, "leibniz: %d input%s x %.0e terms in groups of %lld = %zu partial sums (%s)\n", c->inputs,
		c->inputs == 1 ? "" : "s", (double)c->terms, (long long)c->group, o->groups, lz_mode_name(c));
	fprintf(f, "  estimate %.15f   error %+.3e   (pi = %.15f)\n", o->estimate, o->error, M_PI);
	fprintf(f, "  %-9s %9s %8s %22s\n", "map", "time_s", "speedup", "peak_rss_MiB(all procs)");
	if (o->have_serial)
		fprintf(f, "  %-9s %9.3f %8.2f %22.1f\n", "serial", o->serial_s, 1.0, o->serial_rss_kb / 1024.0);
	char speedup[16] = "-";
	if (o->have_serial)
		snprintf(speedup, sizeof speedup, "%.2f", o->serial_s / o->run_s);
	fprintf(f, "  %-9s %9.3f %8s %22.1f\n", lz_mode_name(c), o->run_s, speedup, o->rss_kb / 1024.0);
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

int lz_report_figures(const struct json *report, const char *dir, struct wl_figures *out)
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
