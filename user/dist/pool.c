/* pool.c — the driver: starts and stops the worker processes, hands calls to free workers
 * (spawnat futures and pmap's dynamic scheduling), gathers results and turns deaths into errors. */
#define _GNU_SOURCE /* sigabbrev_np */
#include "dist_int.h"
#include "taskhop.h"

#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

enum call_state { C_QUEUED, C_SENT, C_DONE, C_FAILED };
enum call_owner { OWN_NONE, OWN_FUTURE, OWN_PMAP };

struct pmap_run;

/* One input on its way through the pool. */
struct call {
	uint64_t id;
	int target;          /* TH_ANY or a worker */
	int proc;            /* the worker it was sent to, 0 before */
	const char *name;
	const void *arg;
	size_t len;
	void *arg_copy;      /* spawnat owns a copy; pmap borrows the caller's input */
	enum call_state state;
	enum call_owner owner; /* OWN_NONE: abandoned, freed when it completes */
	size_t batch;        /* most inputs one message may carry, from this one on */
	struct th_bytes out;
	size_t cap;
	char *err;
	struct call *next;   /* in a queue or a worker's in-flight list */
	struct pmap_run *pm;
	size_t index;        /* input index within its pmap */
};

struct queue {
	struct call *head, *tail;
};

struct proc {
	pid_t pid;
	char host[64];
	bool alive, hello, bye;
	struct queue inflight; /* sent, answered in order */
	struct queue queue;    /* spawnat'ed to this worker, not sent yet */
	uint64_t calls, busy_ns, busy_since;
	uint64_t head_since;   /* when the in-flight head input started (the call timeout) */
	long maxrss_kb;
	uint64_t utime_us, stime_us;
	int wait_status;
};

struct pmap_run {
	size_t n, done;
	bool failed;
	char err[512];
};

struct th_future {
	struct call *c;
};

static struct {
	bool running;
	int n;
	enum th_transport transport;
	const struct th_dist_transport *tr;
	struct proc p[TH_DIST_MAX_PROCS + 1];
	struct queue anyq; /* calls for the first free worker */
	uint64_t next_id;
	int grace_ms;
	int call_timeout_ms;  /* 0: wait forever */
	bool atexit_set;
} P;

/* ---- queues ----------------------------------------------------------------- */
static void q_push(struct queue *q, struct call *c)
{
	c->next = NULL;
	if (q->tail)
		q->tail->next = c;
	else
		q->head = c;
	q->tail = c;
}

static struct call *q_pop(struct queue *q)
{
	struct call *c = q->head;
	if (c) {
		q->head = c->next;
		if (!q->head)
			q->tail = NULL;
		c->next = NULL;
	}
	return c;
}

static void q_remove(struct queue *q, struct call *c)
{
	struct call **pp = &q->head, *prev = NULL;
	while (*pp && *pp != c) {
		prev = *pp;
		pp = &(*pp)->next;
	}
	if (!*pp)
		return;
	*pp = c->next;
	if (q->tail == c)
		q->tail = prev;
	c->next = NULL;
}

static void call_free(struct call *c)
{
	free(c->arg_copy);
	free(c->out.data);
	free(c->err);
	free(c);
}

static void proc_name(int k, char *buf, size_t len)
{
	snprintf(buf, len, "worker %d (pid %d%s%s)", k, (int)P.p[k].pid,
		 P.p[k].host[0] ? " on " : "", P.p[k].host);
}

/* ---- completing calls ----------------------------------------------------------- */
static void call_settle(struct call *c)
{
	if (c->owner == OWN_NONE) {
		call_free(c);
		return;
	}
	if (c->pm) {
		if (c->state == C_FAILED && !c->pm->failed) {
			c->pm->failed = true;
			snprintf(c->pm->err, sizeof c->pm->err, "input %zu failed: %s", c->index, c->err);
		}
		c->pm->done++;
	}
}

