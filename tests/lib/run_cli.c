/* run_cli.c — runs the `taskhop` binary for the CLI tests: fork, optional drop to an
 * unprivileged uid, exec, capture stdout/stderr through unlinked temporary files. */
#include "run_cli.h"

#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <grp.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

uid_t run_as;
char taskhop_bin_buf[PATH_MAX];

const char *taskhop_bin(void)
{
	if (taskhop_bin_buf[0])
		return taskhop_bin_buf;
	const char *env = getenv("TASKHOP_BIN");
	if (env && *env) {
		snprintf(taskhop_bin_buf, sizeof(taskhop_bin_buf), "%s", env);
	} else {
		char self[PATH_MAX - 64];
		ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
		self[n > 0 ? n : 0] = 0;
		char *slash = strrchr(self, '/');
		if (slash)
			*slash = 0;
		snprintf(taskhop_bin_buf, sizeof(taskhop_bin_buf), "%s/../taskhop", self);
	}
	return taskhop_bin_buf;
}

static void slurp(int fd, char *buf, size_t len)
{
	size_t n = 0;
	lseek(fd, 0, SEEK_SET);
	ssize_t r;
	while (n + 1 < len && (r = read(fd, buf + n, len - 1 - n)) > 0)
		n += (size_t)r;
	buf[n] = 0;
	close(fd);
}

struct result *run_argv(const char **argv)
{
	argv[0] = taskhop_bin();
	struct result *r = calloc(1, sizeof(*r));
	char o[] = "/tmp/th_cli_outXXXXXX", e[] = "/tmp/th_cli_errXXXXXX";
	int fo = mkstemp(o), fe = mkstemp(e);
	unlink(o);
	unlink(e);
	pid_t pid = fork();
	if (pid == 0) {
		dup2(fo, 1);
		dup2(fe, 2);
		if (run_as && (setgroups(0, NULL) || setgid(run_as) || setuid(run_as)))
			_exit(126);
		execv(argv[0], (char *const *)argv);
		_exit(127);
	}
	int st;
	waitpid(pid, &st, 0);
	r->status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
	slurp(fo, r->out, sizeof(r->out));
	slurp(fe, r->err, sizeof(r->err));
	return r;
}

struct result *run_taskhop(const char *first, ...)
{
	const char *argv[64];
	int n = 1;
	va_list ap;
	va_start(ap, first);
	for (const char *a = first; a && n < 63; a = va_arg(ap, const char *))
		argv[n++] = a;
	va_end(ap);
	argv[n] = NULL;
	return run_argv(argv);
}

int count_lines(const char *s)
{
	int n = 0;
	for (; *s; s++)
		n += *s == '\n';
	return n;
}

void expect_usage_error(struct result *r, const char *needle)
{
	if (r->status != 2 || count_lines(r->err) != 1 || !strstr(r->err, needle) || r->out[0]) {
		static char copy[sizeof(r->err)];
		snprintf(copy, sizeof(copy), "%s", r->err);
		int st = r->status;
		free(r);
		fail_msg("expected exit 2 and one line with '%s'; got exit %d, stderr: %s", needle, st, copy);
	}
	free(r);
}
