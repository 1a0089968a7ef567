/* bigbuf.h — a growable buffer for millions of records (the run logs a recording
 * keeps): its own mapping with transparent huge pages, grown by mremap; bigbuf.c. */
#ifndef TASKHOP_BIGBUF_H
#define TASKHOP_BIGBUF_H

#include <stddef.h>

#include "tscclock.h" /* */

struct th_bigbuf {
	void *p;       /* NULL until the first reserve */
	size_t bytes;  /* mapped */
};

/* Makes room for `bytes` in all (the contents kept). 0, or -1: no memory. */
int th__bigbuf_reserve(struct th_bigbuf *b, size_t bytes);
void th__bigbuf_free(struct th_bigbuf *b);

#endif