static void call_fail(struct call *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void call_fail(struct call *c, const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	free(c->err);
	c->err = strdup(msg);
	free(c->out.data);
	c->out.data = NULL;
	c->out.len = 0;
	c->state = C_FAILED;
	call_settle(c);
}

static int call_reserve(struct call *c, size_t len)
{
	if (c->out.len + len > c->cap) {
		size_t cap = c->cap ? c->cap : 4096;
		while (cap < c->out.len + len)
			cap *= 2;
		void *d = realloc(c->out.data, cap);
		if (!d)
			return -1;
		c->out.data = d;
		c->cap = cap;
	}
	return 0;
}

/* The worker's size hint: the whole result allocated once, so it is never
 * copied to grow while the workers compute. Unheeded when nobody reads the
 * result, when it is too large, or when memory is short: it is only a hint. */
static void call_hint(struct call *c, uint64_t total)
{
	if (c->owner == OWN_NONE || total <= c->cap || total > TH_FRAME_MAX_HINT)
		return;
	void *d = c->out.data ? realloc(c->out.data, (size_t)total) : th_result_alloc((size_t)total);
	if (d) {
		c->out.data = d;
		c->cap = (size_t)total;
	}
}

static int call_append(struct call *c, const void *data, size_t len)
{
	if (c->owner == OWN_NONE || len == 0)
		return 0; /* nobody will read it */
	if (call_reserve(c, len))
		return -1;
	memcpy((char *)c->out.data + c->out.len, data, len);
	c->out.len += len;
	return 0;
}

void *th_dist__frame_dest(int proc, const struct th_frame_hdr *h)
{
	if (proc < 1 || proc > P.n || (h->type != TH_FR_PART && h->type != TH_FR_RESULT))
		return NULL;
	struct call *c = P.p[proc].inflight.head;
	/* only the answer the worker owes next, and only if someone wants it;
	 * anything else goes through on_frame's checks */
	if (!c || c->id != h->call_id || c->owner == OWN_NONE || call_reserve(c, h->body_len))
		return NULL;
	return (char *)c->out.data + c->out.len;
}

/* ---- worker deaths ------------------------------------------------------------- */
static void describe_status(int st, char *buf, size_t len)
{
	if (st == -1)
		snprintf(buf, len, "ended (status unknown)");
	else if (WIFSIGNALED(st))
		snprintf(buf, len, "was killed by signal %d (%s)", WTERMSIG(st),
			 sigabbrev_np(WTERMSIG(st)) ? sigabbrev_np(WTERMSIG(st)) : "?");
	else
		snprintf(buf, len, "exited with status %d", WEXITSTATUS(st));
}

/* Worker k is gone (hung up, or must go: kill_it). Reaps it and fails what
 * it held: its in-flight inputs, the calls queued for it, and, when no worker
 * is left, every queued call. */
static void proc_lost(int k, bool kill_it, const char *why)
{
	struct proc *p = &P.p[k];
	if (!p->alive)
		return;
	p->alive = false;
	P.tr->reap(k, kill_it, P.grace_ms, &p->wait_status, &p->maxrss_kb, &p->utime_us, &p->stime_us);
	char who[160], how[128];
	proc_name(k, who, sizeof who);
	describe_status(p->wait_status, how, sizeof how);
	struct call *c;
	while ((c = q_pop(&p->inflight))) {
		if (why)
			call_fail(c, "%s %s while running it (it %s, so the driver stopped it)", who, how, why);
		else
			call_fail(c, "%s %s while running it", who, how);
	}
	while ((c = q_pop(&p->queue)))
		call_fail(c, "%s %s before it could run", who, how);
	for (int j = 1; j <= P.n; j++)
		if (P.p[j].alive)
			return;
	while ((c = q_pop(&P.anyq)))
		call_fail(c, "no worker process is left (%s %s)", who, how);
}

/* ---- sending ------------------------------------------------------------------- */
/* Takes up to `batch` consecutive inputs of one pmap (or one spawnat) from q
 * and sends them to worker k as one CALL frame. */
static void send_calls(int k, struct queue *q)
{
	struct call *first = q->head, *c = first;
	uint32_t count = 0;
	while (c && count < first->batch && c->pm == first->pm && c->id == first->id + count &&
	       strcmp(c->name, first->name) == 0) {
		count++;
		c = c->next;
	}
	const void **args = malloc(count * sizeof *args);
	size_t *lens = malloc(count * sizeof *lens);
	if (!args || !lens) {
		free(args);
		free(lens);
		call_fail(q_pop(q), "out of memory sending a call");
		return;
	}
	c = first;
	for (uint32_t i = 0; i < count; i++, c = c->next) {
		args[i] = c->arg;
		lens[i] = c->len;
	}
	size_t blen, flen;
	void *body = th_call_body_build(args, lens, count, &blen);
	void *frame = body ? th_frame_build(TH_FR_CALL, first->id, first->name, body, blen, &flen) : NULL;
	free(body);
	if (!frame) {
		for (uint32_t i = 0; i < count; i++)
			call_fail(q_pop(q), "cannot build a call frame (%zu-byte input): %s",
				  lens[i], strerror(errno ? errno : ENOMEM));
		free(args);
		free(lens);
		return;
	}
	free(args);
	free(lens);
	struct proc *p = &P.p[k];
	for (uint32_t i = 0; i < count; i++) {
		c = q_pop(q);
		c->proc = k;
		c->state = C_SENT;
		q_push(&p->inflight, c);
	}
	p->busy_since = p->head_since = th_dist__now_ns();
	int rc = P.tr->send(k, frame, flen);
	free(frame);
	if (rc != 0)
		proc_lost(k, true, "refused a call");
}

/* Dynamic scheduling: every free worker, in order, gets its own queued call
 * first, else the next input(s) of the shared queue. */
static void dispatch(void)
{
	for (int k = 1; k <= P.n; k++) {
		struct proc *p = &P.p[k];
		if (!p->alive || p->inflight.head)
			continue;
		if (p->queue.head)
			send_calls(k, &p->queue);
		else if (P.anyq.head)
			send_calls(k, &P.anyq);
	}
}

/* ---- receiving ----------------------------------------------------------------- */
/* The worker answered its in-flight head: the next input's time starts now. */
static void inflight_done(struct proc *p)
{
	q_pop(&p->inflight);
	p->head_since = th_dist__now_ns();
}

static void on_frame(int k, struct th_frame *f)
{
	struct proc *p = &P.p[k];
	struct call *c = p->inflight.head;
	char bad[160];
	uint16_t t = f->h.type;
	if (t != TH_FR_PART && t != TH_FR_RESULT && t != TH_FR_ERROR && t != TH_FR_SIZE) {
		snprintf(bad, sizeof bad, "sent an unexpected frame of type %u", t);
		proc_lost(k, true, bad);
		return;
	}
	if (!c || c->id != f->h.call_id) {
		snprintf(bad, sizeof bad, "answered call %llu, expected %llu",
			 (unsigned long long)f->h.call_id, c ? (unsigned long long)c->id : 0ull);
		proc_lost(k, true, bad);
		return;
	}
	if (t == TH_FR_SIZE) {
		uint64_t total;
		if (f->h.body_len != sizeof total) {
			snprintf(bad, sizeof bad, "sent a size hint of %u bytes, not %zu", f->h.body_len,
				 sizeof total);
			proc_lost(k, true, bad);
			return;
		}
		memcpy(&total, f->body, sizeof total);
		call_hint(c, total);
		return;
	}
	if (t == TH_FR_ERROR) {
		inflight_done(p);
		char who[160];
		proc_name(k, who, sizeof who);
		call_fail(c, "'%s' on %s: %.*s", c->name, who, (int)f->h.body_len,
			  f->body ? (const char *)f->body : "");
		p->calls++;
	} else if (f->in_place) {
		c->out.len += f->h.body_len; /* already in place (th_dist__frame_dest) */
		if (t == TH_FR_RESULT) {
			inflight_done(p);
			c->state = C_DONE;
			p->calls++;
			call_settle(c);
		}
	} else if (call_append(c, f->body, f->h.body_len) != 0) {
		inflight_done(p);
		/* the worker keeps sending pieces of it: they no longer match, so it
		 * is stopped, but first this call gets the real reason */
		call_fail(c, "out of memory gathering the result of '%s'", c->name);
		proc_lost(k, true, "sent a result too large for the driver's memory");
		return;
	} else if (t == TH_FR_RESULT) {
		inflight_done(p);
		c->state = C_DONE;
		p->calls++;
		call_settle(c);
	}
	if (!p->inflight.head) {
		p->busy_ns += th_dist__now_ns() - p->busy_since;
	}
}

static int pump(int timeout_ms);

/* The call timeout: a worker whose current input started more than
 * call_timeout_ms ago is taken as stopped or hung. It is killed (SIGKILL
 * ends a SIGSTOPped process too) and its inputs fail with the reason. */
static void expire_calls(void)
{
	if (P.call_timeout_ms <= 0)
		return;
	uint64_t now = th_dist__now_ns(), limit = (uint64_t)P.call_timeout_ms * 1000000u;
	for (int k = 1; k <= P.n; k++) {
		struct proc *p = &P.p[k];
		if (p->alive && p->inflight.head && now - p->head_since > limit) {
			char why[128];
			snprintf(why, sizeof why, "did not finish an input within the call timeout of %d ms: "
				 "stopped or hung", P.call_timeout_ms);
			proc_lost(k, true, why);
		}
	}
}

/* How long pump may wait: until the earliest call deadline, or forever. */
static int pump_wait_ms(void)
{
	if (P.call_timeout_ms <= 0)
		return -1;
	uint64_t now = th_dist__now_ns(), first = UINT64_MAX;
	for (int k = 1; k <= P.n; k++)
		if (P.p[k].alive && P.p[k].inflight.head)
			first = P.p[k].head_since < first ? P.p[k].head_since : first;
	if (first == UINT64_MAX)
		return -1;
	uint64_t deadline = first + (uint64_t)P.call_timeout_ms * 1000000u;
	return deadline <= now ? 0 : (int)((deadline - now) / 1000000u) + 1;
}

/* Waits for one event, no longer than the next call deadline, then expires
 * overdue calls. 0, or -1 when the transport broke. */
static int pump_calls(void)
{
	int rc = pump(pump_wait_ms());
	expire_calls();
	return rc;
}

/* Handles one event (or times out). 0, or -1 when the transport broke. */
static int pump(int timeout_ms)
{
	struct th_frame f;
	char err[512];
	int k = 0;
	int ev = P.tr->recv(&k, &f, timeout_ms, err, sizeof err);
	switch (ev) {
	case TH_EV_FRAME:
		on_frame(k, &f);
		th_frame_release(&f);
		return 0;
	case TH_EV_GONE:
		proc_lost(k, strcmp(err, "hung up") != 0, strcmp(err, "hung up") ? err : NULL);
		return 0;
	case TH_EV_TIMEOUT:
		return 0;
	default:
		th_dist__set_error("%s transport: %s", P.tr->name, err);
		return -1;
	}
}

/* ---- start / stop --------------------------------------------------------------- */
void th_procs_config_default(struct th_procs_config *cfg)
{
	memset(cfg, 0, sizeof *cfg);
	cfg->procs = 2;
	cfg->transport = TH_TRANSPORT_LOCAL;
	cfg->stop_grace_ms = 2000;
}

/* Every worker says hello first: its pid and host (MPI ranks live elsewhere),
 * and proof that it started. */
static int wait_hellos(void)
{
	uint64_t deadline = th_dist__now_ns() + 30ull * 1000000000u;
	for (;;) {
		int missing = 0;
		for (int k = 1; k <= P.n; k++)
			if (!P.p[k].hello)
				missing = k;
		if (!missing)
			return 0;
		if (th_dist__now_ns() > deadline) {
			th_dist__set_error("worker %d did not start within 30 s", missing);
			return -1;
		}
		struct th_frame f;
		char err[512];
		int k = 0, ev = P.tr->recv(&k, &f, 1000, err, sizeof err);
		if (ev == TH_EV_TIMEOUT)
			continue;
		if (ev == TH_EV_FAIL) {
			th_dist__set_error("%s transport: %s", P.tr->name, err);
			return -1;
		}
		if (ev == TH_EV_GONE || f.h.type != TH_FR_HELLO || f.h.body_len != sizeof(struct th_hello)) {
			if (ev == TH_EV_FRAME)
				th_frame_release(&f);
			P.p[k].alive = false;
			P.tr->reap(k, true, 0, &P.p[k].wait_status, &P.p[k].maxrss_kb, &P.p[k].utime_us,
				   &P.p[k].stime_us);
			char how[128];
			describe_status(P.p[k].wait_status, how, sizeof how);
			th_dist__set_error("worker %d failed to start: it %s", k, how);
			return -1;
		}
		struct th_hello h;
		memcpy(&h, f.body, sizeof h);
		th_frame_release(&f);
		h.host[sizeof h.host - 1] = 0;
		P.p[k].hello = true;
		P.p[k].pid = (pid_t)h.pid;
		memcpy(P.p[k].host, h.host, sizeof h.host);
	}
}

static void stop_at_exit(void)
{
	th_procs_stop();
}

int th_procs_start(int n)
{
	struct th_procs_config cfg;
	th_procs_config_default(&cfg);
	cfg.procs = n;
	return th_procs_start_cfg(&cfg);
}

int th_procs_start_cfg(const struct th_procs_config *cfg)
{
	if (P.running) {
		th_dist__set_error("worker processes are already running (th_procs_stop first)");
		return -1;
	}
	if (cfg->threads < 0 || cfg->threads > TH_MAX_WORKERS) {
		th_dist__set_error("bad thread count %d per worker process (1..%d, 0 = no runtime)",
				   cfg->threads, TH_MAX_WORKERS);
		return -1;
	}
	memset(P.p, 0, sizeof P.p);
	P.anyq = (struct queue){ 0 };
	P.grace_ms = cfg->stop_grace_ms > 0 ? cfg->stop_grace_ms : 2000;
	P.call_timeout_ms = cfg->call_timeout_ms > 0 ? cfg->call_timeout_ms : 0;
	P.transport = cfg->transport;
	pid_t pids[TH_DIST_MAX_PROCS + 1] = { 0 };
	int n = cfg->procs;
	if (cfg->transport == TH_TRANSPORT_MPI) {
		if (th_dist__mpi_start(cfg, &n, &P.tr) != 0)
			return -1;
	} else {
		if (n < 1 || n > TH_DIST_MAX_PROCS) {
			th_dist__set_error("bad number of worker processes %d (1..%d)", n, TH_DIST_MAX_PROCS);
			return -1;
		}
		if (th_dist__local_start(n, cfg, pids, &P.tr) != 0)
			return -1;
	}
	P.n = n;
	for (int k = 1; k <= n; k++) {
		P.p[k].alive = true;
		P.p[k].pid = pids[k];
		P.p[k].wait_status = -1;
	}
	P.running = true;
	if (wait_hellos() != 0) {
		char msg[512];
		snprintf(msg, sizeof msg, "%s", th_dist_last_error());
		th_procs_stop();
		th_dist__set_error("%s", msg);
		return -1;
	}
	if (!P.atexit_set) {
		atexit(stop_at_exit);
		P.atexit_set = true;
	}
	return 0;
}

/* Asks every live worker to stop and collects its goodbye (its own peak RSS
 * and CPU time, which under MPI only it can tell), then reaps it. */
void th_procs_stop(void)
{
	if (!P.running)
		return;
	for (int k = 1; k <= P.n; k++) {
		struct proc *p = &P.p[k];
		struct call *c;
		while ((c = q_pop(&p->queue)))
			call_fail(c, "the worker processes were stopped");
		if (!p->alive)
			continue;
		/* A worker busy only with abandoned inputs (a failed pmap's) would
		 * finish work nobody reads: a local one is stopped at once. */
		bool wanted = false;
		for (c = p->inflight.head; c; c = c->next)
			wanted |= c->owner != OWN_NONE;
		if (p->inflight.head && !wanted && P.transport == TH_TRANSPORT_LOCAL) {
			proc_lost(k, true, NULL);
			continue;
		}
		/* a busy worker reads STOP after its current inputs */
		for (c = p->inflight.head; c; c = c->next)
			c->owner = c->owner == OWN_FUTURE ? c->owner : OWN_NONE;
		size_t len;
		void *stop = th_frame_build(TH_FR_STOP, 0, NULL, NULL, 0, &len);
		if (!stop || P.tr->send(k, stop, len) != 0)
			proc_lost(k, true, NULL);
		free(stop);
	}
	struct call *c;
	while ((c = q_pop(&P.anyq)))
		call_fail(c, "the worker processes were stopped");
	uint64_t deadline = th_dist__now_ns() + (uint64_t)P.grace_ms * 1000000u;
	for (;;) {
		int waiting = 0;
		for (int k = 1; k <= P.n; k++)
			waiting += P.p[k].alive && !P.p[k].bye;
		if (!waiting || th_dist__now_ns() >= deadline)
			break;
		struct th_frame f;
		char err[512];
		int k = 0, ev = P.tr->recv(&k, &f, 100, err, sizeof err);
		if (ev == TH_EV_FAIL)
			break;
		if (ev == TH_EV_GONE) {
			proc_lost(k, false, NULL);
		} else if (ev == TH_EV_FRAME) {
			if (f.h.type == TH_FR_BYE && f.h.body_len == sizeof(struct th_bye)) {
				struct th_bye b;
				memcpy(&b, f.body, sizeof b);
				P.p[k].bye = true;
				P.p[k].maxrss_kb = (long)b.maxrss_kb;
				P.p[k].utime_us = b.utime_us;
				P.p[k].stime_us = b.stime_us;
			} else {
				on_frame(k, &f); /* a result still arriving before the goodbye */
			}
			th_frame_release(&f);
		}
	}
	for (int k = 1; k <= P.n; k++) {
		struct proc *p = &P.p[k];
		if (!p->alive)
			continue;
		long rss = 0;
		uint64_t u = 0, s = 0;
		/* a worker that said goodbye exits by itself; one that did not is
		 * still busy after the grace period and is killed */
		P.tr->reap(k, !p->bye, p->bye ? P.grace_ms : 0, &p->wait_status, &rss, &u, &s);
		if (rss > p->maxrss_kb)
			p->maxrss_kb = rss;
		if (!p->bye) {
			p->utime_us = u;
			p->stime_us = s;
		}
		p->alive = false;
		while ((c = q_pop(&p->inflight)))
			call_fail(c, "the worker processes were stopped while it ran");
	}
	P.tr->finish();
	P.running = false;
}

/* ---- queries ---------------------------------------------------------------------- */
bool th_procs_running(void)
{
	return P.running;
}

int th_nprocs(void)
{
	return P.running ? P.n : 0;
}

const char *th_procs_transport(void)
{
	return P.tr ? P.tr->name : "none";
}

pid_t th_proc_pid(int proc)
{
	if (!P.running || proc < 1 || proc > P.n)
		return -1;
	return P.p[proc].pid;
}

int th_procs_pids(pid_t *pids, int max)
{
	int n = 0;
	for (int k = 1; P.running && k <= P.n && n < max; k++)
		if (P.p[k].alive)
			pids[n++] = P.p[k].pid;
	return n;
}

int th_proc_stats(int proc, struct th_proc_stats *out)
{
	if (proc < 1 || proc > P.n)
		return -1;
	const struct proc *p = &P.p[proc];
	memset(out, 0, sizeof *out);
	out->pid = p->pid;
	memcpy(out->host, p->host, sizeof out->host);
	out->alive = p->alive;
	out->calls = p->calls;
	out->busy_ns = p->busy_ns;
	out->maxrss_kb = p->maxrss_kb;
	out->utime_us = p->utime_us;
	out->stime_us = p->stime_us;
	out->wait_status = p->wait_status;
	return 0;
}

/* ---- spawnat / futures ------------------------------------------------------------ */
static struct call *new_call(const char *name, int target, enum call_owner owner)
{
	struct call *c = calloc(1, sizeof *c);
	if (!c)
		return NULL;
	c->id = ++P.next_id;
	c->target = target;
	c->name = name;
	c->owner = owner;
	c->batch = 1;
	return c;
}

/* Looks the name up in this process's registry: every process of the pool
 * has the same one, so an unknown name is caught before anything is sent. */
static const char *registered_name(const char *what, const char *name)
{
	if (!name || !th_dist_lookup(name)) {
		th_dist__set_error("%s: unknown function '%s' (not registered with TH_EVERYWHERE)", what,
				   name ? name : "(null)");
		return NULL;
	}
	return name;
}

th_future *th_spawnat(int proc, const char *name, const void *arg, size_t len)
{
	if (!P.running) {
		th_dist__set_error("spawnat: no worker processes (th_procs_start first)");
		return NULL;
	}
	if (proc != TH_ANY && (proc < 1 || proc > P.n)) {
		th_dist__set_error("spawnat: no worker %d (workers are 1..%d, or TH_ANY)", proc, P.n);
		return NULL;
	}
	if (proc != TH_ANY && !P.p[proc].alive) {
		char who[160], how[128];
		proc_name(proc, who, sizeof who);
		describe_status(P.p[proc].wait_status, how, sizeof how);
		th_dist__set_error("spawnat: %s %s", who, how);
		return NULL;
	}
	if (!registered_name("spawnat", name))
		return NULL;
	th_future *f = calloc(1, sizeof *f);
	struct call *c = new_call(name, proc, OWN_FUTURE);
	void *copy = len ? malloc(len) : NULL;
	if (!f || !c || (len && !copy)) {
		free(f);
		free(c);
		free(copy);
		th_dist__set_error("spawnat: out of memory");
		return NULL;
	}
	if (len)
		memcpy(copy, arg, len);
	c->arg = c->arg_copy = copy;
	c->len = len;
	f->c = c;
	q_push(proc == TH_ANY ? &P.anyq : &P.p[proc].queue, c);
	dispatch();
	return f;
}

int th_future_fetch(th_future *f, struct th_bytes *out)
{
	struct call *c = f->c;
	out->data = NULL;
	out->len = 0;
	while (c->state == C_QUEUED || c->state == C_SENT) {
		if (!P.running) {
			call_fail(c, "the worker processes were stopped");
			break;
		}
		dispatch();
		if (c->state != C_QUEUED && c->state != C_SENT)
			break;
		if (pump_calls() != 0)
			return -1;
	}
	if (c->state == C_FAILED) {
		th_dist__set_error("spawnat '%s': %s", c->name, c->err ? c->err : "failed");
		return -1;
	}
	/* the result moves to the caller; a second fetch gets an empty one */
	*out = c->out;
	c->out = (struct th_bytes){ 0 };
	c->cap = 0;
	return 0;
}

int th_future_proc(const th_future *f)
{
	return f->c->proc;
}

void th_future_free(th_future *f)
{
	if (!f)
		return;
	struct call *c = f->c;
	if (c->state == C_QUEUED) {
		q_remove(c->target == TH_ANY ? &P.anyq : &P.p[c->target].queue, c);
		call_free(c);
	} else if (c->state == C_SENT) {
		c->owner = OWN_NONE; /* freed when its answer (or its worker's death) comes */
	} else {
		call_free(c);
	}
	free(f);
}

/* ---- pmap --------------------------------------------------------------------------- */
/* Drops a failed pmap's calls: queued ones now, running ones when they end. */
static void pmap_abandon(struct call **calls, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		struct call *c = calls[i];
		if (c->state == C_QUEUED) {
			q_remove(&P.anyq, c);
			call_free(c);
		} else if (c->state == C_SENT) {
			c->owner = OWN_NONE;
			c->pm = NULL;
		} else {
			call_free(c);
		}
	}
}

