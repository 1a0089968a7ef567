/* leibniz_bench.c — `make bench` step of user/dist: runs the article's Leibniz pmap (2 x 10^8
 * terms) as users do, `taskhop run leibniz --procs 2` and under `mpirun -n 3 ... --mpi`. */
#include <libgen.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "report/json.h"

/* One `taskhop run` into a JSON file; returns its "extra" object (caller frees
 * the whole document through *doc) or NULL. */
static const struct json *run_json(const char *cmd, const char *path, struct json **doc)
{
	int st = system(cmd);
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
		fprintf(stderr, "leibniz_bench: failed (status %d): %s\n", st, cmd);
		return NULL;
	}
	char err[256];
	*doc = json_parse_file(path, err, sizeof err);
	if (!*doc) {
		fprintf(stderr, "leibniz_bench: %s: %s\n", path, err);
		return NULL;
	}
	unlink(path);
	return json_get(*doc, "extra");
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* Memory: the median run. */
static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof *v, cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* Time: the minimum, as the article's @btime reports it: on a shared machine
 * every disturbance only adds time, so the fastest run is the closest to the
 * undisturbed one. */
static double minimum(const double *v, int n)
{
	double m = v[0];
	for (int i = 1; i < n; i++)
		m = v[i] < m ? v[i] : m;
	return m;
}

int main(int argc, char **argv)
{
	int reps = argc > 1 ? atoi(argv[1]) : 5;
	if (reps < 1 || reps > 50) {
		fprintf(stderr, "usage: leibniz_bench [REPETITIONS 1..50] [TASKHOP]\n");
		return 2;
	}
	char bin[4096], self[4096];
	if (argc > 2) {
		snprintf(bin, sizeof bin, "%s", argv[2]);
	} else {
		ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
		self[n > 0 ? n : 0] = 0;
		snprintf(bin, sizeof bin, "%s/taskhop", dirname(self));
	}
	if (access(bin, X_OK) != 0) {
		fprintf(stderr, "leibniz_bench: no taskhop binary at %s\n", bin);
		return 1;
	}
	char json[64], cmd[8400];
	snprintf(json, sizeof json, "/tmp/taskhop-lzbench-%d.json", (int)getpid());
	/* the article's call: 2 inputs x 10^8 terms, groups of 1000; every run
	 * also does the serial map in the same process for time and memory */
	snprintf(cmd, sizeof cmd, "'%s' run leibniz --procs 2 --quiet --json %s", bin, json);
	double ser[50], pm[50], sp[50], ratio[50], srss[50], rss[50], wcpu[50];
	char hash[32] = "";
	for (int i = 0; i < reps; i++) {
		struct json *doc = NULL;
		const struct json *x = run_json(cmd, json, &doc);
		if (!x || !json_get(x, "identical_to_serial") || !json_bool_of(json_get(x, "identical_to_serial"))) {
			fprintf(stderr, "leibniz_bench: no result, or pmap and serial partial sums differ\n");
			json_free(doc);
			return 1;
		}
		ser[i] = json_get_num(x, "serial_s", 0);
		pm[i] = json_get_num(x, "run_s", 0);
		srss[i] = json_get_num(x, "serial_peak_rss_kb", 0);
		rss[i] = json_get_num(x, "peak_rss_all_kb", 0);
		ratio[i] = rss[i] / srss[i];
		/* the slower worker's own CPU time: what pmap would take with a
		 * CPU always free for each worker (on a shared machine they wait) */
		const struct json *ps = json_get(x, "processes");
		wcpu[i] = 0;
		for (size_t k = 0; k < json_len(ps); k++) {
			double c = json_get_num(json_at(ps, k), "cpu_s", 0);
			wcpu[i] = c > wcpu[i] ? c : wcpu[i];
		}
		snprintf(hash, sizeof hash, "%s", json_get_str(x, "partial_sums_fnv1a", ""));
		json_free(doc);
	}
	double s = minimum(ser, reps), p = minimum(pm, reps);
	/* each run's own ratio: serial and pmap measured in the same process,
	 * seconds apart, so a disturbance of the machine tends to hit both */
	for (int i = 0; i < reps; i++)
		sp[i] = ser[i] / pm[i];
	printf("bench: leibniz_serial_2e8 %.3f s\n", s);
	printf("bench: leibniz_pmap2_2e8 %.3f s\n", p);
	printf("bench: leibniz_pmap2_speedup %.2f x\n", s / p);
	printf("bench: leibniz_serial_2e8_median %.3f s\n", median(ser, reps));
	printf("bench: leibniz_pmap2_2e8_median %.3f s\n", median(pm, reps));
	printf("bench: leibniz_pmap2_speedup_median %.2f x\n", median(sp, reps));
	printf("bench: leibniz_pmap2_speedup_worst %.2f x\n", minimum(sp, reps));
	printf("bench: leibniz_pmap2_worker_cpu_max %.3f s\n", minimum(wcpu, reps));
	printf("bench: leibniz_serial_peak_rss %.0f KiB\n", median(srss, reps));
	printf("bench: leibniz_pmap2_peak_rss_all %.0f KiB\n", median(rss, reps));
	printf("bench: leibniz_pmap2_memory_ratio %.2f x\n", median(ratio, reps));
	if (system("command -v mpirun >/dev/null 2>&1") != 0) {
		fprintf(stderr, "leibniz_bench: no mpirun, MPI figures skipped (make deps installs OpenMPI)\n");
		return 0;
	}
	snprintf(cmd, sizeof cmd,
		 "timeout 120 mpirun --allow-run-as-root --oversubscribe -n 3 '%s' run leibniz --mpi "
		 "--no-baseline --quiet --json %s", bin, json);
	struct json *doc = NULL;
	const struct json *x = run_json(cmd, json, &doc);
	if (!x) {
		json_free(doc);
		return 1;
	}
	printf("bench: leibniz_mpi3_pmap_2e8 %.3f s\n", json_get_num(x, "run_s", 0));
	printf("bench: leibniz_mpi3_peak_rss_all %.0f KiB\n", json_get_num(x, "peak_rss_all_kb", 0));
	printf("bench: leibniz_mpi3_identical_partial_sums %d bool\n",
	       strcmp(json_get_str(x, "partial_sums_fnv1a", "?"), hash) == 0);
	json_free(doc);
	return 0;
}
