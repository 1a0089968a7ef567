/* taskhop_abi.h — the one header shared by the BPF programs and user space:
 * the per-worker slot the runtime publishes, event records, map layouts. */
#ifndef TASKHOP_ABI_H
#define TASKHOP_ABI_H

#ifdef __BPF__
/* vmlinux.h provides __u64 and friends */
#else
#include <linux/types.h>
#endif

/* What worker i stores at every task switch into slot i of the recorder's
 * BPF_F_MMAPABLE array: the task now running (0 = none, the worker's own
 * scheduler loop) and a sequence number bumped at each store. */
struct th_slot {
	__u64 task_id;
	__u64 seq;
};

#define TH_MAX_SLOTS 1024

#endif
