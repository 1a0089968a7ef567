/* frame.c — building, checking and reading the driver<->worker frames.
 * Every length is checked before it is trusted: a worker's garbage must not crash the driver. */
#include "frame.h"
#include "dist.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

void th_frame_release(struct th_frame *f)
{
	free(f->body);
	f->body = NULL;
}

static int fail(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return -1;
}

int th_frame_check_hdr(const struct th_frame_hdr *h, char *err, size_t errlen)
{
	if (h->magic != TH_FRAME_MAGIC)
		return fail(err, errlen, "bad frame magic 0x%08x (not a taskhop frame)", h->magic);
	if (h->version != TH_FRAME_VERSION)
		return fail(err, errlen, "frame version %u, expected %u", h->version, TH_FRAME_VERSION);
	if (h->type < TH_FR_HELLO || h->type > TH_FR_MAX_TYPE)
		return fail(err, errlen, "unknown frame type %u", h->type);
	if (h->type == TH_FR_CALL ? (h->name_len == 0 || h->name_len > TH_DIST_NAME_MAX)
				  : h->name_len != 0)
		return fail(err, errlen, "bad function name length %u in a type %u frame",
			    h->name_len, h->type);
	if (h->body_len > TH_FRAME_MAX_BODY)
		return fail(err, errlen, "frame body of %u bytes exceeds the %u-byte limit",
			    h->body_len, TH_FRAME_MAX_BODY);
	return 0;
}

/* A name must be printable: it is echoed into error messages. */
static int check_name(const char *name, size_t n, char *err, size_t errlen)
{
	for (size_t i = 0; i < n; i++)
		if (name[i] < 0x21 || name[i] > 0x7e)
			return fail(err, errlen, "function name has a non-printable byte");
	return 0;
}

void *th_frame_build(uint16_t type, uint64_t call_id, const char *name, const void *body,
		     size_t body_len, size_t *out_len)
{
	size_t nl = name ? strlen(name) : 0;
	if (body_len > TH_FRAME_MAX_BODY || nl > TH_DIST_NAME_MAX) {
		errno = EMSGSIZE;
		return NULL;
	}
	struct th_frame_hdr h = {
		.magic = TH_FRAME_MAGIC, .version = TH_FRAME_VERSION, .type = type,
		.call_id = call_id, .name_len = (uint32_t)nl, .body_len = (uint32_t)body_len,
	};
	char *buf = malloc(sizeof h + nl + body_len);
	if (!buf)
		return NULL;
	memcpy(buf, &h, sizeof h);
	if (nl)
		memcpy(buf + sizeof h, name, nl);
	if (body_len)
		memcpy(buf + sizeof h + nl, body, body_len);
	*out_len = sizeof h + nl + body_len;
	return buf;
}

int th_frame_parse(const void *buf, size_t len, struct th_frame *f, char *err, size_t errlen)
{
	const char *p = buf;
	memset(f, 0, sizeof *f);
	if (len < sizeof f->h)
		return fail(err, errlen, "truncated frame: %zu of %zu header bytes", len, sizeof f->h);
	memcpy(&f->h, p, sizeof f->h);
	if (th_frame_check_hdr(&f->h, err, errlen))
		return -1;
	size_t want = sizeof f->h + f->h.name_len + (size_t)f->h.body_len;
	if (len < want)
		return fail(err, errlen, "truncated frame: %zu of %zu bytes", len, want);
	if (len > want)
		return fail(err, errlen, "frame of %zu bytes has %zu trailing bytes", want, len - want);
	memcpy(f->name, p + sizeof f->h, f->h.name_len);
	f->name[f->h.name_len] = 0;
	if (check_name(f->name, f->h.name_len, err, errlen))
		return -1;
	if (f->h.body_len) {
		f->body = malloc(f->h.body_len);
		if (!f->body)
			return fail(err, errlen, "out of memory for a %u-byte frame", f->h.body_len);
		memcpy(f->body, p + sizeof f->h + f->h.name_len, f->h.body_len);
	}
	return 0;
}

