/* child.h — runs a piece of a test in a forked child with its stderr captured, for
 * what ends the process (the runtime's fatal reports, its invariant checks). */
#ifndef TASKHOP_TEST_CHILD_H
#define TASKHOP_TEST_CHILD_H

#include <stddef.h>

/* Runs body(arg) in a child (which _exits 0 if body returns), its stderr into buf
 * (NUL-terminated, cut at len - 1). Returns the child's wait status, -1 if no
 * child could be started. */
int run_in_child(void (*body)(const void *), const void *arg, char *buf, size_t len);

#endif
