/* fuzz_frame.c — libFuzzer target: bytes as a worker or the driver receives them, parsed as
 * one frame (th_frame_parse, then the CALL body split) and read as a stream of frames. */
#define _GNU_SOURCE /* memfd_create */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "frame.h"

/* A frame that parses is rebuilt byte for byte: the parser keeps everything it accepted. */
static void check_rebuild(const uint8_t *data, size_t size, const struct th_frame *f)
{
	size_t len = 0;
	void *again = th_frame_build(f->h.type, f->h.call_id, f->h.name_len ? f->name : NULL, f->body,
				     f->h.body_len, &len);
	if (!again || len != size || memcmp(again, data, size) != 0)
		abort();
	free(again);
}

static void split_call(const struct th_frame *f)
{
	uint32_t count;
	const void **args = NULL;
	size_t *lens = NULL;
	char err[256];
	if (f->h.type == TH_FR_CALL &&
	    th_call_body_split(f->body, f->h.body_len, &count, &args, &lens, err, sizeof(err)) == 0) {
		size_t total = 0;
		for (uint32_t i = 0; i < count; i++)
			total += lens[i];
		if (total > f->h.body_len)
			abort();
	}
	free(args);
	free(lens);
}

/* The stream reader on the same bytes, through a memory file. */
static void read_stream(const uint8_t *data, size_t size)
{
	int fd = memfd_create("frames", 0);
	if (fd < 0)
		return;
	if (write(fd, data, size) == (ssize_t)size && lseek(fd, 0, SEEK_SET) == 0) {
		struct th_frame f;
		char err[256];
		while (th_frame_read_fd(fd, &f, err, sizeof(err)) == 1) {
			split_call(&f);
			th_frame_release(&f);
		}
	}
	close(fd);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct th_frame f;
	char err[256];
	if (th_frame_parse(data, size, &f, err, sizeof(err)) == 0) {
		check_rebuild(data, size, &f);
		split_call(&f);
		th_frame_release(&f);
	}
	read_stream(data, size);
	return 0;
}
