/* stagedir.c — a report is written whole into a directory beside its target, checked, then
 * swapped in, so that a full disk or a crash leaves the old report intact, never half of one. */
#define _GNU_SOURCE /* renameat2 */
#include "report/fsutil.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* target's parent directory and base name ("a/b/" -> "a", "b"; "b" -> ".", "b"). */
static int split_path(const char *target, char *parent, size_t plen, char *base, size_t blen)
{
	char t[4096];
	if (snprintf(t, sizeof(t), "%s", target) >= (int)sizeof(t) || !t[0])
		return -1;
	for (size_t l = strlen(t); l > 1 && t[l - 1] == '/'; l--)
		t[l - 1] = 0;
	char *slash = strrchr(t, '/');
	if (!slash)
		return snprintf(parent, plen, ".") < 0 || snprintf(base, blen, "%s", t) >= (int)blen ? -1 : 0;
	*slash = 0;
	snprintf(parent, plen, "%s", slash == t ? "/" : t);
	return snprintf(base, blen, "%s", slash + 1) >= (int)blen || !slash[1] ? -1 : 0;
}

int fs_stage_begin(struct fs_stage *s, const char *target, char *err, size_t errlen)
{
	char parent[4096], base[256], real[PATH_MAX];
	memset(s, 0, sizeof(*s));
	struct stat st;
	if (stat(target, &st) == 0 && !S_ISDIR(st.st_mode)) {
		snprintf(err, errlen, "cannot write the report into %s: not a directory", target);
		return -1;
	}
	/* "." or "a/.." have no name to swap: an existing directory goes by its real path */
	if (stat(target, &st) == 0 && realpath(target, real))
		target = real;
	if (split_path(target, parent, sizeof(parent), base, sizeof(base)) ||
	    snprintf(s->target, sizeof(s->target), "%s", target) >= (int)sizeof(s->target)) {
		snprintf(err, errlen, "%s: not a usable directory name", target);
		return -1;
	}
	if (fs_mkdir_p(parent, err, errlen))
		return -1;
	if (snprintf(s->tmp, sizeof(s->tmp), "%s/.%s.new-XXXXXX", parent, base) >= (int)sizeof(s->tmp) ||
	    !mkdtemp(s->tmp)) {
		snprintf(err, errlen, "cannot write the report beside %s: %s", target, strerror(errno));
		s->tmp[0] = 0;
		return -1;
	}
	/* mkdtemp makes it 0700: give it the old directory's mode, or the umask's for a new one */
	mode_t mask = umask(0);
	umask(mask);
	chmod(s->tmp, stat(target, &st) == 0 ? st.st_mode & 07777 : 0777 & ~mask);
	return 0;
}

/* Removes dir and the files in it (a staged report holds files only). */
static void remove_files_dir(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char path[4400];
	while (d && (e = readdir(d))) {
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..") &&
		    snprintf(path, sizeof(path), "%s/%s", dir, e->d_name) < (int)sizeof(path))
			unlink(path);
	}
	if (d)
		closedir(d);
	rmdir(dir);
}

void fs_stage_abort(struct fs_stage *s)
{
	if (s->tmp[0])
		remove_files_dir(s->tmp);
	s->tmp[0] = 0;
}

/* Every staged file must be a non-empty regular file: a writer that failed silently is
 * caught here, before anything of the old report is touched. */
static int check_staged(const struct fs_stage *s, char *err, size_t errlen)
{
	DIR *d = opendir(s->tmp);
	if (!d) {
		snprintf(err, errlen, "cannot read %s: %s", s->tmp, strerror(errno));
		return -1;
	}
	struct dirent *e;
	struct stat st;
	int rc = 0;
	while (rc == 0 && (e = readdir(d))) {
		if (e->d_name[0] == '.' && (!e->d_name[1] || strcmp(e->d_name, "..") == 0))
			continue;
		if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode) ||
		    st.st_size == 0) {
			snprintf(err, errlen, "cannot write %s/%s: the file came out empty", s->target, e->d_name);
			rc = -1;
		}
	}
	closedir(d);
	return rc;
}