int th_pmap(const char *name, const struct th_bytes *in, size_t n, struct th_bytes *out,
	    const struct th_pmap_opts *opts)
{
	for (size_t i = 0; i < n; i++)
		out[i] = (struct th_bytes){ 0 };
	if (!P.running) {
		th_dist__set_error("pmap: no worker processes (th_procs_start first)");
		return -1;
	}
	if (!registered_name("pmap", name))
		return -1;
	if (n == 0)
		return 0;
	struct call **calls = calloc(n, sizeof *calls);
	struct pmap_run pm = { .n = n };
	size_t batch = opts && opts->batch > 1 ? opts->batch : 1;
	if (!calls) {
		th_dist__set_error("pmap: out of memory for %zu inputs", n);
		return -1;
	}
	for (size_t i = 0; i < n; i++) {
		calls[i] = new_call(name, TH_ANY, OWN_PMAP);
		if (!calls[i]) {
			for (size_t j = 0; j < i; j++) {
				q_remove(&P.anyq, calls[j]);
				call_free(calls[j]);
			}
			free(calls);
			th_dist__set_error("pmap: out of memory for %zu inputs", n);
			return -1;
		}
		calls[i]->arg = in[i].data;
		calls[i]->len = in[i].len;
		calls[i]->pm = &pm;
		calls[i]->index = i;
		calls[i]->batch = batch;
		q_push(&P.anyq, calls[i]);
	}
	int rc = 0;
	while (pm.done < n && !pm.failed) {
		dispatch();
		if (pm.done < n && !pm.failed && pump_calls() != 0) {
			snprintf(pm.err, sizeof pm.err, "%s", th_dist_last_error());
			pm.failed = true;
		}
	}
	if (pm.failed) {
		pmap_abandon(calls, n);
		th_dist__set_error("pmap '%s': %s", name, pm.err);
		rc = -1;
	} else {
		for (size_t i = 0; i < n; i++) {
			out[i] = calls[i]->out;
			calls[i]->out = (struct th_bytes){ 0 };
			if (opts && opts->proc_of)
				opts->proc_of[i] = calls[i]->proc;
			call_free(calls[i]);
		}
	}
	free(calls);
	return rc;
}

/* ---- measuring ------------------------------------------------------------------- */
long th_dist_self_maxrss_kb(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	long kb = -1;
	if (f) {
		while (fgets(line, sizeof line, f))
			if (sscanf(line, "VmHWM: %ld kB", &kb) == 1)
				break;
		fclose(f);
	}
	if (kb < 0) {
		struct rusage ru;
		getrusage(RUSAGE_SELF, &ru);
		kb = ru.ru_maxrss;
	}
	return kb;
}

int th_dist_reset_peak_rss(void)
{
	FILE *f = fopen("/proc/self/clear_refs", "w");
	if (!f)
		return -1;
	int rc = fputs("5", f) < 0 ? -1 : 0;
	if (fclose(f) != 0)
		rc = -1;
	return rc;
}
