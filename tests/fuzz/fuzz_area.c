/* fuzz_area.c — another process's run-log area, as hostile as it gets: the reader
 * (user/runtime/area_reader.c) must refuse any head it cannot trust and drain any
 * rings and heads without reading or writing outside the area, keeping only runs
 * that name one of its workers and threads. The input is the area's image; its last
 * 8 bytes, how far each worker's head moves past the drainer's tail. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "runlog.h"
#include "taskhop.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
	if (len < 8)
		return 0;
	size_t size = (len + 4095) / 4096 * 4096;
	uint8_t *mem = aligned_alloc(4096, size);
	if (!mem)
		return 0;
	memset(mem, 0, size);
	memcpy(mem, data, len);
	uint64_t advance;
	memcpy(&advance, data + len - 8, sizeof(advance));
	struct th_area *a;
	if (th__area_adopt(mem, len, 1, false, &a) == 0) {
		if (th_area_claim(a) == 0) {
			struct th_area_head *h = (struct th_area_head *)mem;
			struct th_area_log *logs = (struct th_area_log *)(mem + h->logs_off);
			for (int round = 0; round < 2; round++) {
				for (int w = 0; w < th_area_nworkers(a); w++)
					logs[w].head += advance;
				th_area_drain(a);
			}
			size_t n;
			const struct th_run_record *r = th_area_runs(a, &n);
			for (size_t i = 0; i < n; i++)
				if (r[i].worker >= (uint32_t)th_area_nworkers(a) ||
				    r[i].thread >= (uint32_t)th_area_nthreads(a) || r[i].end_ns < r[i].start_ns)
					abort();
			(void)th_area_lost(a);
			(void)th_area_tid(a, (int)(advance % 2048) - 1);
		}
		th_area_close(a);
	}
	free(mem);
	return 0;
}