/* Whether dir is the working directory: swapping it would leave the shell that ran taskhop
 * in a deleted directory, so its files are replaced one by one instead. */
static bool is_cwd(const char *dir)
{
	struct stat a, b;
	return stat(dir, &a) == 0 && stat(".", &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

/* The old directory's files the new report does not replace (run.json next to a report,
 * notes) are carried over as hard links. Returns 1 when the old directory holds anything
 * but regular files (a subdirectory: it is not a report directory, and is not swapped) or
 * is the working directory. */
static int carry_over(const struct fs_stage *s, char *err, size_t errlen)
{
	if (is_cwd(s->target))
		return 1;
	DIR *d = opendir(s->target);
	if (!d)
		return errno == ENOENT ? 0 : (snprintf(err, errlen, "cannot read %s: %s", s->target,
						       strerror(errno)), -1);
	struct dirent *e;
	struct stat st;
	char from[4400], to[4400];
	int rc = 0;
	while (rc == 0 && (e = readdir(d))) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode)) {
			rc = 1;
			break;
		}
		snprintf(from, sizeof(from), "%s/%s", s->target, e->d_name);
		snprintf(to, sizeof(to), "%s/%s", s->tmp, e->d_name);
		if (access(to, F_OK) == 0 || fs_is_report_output(e->d_name))
			continue;
		if (link(from, to) != 0) {
			snprintf(err, errlen, "cannot keep %s in the new report: %s", from, strerror(errno));
			rc = -1;
		}
	}
	closedir(d);
	return rc;
}

/* Not a report directory: each checked file is renamed into it, one by one. */
static int move_files(struct fs_stage *s, char *err, size_t errlen)
{
	DIR *d = opendir(s->tmp);
	struct dirent *e;
	char from[4400], to[4400];
	int rc = d ? 0 : -1;
	while (rc == 0 && (e = readdir(d))) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		snprintf(from, sizeof(from), "%s/%s", s->tmp, e->d_name);
		snprintf(to, sizeof(to), "%s/%s", s->target, e->d_name);
		if (rename(from, to) != 0) {
			snprintf(err, errlen, "cannot write %s: %s", to, strerror(errno));
			rc = -1;
		}
	}
	if (d)
		closedir(d);
	return rc;
}

/* The swap: one atomic exchange where the filesystem has it, else old aside, new in,
 * old back if that fails. The old report is removed only once the new one is in place. */
static int swap_in(struct fs_stage *s, char *err, size_t errlen)
{
	if (rename(s->tmp, s->target) == 0) {
		s->tmp[0] = 0;
		return 0;
	}
	if (errno != EEXIST && errno != ENOTEMPTY) {
		snprintf(err, errlen, "cannot move the new report to %s: %s", s->target, strerror(errno));
		return -1;
	}
	if (renameat2(AT_FDCWD, s->tmp, AT_FDCWD, s->target, RENAME_EXCHANGE) == 0) {
		fs_stage_abort(s); /* the old report is now at the staging path */
		return 0;
	}
	char old[4200];
	snprintf(old, sizeof(old), "%s.old", s->tmp);
	if (rename(s->target, old) != 0 || rename(s->tmp, s->target) != 0) {
		snprintf(err, errlen, "cannot move the new report to %s: %s", s->target, strerror(errno));
		rename(old, s->target);
		return -1;
	}
	remove_files_dir(old);
	s->tmp[0] = 0;
	return 0;
}

int fs_stage_commit(struct fs_stage *s, char *err, size_t errlen)
{
	int rc = check_staged(s, err, errlen);
	int kind = rc ? -1 : carry_over(s, err, errlen);
	if (kind == 0)
		rc = swap_in(s, err, errlen);
	else if (kind == 1)
		rc = move_files(s, err, errlen);
	else
		rc = -1;
	fs_stage_abort(s);
	return rc;
}
