/* worker.c — what a worker process does, whatever the transport: say hello, run each
 * CALL's inputs through the registry, stream results back, say goodbye with its figures. */
#include "dist_int.h"
#include "taskhop.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

static uint64_t calls_done;

static int send_frame(const struct th_worker_link *link, uint16_t type, uint64_t id,
		      const void *body, size_t len)
{
	size_t n;
	void *buf = th_frame_build(type, id, NULL, body, len, &n);
	if (!buf)
		return -1;
	/* the link takes the buffer: MPI sends it without waiting, then frees it */
	return link->send(buf, n);
}

/* A full piece of output goes out as a PART frame while the function keeps
 * computing; the last piece is the RESULT. */
static int flush_out(th_dist_out *o, bool last)
{
	if (!o->buf && !(o->buf = malloc(o->room))) /* an empty result */
		return -1;
	struct th_frame_hdr h = {
		.magic = TH_FRAME_MAGIC, .version = TH_FRAME_VERSION,
		.type = last ? TH_FR_RESULT : TH_FR_PART, .call_id = o->call_id,
		.body_len = (uint32_t)o->len,
	};
	memcpy(o->buf, &h, sizeof h);
	int rc = o->link->send(o->buf, sizeof h + o->len); /* the link takes buf */
	o->buf = NULL;
	o->cap = o->len = 0;
	return rc;
}

/* The driver allocates the whole result at once (TH_FR_SIZE). */
static int hint_out(th_dist_out *o, uint64_t total)
{
	return send_frame(o->link, TH_FR_SIZE, o->call_id, &total, sizeof total);
}

static int send_error(const struct th_worker_link *link, uint64_t id, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int send_error(const struct th_worker_link *link, uint64_t id, const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	return send_frame(link, TH_FR_ERROR, id, msg, n < (int)sizeof msg ? (size_t)n : sizeof msg - 1);
}

static int run_one(const struct th_worker_link *link, const char *name, th_dist_fn fn,
		   uint64_t id, const void *arg, size_t len)
{
	if (!fn)
		return send_error(link, id, "unknown function '%s' on worker pid %d (not registered with TH_EVERYWHERE there)",
				  name, (int)getpid());
	th_dist_out o = { .room = sizeof(struct th_frame_hdr), .call_id = id, .flush = flush_out,
			  .hint = hint_out, .link = link };
	int rc = fn(arg, len, &o);
	int sent;
	if (o.write_failed) {
		free(o.buf);
		return -1; /* the driver is gone */
	}
	if (rc != 0)
		sent = send_error(link, id, "%s", o.err[0] ? o.err : "the function returned an error");
	else
		sent = flush_out(&o, true);
	free(o.buf);
	calls_done++;
	return sent;
}

static int serve_call(const struct th_worker_link *link, const struct th_frame *f)
{
	uint32_t count;
	const void **args;
	size_t *lens;
	char err[256];
	if (th_call_body_split(f->body, f->h.body_len, &count, &args, &lens, err, sizeof err))
		return send_error(link, f->h.call_id, "worker pid %d: %s", (int)getpid(), err);
	th_dist_fn fn = th_dist_lookup(f->name);
	int rc = 0;
	for (uint32_t i = 0; i < count && rc == 0; i++)
		rc = run_one(link, f->name, fn, f->h.call_id + i, args[i], lens[i]);
	free(args);
	free(lens);
	return rc;
}

static int say_bye(const struct th_worker_link *link)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	struct th_bye bye = {
		.calls = calls_done,
		.maxrss_kb = (uint64_t)ru.ru_maxrss,
		.utime_us = (uint64_t)ru.ru_utime.tv_sec * 1000000u + (uint64_t)ru.ru_utime.tv_usec,
		.stime_us = (uint64_t)ru.ru_stime.tv_sec * 1000000u + (uint64_t)ru.ru_stime.tv_usec,
	};
	int rc = send_frame(link, TH_FR_BYE, 0, &bye, sizeof bye);
	if (link->flush && link->flush())
		rc = -1;
	return rc;
}

/* The article's `julia -p2 -t2`: a worker may run its own task runtime, which
 * a registered function then uses through th_map & co. It starts here, after
 * the fork, so the child creates its threads itself. */
static int start_runtime(const struct th_procs_config *cfg)
{
	if (cfg->threads <= 0)
		return 0;
	struct th_config rc;
	th_config_default(&rc);
	rc.workers = cfg->threads;
	rc.policy = cfg->policy;
	if (th_runtime_start(&rc) != 0) {
		fprintf(stderr, "taskhop worker %d: cannot start the runtime: %s\n", (int)getpid(),
			th_last_error());
		return -1;
	}
	return 0;
}

int th_dist__worker_main(const struct th_worker_link *link, const struct th_procs_config *cfg)
{
	struct th_hello hello = { .pid = (uint32_t)getpid(), .proto = TH_FRAME_VERSION };
	gethostname(hello.host, sizeof hello.host - 1);
	if (send_frame(link, TH_FR_HELLO, 0, &hello, sizeof hello) != 0)
		return 4;
	int status = 0;
	bool runtime = false;
	for (;;) {
		struct th_frame f;
		char err[256];
		int r = link->recv(&f, err, sizeof err);
		if (r == 0)
			break; /* the driver hung up: nothing more to do */
		if (r < 0) {
			fprintf(stderr, "taskhop worker %d: bad frame from the driver: %s\n", (int)getpid(), err);
			status = 5;
			break;
		}
		if (f.h.type == TH_FR_STOP) {
			th_frame_release(&f);
			if (say_bye(link) != 0)
				status = 4;
			break;
		}
		if (f.h.type != TH_FR_CALL) {
			fprintf(stderr, "taskhop worker %d: unexpected frame type %u from the driver\n",
				(int)getpid(), f.h.type);
			th_frame_release(&f);
			status = 5;
			break;
		}
		/* The runtime starts at the first call, not at fork: by then the
		 * driver knows this worker's pid and a recorder following it sees
		 * the runtime's workers start. */
		if (!runtime && cfg->threads > 0) {
			if (start_runtime(cfg) != 0) {
				th_frame_release(&f);
				status = 3;
				break;
			}
			runtime = true;
		}
		int rc = serve_call(link, &f);
		th_frame_release(&f);
		if (rc != 0) {
			status = 4; /* could not answer: the driver is gone */
			break;
		}
	}
	if (link->flush)
		link->flush();
	if (runtime)
		th_runtime_stop();
	return status;
}
