/* load.c — the BPF side of a recording: loads the scheduler programs (tp_btf, or their
 * raw_tp twins) with the targets as load-time filters, attaches them and the runtime's
 * USDT probes, shares the slot map with the self target's threads, detaches. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "record_int.h"
#include "taskhop.h"
#include "taskhop_rec.skel.h"

/* As libbpf-tools' probe_tp_btf: can a BTF-typed raw tracepoint program load here? */
static int probe_tp_btf(const char *tp)
{
	struct bpf_insn insns[2];
	int id, fd;

	if (getenv("TASKHOP_REC_FORCE_RAW_TP"))
		return 0;
	memset(insns, 0, sizeof(insns));
	insns[0].code = BPF_ALU64 | BPF_MOV | BPF_K; /* r0 = 0 */
	insns[1].code = BPF_JMP | BPF_EXIT;
	id = libbpf_find_vmlinux_btf_id(tp, BPF_TRACE_RAW_TP);
	if (id <= 0)
		return 0;
	LIBBPF_OPTS(bpf_prog_load_opts, o, .expected_attach_type = BPF_TRACE_RAW_TP,
		    .attach_btf_id = (__u32)id);
	fd = bpf_prog_load(BPF_PROG_TYPE_TRACING, NULL, "GPL", insns, 2, &o);
	if (fd < 0)
		return 0;
	close(fd);
	return 1;
}

static int add_link(struct th_record *r, struct bpf_link *l)
{
	struct bpf_link **n = realloc(r->links, (size_t)(r->nlinks + 1) * sizeof(*n));
	if (!n) {
		bpf_link__destroy(l);
		return -1;
	}
	r->links = n;
	r->links[r->nlinks++] = l;
	return 0;
}

/* Probe names and handlers, from the table in taskhop_abi.h. */
#define USDT_NAME(E, name, ...) [TH_P_##E] = #name,
static const char *usdt_names[TH_P_COUNT] = { TH_USDT_PROBES(USDT_NAME) };
#undef USDT_NAME

static struct bpf_program *usdt_prog(struct taskhop_rec_bpf *s, int p)
{
#define USDT_PROG(E, name, ...) case TH_P_##E: return s->progs.u_##name;
	switch (p) {
	TH_USDT_PROBES(USDT_PROG)
	default: return NULL;
	}
#undef USDT_PROG
}

static int attach_usdt(struct th_record *r, struct rec_target *t)
{
	for (int p = 1; p < TH_P_COUNT; p++) {
		struct bpf_link *l = bpf_program__attach_usdt(usdt_prog(r->skel, p), t->pid, t->exe,
							       "taskhop", usdt_names[p], NULL);
		if (!l) {
			int e = errno;
			/* a probe the linker dropped (e.g. task_steal without the steal policy) */
			if (e == ENOENT && p != TH_P_TASK_RUN && p != TH_P_TASK_YIELD && p != TH_P_TASK_DONE)
				continue;
			if (e == EACCES || e == EPERM)
				rec_set_error("attaching the runtime's USDT probes was refused (%s): it needs "
					      "CAP_SYS_ADMIN; run as root%s", strerror(e),
					      t->self ? ", or record without --usdt" : "");
			else
				rec_set_error("attaching USDT probe taskhop:%s in %s failed: %s",
					      usdt_names[p], t->exe, strerror(e));
			return -1;
		}
		if (add_link(r, l) != 0)
			return -1;
	}
	return 0;
}

static int attach_sched(struct th_record *r)
{
	struct bpf_program *p;
	bpf_object__for_each_program(p, r->skel->obj) {
		if (!bpf_program__autoload(p) || bpf_program__type(p) == BPF_PROG_TYPE_KPROBE)
			continue; /* the twin not chosen, or a USDT handler */
		struct bpf_link *l = bpf_program__attach(p);
		if (!l) {
			rec_set_error("attaching %s failed: %s", bpf_program__name(p), strerror(errno));
			return -1;
		}
		if (add_link(r, l) != 0)
			return -1;
	}
	return 0;
}

int rec_load(struct th_record *r)
{
	uint32_t level = 0;
	struct taskhop_rec_bpf *s;

	if (rec_resolve_host_pids(r, &level) != 0)
		return -1;
	s = r->skel = taskhop_rec_bpf__open();
	if (!s) {
		rec_set_error("opening the BPF recorder failed: %s", strerror(errno));
		return -1;
	}
	for (int i = 0; i < r->ntg; i++)
		s->rodata->targ_tgid[i] = r->tg[i].host_tgid;
	s->rodata->n_targ = (uint32_t)r->ntg;
	s->rodata->pidns_level = level;

	size_t rb = r->o.ringbuf_bytes ? r->o.ringbuf_bytes : (size_t)16 << 20;
	if (rb & (rb - 1) || rb < 4096) {
		rec_set_error("ring buffer size %zu is not a power of 2 >= 4096", rb);
		return -1;
	}
	bpf_map__set_max_entries(s->maps.events, (uint32_t)rb);

	int btf = probe_tp_btf("sched_switch") && probe_tp_btf("sched_migrate_task") &&
		  probe_tp_btf("sched_wakeup") && probe_tp_btf("sched_wakeup_new");
	r->raw_tp = !btf;
	bpf_program__set_autoload(s->progs.tp_switch, btf);
	bpf_program__set_autoload(s->progs.tp_wakeup, btf);
	bpf_program__set_autoload(s->progs.tp_wakeup_new, btf);
	bpf_program__set_autoload(s->progs.tp_migrate, btf);
	bpf_program__set_autoload(s->progs.raw_switch, !btf);
	bpf_program__set_autoload(s->progs.raw_wakeup, !btf);
	bpf_program__set_autoload(s->progs.raw_wakeup_new, !btf);
	bpf_program__set_autoload(s->progs.raw_migrate, !btf);
	for (int p = 1; p < TH_P_COUNT; p++)
		bpf_program__set_autoload(usdt_prog(s, p), r->use_usdt);

	if (taskhop_rec_bpf__load(s) != 0) {
		int e = errno;
		if (e == EPERM || e == EACCES)
			rec_set_error("loading the BPF recorder was refused (%s): run as root, or use --no-bpf",
				      strerror(e));
		else
			rec_set_error("loading the BPF recorder failed: %s", strerror(e));
		return -1;
	}
	return 0;
}

