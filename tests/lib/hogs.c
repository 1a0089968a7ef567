/* hogs.c — two spinning processes that keep the CPUs busy beside a test's workers. */
#include "hogs.h"

#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

static pid_t hogs[2];

void hogs_start(void)
{
	for (int i = 0; i < 2; i++) {
		hogs[i] = fork();
		if (hogs[i] < 0)
			abort();
		if (hogs[i] == 0) {
			alarm(60); /* never outlive a crashed test */
			for (volatile unsigned long x = 0;; x++)
				;
		}
	}
}

void hogs_stop(void)
{
	for (int i = 0; i < 2; i++)
		if (hogs[i] > 0) {
			kill(hogs[i], SIGKILL);
			waitpid(hogs[i], NULL, 0);
			hogs[i] = 0;
		}
}
