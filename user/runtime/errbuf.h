/* errbuf.h — the libraries' "last error" line, one implementation: a thread-local
 * buffer per channel, set by a failing call and read back by th_last_error (runtime),
 * th_record_error (recorder) and th_dist_last_error (worker processes); errbuf.c. */
#ifndef TASKHOP_ERRBUF_H
#define TASKHOP_ERRBUF_H

#include <stdarg.h>

/* One channel per library, so that a runtime call cannot overwrite the recorder's
 * message a caller is about to print. */
enum th_errbuf_channel {
	TH_ERRBUF_RUNTIME,
	TH_ERRBUF_RECORD,
	TH_ERRBUF_DIST,
	TH_ERRBUF_CHANNELS
};

#define TH_ERRBUF_LEN 512 /* longer messages are cut */

/* Not a public header, but libthrecord.so and libthdist.so call these in
 * libtaskhop.so: exported (hence th_, not th__: only th_ names may be exported). */
#pragma GCC visibility push(default)
void th_errbuf_set(enum th_errbuf_channel ch, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void th_errbuf_vset(enum th_errbuf_channel ch, const char *fmt, va_list ap)
	__attribute__((format(printf, 2, 0)));
/* This thread's last message on ch; "" when there is none. */
const char *th_errbuf_get(enum th_errbuf_channel ch);
void th_errbuf_clear(enum th_errbuf_channel ch);
#pragma GCC visibility pop

#endif
