/* taskhop_rec.bpf.c — kernel side of the recorder: on-CPU intervals, run-queue waits,
 * preemptions and migrations of the followed processes' threads, plus the USDT handlers. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include <bpf/usdt.bpf.h>
#include "taskhop_abi.h"

char LICENSE[] SEC("license") = "GPL";

/* Filters, set by the loader before load: host tgids of the followed processes and the
 * level of the recorder's PID namespace (0 = the initial one, no translation needed). */
const volatile __u32 targ_tgid[TH_MAX_TARGETS] = {};
const volatile __u32 n_targ = 0;
const volatile __u32 pidns_level = 0;

/* Every failed ring-buffer reserve; user space puts it in every report. */
__u64 lost_events = 0;

/* Worker i of the self target stores {task id, seq} at each switch into line i. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, TH_MAX_SLOTS);
	__type(key, __u32);
	__type(value, struct th_slot_line);
} slots SEC(".maps");

/* namespace tid -> slot index, filled by user space for the self target's workers */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, TH_MAX_SLOTS);
	__type(key, __u32);
	__type(value, __s32);
} tid_slot SEC(".maps");

/* host tid -> state of a followed thread */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__type(key, __u32);
	__type(value, struct th_thread);
} threads SEC(".maps");

/* host tid -> task the thread runs, as the USDT probes said (external targets) */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__type(key, __u32);
	__type(value, __u64);
} usdt_cur SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 16 << 20); /* resized by the loader */
} events SEC(".maps");

/* task_struct.state was renamed __state in 5.14 */
struct task_struct___o {
	volatile long state;
} __attribute__((preserve_access_index));

static __always_inline long task_state(struct task_struct *t)
{
	struct task_struct___o *o = (void *)t;

	if (bpf_core_field_exists(o->state))
		return BPF_CORE_READ(o, state);
	return BPF_CORE_READ(t, __state);
}

/* 1 when tgid is a followed process: a few compares, the common case is "no". */
static __always_inline int followed_tgid(__u32 tgid)
{
	for (__u32 i = 0; i < TH_MAX_TARGETS; i++) {
		if (i >= n_targ)
			break;
		if (targ_tgid[i] == tgid)
			return 1;
	}
	return 0;
}

static __always_inline int followed(struct task_struct *p)
{
	return followed_tgid(BPF_CORE_READ(p, tgid));
}

/* p's pid (or its process's tgid) as the recorder's PID namespace numbers it. */
static __always_inline __u32 ns_id(struct task_struct *p, int want_tgid)
{
	struct task_struct *q = p;
	struct upid up = {};
	struct pid *pp;

	if (want_tgid)
		q = BPF_CORE_READ(p, group_leader);
	if (pidns_level == 0)
		return BPF_CORE_READ(q, pid);
	pp = BPF_CORE_READ(q, thread_pid);
	if (!pp)
		return 0;
	bpf_probe_read_kernel(&up, sizeof(up), &pp->numbers[pidns_level & 31]);
	return up.nr;
}

static __always_inline struct th_thread *thread_of(struct task_struct *p)
{
	__u32 key = BPF_CORE_READ(p, pid);
	struct th_thread *t = bpf_map_lookup_elem(&threads, &key);
	struct th_thread init = {};

	if (t)
		return t;
	init.tgid = ns_id(p, 1);
	init.tid = ns_id(p, 0);
	init.slot = -1;
	init.cpu = (__u32)-1;
	bpf_map_update_elem(&threads, &key, &init, BPF_NOEXIST);
	return bpf_map_lookup_elem(&threads, &key);
}

/* The task the thread is running now: its published slot if it is a worker of the self
 * target, else what the USDT probes last said. */
static __always_inline void current_task(struct th_thread *t, __u32 host_tid, __u64 *task,
					 __u64 *seq)
{
	*task = 0;
	*seq = 0;
	if (t->slot < 0) {
		__s32 *s = bpf_map_lookup_elem(&tid_slot, &t->tid);

		if (s)
			t->slot = *s;
	}
	if (t->slot >= 0) {
		__u32 k = t->slot;
		struct th_slot_line *l = bpf_map_lookup_elem(&slots, &k);

		if (l) {
			*task = l->s.task_id;
			*seq = l->s.seq;
		}
		return;
	}
	__u64 *cur = bpf_map_lookup_elem(&usdt_cur, &host_tid);
	if (cur)
		*task = *cur;
}

