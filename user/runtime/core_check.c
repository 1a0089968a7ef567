/* core_check.c — what a broken invariant prints before the abort (core_check.h):
 * one line that names the invariant, so a test can tell which check fired. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "core_check.h"
#include "core_types.h"

void th__check_failed(const char *file, int line, const char *fmt, ...)
{
	va_list ap;
	fputs("taskhop: invariant broken: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, " (%s:%d)\n", file, line);
	abort();
}

const char *th__state_name(int state)
{
	static const char *const names[] = {
		[TH_RUNNABLE] = "runnable", [TH_RUNNING] = "running",
		[TH_BLOCKED] = "blocked", [TH_DONE] = "done",
	};
	return state >= 0 && state <= TH_DONE ? names[state] : "not a task state";
}
