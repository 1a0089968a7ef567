/* scratch.c — per-test scratch directories and JSON reading for the CLI tests. */
#define _GNU_SOURCE
#include "scratch.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <cmocka.h>

static char scratch[64];

int scratch_setup(void **state)
{
	(void)state;
	snprintf(scratch, sizeof(scratch), "/tmp/th_scratch_XXXXXX");
	return mkdtemp(scratch) ? 0 : -1;
}

int scratch_teardown(void **state)
{
	(void)state;
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", scratch);
	return system(cmd) == 0 ? 0 : -1;
}

const char *scratch_path(char *buf, size_t len, const char *name)
{
	snprintf(buf, len, "%s/%s", scratch, name);
	return buf;
}

struct json *scratch_parse(const char *path)
{
	char err[256];
	struct json *j = json_parse_file(path, err, sizeof(err));
	if (!j)
		fail_msg("%s", err);
	return j;
}