static __always_inline struct th_event *reserve(void)
{
	struct th_event *e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);

	if (!e)
		__sync_fetch_and_add(&lost_events, 1);
	return e;
}

/* A switch-out with no switch-in seen before it. Either the thread was on the CPU when
 * recording began (no switch-out seen yet either: start unknown, user space uses the
 * recording's start), or its switch-in reached no program (seen on kernel 6.18 under
 * load, a few times a second): then the kernel's own count of the CPU time the thread
 * got since its last switch-out says when it came back. Without this, the interval
 * would start at the recording's start and overlap every interval before it. */
static __always_inline void missed_start(struct th_thread *t, struct th_event *e, __u64 now,
					 __u64 exec)
{
	if (!t->off_ts || exec < t->exec_off) {
		e->flags |= TH_EVF_START_UNKNOWN;
		return;
	}
	__u64 ran = exec - t->exec_off, start = now - t->off_ts > ran ? now - ran : t->off_ts;

	if (t->on_est && t->on_ts < start) /* a USDT probe saw it on the CPU earlier */
		start = t->on_ts;
	e->start = start;
	e->flags |= TH_EVF_START_EST;
	/* waiting since a wakeup or preemption until the unseen switch-in */
	e->wait_ns = t->ready_ts && t->ready_ts < start ? start - t->ready_ts : 0;
}

/* A switch-in of a thread whose last switch-out was not seen: it is still marked on a
 * CPU since on_ts. Without this its interval would be lost, and the runs it held would
 * find no CPU in the join. It left the CPU once it had used the CPU time the kernel
 * charged it since that switch-in; a wakeup seen since then says it left asleep. */
static __always_inline void missed_end(struct th_thread *t, __u32 host_tid, __u64 now,
				       __u64 exec)
{
	/* the kernel's count leaves out interrupts (and steal): a probe since is later */
	__u64 ran = exec > t->exec_on ? exec - t->exec_on : 0;
	__u64 end = t->on_ts + ran;

	if (t->seen_ts > end)
		end = t->seen_ts;
	if (end > now)
		end = now;
	struct th_event *e = reserve();

	if (e) {
		__builtin_memset(e, 0, sizeof(*e));
		e->kind = TH_EV_ONCPU;
		e->tgid = t->tgid;
		e->tid = t->tid;
		e->host_tid = host_tid;
		e->cpu = t->cpu;
		e->ts = end;
		e->start = t->on_ts;
		e->wait_ns = t->wait_ns;
		e->flags = TH_EVF_END_EST | (t->ready_ts ? 0 : TH_EVF_PREEMPTED);
		e->slot = t->slot; /* task_id 0: which task it ran then is not known */
		bpf_ringbuf_submit(e, 0);
	}
	t->off_ts = end;
	t->exec_off = exec;
}

/* Runs at every context switch of the machine: the tgid filter comes first, and the
 * tp_btf flavour reads the tgids directly (no probe_read), so that the common case (a
 * switch between threads we do not follow) costs a few loads and compares. */
static __always_inline int on_switch(bool preempt, struct task_struct *prev,
				     struct task_struct *next, __u32 prev_tgid, __u32 next_tgid)
{
	int fprev = followed_tgid(prev_tgid), fnext = followed_tgid(next_tgid);
	struct th_thread *t;

