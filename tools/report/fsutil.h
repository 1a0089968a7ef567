/* fsutil.h — file helpers for reports: atomic writes (temp file + rename), whole-file reads,
 * mkdir -p. A report file is either the old one or the complete new one, never half written. */
#ifndef TASKHOP_FSUTIL_H
#define TASKHOP_FSUTIL_H

#include <stdbool.h>
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
/* The same, refusing a file (or pipe, or device) of more than max bytes. */
char *fs_read_max(const char *path, size_t max, size_t *len, char *err, size_t errlen);
/* mkdir -p; then checks the directory is writable. 0, or -1 with err set. */
int fs_mkdir_p(const char *dir, char *err, size_t errlen);
/* dir + "/" + name into out (truncation is reported as -1). */
int fs_join(char *out, size_t outlen, const char *dir, const char *name);

/* A directory staged beside target (same filesystem): write the whole report into tmp,
 * then commit, which checks every file is a non-empty regular file and swaps the directory
 * in (atomically where the filesystem can exchange two names); files of the old directory
 * that the new report does not write are kept. A target holding subdirectories is not a
 * report directory and is never swapped: the checked files are renamed into it one by one.
 * On any failure the old report is intact and err names the file and why (stagedir.c). */
struct fs_stage {
	char target[4096];
	char tmp[4096];
};
int fs_stage_begin(struct fs_stage *s, const char *target, char *err, size_t errlen);
int fs_stage_commit(struct fs_stage *s, char *err, size_t errlen);
/* Removes the staged directory (after a failure; commit cleans up itself). */
void fs_stage_abort(struct fs_stage *s);
/* Whether name is a file a report rewrites (report.md, *.svg, ...), i.e. not to carry over. */
bool fs_is_report_output(const char *name);

#endif
