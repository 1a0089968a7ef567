/* record.c — the recorder's loader: checks privileges, resolves pids across PID
 * namespaces, loads/attaches the BPF programs, drains the ring buffer, detaches. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "record_int.h"
#include "taskhop.h"
#include "taskhop_rec.skel.h"
#include "taskhop_pidns.skel.h"

void th_record_opts_default(struct th_record_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->slots = true;
}

/* ---- can we record at all? ------------------------------------------------ */

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

static int can_attach_usdt(void)
{
	struct __user_cap_data_struct d[2];
	return caps(d) == 0 && have_cap(d, CAP_SYS_ADMIN);
}

/* ---- open / targets --------------------------------------------------------- */

struct th_record *th_record_open(const struct th_record_opts *opts)
{
	struct th_record *r = calloc(1, sizeof(*r));
	if (!r) {
		rec_set_error("out of memory");
		return NULL;
	}
	if (opts)
		r->o = *opts;
	else
		th_record_opts_default(&r->o);
	r->ivals = (struct vec)VEC(struct rec_ival);
	r->migs = (struct vec)VEC(struct th_rec_migration);
	r->uruns = (struct vec)VEC(struct rec_usdt_run);
	r->wstart = (struct vec)VEC(struct th_rec_worker);
	r->binds = (struct vec)VEC(struct th_rec_run);
	r->spawns = (struct vec)VEC(struct rec_spawn);
	r->runs = (struct vec)VEC(struct th_rec_run);
	r->base_runs = (struct vec)VEC(struct th_rec_run);
	r->tasks = (struct vec)VEC(struct th_rec_task);
	r->workers = (struct vec)VEC(struct th_rec_worker);
	pthread_mutex_init(&r->lock, NULL);
	r->use_usdt = r->o.usdt;
	r->stats_fd = -1;
	return r;
}

static struct rec_target *new_target(struct th_record *r)
{
	if (r->started) {
		rec_set_error("add targets before th_record_start");
		return NULL;
	}
	if (r->ntg >= TH_REC_MAX_TARGETS) {
		rec_set_error("a recording follows at most %d processes", TH_REC_MAX_TARGETS);
		return NULL;
	}
	struct rec_target *t = &r->tg[r->ntg];
	memset(t, 0, sizeof(*t));
	t->hold_fd = -1;
	return t;
}

int th_record_attach_self(struct th_record *r)
{
	struct rec_target *t = new_target(r);
	if (!t)
		return -1;
	for (int i = 0; i < r->ntg; i++)
		if (r->tg[i].self) {
			rec_set_error("this process is already a target");
			return -1;
		}
	if (th_nworkers() <= 0) {
		rec_set_error("th_record_attach_self: start the runtime first (th_runtime_start)");
		return -1;
	}
	t->self = 1;
	t->pid = getpid();
	ssize_t n = readlink("/proc/self/exe", t->exe, sizeof(t->exe) - 1);
	t->exe[n > 0 ? n : 0] = 0;
	r->ntg++;
	return 0;
}

int th_record_attach_pid(struct th_record *r, pid_t pid)
{
	struct rec_target *t = new_target(r);
	char link[64];

	if (!t)
		return -1;
	if (pid <= 0 || (kill(pid, 0) != 0 && errno == ESRCH)) {
		rec_set_error("no process with pid %d", (int)pid);
		return -1;
	}
	snprintf(link, sizeof(link), "/proc/%d/exe", (int)pid);
	ssize_t n = readlink(link, t->exe, sizeof(t->exe) - 1);
	if (n <= 0) {
		rec_set_error("cannot inspect process %d (%s: %s)", (int)pid, link, strerror(errno));
		return -1;
	}
	t->exe[n] = 0;
	/* the mapped binary, even if its path was replaced since */
	if (rec_has_taskhop_usdt(link) != 1) {
		rec_set_error("process %d (%s) has no taskhop USDT probes: it is not linked with libtaskhop",
			      (int)pid, t->exe);
		return -1;
	}
	t->pid = pid;
	r->use_usdt = 1;
	r->ntg++;
	return 0;
}