/* Self target: each runtime thread i publishes {task, seq} into line i of the mmap'd
 * slot map (th_publish_slots); the BPF side finds a thread's line through tid_slot.
 * Every thread is registered, spares included: with activations on, a spare runs the
 * tasks of a worker it took over, and its intervals must carry its slot's task. */
int rec_bind_self(struct th_record *r)
{
	int n = th_nthreads();
	if (n > TH_MAX_SLOTS) {
		rec_set_error("%d runtime threads: the slot map holds %d", n, TH_MAX_SLOTS);
		return -1;
	}
	r->self_tids = calloc((size_t)n + 1, sizeof(int));
	if (!r->self_tids) {
		rec_set_error("out of memory");
		return -1;
	}
	r->nself = n;
	r->nself_workers = th_nworkers();
	for (int i = 0; i < n; i++) {
		__u32 tid = (__u32)th_thread_tid(i);
		r->self_tids[i] = (int)tid;
		__s32 slot = i;
		if (bpf_map__update_elem(r->skel->maps.tid_slot, &tid, sizeof(tid), &slot, sizeof(slot),
					 BPF_ANY) != 0) {
			rec_set_error("tid_slot update: %s", strerror(errno));
			return -1;
		}
	}
	if (r->o.slots) {
		r->slot_len = (size_t)TH_MAX_SLOTS * TH_SLOT_STRIDE;
		r->slot_mem = mmap(NULL, r->slot_len, PROT_READ | PROT_WRITE, MAP_SHARED,
				   bpf_map__fd(r->skel->maps.slots), 0);
		if (r->slot_mem == MAP_FAILED) {
			r->slot_mem = NULL;
			rec_set_error("mmap of the slot map failed: %s", strerror(errno));
			return -1;
		}
		th_publish_slots(r->slot_mem, TH_SLOT_STRIDE);
	}
	th_run_log_clear();
	return 0;
}

/* The scheduler programs, then each target's USDT probes when USDT is on (for a target
 * read through its run-log area, only with --usdt: the cross-check). */
int rec_attach(struct th_record *r)
{
	if (attach_sched(r) != 0)
		return -1;
	if (r->use_usdt)
		for (int i = 0; i < r->ntg; i++)
			if ((!r->tg[i].area || r->o.usdt) && attach_usdt(r, &r->tg[i]) != 0)
				return -1;
	return 0;
}

void rec_detach(struct th_record *r)
{
	for (int i = 0; i < r->nlinks; i++)
		bpf_link__destroy(r->links[i]);
	free(r->links);
	r->links = NULL;
	r->nlinks = 0;
}

/* Detached already: the slot map's mapping and the programs go. */
void rec_unload(struct th_record *r)
{
	if (r->slot_mem)
		munmap(r->slot_mem, r->slot_len);
	r->slot_mem = NULL;
	taskhop_rec_bpf__destroy(r->skel);
	r->skel = NULL;
}

int th_record_prog_stats(struct th_record *r, struct th_rec_prog_stats *out)
{
	struct bpf_program *p;

	memset(out, 0, sizeof(*out));
	if (!r->skel) {
		rec_set_error("th_record_prog_stats: nothing loaded");
		return -1;
	}
	bpf_object__for_each_program(p, r->skel->obj) {
		struct bpf_prog_info info;
		__u32 len = sizeof(info);
		if (bpf_program__fd(p) < 0)
			continue; /* not loaded: the twin not chosen */
		memset(&info, 0, sizeof(info));
		if (bpf_obj_get_info_by_fd(bpf_program__fd(p), &info, &len) != 0)
			continue;
		const char *sec = bpf_program__section_name(p);
		uint64_t *runs = &out->other_runs, *ns = &out->other_ns;
		if (strstr(sec, "sched_switch")) {
			runs = &out->switch_runs;
			ns = &out->switch_ns;
		} else if (bpf_program__type(p) == BPF_PROG_TYPE_KPROBE) {
			runs = &out->usdt_runs;
			ns = &out->usdt_ns;
		}
		*runs += info.run_cnt;
		*ns += info.run_time_ns;
	}
	return 0;
}
