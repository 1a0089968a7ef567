/* taskhop_pidns.bpf.c — maps the pids the recorder sees (its own PID namespace, e.g. a
 * container's) to the host tgids the scheduler tracepoints carry: one iter/task pass. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "taskhop_abi.h"

char LICENSE[] SEC("license") = "GPL";

/* The reader of the iterator is the recorder itself, so `current` tells which
 * namespace "its" pids live in: numbers[level] of its struct pid. */
SEC("iter/task")
int resolve(struct bpf_iter__task *ctx)
{
	struct task_struct *task = ctx->task, *me;
	struct pid *mine, *theirs;
	struct upid my_up = {}, up = {};
	struct th_pidmap out = {};
	__u32 level;

	if (!task || task->pid != task->tgid) /* one line per process: its leader */
		return 0;
	me = (struct task_struct *)bpf_get_current_task();
	mine = BPF_CORE_READ(me, thread_pid);
	level = BPF_CORE_READ(mine, level) & 31;
	bpf_probe_read_kernel(&my_up, sizeof(my_up), &mine->numbers[level]);
	theirs = BPF_CORE_READ(task, thread_pid);
	if (!theirs || BPF_CORE_READ(theirs, level) < level)
		return 0;
	bpf_probe_read_kernel(&up, sizeof(up), &theirs->numbers[level]);
	if (up.ns != my_up.ns)
		return 0;
	out.host_tgid = task->tgid;
	out.ns_tgid = up.nr;
	out.level = level;
	bpf_seq_write(ctx->meta->seq, &out, sizeof(out));
	return 0;
}