/* PATH lookup as execvp does, so the USDT notes are read from the file that runs. */
static int resolve_command(const char *cmd, char *out, size_t len)
{
	if (strchr(cmd, '/')) {
		if (!realpath(cmd, out))
			return -1;
		return access(out, X_OK);
	}
	const char *path = getenv("PATH");
	char buf[4096];
	snprintf(buf, sizeof(buf), "%s", path ? path : "/usr/local/bin:/usr/bin:/bin");
	for (char *save, *dir = strtok_r(buf, ":", &save); dir; dir = strtok_r(NULL, ":", &save)) {
		char cand[4096 + 256];
		snprintf(cand, sizeof(cand), "%s/%s", *dir ? dir : ".", cmd);
		if (access(cand, X_OK) == 0 && realpath(cand, out))
			return 0;
	}
	(void)len;
	errno = ENOENT;
	return -1;
}

int th_record_attach_command(struct th_record *r, char *const argv[], pid_t *child)
{
	struct rec_target *t = new_target(r);
	int p[2];

	if (!t)
		return -1;
	if (!argv || !argv[0]) {
		rec_set_error("no command given");
		return -1;
	}
	if (resolve_command(argv[0], t->exe, sizeof(t->exe)) != 0) {
		rec_set_error("cannot run '%s': %s", argv[0], strerror(errno));
		return -1;
	}
	int has = rec_has_taskhop_usdt(t->exe);
	if (has != 1) {
		rec_set_error("%s has no taskhop USDT probes: it is not linked with libtaskhop", t->exe);
		return -1;
	}
	if (pipe2(p, O_CLOEXEC) != 0) {
		rec_set_error("pipe: %s", strerror(errno));
		return -1;
	}
	pid_t pid = fork();
	if (pid < 0) {
		rec_set_error("fork: %s", strerror(errno));
		close(p[0]);
		close(p[1]);
		return -1;
	}
	if (pid == 0) {
		char c;
		close(p[1]);
		/* held until the recorder is attached; EOF without a byte = give up */
		if (read(p[0], &c, 1) != 1)
			_exit(127);
		execv(t->exe, argv);
		fprintf(stderr, "taskhop record: cannot run %s: %s\n", t->exe, strerror(errno));
		_exit(127);
	}
	close(p[0]);
	t->pid = pid;
	t->command = 1;
	t->hold_fd = p[1];
	r->use_usdt = 1;
	r->ntg++;
	if (child)
		*child = pid;
	return 0;
}

/* ---- PID namespaces ------------------------------------------------------- */

/* Fills every target's host tgid and returns the level of our PID namespace: one pass
 * of the iter/task program over the processes this namespace can see. */
static int resolve_host_pids(struct th_record *r, uint32_t *level)
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

/* ---- loading ---------------------------------------------------------------- */

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

