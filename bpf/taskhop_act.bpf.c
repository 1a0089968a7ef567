/* taskhop_act.bpf.c — kernel side of activations: tells the runtime when one of its
 * worker threads blocks in the kernel while running a user task (sched_switch). */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include "taskhop_abi.h"

char LICENSE[] SEC("license") = "GPL";

/* The process that enabled activations, as it numbers itself. Set before load.
 * In a container (a PID namespace other than the initial one) the kernel's tids
 * differ from the runtime's: targ_ns_dev/ino name the runtime's namespace, a
 * switch-out is matched with bpf_get_ns_current_pid_tgid (current is prev in
 * sched_switch), and the kernel tid it reveals is kept for the switch-in. */
const volatile __u32 targ_tgid = 0;
const volatile bool targ_in_ns = false;
const volatile __u64 targ_ns_dev = 0;
const volatile __u64 targ_ns_ino = 0;

/* Thread i's line: the runtime writes state (enum th_slot_state); this program
 * turns TASK into BLOCKED at a blocking switch-out and back at switch-in. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, TH_MAX_SLOTS);
	__type(key, __u32);
	__type(value, struct th_slot_line);
} act_slots SEC(".maps");

/* tid -> thread index, filled by the loader once the threads run */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, TH_MAX_SLOTS);
	__type(key, __u32);
	__type(value, __u32);
} act_tids SEC(".maps");

/* kernel tid -> thread index, learned at switch-outs (namespace mode only) */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, TH_MAX_SLOTS);
	__type(key, __u32);
	__type(value, __u32);
} act_kernel_tids SEC(".maps");

/* one record per block seen; each wakes the runtime's monitor at once */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 64 << 10);
} act_events SEC(".maps");

__u64 act_lost = 0;

static __always_inline struct th_slot *line_at(__u32 *idx, __u32 *thread)
{
	struct th_slot_line *l;

	if (!idx)
		return 0;
	*thread = *idx;
	l = bpf_map_lookup_elem(&act_slots, idx);
	return l ? &l->s : 0;
}

/* prev's line and thread index, if prev (current) is one of the runtime's threads */
static __always_inline struct th_slot *prev_line(struct task_struct *prev, __u32 *thread)
{
	struct bpf_pidns_info ns;
	__u32 tid, host;
	__u32 *idx;

	if (!targ_in_ns) {
		if (prev->tgid != targ_tgid)
			return 0;
		tid = prev->pid;
		return line_at(bpf_map_lookup_elem(&act_tids, &tid), thread);
	}
	if (bpf_get_ns_current_pid_tgid(targ_ns_dev, targ_ns_ino, &ns, sizeof(ns)) ||
	    ns.tgid != targ_tgid)
		return 0;
	tid = ns.pid;
	idx = bpf_map_lookup_elem(&act_tids, &tid);
	if (idx) {
		host = prev->pid;
		bpf_map_update_elem(&act_kernel_tids, &host, idx, BPF_NOEXIST);
	}
	return line_at(idx, thread);
}

/* next's line, if next is one of the runtime's threads */
static __always_inline struct th_slot *next_line(struct task_struct *next, __u32 *thread)
{
	__u32 tid = next->pid;

	if (!targ_in_ns)
		return next->tgid == targ_tgid
			       ? line_at(bpf_map_lookup_elem(&act_tids, &tid), thread) : 0;
	return line_at(bpf_map_lookup_elem(&act_kernel_tids, &tid), thread);
}

SEC("tp_btf/sched_switch")
int BPF_PROG(act_switch, bool preempt, struct task_struct *prev, struct task_struct *next,
	     unsigned int prev_state)
{
	struct th_slot *s;
	__u32 thread = 0;

	/* prev left the CPU not runnable (blocked, not preempted) inside a task */
	if (!preempt && prev_state != 0 && (s = prev_line(prev, &thread)) &&
	    __sync_val_compare_and_swap(&s->state, TH_SLOT_TASK, TH_SLOT_BLOCKED) == TH_SLOT_TASK) {
		__u64 now = bpf_ktime_get_ns();
		struct th_act_event *e;

		s->blocked_ns = now;
		e = bpf_ringbuf_reserve(&act_events, sizeof(*e), 0);
		if (!e) {
			__sync_fetch_and_add(&act_lost, 1);
			return 0;
		}
		e->thread = thread;
		e->pad = 0;
		e->ts = now;
		bpf_ringbuf_submit(e, BPF_RB_FORCE_WAKEUP);
	}
	/* back on a CPU: the block is over unless a spare took the worker (TAKEN) */
	if ((s = next_line(next, &thread)))
		__sync_val_compare_and_swap(&s->state, TH_SLOT_BLOCKED, TH_SLOT_TASK);
	return 0;
}
