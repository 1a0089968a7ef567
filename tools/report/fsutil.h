/* fsutil.h — file helpers for reports: atomic writes (temp file + rename), whole-file reads,
 * mkdir -p. A report file is either the old one or the complete new one, never half written. */
#ifndef TASKHOP_FSUTIL_H
#define TASKHOP_FSUTIL_H

#include <stddef.h>
#include <stdio.h>

/* Calls fill(f, arg) on PATH.tmp.PID, then flushes, checks for write errors and renames it
 * over path. On any failure the temp file is removed and path is untouched.
 * fill returns 0 or -1. Returns 0, or -1 with "path: reason" in err. */
int fs_write_atomic(const char *path, int (*fill)(FILE *f, void *arg), void *arg,
		    char *err, size_t errlen);
/* The same for a string. */
int fs_write_string(const char *path, const char *text, char *err, size_t errlen);
/* Reads the whole file, NUL-terminated. NULL with err set on failure. */
char *fs_read_all(const char *path, size_t *len, char *err, size_t errlen);
/* mkdir -p; then checks the directory is writable. 0, or -1 with err set. */
int fs_mkdir_p(const char *dir, char *err, size_t errlen);
/* dir + "/" + name into out (truncation is reported as -1). */
int fs_join(char *out, size_t outlen, const char *dir, const char *name);

#endif
