/* taskhop_abi.h — the one header shared by the BPF programs and user space:
 * the per-worker slot the runtime publishes, event records, map layouts. */
#ifndef TASKHOP_ABI_H
#define TASKHOP_ABI_H

#ifdef __BPF__
/* vmlinux.h provides __u64 and friends */
#else
#include <linux/types.h>
#endif

/* What worker thread i stores at every task switch into slot i of the recorder's
 * BPF_F_MMAPABLE array: the task now running (0 = none, the thread's own
 * scheduler loop) and a sequence number bumped at each store. Threads
 * i < worker count start serving worker i; spare threads follow (activations).
 * In the activation map's line of a thread, `state` (enum th_slot_state) says
 * what the thread is doing, and blocked_ns when the kernel side saw it block. */
struct th_slot {
	__u64 task_id;
	__u64 seq;
	__u32 state;
	__u32 pad0;
	__u64 blocked_ns;
};

/* th_slot.state. The runtime writes RUNTIME, TASK and PARKED on its own thread's
 * line; the kernel side (bpf/taskhop_act.bpf.c) turns TASK into BLOCKED when the
 * thread blocks in the kernel and back when it is switched in; th_blocking_begin
 * writes BLOCKING; a thread that takes the worker over turns BLOCKED or BLOCKING
 * into TAKING, then TAKEN. Only compare-and-swaps change a word another party may change. */
enum th_slot_state {
	TH_SLOT_RUNTIME = 0,  /* in the runtime's own code (scheduler loop, a runtime call) */
	TH_SLOT_TASK = 1,     /* running a user task's code */
	TH_SLOT_PARKED = 2,   /* in the runtime's own idle wait (never a "block") */
	TH_SLOT_BLOCKED = 3,  /* blocked in the kernel while running a task (kernel side) */
	TH_SLOT_BLOCKING = 4, /* inside th_blocking_begin .. th_blocking_end */
	TH_SLOT_TAKEN = 5,    /* its worker was handed to a spare thread */
	TH_SLOT_TAKING = 6,   /* a taker won the worker and is still reading the thread's
			       * fields: the thread waits for TAKEN before it goes on */
};

/* Ring-buffer record of the activation object: thread `thread` blocked at ts. */
struct th_act_event {
	__u32 thread;
	__u32 pad;
	__u64 ts;
};

#define TH_MAX_SLOTS 1024

/* The recorder's slot map holds one cache line per worker, so that two workers
 * storing at every switch never write the same line: stride TH_SLOT_STRIDE. */
#define TH_SLOT_STRIDE 64
struct th_slot_line {
	struct th_slot s;
	__u64 pad[(TH_SLOT_STRIDE - sizeof(struct th_slot)) / 8];
};

/* Processes one recording follows (const volatile filter, set before load); the
 * recorder's public TH_REC_MAX_TARGETS is this number. */
#define TH_MAX_TARGETS 8

/* Records of the BPF ring buffer. All ids are as the recorder's PID namespace sees
 * them (host ids are only used inside the filters). Times: bpf_ktime_get_ns(). */
enum th_ev_kind {
	TH_EV_ONCPU = 1,   /* a followed thread left `cpu`: it ran from start to ts */
	TH_EV_MIGRATE = 2, /* the kernel moved a followed thread: a = from cpu, b = to cpu */
	TH_EV_USDT = 3,    /* a taskhop USDT probe fired on `cpu` at ts: probe, a, b, c */
};

/*
 * The runtime's USDT probes (provider "taskhop"), one row each: X(ENUM, name, arguments).
 * Everything else about them is made from this table: enum th_usdt_probe (the `probe`
 * of a TH_EV_USDT record, whose a, b, c are the arguments in this order), the
 * recorder's probe names and BPF handlers (u_NAME), and TH_PROBE_NARGS_name, against
 * which user/runtime/probes.h checks every probe site. At most 3 arguments.
 *   worker  the worker it happens on; -1 = none (a plain thread spawned or woke the task,
 *           or a kthread-policy task ended on its own thread)
 *   home    task_spawn: the worker it was placed on, -1 = any
 *   prev    task_run: the worker it ran on before, -1 = first run
 *   tid     worker_start: the worker's kernel thread id
 */