/* Reads exactly n bytes: n, fewer at end of stream, or -1 on error. */
static ssize_t read_full(int fd, void *buf, size_t n)
{
	size_t got = 0;
	while (got < n) {
		ssize_t r = read(fd, (char *)buf + got, n - got);
		if (r == 0)
			break;
		if (r < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		got += (size_t)r;
	}
	return (ssize_t)got;
}

/* The header's body length is only a claim until the bytes arrive: the body grows with
 * them (doubling from 64 KiB), so a 24-byte header claiming 1 GiB from a broken or hostile
 * peer costs 64 KiB, not a 1 GiB allocation (found by tests/fuzz/fuzz_frame.c). */
static int read_body(int fd, struct th_frame *f, char *err, size_t errlen)
{
	size_t want = f->h.body_len, got = 0, cap = want < 65536 ? want : 65536;
	char *b = malloc(cap);
	while (b && got < want) {
		if (got == cap) {
			cap = cap * 2 < want ? cap * 2 : want;
			char *nb = realloc(b, cap);
			if (!nb)
				break;
			b = nb;
		}
		ssize_t r = read_full(fd, b + got, cap - got);
		if (r < 0 || (size_t)r < cap - got) {
			free(b);
			return fail(err, errlen, "truncated frame: stream ended after %zu of %zu body bytes",
				    got + (r > 0 ? (size_t)r : 0), want);
		}
		got += (size_t)r;
	}
	if (got < want) {
		free(b);
		return fail(err, errlen, "out of memory for a %zu-byte frame", want);
	}
	f->body = b;
	return 1;
}

int th_frame_read_fd(int fd, struct th_frame *f, char *err, size_t errlen)
{
	return th_frame_read_fd_to(fd, f, NULL, NULL, err, errlen);
}

int th_frame_read_fd_to(int fd, struct th_frame *f, th_frame_dest_fn dest, void *ctx, char *err,
			size_t errlen)
{
	memset(f, 0, sizeof *f);
	ssize_t r = read_full(fd, &f->h, sizeof f->h);
	if (r < 0)
		return fail(err, errlen, "read: %s", strerror(errno));
	if (r == 0)
		return 0;
	if ((size_t)r < sizeof f->h)
		return fail(err, errlen, "truncated frame: stream ended after %zd of %zu header bytes",
			    r, sizeof f->h);
	if (th_frame_check_hdr(&f->h, err, errlen))
		return -1;
	r = read_full(fd, f->name, f->h.name_len);
	if (r < 0 || (size_t)r < f->h.name_len)
		return fail(err, errlen, "truncated frame: stream ended inside the function name");
	f->name[f->h.name_len] = 0;
	if (check_name(f->name, f->h.name_len, err, errlen))
		return -1;
	if (f->h.body_len == 0)
		return 1;
	void *there = dest ? dest(ctx, &f->h) : NULL;
	if (there) {
		r = read_full(fd, there, f->h.body_len);
		if (r < 0 || (size_t)r < f->h.body_len)
			return fail(err, errlen, "truncated frame: stream ended after %zd of %u body bytes",
				    r < 0 ? 0 : r, f->h.body_len);
		f->in_place = 1;
		return 1;
	}
	return read_body(fd, f, err, errlen);
}

int th_frame_write_fd(int fd, const void *buf, size_t len)
{
	const char *p = buf;
	while (len) {
		ssize_t w = send(fd, p, len, MSG_NOSIGNAL);
		if (w < 0 && errno == ENOTSOCK)
			w = write(fd, p, len);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		p += w;
		len -= (size_t)w;
	}
	return 0;
}

void *th_call_body_build(const void *const *args, const size_t *lens, uint32_t count, size_t *out_len)
{
	size_t total = sizeof(uint32_t);
	for (uint32_t i = 0; i < count; i++)
		total += sizeof(uint64_t) + lens[i];
	char *b = malloc(total), *p = b;
	if (!b)
		return NULL;
	memcpy(p, &count, sizeof count);
	p += sizeof count;
	for (uint32_t i = 0; i < count; i++) {
		uint64_t l = lens[i];
		memcpy(p, &l, sizeof l);
		p += sizeof l;
		if (l)
			memcpy(p, args[i], l);
		p += l;
	}
	*out_len = total;
	return b;
}

int th_call_body_split(const void *body, size_t len, uint32_t *count, const void ***args,
		       size_t **lens, char *err, size_t errlen)
{
	uint32_t n;
	/* a CALL without a body has body == NULL: no pointer arithmetic on it before this */
	if (len < sizeof n)
		return fail(err, errlen, "call body of %zu bytes has no input count", len);
	const char *p = body, *end = p + len;
	memcpy(&n, p, sizeof n);
	p += sizeof n;
	/* each input needs at least its 8-byte length: bounds n before allocating */
	if (n == 0 || n > (len - sizeof n) / sizeof(uint64_t))
		return fail(err, errlen, "call body claims %u inputs in %zu bytes", n, len);
	*args = calloc(n, sizeof **args);
	*lens = calloc(n, sizeof **lens);
	if (!*args || !*lens)
		goto bad;
	for (uint32_t i = 0; i < n; i++) {
		uint64_t l;
		if ((size_t)(end - p) < sizeof l)
			goto bad;
		memcpy(&l, p, sizeof l);
		p += sizeof l;
		if (l > (uint64_t)(end - p))
			goto bad;
		(*args)[i] = p;
		(*lens)[i] = l;
		p += l;
	}
	if (p != end)
		goto bad;
	*count = n;
	return 0;
bad:
	free(*args);
	free(*lens);
	*args = NULL;
	*lens = NULL;
	return fail(err, errlen, "malformed call body (%u inputs, %zu bytes)", n, len);
}
