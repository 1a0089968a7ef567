/* error.c — the recorder's error channel: what a failing th_record_* call left with
 * rec_set_error (record_int.h) in the runtime's per-thread buffers (errbuf.h). */
#include "record_int.h"

const char *th_record_error(void)
{
	const char *e = th_errbuf_get(TH_ERRBUF_RECORD);
	return e[0] ? e : "no error";
}