#define TH_USDT_PROBES(X)                                   \
	X(TASK_SPAWN, task_spawn, id, worker, home)         \
	X(TASK_RUN, task_run, id, worker, prev)             \
	X(TASK_YIELD, task_yield, id, worker)               \
	X(TASK_BLOCK, task_block, id, worker)               \
	X(TASK_WAKE, task_wake, id, worker)                 \
	X(TASK_DONE, task_done, id, worker)                 \
	X(TASK_STEAL, task_steal, id, thief, victim)        \
	X(WORKER_START, worker_start, worker, tid)          \
	X(WORKER_PARK, worker_park, worker)                 \
	X(WORKER_UNPARK, worker_unpark, worker)

#define TH_P_ENUMERATOR(E, name, ...) TH_P_##E,
enum th_usdt_probe {
	TH_P_NONE = 0,
	TH_USDT_PROBES(TH_P_ENUMERATOR)
	TH_P_COUNT
};
#undef TH_P_ENUMERATOR

/* TH_ARG_COUNT(a, b, c) = 3, for 1 to 3 arguments */
#define TH_ARG_COUNT_(_1, _2, _3, n, ...) n
#define TH_ARG_COUNT(...) TH_ARG_COUNT_(__VA_ARGS__, 3, 2, 1, 0)

#define TH_P_NARGS_ENUMERATOR(E, name, ...) TH_PROBE_NARGS_##name = TH_ARG_COUNT(__VA_ARGS__),
enum th_usdt_probe_nargs { TH_USDT_PROBES(TH_P_NARGS_ENUMERATOR) };
#undef TH_P_NARGS_ENUMERATOR

#define TH_EVF_PREEMPTED 1u     /* ONCPU: left the CPU still runnable (involuntary) */
#define TH_EVF_START_UNKNOWN 2u /* ONCPU: was already on the CPU when recording began */
/* ONCPU: the switch that put the thread on the CPU was not seen (it happens: a switch-in
 * after a preemption can reach no sched_switch program); `start` is then the switch-out
 * time less the CPU time the kernel charged the thread since its previous switch-out. */
#define TH_EVF_START_EST 4u
/* (With USDT, a probe that fires on a thread with no switch-in seen marks it on that CPU
 * from then, and `start` is at the latest that probe's time.) */
/* ONCPU: the switch that took the thread off the CPU was not seen (the next one that
 * puts it back on was): `ts` is `start` plus the CPU time the kernel charged the thread
 * in between, and PREEMPTED says whether no wakeup came before it returned. */
#define TH_EVF_END_EST 8u

struct th_event {
	__u32 kind;     /* enum th_ev_kind */
	__u32 probe;    /* enum th_usdt_probe for TH_EV_USDT */
	__u32 tgid;
	__u32 tid;
	__u32 cpu;
	__u32 flags;    /* TH_EVF_* */
	__s32 slot;     /* worker slot of the thread, -1 if not a published worker */
	__u32 host_tid; /* ONCPU, MIGRATE: the thread's id in the initial PID namespace */
	__u64 ts;
	__u64 start;    /* ONCPU: interval start */
	__u64 wait_ns;  /* ONCPU: run-queue wait (wakeup/preemption -> on CPU) before it */
	__u64 task_id;  /* task current on the thread (slot or USDT), 0 none/unknown */
	__u64 seq;      /* the slot's switch sequence then */
	__s64 a, b, c;
};

/* Kernel-side state of one followed thread (map `threads`, key: host tid). User space
 * reads it at stop to close the intervals still open. */
struct th_thread {
	__u64 on_ts;    /* on a CPU since, 0 = off CPU or unknown */
	__u64 ready_ts; /* runnable (woken or preempted) since, 0 = not waiting */
	__u64 wait_ns;  /* run-queue wait before the current interval */
	__u32 tgid, tid; /* namespace ids */
	__s32 slot;
	__u32 cpu;
	__u64 off_ts;   /* last switch-out seen, 0 = none yet */
	__u64 exec_off; /* the kernel's sum_exec_runtime of the thread then */
	__u64 exec_on;  /* its sum_exec_runtime at the switch-in at on_ts */
	__u64 seen_ts;  /* its last USDT probe: on a CPU then */
	__u32 on_est;   /* on_ts is a USDT probe's time: the switch-in was not seen */
	__u32 pad;
};

