/* cli.c — small helpers shared by the `taskhop` subcommands: one-line usage errors with
 * exit status 2, policy/workload lists, numbers (numparse.c), outputs checked up front. */
#include "cli.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "numparse.h"

const char *cli_cmd_name = "run";

int cli_usage(const char *cmd, const char *fmt, ...)
{
	va_list ap;
	fprintf(stderr, "taskhop %s: ", cmd);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, " (try 'taskhop %s --help')\n", cmd);
	return 2;
}

int cli_fail(const char *cmd, const char *fmt, ...)
{
	va_list ap;
	fprintf(stderr, "taskhop %s: ", cmd);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return 1;
}

const char *cli_policy_list(char *buf, size_t len)
{
	const char *const *names = th_policy_names();
	size_t o = 0;
	buf[0] = 0;
	for (int i = 0; names[i] && o < len; i++)
		o += (size_t)snprintf(buf + o, len - o, "%s%s", i ? ", " : "", names[i]);
	return buf;
}

bool cli_policy_known(const char *name)
{
	if (th_policy_is_plugin(name))
		return true; /* loaded, and any error told, by th_runtime_start */
	const char *const *names = th_policy_names();
	for (int i = 0; names[i]; i++)
		if (strcmp(names[i], name) == 0)
			return true;
	return false;
}

const char *cli_workload_list(char *buf, size_t len)
{
	int n;
	const struct th_workload *const *all = wl_all(&n);
	size_t o = 0;
	buf[0] = 0;
	for (int i = 0; i < n && o < len; i++)
		o += (size_t)snprintf(buf + o, len - o, "%s%s", i ? ", " : "", all[i]->name);
	return buf;
}

int cli_parse_u64(const char *text, uint64_t min, uint64_t *out)
{
	return num_parse_u64(text, min, UINT64_MAX, out) == NUM_OK ? 0 : -1;
}

int cli_number(const char *flag, const char *text, uint64_t min, uint64_t max, uint64_t *out)
{
	char err[256];
	if (num_flag_u64(flag, text, min, max, out, err, sizeof(err)) == NUM_OK)
		return 0;
	return cli_usage(cli_cmd_name, "%s", err);
}

int cli_parse_preempt(const char *text, bool off_ok, uint64_t *ns)
{
	char *end;
	double ms = strtod(text, &end);
	bool plain = text[0] >= '0' && text[0] <= '9' && strspn(text, "0123456789.eE+-") == strlen(text);
	if (!plain || end == text || *end || !((ms >= 0.01 && ms <= 10000) || (off_ok && ms == 0)))
		return -1;
	*ns = (uint64_t)(ms * 1e6 + 0.5);
	return 0;
}

int cli_parse_workers(const char *text, int *workers)
{
	if (text && (strcmp(text, "auto") == 0 || strcmp(text, "cores") == 0))
		return th_parse_workers(text, workers);
	uint64_t v;
	if (num_parse_u64(text, 1, TH_MAX_WORKERS, &v) != NUM_OK)
		return -1;
	*workers = (int)v;
	return 0;
}

/* Creating (then removing) a file is the only test that holds for root too: access()
 * says yes to root on a directory procfs or a read-only mount will refuse. */
static int probe_dir(const char *dir, char *why, size_t len)
{
	char probe[4200];
	snprintf(probe, sizeof(probe), "%s/.taskhop-probe.%d", dir, (int)getpid());
	int fd = open(probe, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0) {
		snprintf(why, len, "%s", strerror(errno));
		return -1;
	}
	close(fd);
	unlink(probe);
	return 0;
}

int cli_check_output_file(const char *flag, const char *path)
{
	struct stat st;
	if (!path[0])
		return cli_usage(cli_cmd_name, "%s needs a file name", flag);
	if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
		return cli_usage(cli_cmd_name, "%s %s is a directory; give a file name", flag, path);
	char dir[4096], why[128];
	snprintf(dir, sizeof(dir), "%s", path);
	char *slash = strrchr(dir, '/');
	if (slash)
		slash == dir ? (void)(dir[1] = 0) : (void)(*slash = 0);
	if (probe_dir(slash ? dir : ".", why, sizeof(why)))
		return cli_usage(cli_cmd_name, "cannot write %s %s: %s", flag, path, why);
	return 0;
}

int cli_check_output_dir(const char *flag, const char *dir)
{
	char why[128];
	if (probe_dir(dir, why, sizeof(why)))
		return cli_usage(cli_cmd_name, "cannot write %s %s: %s", flag, dir, why);
	return 0;
}