static int load(struct th_record *r)
{
	uint32_t level = 0;
	struct taskhop_rec_bpf *s;

	if (resolve_host_pids(r, &level) != 0)
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
static int bind_self(struct th_record *r)
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

static int consume(struct th_record *r)
{
	pthread_mutex_lock(&r->lock);
	int n = ring_buffer__consume(r->rb);
	pthread_mutex_unlock(&r->lock);
	return n;
}

/* Self target: nobody calls poll while the workload runs, so a thread drains the ring
 * buffer and the workers' run logs (their rings, th_run_log_drain). It sleeps instead of
 * waiting for wakeups: records are submitted without wakeups (cheaper), and a poller
 * woken by each record would itself switch, be recorded, and wake itself again. While
 * runs keep coming it looks every POLL_BUSY_MS: a worker switching every 30 ns fills a
 * 65,536-run ring in 2 ms; with nothing to drain it backs off to POLL_IDLE_MS. */
#define POLL_BUSY_MS 1
#define POLL_IDLE_MS 20

static void *poller_main(void *arg)
{
	struct th_record *r = arg;
	while (!r->poller_stop) {
		size_t runs = th_run_log_drain();
		consume(r);
		long ms = runs ? POLL_BUSY_MS : POLL_IDLE_MS;
		if (r->o.drain_stall_ms > 0)
			ms = r->o.drain_stall_ms; /* tests: a drain that falls behind */
		struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
		nanosleep(&ts, NULL);
	}
	return NULL;
}

int th_record_start(struct th_record *r)
{
	int has_self = 0;

	if (r->started) {
		rec_set_error("th_record_start called twice");
		return -1;
	}
	if (r->ntg == 0) {
		rec_set_error("nothing to record: attach to self, a pid or a command first");
		return -1;
	}
	const char *why = th_record_unavailable();
	if (why) {
		rec_set_error("%s", why);
		return -1;
	}
	if (r->use_usdt && !can_attach_usdt()) {
		rec_set_error("attaching the runtime's USDT probes needs CAP_SYS_ADMIN: run as root%s",
			      r->o.usdt ? ", or record without --usdt" : "");
		return -1;
	}
	r->started = 1;
	if (load(r) != 0)
		return -1;
	r->rb = ring_buffer__new(bpf_map__fd(r->skel->maps.events), rec_handle_event, r, NULL);
	if (!r->rb) {
		rec_set_error("ring buffer: %s", strerror(errno));
		return -1;
	}
	for (int i = 0; i < r->ntg; i++)
		if (r->tg[i].self)
			has_self = 1;
	if (has_self && bind_self(r) != 0)
		return -1;
	if (attach_sched(r) != 0)
		return -1;
	if (r->use_usdt)
		for (int i = 0; i < r->ntg; i++)
			if (attach_usdt(r, &r->tg[i]) != 0)
				return -1;
	if (r->o.prog_stats && (r->stats_fd = bpf_enable_stats(BPF_STATS_RUN_TIME)) < 0) {
		rec_set_error("enabling BPF run-time statistics failed: %s", strerror(errno));
		return -1;
	}
	r->t_start = th_now_ns();
	if (has_self) {
		if (pthread_create(&r->poller, NULL, poller_main, r) != 0) {
			rec_set_error("cannot start the ring-buffer thread");
			return -1;
		}
		r->poller_on = 1;
	}
	for (int i = 0; i < r->ntg; i++)
		if (r->tg[i].hold_fd >= 0) {
			(void)!write(r->tg[i].hold_fd, "g", 1);
			close(r->tg[i].hold_fd);
			r->tg[i].hold_fd = -1;
		}
	return 0;
}

int th_record_poll(struct th_record *r, int timeout_ms)
{
	if (!r->started || r->stopped || !r->rb) {
		rec_set_error("th_record_poll: not recording");
		return -1;
	}
	int n = consume(r);
	if (n != 0 || timeout_ms <= 0)
		return n < 0 ? 0 : n;
	/* records come without wakeups (see poller_main): sleep a little, then look again */
	int ms = timeout_ms < 20 ? timeout_ms : 20;
	struct timespec ts = { 0, (long)ms * 1000000L };
	if (nanosleep(&ts, NULL) != 0 && errno == EINTR)
		return 0;
	n = consume(r);
	return n < 0 ? 0 : n;
}

int th_record_wait_child(struct th_record *r, volatile int *stop)
{
	struct rec_target *t = NULL;
	for (int i = 0; i < r->ntg; i++)
		if (r->tg[i].command && !r->tg[i].exited)
			t = &r->tg[i];
	if (!t) {
		rec_set_error("no command to wait for");
		return -1;
	}
	for (;;) {
		int st;
		pid_t p = waitpid(t->pid, &st, WNOHANG);
		if (p == t->pid) {
			t->exited = 1;
			t->status = st;
			return st;
		}
		if (p < 0 && errno != EINTR) {
			rec_set_error("waitpid %d: %s", (int)t->pid, strerror(errno));
			return -1;
		}
		if (stop && *stop)
			return -2;
		th_record_poll(r, 50);
	}
}

/* Threads still on a CPU at stop: close their interval at t_stop. */
static void close_open_intervals(struct th_record *r)
{
	int fd = bpf_map__fd(r->skel->maps.threads);
	__u32 key, next, *prev = NULL;
	struct th_thread th;

	while (bpf_map_get_next_key(fd, prev, &next) == 0) {
		key = next;
		prev = &key;
		if (bpf_map_lookup_elem(fd, &key, &th) != 0 || !th.on_ts || th.on_ts >= r->t_stop)
			continue;
		struct rec_ival *iv = vec_push(&r->ivals);
		if (!iv)
			return;
		iv->pid = (int)th.tgid;
		iv->tid = (int)th.tid;
		iv->cpu = (int)th.cpu;
		iv->host_tid = (int)key;
		iv->start = th.on_ts;
		iv->end = r->t_stop;
		iv->wait_ns = th.wait_ns;
	}
}

static void take_run_logs(struct th_record *r)
{
	int self_pid = getpid();
	for (int w = 0; w < th_nworkers(); w++) {
		size_t n = 0;
		uint64_t dropped = 0;
		const struct th_run_record *log = th_run_log(w, &n, &dropped);
		r->dropped_runs += dropped;
		for (size_t i = 0; log && i < n; i++) {
			struct th_rec_run *run = vec_push(&r->runs);
			if (!run)
				return;
			run->pid = self_pid;
			run->task_id = log[i].task_id;
			run->worker = (int)log[i].worker;
			/* the thread that ran it: a spare's runs are joined with its intervals */
			run->tid = log[i].thread < (uint32_t)r->nself ? r->self_tids[log[i].thread] : -1;
			run->cpu = -1;
			run->usdt_cpu = -1;
			run->start_ns = log[i].start_ns;
			run->end_ns = log[i].end_ns;
			run->why = log[i].why;
		}
	}
}

static void detach(struct th_record *r)
{
	for (int i = 0; i < r->nlinks; i++)
		bpf_link__destroy(r->links[i]);
	free(r->links);
	r->links = NULL;
	r->nlinks = 0;
}

int th_record_stop(struct th_record *r)
{
	if (!r->started) {
		rec_set_error("th_record_stop: not started");
		return -1;
	}
	if (r->stopped)
		return 0;
	r->stopped = 1;
	r->t_stop = th_now_ns();
	if (r->poller_on) {
		r->poller_stop = 1;
		pthread_join(r->poller, NULL);
		r->poller_on = 0;
	}
	detach(r);
	if (r->stats_fd >= 0) {
		close(r->stats_fd);
		r->stats_fd = -1;
	}
	if (r->rb)
		consume(r);
	if (r->skel) {
		close_open_intervals(r);
		for (int i = 0; i < r->ntg; i++)
			if (r->tg[i].self) {
				take_run_logs(r);
				if (r->slot_mem)
					th_publish_slots(NULL, 0);
			}
	}
	return 0;
}

int th_record_bind_thread(struct th_record *r, uint64_t task_id, int tid)
{
	struct th_rec_run *b = vec_push(&r->binds);
	if (!b) {
		rec_set_error("out of memory");
		return -1;
	}
	b->pid = r->ntg ? r->tg[0].pid : getpid();
	b->task_id = task_id;
	b->tid = tid;
	r->analysed = 0;
	return 0;
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

uint64_t th_record_lost_events(struct th_record *r)
{
	return r->skel && r->skel->bss ? r->skel->bss->lost_events : 0;
}

uint64_t th_record_dropped_runs(struct th_record *r)
{
	return r->dropped_runs;
}

void th_record_close(struct th_record *r)
{
	if (!r)
		return;
	if (r->started && !r->stopped)
		th_record_stop(r);
	for (int i = 0; i < r->ntg; i++)
		if (r->tg[i].hold_fd >= 0) { /* never started: the held child exits on EOF */
			close(r->tg[i].hold_fd);
			waitpid(r->tg[i].pid, NULL, 0);
		}
	detach(r);
	if (r->stats_fd >= 0)
		close(r->stats_fd);
	ring_buffer__free(r->rb);
	if (r->slot_mem)
		munmap(r->slot_mem, r->slot_len);
	taskhop_rec_bpf__destroy(r->skel);
	vec_free(&r->ivals);
	vec_free(&r->migs);
	vec_free(&r->uruns);
	vec_free(&r->wstart);
	vec_free(&r->binds);
	vec_free(&r->spawns);
	rec_free_results(r);
	vec_free(&r->runs);
	vec_free(&r->base_runs);
	free(r->self_tids);
	pthread_mutex_destroy(&r->lock);
	free(r);
}
