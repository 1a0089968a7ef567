/* scratch.h — a scratch directory per test for the CLI tests (made by the setup, removed
 * with what the test wrote by the teardown), and reading a JSON file or failing the test. */
#ifndef TASKHOP_TEST_SCRATCH_H
#define TASKHOP_TEST_SCRATCH_H

#include <stddef.h>

#include "report/json.h"

/* cmocka setup / teardown: mkdtemp /tmp/th_scratch_XXXXXX, then rm -rf it. */
int scratch_setup(void **state);
int scratch_teardown(void **state);
/* buf = "<scratch dir>/name"; returns buf. */
const char *scratch_path(char *buf, size_t len, const char *name);
/* The parsed file; fails the test with the parser's message. */
struct json *scratch_parse(const char *path);

#endif
