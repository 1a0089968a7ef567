/* child.c — a test body in a forked child, its stderr captured (child.h). */
#include "child.h"

#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

int run_in_child(void (*body)(const void *), const void *arg, char *buf, size_t len)
{
	int fds[2];
	if (len == 0 || pipe(fds) != 0)
		return -1;
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0) {
		close(fds[0]);
		close(fds[1]);
		return -1;
	}
	if (pid == 0) {
		dup2(fds[1], 2);
		close(fds[0]);
		body(arg);
		_exit(0);
	}
	close(fds[1]);
	size_t got = 0;
	ssize_t n;
	while (got < len - 1 && (n = read(fds[0], buf + got, len - 1 - got)) > 0)
		got += (size_t)n;
	buf[got] = 0;
	close(fds[0]);
	int status;
	if (waitpid(pid, &status, 0) != pid)
		return -1;
	return status;
}
