/* core_check.h — TH_CHECK: invariants a wrong policy (or a core bug) could break,
 * checked in debug (make DEBUG=1) and sanitizer builds, compiled out in release. */
#ifndef TASKHOP_CORE_CHECK_H
#define TASKHOP_CORE_CHECK_H

#include <stdbool.h>

/* The release build (plain `make`) leaves NDEBUG unset, so assert() stays on
 * everywhere; these checks sit on the yield and spawn paths, where a load and a
 * branch per switch would show, so they have their own switch. */
#if defined(TASKHOP_DEBUG) || defined(TASKHOP_SAN_address) || defined(TASKHOP_SAN_thread) || \
	defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define TH_CHECKS 1
#else
#define TH_CHECKS 0
#endif

/* Aborts with "taskhop: invariant broken: MESSAGE (FILE:LINE)" when cond is
 * false. Compiled out, cond is still type-checked but never evaluated. */
#define TH_CHECK(cond, ...)                                                       \
	do {                                                                      \
		if (TH_CHECKS && __builtin_expect(!(cond), 0))                    \
			th__check_failed(__FILE__, __LINE__, __VA_ARGS__);        \
	} while (0)

void th__check_failed(const char *file, int line, const char *fmt, ...)
	__attribute__((noreturn, cold, format(printf, 3, 4)));
/* "runnable", "running", "blocked", "done" (enum th_state), for messages. */
const char *th__state_name(int state);

#endif