/* Output of the pid-namespace resolver (bpf/taskhop_pidns.bpf.c, iter/task): one per
 * process visible in the caller's PID namespace. */
struct th_pidmap {
	__u32 host_tgid;
	__u32 ns_tgid;
	__u32 level;    /* the caller's namespace level */
	__u32 pad;
};

/*
 * The run-log area: where a process linked with libtaskhop keeps its workers' run
 * logs, one shared memory file (a memfd named TH_AREA_NAME, mapped MAP_SHARED) that a
 * recorder in another process maps too (through /proc/PID/map_files) and drains
 * without a uprobe per event. Layout: struct th_area_head at offset 0, nworkers
 * struct th_area_log at logs_off, then each worker's ring of ring_cap struct
 * th_area_run at rings_off + worker * ring_cap * record_size.
 *
 * The protocol. A worker appends a run only while its log's `on` is set; it
 * advances head (release) after the record and never passes tail + ring_cap: a full
 * ring counts the run in `dropped` instead. The one drainer (its pid in `owner`,
 * claimed by compare-and-swap from 0, or from a pid that no longer exists) copies
 * [tail, head) and then stores tail (release). A drainer claims, moves tail to head
 * (older runs are not its own), then sets `on`; it clears `on` before it lets go.
 * A recorder treats every field as hostile: the process it reads may be anyone's.
 */
#define TH_AREA_NAME "taskhop-runlog"
#define TH_AREA_MAGIC 0x31706f686b736174ull /* "taskhop1" */
#define TH_AREA_VERSION 1
#define TH_AREA_MAX_WORKERS 1024
#define TH_AREA_MAX_THREADS TH_MAX_SLOTS
#define TH_AREA_MAX_RING (1u << 24)       /* runs per worker ring */

/* how a run's stamps are written: th_area_head.stamp_kind */
enum th_area_stamp {
	TH_STAMP_NS = 1,       /* CLOCK_MONOTONIC nanoseconds */
	TH_STAMP_COUNTER = 2,  /* the CPU's counter: rdtsc on x86-64, cntvct_el0 on arm64 */
};

struct th_area_head {
	__u64 magic;          /* TH_AREA_MAGIC */
	__u32 version;        /* TH_AREA_VERSION */
	__u32 head_size;      /* sizeof(struct th_area_head) */
	__u32 nworkers;       /* logs and rings that follow */
	__u32 nthreads;       /* entries of tids: workers first, then spare threads */
	__u32 ring_cap;       /* runs per ring, a power of two */
	__u32 record_size;    /* sizeof(struct th_area_run) */
	__u32 stamp_kind;     /* enum th_area_stamp */
	__s32 pid;            /* the process, as it sees itself */
	__u64 logs_off, rings_off, size;
	__s32 owner;          /* pid of the drainer, 0 = none (compare-and-swap) */
	__u32 pad;
	__s32 tids[TH_AREA_MAX_THREADS]; /* thread i's kernel tid, 0 until it started */
};

/* One worker's log: the producer's line, then the drainer's. */
struct th_area_log {
	__u64 head;           /* runs written (the worker) */
	__u64 dropped;        /* runs not written: the ring was full (the worker) */
	__u32 on;             /* the drainer: 1 = log runs */
	__u32 pad0;
	__u64 pad1[5];
	__u64 tail;           /* runs copied out (the drainer) */
	__u64 pad2[7];
};

/* One run of a task on a worker, stamps in the head's stamp_kind. */
struct th_area_run {
	__u64 task_id;
	__u64 start;
	__u64 end;
	__u16 worker;
	__u16 thread;         /* runtime thread index: tids[thread] */
	__u8 why;             /* enum th_why */
	__u8 flags;           /* TH_AREA_RUN_* */
	__u16 pad;
};
#define TH_AREA_RUN_END_NS 1u /* end is CLOCK_MONOTONIC already (a block the kernel dated) */

#endif
