/* need_bpf.h — the BPF tests' gate: without privileges (or BTF) a test skips with the
 * reason; with TASKHOP_REQUIRE_BPF=1 (CI) that is a failure. Include after cmocka.h. */
#ifndef TASKHOP_TEST_NEED_BPF_H
#define TASKHOP_TEST_NEED_BPF_H

#include <stdlib.h>
#include <string.h>

#include "record.h"

static inline int need_bpf(void)
{
	const char *why = th_record_unavailable();
	if (!why)
		return 1;
	if (getenv("TASKHOP_REQUIRE_BPF") && strcmp(getenv("TASKHOP_REQUIRE_BPF"), "0") != 0)
		fail_msg("TASKHOP_REQUIRE_BPF=1 but BPF is not usable: %s", why);
	print_message("skipped: %s\n", why);
	return 0;
}
#define NEED_BPF() do { if (!need_bpf()) { skip(); return; } } while (0)

#endif
