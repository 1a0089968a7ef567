/* runpack.c — packs dated runs as a flag byte and varints of their differences from
 * the run before (why: runpack.h).
 *
 * A run, in this order:
 *   flags   bits 0-2 why (7: a varint why follows), 3 starts where the run before
 *           ended, 4 same worker, 5 same thread, 6 a varint of extras follows,
 *           7 same task
 *   [why]   varint, when bits 0-2 are 7
 *   [extras] varint, when bit 6: bit 0 the run ends before it starts, bit 1 a
 *           varint `reserved` follows (neither happens in a dated log: kept exact
 *           for any input all the same)
 *   [start] zigzag varint of start - the run before's end, unless bit 3
 *   [task]  zigzag varint of task_id - the run before's, unless bit 7
 *   length  varint of end - start (start - end with extras bit 0): a run of
 *           under 128 ns is one byte
 *   [worker], [thread], [reserved]  varints, unless bits 4, 5 / when extras bit 1 */
#include <string.h>

#include "runpack.h"

enum {
	WHY_ESCAPE = 7,
	SAME_START = 1 << 3,
	SAME_WORKER = 1 << 4,
	SAME_THREAD = 1 << 5,
	HAS_EXTRAS = 1 << 6,
	SAME_TASK = 1 << 7,
	ENDS_BEFORE_START = 1, /* extras */
	HAS_RESERVED = 2,
};

static inline uint8_t *put_varint(uint8_t *o, uint64_t v)
{
	while (v >= 0x80) {
		*o++ = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	*o++ = (uint8_t)v;
	return o;
}

static inline uint64_t zigzag(uint64_t d)
{
	return (d << 1) ^ (uint64_t)-(int64_t)(d >> 63);
}

static inline uint64_t unzigzag(uint64_t z)
{
	return (z >> 1) ^ (uint64_t)-(int64_t)(z & 1);
}

static uint8_t *put_run(uint8_t *o, const struct th_run_record *r, const struct th_run_record *last)
{
	uint8_t *flags = o++;
	unsigned f = r->why < WHY_ESCAPE ? r->why : WHY_ESCAPE;
	if (f == WHY_ESCAPE)
		o = put_varint(o, r->why);
	unsigned extras = (r->end_ns < r->start_ns ? ENDS_BEFORE_START : 0) | (r->reserved ? HAS_RESERVED : 0);
	if (extras) {
		f |= HAS_EXTRAS;
		o = put_varint(o, extras);
	}
	if (r->start_ns == last->end_ns)
		f |= SAME_START;
	else
		o = put_varint(o, zigzag(r->start_ns - last->end_ns));
	if (r->task_id == last->task_id)
		f |= SAME_TASK;
	else
		o = put_varint(o, zigzag(r->task_id - last->task_id));
	o = put_varint(o, extras & ENDS_BEFORE_START ? r->start_ns - r->end_ns : r->end_ns - r->start_ns);
	if (r->worker == last->worker)
		f |= SAME_WORKER;
	else
		o = put_varint(o, r->worker);
	if (r->thread == last->thread)
		f |= SAME_THREAD;
	else
		o = put_varint(o, r->thread);
	if (extras & HAS_RESERVED)
		o = put_varint(o, r->reserved);
	*flags = (uint8_t)f;
	return o;
}

int th__runpack_put(struct th_runpack *p, const struct th_run_record *runs, size_t n)
{
	if (n == 0)
		return 0;
	if (n > (SIZE_MAX - p->bytes) / TH_RUNPACK_MAX_BYTES ||
	    th__bigbuf_reserve(&p->buf, p->bytes + n * TH_RUNPACK_MAX_BYTES) != 0)
		return -1;
	uint8_t *o = (uint8_t *)p->buf.p + p->bytes;
	const struct th_run_record *last = &p->last; /* told against, not copied: a run's 40 bytes */
	for (size_t i = 0; i < n; i++) {
		o = put_run(o, &runs[i], last);
		last = &runs[i];
	}
	p->last = runs[n - 1];
	p->bytes = (size_t)(o - (uint8_t *)p->buf.p);
	p->n += n;
	return 0;
}

/* Reads a varint from [*at, end): 0, or -1 when it runs past end or past 64 bits. */
static int get_varint(const uint8_t *b, size_t end, size_t *at, uint64_t *v)
{
	uint64_t x = 0;
	for (unsigned shift = 0; shift < 64 && *at < end; shift += 7) {
		uint8_t c = b[(*at)++];
		x |= (uint64_t)(c & 0x7f) << shift;
		if (!(c & 0x80)) {
			*v = x;
			return 0;
		}
	}
	return -1;
}

static int get_u32(const uint8_t *b, size_t end, size_t *at, uint32_t *v)
{
	uint64_t x;
	if (get_varint(b, end, at, &x) != 0 || x > UINT32_MAX)
		return -1;
	*v = (uint32_t)x;
	return 0;
}

/* One run after c->last from b at c->at: 0, or -1 (bytes this file did not write). */
static int get_run(const uint8_t *b, size_t end, struct th_runpack_cursor *c, struct th_run_record *r)
{
	size_t at = c->at;
	if (at >= end)
		return -1;
	unsigned f = b[at++];
	uint64_t d = 0, extras = 0;
	*r = c->last;
	r->why = f & 7;
	r->reserved = 0;
	if ((f & 7) == WHY_ESCAPE && get_u32(b, end, &at, &r->why) != 0)
		return -1;
	if ((f & HAS_EXTRAS) && get_varint(b, end, &at, &extras) != 0)
		return -1;
	if (!(f & SAME_START) && get_varint(b, end, &at, &d) != 0)
		return -1;
	r->start_ns = c->last.end_ns + unzigzag(d);
	d = 0;
	if (!(f & SAME_TASK) && get_varint(b, end, &at, &d) != 0)
		return -1;
	r->task_id = c->last.task_id + unzigzag(d);
	if (get_varint(b, end, &at, &d) != 0)
		return -1;
	r->end_ns = extras & ENDS_BEFORE_START ? r->start_ns - d : r->start_ns + d;
	if ((!(f & SAME_WORKER) && get_u32(b, end, &at, &r->worker) != 0) ||
	    (!(f & SAME_THREAD) && get_u32(b, end, &at, &r->thread) != 0) ||
	    ((extras & HAS_RESERVED) && get_u32(b, end, &at, &r->reserved) != 0))
		return -1;
	c->at = at;
	c->last = *r;
	return 0;
}

size_t th__runpack_get(const struct th_runpack *p, struct th_runpack_cursor *c, struct th_run_record *out,
		       size_t max)
{
	size_t got = 0;
	if (c->n >= p->n)
		return 0; /* also an empty pack, which may have no memory at all */
	while (got < max && c->n < p->n && get_run(p->buf.p, p->bytes, c, &out[got]) == 0) {
		c->n++;
		got++;
	}
	return got;
}

void th__runpack_clear(struct th_runpack *p)
{
	p->bytes = p->n = 0;
	memset(&p->last, 0, sizeof(p->last));
}

void th__runpack_free(struct th_runpack *p)
{
	th__bigbuf_free(&p->buf);
	th__runpack_clear(p);
}