	if (!fprev && !fnext)
		return 0;
	__u64 now = bpf_ktime_get_ns();
	__u32 cpu = bpf_get_smp_processor_id();
	if (fprev && (t = thread_of(prev))) {
		/* involuntary: prev is still runnable, so it goes back to a run queue. A
		 * thread preempted between set_current_state(TASK_INTERRUPTIBLE) and its
		 * schedule() (nanosleep's path) has a sleeping state but stays queued: the
		 * preempt argument says so, the state alone would count a block too many. */
		int preempted = preempt || task_state(prev) == 0;
		__u64 exec = BPF_CORE_READ(prev, se.sum_exec_runtime);
		struct th_event *e = reserve();

		if (e) {
			__builtin_memset(e, 0, sizeof(*e));
			e->kind = TH_EV_ONCPU;
			e->tgid = t->tgid;
			e->tid = t->tid;
			e->host_tid = BPF_CORE_READ(prev, pid);
			e->cpu = cpu;
			e->ts = now;
			e->start = t->on_ts;
			e->wait_ns = t->wait_ns;
			e->flags = preempted ? TH_EVF_PREEMPTED : 0;
			if (!t->on_ts || t->on_est)
				missed_start(t, e, now, exec);
			current_task(t, BPF_CORE_READ(prev, pid), &e->task_id, &e->seq);
			e->slot = t->slot;
			bpf_ringbuf_submit(e, 0);
		}
		t->on_ts = 0;
		t->on_est = 0;
		t->wait_ns = 0;
		t->ready_ts = preempted ? now : 0;
		t->off_ts = now;
		t->exec_off = exec;
	}
	if (fnext && (t = thread_of(next))) {
		__u64 exec = BPF_CORE_READ(next, se.sum_exec_runtime);

		if (t->on_ts)
			missed_end(t, BPF_CORE_READ(next, pid), now, exec);
		t->wait_ns = t->ready_ts ? now - t->ready_ts : 0;
		t->ready_ts = 0;
		t->on_ts = now;
		t->on_est = 0;
		t->exec_on = exec;
		t->cpu = cpu;
	}
	return 0;
}

static __always_inline int on_wakeup(struct task_struct *p)
{
	struct th_thread *t;

	if (!followed(p) || !(t = thread_of(p)))
		return 0;
	if (!t->ready_ts)
		t->ready_ts = bpf_ktime_get_ns();
	return 0;
}

static __always_inline int on_migrate(struct task_struct *p, int dest_cpu)
{
	struct th_thread *t;
	struct th_event *e;

	if (!followed(p) || !(t = thread_of(p)))
		return 0;
	e = reserve();
	if (!e)
		return 0;
	__builtin_memset(e, 0, sizeof(*e));
	e->kind = TH_EV_MIGRATE;
	e->tgid = t->tgid;
	e->tid = t->tid;
	e->host_tid = BPF_CORE_READ(p, pid);
	e->cpu = bpf_get_smp_processor_id();
	e->ts = bpf_ktime_get_ns();
	/* the source CPU is the task's, not the one this program runs on */
	e->a = BPF_CORE_READ(p, thread_info.cpu);
	e->b = dest_cpu;
	current_task(t, BPF_CORE_READ(p, pid), &e->task_id, &e->seq);
	e->slot = t->slot;
	bpf_ringbuf_submit(e, 0);
	return 0;
}

SEC("tp_btf/sched_switch")
int BPF_PROG(tp_switch, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	return on_switch(preempt, prev, next, prev->tgid, next->tgid);
}

SEC("raw_tp/sched_switch")
int BPF_PROG(raw_switch, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	return on_switch(preempt, prev, next, BPF_CORE_READ(prev, tgid),
			 BPF_CORE_READ(next, tgid));
}

SEC("tp_btf/sched_wakeup")
int BPF_PROG(tp_wakeup, struct task_struct *p)
{
	return on_wakeup(p);
}

SEC("raw_tp/sched_wakeup")
int BPF_PROG(raw_wakeup, struct task_struct *p)
{
	return on_wakeup(p);
}

SEC("tp_btf/sched_wakeup_new")
int BPF_PROG(tp_wakeup_new, struct task_struct *p)
{
	return on_wakeup(p);
}

SEC("raw_tp/sched_wakeup_new")
int BPF_PROG(raw_wakeup_new, struct task_struct *p)
{
	return on_wakeup(p);
}

SEC("tp_btf/sched_migrate_task")
int BPF_PROG(tp_migrate, struct task_struct *p, int dest_cpu)
{
	return on_migrate(p, dest_cpu);
}

SEC("raw_tp/sched_migrate_task")
int BPF_PROG(raw_migrate, struct task_struct *p, int dest_cpu)
{
	return on_migrate(p, dest_cpu);
}

