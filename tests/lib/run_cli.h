/* run_cli.h — runs the `taskhop` binary as a user would (argv in, exit status, stdout and
 * stderr out) for the CLI tests, and checks the "one line, exit 2" usage-error contract. */
#ifndef TASKHOP_TEST_RUN_CLI_H
#define TASKHOP_TEST_RUN_CLI_H

#include <sys/types.h>

struct result {
	int status;      /* exit code, or 128+signal */
	char out[65536];
	char err[8192];
};

/* When set, the child drops root for this uid (and its gid) before exec. */
extern uid_t run_as;

/* The path taskhop_bin() returns once set (a test may point it at a copy). */
extern char taskhop_bin_buf[];
/* The binary: $TASKHOP_BIN (make test), else ../taskhop next to the test binary. */
const char *taskhop_bin(void);
/* Runs taskhop with argv[1..] (argv[0] is replaced by the binary). Free the result. */
struct result *run_argv(const char **argv);
/* Runs taskhop with the NULL-terminated arguments. Free the result. */
struct result *run_taskhop(const char *first, ...);
int count_lines(const char *s);
/* Bad usage: exit 2, exactly one line on stderr containing `needle`, nothing on stdout.
 * Frees r. */
void expect_usage_error(struct result *r, const char *needle);

#endif
