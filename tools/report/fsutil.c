/* fsutil.c — atomic report writes (temp + rename), whole-file reads and mkdir -p.
 * Errors are returned as one line naming the path, ready for stderr. */
#include "report/fsutil.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int fs_write_atomic(const char *path, int (*fill)(FILE *f, void *arg), void *arg,
		    char *err, size_t errlen)
{
	char tmp[4096];
	if (snprintf(tmp, sizeof(tmp), "%s.tmp.%d", path, (int)getpid()) >= (int)sizeof(tmp)) {
		snprintf(err, errlen, "%s: path too long", path);
		return -1;
	}
	FILE *f = fopen(tmp, "w");
	if (!f) {
		snprintf(err, errlen, "cannot write %s: %s", path, strerror(errno));
		return -1;
	}
	int rc = fill(f, arg);
	/* a full disk may only show at the flush or, on some filesystems, at fsync */
	int werr = fflush(f) != 0 || ferror(f) || fsync(fileno(f)) != 0;
	if (fclose(f) != 0 || werr) {
		snprintf(err, errlen, "cannot write %s: %s", path, strerror(errno ? errno : EIO));
		unlink(tmp);
		return -1;
	}
	if (rc != 0) {
		if (!err[0])
			snprintf(err, errlen, "cannot write %s", path);
		unlink(tmp);
		return -1;
	}
	if (rename(tmp, path) != 0) {
		snprintf(err, errlen, "cannot write %s: %s", path, strerror(errno));
		unlink(tmp);
		return -1;
	}
	return 0;
}

static int put_string(FILE *f, void *arg)
{
	fputs(arg, f);
	return 0;
}

int fs_write_string(const char *path, const char *text, char *err, size_t errlen)
{
	return fs_write_atomic(path, put_string, (void *)text, err, errlen);
}

char *fs_read_all(const char *path, size_t *len, char *err, size_t errlen)
{
	return fs_read_max(path, SIZE_MAX / 4, len, err, errlen);
}

char *fs_read_max(const char *path, size_t max, size_t *len, char *err, size_t errlen)
{
	FILE *f = fopen(path, "r");
	if (!f) {
		snprintf(err, errlen, "cannot read %s: %s", path, strerror(errno));
		return NULL;
	}
	size_t cap = 1 << 16, n = 0;
	char *buf = malloc(cap);
	while (buf) {
		n += fread(buf + n, 1, cap - n - 1, f);
		if (n < cap - 1)
			break;
		if (n > max)
			break;
		char *nb = realloc(buf, cap * 2);
		if (!nb) {
			free(buf);
			buf = NULL;
			break;
		}
		buf = nb;
		cap *= 2;
	}
	int bad = ferror(f);
	fclose(f);
	if (buf && !bad && n > max) {
		snprintf(err, errlen, "cannot read %s: more than %zu bytes", path, max);
		free(buf);
		return NULL;
	}
	if (!buf || bad) {
		snprintf(err, errlen, "cannot read %s: %s", path, buf ? "read error" : "out of memory");
		free(buf);
		return NULL;
	}
	buf[n] = 0;
	if (len)
		*len = n;
	return buf;
}

int fs_mkdir_p(const char *dir, char *err, size_t errlen)
{
	char p[4096];
	if (snprintf(p, sizeof(p), "%s", dir) >= (int)sizeof(p)) {
		snprintf(err, errlen, "%s: path too long", dir);
		return -1;
	}
	for (char *s = p + 1; ; s++) {
		if (*s == '/' || *s == 0) {
			char c = *s;
			*s = 0;
			if (mkdir(p, 0777) != 0 && errno != EEXIST) {
				snprintf(err, errlen, "cannot create directory %s: %s", p, strerror(errno));
				return -1;
			}
			*s = c;
			if (!c)
				break;
		}
	}
	struct stat st;
	if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
		snprintf(err, errlen, "%s is not a directory", dir);
		return -1;
	}
	if (access(dir, W_OK | X_OK) != 0) {
		snprintf(err, errlen, "cannot write into %s: %s", dir, strerror(errno));
		return -1;
	}
	return 0;
}

int fs_join(char *out, size_t outlen, const char *dir, const char *name)
{
	int n = snprintf(out, outlen, "%s/%s", dir, name);
	return n < 0 || (size_t)n >= outlen ? -1 : 0;
}

bool fs_is_report_output(const char *name)
{
	static const char *const files[] = { "report.md", "report.html", "runs.csv", "trace.json", NULL };
	size_t n = strlen(name);
	for (int i = 0; files[i]; i++)
		if (strcmp(name, files[i]) == 0)
			return true;
	return n > 4 && strcmp(name + n - 4, ".svg") == 0;
}
