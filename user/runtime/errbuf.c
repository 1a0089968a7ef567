/* errbuf.c — the thread-local "last error" buffers of the runtime, the recorder and
 * the worker-process pool (errbuf.h says why there is one per channel). */
#include <stdio.h>

#include "errbuf.h"

static __thread char errbuf[TH_ERRBUF_CHANNELS][TH_ERRBUF_LEN];

/* An unknown channel writes and reads nothing rather than out of bounds. */
static char *channel(enum th_errbuf_channel ch)
{
	return (unsigned)ch < TH_ERRBUF_CHANNELS ? errbuf[ch] : NULL;
}

void th_errbuf_vset(enum th_errbuf_channel ch, const char *fmt, va_list ap)
{
	char *b = channel(ch);
	if (b)
		vsnprintf(b, TH_ERRBUF_LEN, fmt, ap);
}

void th_errbuf_set(enum th_errbuf_channel ch, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	th_errbuf_vset(ch, fmt, ap);
	va_end(ap);
}

const char *th_errbuf_get(enum th_errbuf_channel ch)
{
	const char *b = channel(ch);
	return b ? b : "";
}

void th_errbuf_clear(enum th_errbuf_channel ch)
{
	char *b = channel(ch);
	if (b)
		b[0] = 0;
}
