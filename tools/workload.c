/* workload.c — the workload registry (generated list of tools/workloads/NAME.c files) and the helpers
 * workloads share: result rows, CPU-time measurement, count parsing, gnuplot figures. */
#include "workload.h"
#include "numparse.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* ---- registry -------------------------------------------------------- */

/* wl_registry.h is written by tools/tools.mk: one WL(name) per tools/workloads/NAME.c. */
#define WL(name) extern const struct th_workload th_workload_##name;
#include "wl_registry.h"
#undef WL

static const struct th_workload *const registry[] = {
#define WL(name) &th_workload_##name,
#include "wl_registry.h"
#undef WL
	NULL,
};

const struct th_workload *const *wl_all(int *n)
{
	*n = (int)(sizeof(registry) / sizeof(registry[0])) - 1;
	return registry;
}

const struct th_workload *wl_find(const char *name)
{
	for (int i = 0; registry[i]; i++)
		if (strcmp(registry[i]->name, name) == 0)
			return registry[i];
	return NULL;
}

/* ---- results --------------------------------------------------------- */

struct wl_task *wl_add_task(struct wl_result *res)
{
	if (res->ntasks == res->cap) {
		size_t cap = res->cap ? res->cap * 2 : 32;
		struct wl_task *t = realloc(res->tasks, cap * sizeof(*t));
		if (!t)
			return NULL;
		res->tasks = t;
		res->cap = cap;
	}
	struct wl_task *row = &res->tasks[res->ntasks++];
	memset(row, 0, sizeof(*row));
	row->work_s = -1;
	row->st.spawn_worker = row->st.home_worker = row->st.first_worker = row->st.last_worker = -1;
	return row;
}

void wl_task_from(struct wl_task *row, const th_task *t, uint64_t t0_ns)
{
	th_task_stats(t, &row->st);
	row->completion_s = row->st.done_ns > t0_ns ? (double)(row->st.done_ns - t0_ns) / 1e9 : 0;
}

void wl_result_free(struct wl_result *res)
{
	for (size_t i = 0; i < res->ntasks; i++)
		json_free(res->tasks[i].extra);
	free(res->tasks);
	json_free(res->extra);
	memset(res, 0, sizeof(*res));
}

double wl_thread_cpu_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* 9e15 < 2^53: every count is exact as a double. */
int wl_parse_count(const char *text, double min, double *out)
{
	uint64_t v;
	if (min < 0 || num_parse_u64(text, (uint64_t)min, 9000000000000000ULL, &v) != NUM_OK)
		return -1;
	*out = (double)v;
	return 0;
}

/* ---- figures ----------------------------------------------------------- */

int fig_gnuplot(const char *dir, const char *name, int width, int height, const char *script,
		char *err, size_t errlen)
{
	char path[4096], tmp[4200];
	if (snprintf(path, sizeof(path), "%s/%s", dir, name) >= (int)sizeof(path)) {
		snprintf(err, errlen, "%s/%s: path too long", dir, name);
		return -1;
	}
	snprintf(tmp, sizeof(tmp), "%s.tmp.%d", path, (int)getpid());
	/* gnuplot's warnings (empty ranges of all-zero panels, ...) are noise on success;
	 * they are kept in a temp file and the last line is shown only on failure. */
	FILE *log = tmpfile();
	int fds[2];
	if (!log || pipe(fds) != 0) {
		if (log)
			fclose(log);
		snprintf(err, errlen, "pipe: %s", strerror(errno));
		return -1;
	}
	pid_t pid = fork();
	if (pid < 0) {
		snprintf(err, errlen, "fork: %s", strerror(errno));
		fclose(log);
		close(fds[0]);
		close(fds[1]);
		return -1;
	}
	if (pid == 0) {
		dup2(fds[0], 0);
		dup2(fileno(log), 2);
		close(fds[0]);
		close(fds[1]);
		execlp("gnuplot", "gnuplot", (char *)NULL);
		fprintf(stderr, "taskhop: gnuplot not found (run 'make deps' to install gnuplot-nox)\n");
		_exit(127);
	}
	close(fds[0]);
	FILE *f = fdopen(fds[1], "w");
	if (!f) {
		close(fds[1]);
	} else {
		/* The font is fixed so SVGs look the same on every machine. */
		fprintf(f, "set terminal svg size %d,%d dynamic enhanced font 'sans,12' background rgb 'white'\n",
			width, height);
		fprintf(f, "set output '%s'\n", tmp);
		fputs(script, f);
		fputs("\nset output\n", f);
		fclose(f);
	}
	int status;
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		char line[256] = "", last[256] = "";
		rewind(log);
		while (fgets(line, sizeof(line), log))
			if (strspn(line, " \t\n^") != strlen(line))
				snprintf(last, sizeof(last), "%s", line);
		last[strcspn(last, "\n")] = 0;
		snprintf(err, errlen, "gnuplot failed drawing %s (exit %d)%s%s", path,
			 WIFEXITED(status) ? WEXITSTATUS(status) : -1, last[0] ? ": " : "", last);
		fclose(log);
		unlink(tmp);
		return -1;
	}
	fclose(log);
	if (rename(tmp, path) != 0) {
		snprintf(err, errlen, "cannot write %s: %s", path, strerror(errno));
		unlink(tmp);
		return -1;
	}
	return 0;
}
