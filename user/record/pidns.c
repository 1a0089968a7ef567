/* pidns.c — PID namespaces: the scheduler tracepoints name threads by their ids in the
 * initial namespace, our targets are pids as we see them; one iter/task pass maps them. */
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "record_int.h"
#include "taskhop_pidns.skel.h"

/* Fills every target's host tgid and returns the level of our PID namespace: one pass
 * of the iter/task program over the processes this namespace can see. */
int rec_resolve_host_pids(struct th_record *r, uint32_t *level)
{
	struct taskhop_pidns_bpf *s = taskhop_pidns_bpf__open_and_load();
	struct bpf_link *link = NULL;
	int fd = -1, rc = -1, found = 0;
	struct th_pidmap m;

	if (!s) {
		rec_set_error("loading the pid-namespace resolver failed: %s", strerror(errno));
		return -1;
	}
	link = bpf_program__attach_iter(s->progs.resolve, NULL);
	if (!link || (fd = bpf_iter_create(bpf_link__fd(link))) < 0) {
		rec_set_error("iter/task attach failed: %s", strerror(errno));
		goto out;
	}
	*level = 0;
	for (;;) {
		ssize_t n = read(fd, &m, sizeof(m));
		if (n < 0 && errno == EINTR)
			continue;
		if (n != (ssize_t)sizeof(m))
			break;
		*level = m.level;
		for (int i = 0; i < r->ntg; i++)
			if ((uint32_t)r->tg[i].pid == m.ns_tgid) {
				r->tg[i].host_tgid = m.host_tgid;
				found++;
			}
	}
	if (found < r->ntg) {
		for (int i = 0; i < r->ntg; i++)
			if (!r->tg[i].host_tgid)
				rec_set_error("no process with pid %d in this PID namespace", (int)r->tg[i].pid);
		goto out;
	}
	rc = 0;
out:
	if (fd >= 0)
		close(fd);
	bpf_link__destroy(link);
	taskhop_pidns_bpf__destroy(s);
	return rc;
}