/* ---- USDT: the runtime's own events, with the CPU they really happened on ---- */

/* A probe fires in its thread, so the thread is on this CPU now. If no switch-in was
 * seen (see missed_start) it is marked on the CPU from now: a switch-in that reached no
 * program then leaves no gap before this probe in the thread's intervals. The kernel's
 * CPU-time count alone dated such a start too late by the interrupts in between (tens
 * of us on a VM), and the probe fell outside every interval. */
static __always_inline void seen_on_cpu(__u64 now, __u32 cpu)
{
	struct task_struct *cur = (struct task_struct *)bpf_get_current_task();
	struct th_thread *t = thread_of(cur);

	if (!t)
		return;
	if (!t->on_ts) {
		t->on_ts = now;
		t->on_est = 1;
		t->cpu = cpu;
		t->exec_on = BPF_CORE_READ(cur, se.sum_exec_runtime);
	}
	t->seen_ts = now;
}

static __always_inline int usdt_event(__u32 probe, long a, long b, long c)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u32 host_tid = (__u32)pid_tgid;
	struct th_event *e;

	/* A probe site is in the binary's file, shared by every process that runs
	 * it: another process running the same binary (a second recording, a
	 * test suite run twice) hits it too. Its task ids overlap ours. */
	if (!followed_tgid(pid_tgid >> 32))
		return 0;
	if (probe == TH_P_TASK_RUN) {
		__u64 id = a;

		bpf_map_update_elem(&usdt_cur, &host_tid, &id, BPF_ANY);
	} else if (probe == TH_P_TASK_YIELD || probe == TH_P_TASK_BLOCK ||
		   probe == TH_P_TASK_DONE) {
		bpf_map_delete_elem(&usdt_cur, &host_tid);
	}
	e = reserve();
	if (!e)
		return 0;
	__builtin_memset(e, 0, sizeof(*e));
	e->kind = TH_EV_USDT;
	e->probe = probe;
	if (pidns_level == 0) { /* the recorder sees host ids: no translation */
		e->tgid = pid_tgid >> 32;
		e->tid = host_tid;
	} else {
		struct task_struct *cur = (struct task_struct *)bpf_get_current_task();

		e->tgid = ns_id(cur, 1);
		e->tid = ns_id(cur, 0);
	}
	e->cpu = bpf_get_smp_processor_id();
	e->ts = bpf_ktime_get_ns();
	seen_on_cpu(e->ts, e->cpu);
	e->slot = -1;
	e->a = a;
	e->b = b;
	e->c = c;
	bpf_ringbuf_submit(e, 0);
	return 0;
}

/* One handler per row of TH_USDT_PROBES: u_NAME(arguments) records them as a, b, c
 * (missing ones 0). BPF_USDT reads only as many arguments as the row names. */
#define TH_USDT_ARGS_LONG(...) TH_ARGS_LONG_(TH_ARG_COUNT(__VA_ARGS__), __VA_ARGS__)
#define TH_ARGS_LONG_(n, ...) TH_ARGS_LONG__(n, __VA_ARGS__)
#define TH_ARGS_LONG__(n, ...) TH_ARGS_LONG_##n(__VA_ARGS__)
#define TH_ARGS_LONG_1(a) long a
#define TH_ARGS_LONG_2(a, b) long a, long b
#define TH_ARGS_LONG_3(a, b, c) long a, long b, long c
#define TH_ARGS_ABC(...) TH_ARGS_ABC_(__VA_ARGS__, 0, 0)
#define TH_ARGS_ABC_(a, b, c, ...) a, b, c
#define TH_BPF_USDT(...) BPF_USDT(__VA_ARGS__)

#define TH_USDT_HANDLER(E, name, ...)                                                  \
	SEC("usdt")                                                                    \
	int TH_BPF_USDT(u_##name, TH_USDT_ARGS_LONG(__VA_ARGS__))                      \
	{                                                                              \
		return usdt_event(TH_P_##E, TH_ARGS_ABC(__VA_ARGS__));                 \
	}
TH_USDT_PROBES(TH_USDT_HANDLER)
