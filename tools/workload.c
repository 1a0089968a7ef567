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

/* Gnuplot's single quotes are the only string form without substitutions: inside double
 * quotes it runs `backquoted` shell commands and reads backslash escapes. Inside single
 * quotes only '' (one quote) is special; a newline would end the command, so control
 * characters (which have no printable form there) become spaces. A data block line can
 * only end the block when it is exactly its end tag, so a quoted title ("EOD" included)
 * can never end one: titles are never written inside blocks. */
void fig_quote(FILE *f, const char *s)
{
	fputc('\'', f);
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*p == '\'')
			fputs("''", f);
		else if (*p < 0x20 || *p == 0x7f)
			fputc(' ', f);
		else
			fputc(*p, f);
	}
	fputc('\'', f);
}

static fig_runner_fn fig_runner;

void fig_set_runner(fig_runner_fn fn)
{
	fig_runner = fn;
}

/* The child: gnuplot in dir reading the script from fd in, its messages to log. Working in
 * dir means the output is named by its basename, which taskhop chose: a directory whose
 * name holds a quote cannot break the "set output" line. */
static void exec_gnuplot(const char *dir, int in, int log)
{
	dup2(in, 0);
	dup2(log, 2);
	if (chdir(dir) != 0) {
		fprintf(stderr, "cannot enter %s: %s\n", dir, strerror(errno));
		_exit(126);
	}
	execlp("gnuplot", "gnuplot", (char *)NULL);
	fprintf(stderr, "taskhop: gnuplot not found (run 'make deps' to install gnuplot-nox)\n");
	_exit(127);
}

/* The last non-blank line gnuplot wrote to its log (its error, when it failed). */
static void last_log_line(FILE *log, char *last, size_t len)
{
	char line[256];
	last[0] = 0;
	rewind(log);
	while (fgets(line, sizeof(line), log))
		if (strspn(line, " \t\n^") != strlen(line))
			snprintf(last, len, "%s", line);
	last[strcspn(last, "\n")] = 0;
}

/* gnuplot exits 0 when its output cannot be written (a full disk, a quota): the SVG is
 * complete only when it is not empty and ends with its closing tag. */
static int check_svg(const char *path, char *why, size_t len)
{
	FILE *f = fopen(path, "r");
	if (!f) {
		snprintf(why, len, "%s", strerror(errno));
		return -1;
	}
	char tail[65] = "";
	long size = fseek(f, 0, SEEK_END) == 0 ? ftell(f) : -1;
	if (size > 0 && fseek(f, size > 64 ? size - 64 : 0, SEEK_SET) == 0)
		tail[fread(tail, 1, 64, f)] = 0;
	fclose(f);
	if (size <= 0)
		snprintf(why, len, "gnuplot wrote an empty file");
	else if (!strstr(tail, "</svg>"))
		snprintf(why, len, "gnuplot wrote a truncated file (%ld bytes)", size);
	else
		return 0;
	return -1;
}

static int wait_gnuplot(pid_t pid, FILE *log, const char *path, char *err, size_t errlen)
{
	int status;
	char last[256], why[256];
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	last_log_line(log, last, sizeof(last));
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		snprintf(err, errlen, "gnuplot failed drawing %s (exit %d)%s%s", path,
			 WIFEXITED(status) ? WEXITSTATUS(status) : -1, last[0] ? ": " : "", last);
		return -1;
	}
	if (check_svg(path, why, sizeof(why))) {
		snprintf(err, errlen, "cannot write %s: %s%s%s", path, why, last[0] ? "; gnuplot: " : "", last);
		return FIG_WRITE_FAILED;
	}
	return 0;
}

int fig_gnuplot(const char *dir, const char *name, int width, int height, const char *script,
		char *err, size_t errlen)
{
	char path[4096], tmp[4200], tmpname[128];
	if (snprintf(path, sizeof(path), "%s/%s", dir, name) >= (int)sizeof(path)) {
		snprintf(err, errlen, "%s/%s: path too long", dir, name);
		return -1;
	}
	if (fig_runner)
		return fig_runner(dir, name, script, err, errlen);
	snprintf(tmpname, sizeof(tmpname), ".%s.tmp.%d", name, (int)getpid());
	snprintf(tmp, sizeof(tmp), "%s/%s", dir, tmpname);
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
		close(fds[1]);
		exec_gnuplot(dir, fds[0], fileno(log));
	}
	close(fds[0]);
	FILE *f = fdopen(fds[1], "w");
	if (!f) {
		close(fds[1]);
	} else {
		/* The font is fixed so SVGs look the same on every machine. */
		fprintf(f, "set terminal svg size %d,%d dynamic enhanced font 'sans,12' background rgb 'white'\n",
			width, height);
		fprintf(f, "set output ");
		fig_quote(f, tmpname);
		fprintf(f, "\n%s\nset output\n", script);
		fclose(f);
	}
	int rc = wait_gnuplot(pid, log, tmp, err, errlen);
	fclose(log);
	if (rc == 0 && rename(tmp, path) != 0) {
		snprintf(err, errlen, "cannot write %s: %s", path, strerror(errno));
		rc = FIG_WRITE_FAILED;
	}
	if (rc)
		unlink(tmp);
	return rc;
}
