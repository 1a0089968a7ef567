/* cli.c — small helpers shared by the `taskhop` subcommands: one-line usage errors with
 * exit status 2, policy/workload lists, strict number parsing. */
#include "cli.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

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
	if (!text || !isdigit((unsigned char)text[0]))
		return -1;
	char *end;
	errno = 0;
	unsigned long long v = strtoull(text, &end, 10);
	if (*end || errno || v < min)
		return -1;
	*out = v;
	return 0;
}

int cli_parse_workers(const char *text, int *workers)
{
	if (text && isdigit((unsigned char)text[0])) {
		uint64_t v;
		if (cli_parse_u64(text, 1, &v) || v > TH_MAX_WORKERS)
			return -1;
		*workers = (int)v;
		return 0;
	}
	if (text && (strcmp(text, "auto") == 0 || strcmp(text, "cores") == 0))
		return th_parse_workers(text, workers);
	return -1;
}
