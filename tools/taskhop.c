/* taskhop.c — main of the `taskhop` command: splits --opt=value, dispatches to the
 * subcommands (one file each, tools/cmd_*.c), and prints --help / --version. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cmd.h"

struct subcommand {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *summary;
};

static const struct subcommand subcommands[] = {
	{ "list", cmd_list, "workloads and migration policies, one line each" },
	{ "run", cmd_run, "one run of a workload: per-task table, summary, optional JSON" },
	{ "compare", cmd_compare, "every policy N times, interleaved: report.json/md/html, figures, trace" },
	{ "report", cmd_report, "re-render a report directory or JSON file (text, Markdown, figures)" },
	{ "record", cmd_record, "record a command or a running process with the BPF recorder" },
};
#define NSUB (sizeof(subcommands) / sizeof(subcommands[0]))

static void usage(FILE *f)
{
	fprintf(f, "usage: taskhop COMMAND [options]   (taskhop COMMAND --help for each)\n\n"
		   "taskhop runs the experiments of 'Concurrency in Julia' on a C task runtime with\n"
		   "switchable migration policies and records what the kernel did with BPF.\n\n");
	for (size_t i = 0; i < NSUB; i++)
		fprintf(f, "  %-8s %s\n", subcommands[i].name, subcommands[i].summary);
	fprintf(f, "\nexamples:\n"
		   "  taskhop list\n"
		   "  taskhop run darts --policy shared --workers 2 --small 1e6 --large 1e8 --no-bpf\n"
		   "  taskhop compare darts --policies sticky,shared --repeat 3 --small 1e6 --large 1e8 --out /tmp/r\n"
		   "  taskhop report /tmp/r\n");
}

/* "--opt=value" -> "--opt" "value", so every subcommand parses one form. The option names
 * are cut in place (argv strings are writable), so nothing needs freeing but the array. */
static char **split_equals(int argc, char **argv, int *nargc)
{
	char **out = calloc((size_t)argc * 2 + 1, sizeof(char *));
	int n = 0;
	if (!out)
		return NULL;
	for (int i = 0; i < argc; i++) {
		char *eq = strncmp(argv[i], "--", 2) == 0 ? strchr(argv[i], '=') : NULL;
		if (eq && eq != argv[i] + 2) {
			*eq = 0;
			out[n++] = argv[i];
			out[n++] = eq + 1;
		} else {
			out[n++] = argv[i];
		}
	}
	*nargc = n;
	return out;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	const char *cmd = argv[1];
	if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0 || strcmp(cmd, "help") == 0) {
		if (argc > 2 && strcmp(cmd, "help") == 0) {
			char *h[] = { argv[2], "--help", NULL };
			for (size_t i = 0; i < NSUB; i++)
				if (strcmp(subcommands[i].name, argv[2]) == 0)
					return subcommands[i].fn(2, h);
		}
		usage(stdout);
		return 0;
	}
	if (strcmp(cmd, "--version") == 0 || strcmp(cmd, "-V") == 0) {
		printf("taskhop %s\n", TASKHOP_VERSION);
		return 0;
	}
	for (size_t i = 0; i < NSUB; i++) {
		if (strcmp(subcommands[i].name, cmd) == 0) {
			int n;
			char **args = split_equals(argc - 1, argv + 1, &n);
			if (!args)
				return cli_fail(cmd, "out of memory");
			int rc = subcommands[i].fn(n, args);
			free(args);
			return rc;
		}
	}
	fprintf(stderr, "taskhop: unknown command '%s' (try 'taskhop --help')\n", cmd);
	return 2;
}
