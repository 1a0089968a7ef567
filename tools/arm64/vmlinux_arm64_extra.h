/* vmlinux_arm64_extra.h — appended to another architecture's vmlinux.h when the BPF
 * programs are cross-built for arm64: the arm64 register frame libbpf's USDT code reads. */
#ifndef TASKHOP_VMLINUX_ARM64_EXTRA_H
#define TASKHOP_VMLINUX_ARM64_EXTRA_H

/* arch/arm64/include/uapi/asm/ptrace.h; CO-RE-relocated like the rest of vmlinux.h. */
struct user_pt_regs {
	__u64 regs[31];
	__u64 sp;
	__u64 pc;
	__u64 pstate;
} __attribute__((preserve_access_index));

#endif
