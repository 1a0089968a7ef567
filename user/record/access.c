/* access.c — can this process record at all? Kernel BPF support, BTF and capabilities,
 * checked without side effects before anything is loaded. */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/capability.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "record_int.h"

static int have_cap(const struct __user_cap_data_struct d[2], int cap)
{
	return (d[cap / 32].effective >> (cap % 32)) & 1;
}

static int caps(struct __user_cap_data_struct d[2])
{
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
	memset(d, 0, 2 * sizeof(*d));
	return (int)syscall(SYS_capget, &h, d);
}

#ifndef CAP_PERFMON
#define CAP_PERFMON 38
#endif
#ifndef CAP_BPF
#define CAP_BPF 39
#endif

const char *th_record_unavailable(void)
{
	static __thread char msg[256];
	struct __user_cap_data_struct d[2];

	if (syscall(SYS_bpf, -1, NULL, 0) < 0 && errno == ENOSYS)
		return "BPF is disabled in this kernel (no bpf() system call, CONFIG_BPF_SYSCALL=n): use --no-bpf";
	/* TASKHOP_BTF_PATH: where to look instead, so that tests can show this message */
	const char *btf = getenv("TASKHOP_BTF_PATH");
	if (!btf)
		btf = "/sys/kernel/btf/vmlinux";
	if (access(btf, R_OK) != 0) {
		snprintf(msg, sizeof(msg), "this kernel has no BTF (%s: %s): the recorder needs "
			 "CONFIG_DEBUG_INFO_BTF=y; use --no-bpf", btf, strerror(errno));
		return msg;
	}
	if (caps(d) != 0)
		return "cannot read this process's capabilities: run as root, or use --no-bpf";
	if (!have_cap(d, CAP_SYS_ADMIN) && !(have_cap(d, CAP_BPF) && have_cap(d, CAP_PERFMON)))
		return "BPF recording needs root or CAP_BPF+CAP_PERFMON: run as root, or use --no-bpf";
	return NULL;
}

int rec_can_attach_usdt(void)
{
	struct __user_cap_data_struct d[2];
	return caps(d) == 0 && have_cap(d, CAP_SYS_ADMIN);
}
