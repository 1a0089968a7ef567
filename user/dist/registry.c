/* registry.c — the @everywhere analogue: functions registered by name in every process,
 * the output stream they write to, and running one of them in this process. */
#include "dist_int.h"
#include "taskhop.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* A fixed table: registration runs in constructors, before main, where a
 * failing malloc would have nobody to tell. */
#define TH_DIST_MAX_FNS 256
static struct {
	char name[TH_DIST_NAME_MAX + 1];
	th_dist_fn fn;
} reg[TH_DIST_MAX_FNS];
static int nreg;

const char *th_dist_last_error(void)
{
	return th_errbuf_get(TH_ERRBUF_DIST);
}

uint64_t th_dist__now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static bool valid_name(const char *name)
{
	size_t n = strlen(name);
	if (n == 0 || n > TH_DIST_NAME_MAX)
		return false;
	for (size_t i = 0; i < n; i++)
		if (name[i] < 0x21 || name[i] > 0x7e)
			return false;
	return true;
}

int th_everywhere(const char *name, th_dist_fn fn)
{
	if (!name || !fn || !valid_name(name)) {
		th_dist__set_error("everywhere: bad function name '%s' (1..%d printable characters)",
				   name ? name : "(null)", TH_DIST_NAME_MAX);
		return -1;
	}
	for (int i = 0; i < nreg; i++)
		if (strcmp(reg[i].name, name) == 0) {
			if (reg[i].fn == fn)
				return 0; /* same function twice: harmless */
			th_dist__set_error("everywhere: '%s' is already registered to another function", name);
			return -1;
		}
	if (nreg == TH_DIST_MAX_FNS) {
		th_dist__set_error("everywhere: registry full (%d functions)", TH_DIST_MAX_FNS);
		return -1;
	}
	strcpy(reg[nreg].name, name);
	reg[nreg].fn = fn;
	nreg++;
	return 0;
}

void th_dist_register_failed(const char *name)
{
	fprintf(stderr, "taskhop: cannot register '%s': %s\n", name, th_dist_last_error());
	abort();
}

th_dist_fn th_dist_lookup(const char *name)
{
	for (int i = 0; name && i < nreg; i++)
		if (strcmp(reg[i].name, name) == 0)
			return reg[i].fn;
	return NULL;
}

void th_bytes_free(struct th_bytes *b)
{
	if (!b)
		return;
	free(b->data);
	b->data = NULL;
	b->len = 0;
}

/* ---- the output stream ---------------------------------------------------- */
static int out_reserve(th_dist_out *o, size_t extra)
{
	if (o->room + o->len + extra <= o->cap)
		return 0;
	/* a streaming output needs one piece; a kept one grows by doubling */
	size_t cap = o->flush ? o->room + TH_FRAME_PART_BYTES : o->cap ? o->cap : 4096;
	while (cap < o->room + o->len + extra)
		cap *= 2;
	char *b = realloc(o->buf, cap);
	if (!b)
		return -1;
	o->buf = b;
	o->cap = cap;
	return 0;
}

int th_dist_write(th_dist_out *o, const void *data, size_t len)
{
	const char *p = data;
	if (o->write_failed)
		return -1;
	while (len) {
		/* a streaming output never holds more than one piece */
		size_t take = len;
		if (o->flush && take > TH_FRAME_PART_BYTES - o->len)
			take = TH_FRAME_PART_BYTES - o->len;
		if (out_reserve(o, take)) {
			o->write_failed = 1;
			snprintf(o->err, sizeof o->err, "out of memory for a %zu-byte result", o->len + take);
			return -1;
		}
		memcpy(o->buf + o->room + o->len, p, take);
		o->len += take;
		p += take;
		len -= take;
		if (o->flush && o->len == TH_FRAME_PART_BYTES && o->flush(o, false)) {
			o->write_failed = 1;
			snprintf(o->err, sizeof o->err, "lost the driver while sending a result");
			return -1;
		}
	}
	return 0;
}

int th_dist_size_hint(th_dist_out *o, size_t total)
{
	if (o->write_failed)
		return -1;
	if (o->hint) {
		if (o->hint(o, total) == 0)
			return 0;
		o->write_failed = 1;
		snprintf(o->err, sizeof o->err, "lost the driver while sending a size hint");
		return -1;
	}
	/* kept whole: room for all of it now, so it is never copied to grow; the
	 * pmap driver (pool.c) allocates the same way, so neither gathers
	 * results more cheaply than the other */
	if (total > o->len && total <= TH_FRAME_MAX_HINT && o->room + total > o->cap) {
		char *b = o->buf ? realloc(o->buf, o->room + total) : th_result_alloc(o->room + total);
		if (b) {
			o->buf = b;
			o->cap = o->room + total;
		}
	}
	return 0;
}

int th_dist_fail(th_dist_out *o, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(o->err, sizeof o->err, fmt, ap);
	va_end(ap);
	return -1;
}

int th_dist_call_local(const char *name, const void *arg, size_t len, struct th_bytes *out)
{
	th_dist_fn fn = th_dist_lookup(name);
	out->data = NULL;
	out->len = 0;
	if (!fn) {
		th_dist__set_error("unknown function '%s' (not registered with TH_EVERYWHERE)", name);
		return -1;
	}
	th_dist_out o = {0};
	int rc = fn(arg, len, &o);
	if (rc != 0 || o.write_failed) {
		th_dist__set_error("%s: %s", name, o.err[0] ? o.err : "failed");
		free(o.buf);
		return -1;
	}
	out->data = o.buf;
	out->len = o.len;
	return 0;
}
