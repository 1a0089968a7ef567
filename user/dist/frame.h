/* frame.h — the wire format between the driver and its worker processes:
 * length-prefixed frames, validated on receipt so garbage or a cut-off stream is an error. */
#ifndef TASKHOP_DIST_FRAME_H
#define TASKHOP_DIST_FRAME_H

#include <stddef.h>
#include <stdint.h>

/* Every frame: this 24-byte header, then name_len bytes of function name
 * (CALL only), then body_len bytes. Host byte order: driver and workers run
 * the same binary (MPI across machines assumes one architecture). */
struct th_frame_hdr {
	uint32_t magic;    /* TH_FRAME_MAGIC */
	uint16_t version;  /* TH_FRAME_VERSION */
	uint16_t type;     /* enum th_frame_type */
	uint64_t call_id;  /* CALL: id of its first input; PART/RESULT/ERROR: the input */
	uint32_t name_len; /* 1..TH_DIST_NAME_MAX for CALL, else 0 */
	uint32_t body_len; /* <= TH_FRAME_MAX_BODY */
};
_Static_assert(sizeof(struct th_frame_hdr) == 24, "frame header is 24 bytes on the wire");

#define TH_FRAME_MAGIC 0x46444854u /* "THDF" */
#define TH_FRAME_VERSION 1
#define TH_FRAME_MAX_BODY (1u << 30)
/* Workers send results in PART frames of this size as the function writes. */
#define TH_FRAME_PART_BYTES (64u * 1024)
/* The largest size hint the driver allocates for at once; a larger one is
 * ignored (the result then grows as it arrives). */
#define TH_FRAME_MAX_HINT (1ull << 30)

enum th_frame_type {
	TH_FR_HELLO = 1,  /* w->d: struct th_hello */
	TH_FR_CALL = 2,   /* d->w: u32 count, then count x (u64 len, bytes); ids call_id.. */
	TH_FR_PART = 3,   /* w->d: a piece of call_id's result */
	TH_FR_RESULT = 4, /* w->d: the last piece; call_id is done */
	TH_FR_ERROR = 5,  /* w->d: call_id failed, body = message */
	TH_FR_STOP = 6,   /* d->w: finish and leave */
	TH_FR_BYE = 7,    /* w->d: struct th_bye, the worker's last frame */
	TH_FR_SIZE = 8,   /* w->d: u64, call_id's result will be about this many bytes */
	TH_FR_MAX_TYPE = 8,
};

struct th_hello {
	uint32_t pid;
	uint32_t proto;
	char host[64];
};
struct th_bye {
	uint64_t calls;
	uint64_t maxrss_kb;
	uint64_t utime_us, stime_us;
};

/* A received frame; body is malloc'd (NULL when body_len is 0, or when the
 * body was read in place: straight into memory the receiver chose). */
struct th_frame {
	struct th_frame_hdr h;
	char name[64];
	void *body;
	int in_place;
};
void th_frame_release(struct th_frame *f);

/* Checks a header: 0, or -1 with the reason in err. */
int th_frame_check_hdr(const struct th_frame_hdr *h, char *err, size_t errlen);

/* Builds a frame in one malloc'd buffer (MPI sends it as one message; the
 * socket transport writes it in one go). NULL on allocation failure. */
void *th_frame_build(uint16_t type, uint64_t call_id, const char *name, const void *body,
		     size_t body_len, size_t *out_len);

/* Parses one whole frame from buf[0..len): 0, or -1 with the reason in err
 * (truncated, trailing bytes, bad magic/version/type/lengths). */
int th_frame_parse(const void *buf, size_t len, struct th_frame *f, char *err, size_t errlen);

/* Reads one frame from a stream fd. 1 = a frame, 0 = clean end of stream
 * before any byte of a frame, -1 = error with the reason in err (a stream
 * cut inside a frame, garbage, I/O error). */
int th_frame_read_fd(int fd, struct th_frame *f, char *err, size_t errlen);
/* The same, but once the header is checked dest(ctx, header) may return where
 * the body should go (room for body_len bytes): it is read there, without a
 * copy, and f->in_place is set. NULL from dest: a malloc'd body as usual. */
typedef void *(*th_frame_dest_fn)(void *ctx, const struct th_frame_hdr *h);
int th_frame_read_fd_to(int fd, struct th_frame *f, th_frame_dest_fn dest, void *ctx, char *err,
			size_t errlen);
/* Writes all of buf (MSG_NOSIGNAL on sockets, so a dead peer is EPIPE, not
 * a signal). 0 or -1 with errno. */
int th_frame_write_fd(int fd, const void *buf, size_t len);

/* The CALL body: count inputs, each a u64 length then its bytes. */
void *th_call_body_build(const void *const *args, const size_t *lens, uint32_t count, size_t *out_len);
/* Splits a CALL body; args/lens point into body. -1 if malformed. */
int th_call_body_split(const void *body, size_t len, uint32_t *count, const void ***args,
		       size_t **lens, char *err, size_t errlen);

#endif
