/* parallel.c — data parallelism over index ranges: @threads for (static split,
 * one sticky block per worker) and Folds-style map/reduce (dynamic chunks). */
#define _GNU_SOURCE
#include <stdlib.h>

#include "core.h"
#include "preempt.h"

/* Julia's @threads: with len, rem = divrem(n, W), the first rem blocks get
 * len + 1 indices and the rest len, contiguous and in order. */
void th_static_block(int64_t lo, int64_t hi, int n, int i, int64_t *blo, int64_t *bhi)
{
	int64_t total = hi > lo ? hi - lo : 0;
	int64_t len = total / n, rem = total % n;
	int64_t start = lo + (int64_t)i * len + (i < rem ? i : rem);
	*blo = start;
	*bhi = start + len + (i < rem ? 1 : 0);
}

struct for_block {
	th_range_fn body;
	void *arg;
	int64_t lo, hi;
};

static void *run_block(void *p)
{
	struct for_block *b = p;
	b->body(b->lo, b->hi, b->arg);
	return NULL;
}

/* Tasks spawned on the caller's behalf are preemptible when the caller is:
 * they run the function it gave (a preemptible task's th_map). */
static th_task *spawn_helper(int worker, bool sticky, th_fn fn, void *arg)
{
	th_task *self = th_self_task();
	struct th_spawn_opts o = { .where = sticky ? TH_STICK_TO : TH_START_AT, .worker = worker,
				   .preemptible = self && self->preemptible };
	return th_spawn_opts(fn, arg, &o);
}

/* Spawns one task per block and waits. `sticky` pins block i to worker i
 * (@threads); otherwise block i only starts there. */
static void run_blocks(struct for_block *blocks, int n, bool sticky)
{
	th_task *tasks[TH_MAX_WORKERS];
	for (int i = 0; i < n; i++)
		tasks[i] = spawn_helper(i, sticky, run_block, &blocks[i]);
	for (int i = 0; i < n; i++) {
		if (!tasks[i]) { /* spawn refused: run the block here rather than lose it */
			run_block(&blocks[i]);
			continue;
		}
		th_wait(tasks[i]);
		th_task_free(tasks[i]);
	}
}

void th_for(int64_t lo, int64_t hi, th_range_fn body, void *arg)
{
	int n = th_nworkers() > 0 ? th_nworkers() : 1;
	struct for_block blocks[TH_MAX_WORKERS];
	for (int i = 0; i < n; i++) {
		blocks[i] = (struct for_block){ .body = body, .arg = arg };
		th_static_block(lo, hi, n, i, &blocks[i].lo, &blocks[i].hi);
	}
	if (th_nworkers() > 0)
		run_blocks(blocks, n, true);
	else
		run_block(&blocks[0]);
}

/* ---- map / reduce --------------------------------------------------------- */

struct chunked {
	int64_t lo, hi, chunk;    /* guided: chunk is the smallest piece */
	bool guided;
	int workers;
	_Atomic int64_t next;     /* first index not yet handed out */
	th_index_fn f;
	void *arg;
	double *out;              /* map: results */
	th_reduce_op op;          /* reduce: op and identity */
	double init;
	double *partials;         /* reduce: one per chunk, folded in order */
};

/* The next piece [*s, *e) to compute, false when all are handed out. Fixed
 * chunks keep reduce's fold order; guided pieces (OpenMP's guided schedule)
 * are a share of what is left, so they shrink towards the end: few
 * touches of the shared counter, and the last piece a worker is still busy
 * with when the other runs dry is small. */
static bool next_piece(struct chunked *c, int64_t *s, int64_t *e)
{
	if (!c->guided) {
		*s = atomic_fetch_add_explicit(&c->next, c->chunk, memory_order_relaxed);
		*e = *s + c->chunk < c->hi ? *s + c->chunk : c->hi;
		return *s < c->hi;
	}
	int64_t cur = atomic_load_explicit(&c->next, memory_order_relaxed);
	for (;;) {
		if (cur >= c->hi)
			return false;
		int64_t size = (c->hi - cur) / (4 * (int64_t)c->workers);
		size = size > c->chunk ? size : c->chunk;
		int64_t end = size < c->hi - cur ? cur + size : c->hi;
		if (atomic_compare_exchange_weak_explicit(&c->next, &cur, end, memory_order_relaxed,
							  memory_order_relaxed)) {
			*s = cur;
			*e = end;
			return true;
		}
	}
}

static void *chunk_worker(void *p)
{
	struct chunked *c = p;
	int64_t s, e;
	while (next_piece(c, &s, &e)) {
		if (c->out) {
			/* locals: f is opaque, so c's fields would be reloaded after
			 * every call from the line that holds the shared counter */
			th_index_fn f = c->f;
			void *arg = c->arg;
			double *out = c->out;
			int64_t lo = c->lo;
			for (int64_t i = s; i < e; i++)
				out[i - lo] = f(i, arg);
		} else {
			double acc = c->init;
			for (int64_t i = s; i < e; i++)
				acc = c->op(acc, c->f(i, c->arg));
			c->partials[(s - c->lo) / c->chunk] = acc;
		}
	}
	return NULL;
}

/* 16 chunks per worker: small enough that a worker finishing early finds
 * work left (isprime's cost grows with i), large enough that the shared
 * counter is touched rarely. */
static int64_t auto_chunk(int64_t n, int workers)
{
	int64_t c = n / ((int64_t)workers * 16);
	return c > 0 ? c : 1;
}

/* The smallest guided piece: 1/2048 of a worker's share. The last piece
 * decides how long one worker idles at the end (isprime over 1e7 indices:
 * 6 ms with 1/256, about 0.8 ms now); the guided shares above it keep the
 * number of touches of the shared counter near 4W ln(2048/4) + 4W, some 60
 * for two workers, whatever n is. */
static int64_t min_piece(int64_t n, int workers)
{
	int64_t c = n / ((int64_t)workers * 2048);
	return c > 0 ? c : 1;
}

static void run_chunked(struct chunked *c)
{
	int w = th_nworkers();
	if (w <= 0) { /* no runtime: run serially in this thread */
		chunk_worker(c);
		return;
	}
	th_task *tasks[TH_MAX_WORKERS];
	for (int i = 0; i < w; i++)
		tasks[i] = spawn_helper(i, false, chunk_worker, c);
	for (int i = 0; i < w; i++) {
		if (!tasks[i])
			continue;
		th_wait(tasks[i]);
		th_task_free(tasks[i]);
	}
	chunk_worker(c); /* picks up anything a refused spawn left behind */
}

void th_map(int64_t lo, int64_t hi, int64_t chunk, th_index_fn f, void *arg, double *out)
{
	if (hi <= lo)
		return;
	int w = th_nworkers() > 0 ? th_nworkers() : 1;
	/* Results go to out[i] whatever the order: without a chunk size, guided pieces. */
	struct chunked c = { .lo = lo, .hi = hi, .chunk = chunk > 0 ? chunk : min_piece(hi - lo, w),
			     .guided = chunk <= 0, .workers = w, .f = f, .arg = arg, .out = out };
	atomic_init(&c.next, lo);
	run_chunked(&c);
}

double th_reduce(int64_t lo, int64_t hi, int64_t chunk, th_index_fn f, void *arg,
		 th_reduce_op op, double init)
{
	if (hi <= lo)
		return init;
	int w = th_nworkers() > 0 ? th_nworkers() : 1;
	struct chunked c = { .lo = lo, .hi = hi, .chunk = chunk > 0 ? chunk : auto_chunk(hi - lo, w),
			     .f = f, .arg = arg, .op = op, .init = init };
	int64_t nchunks = (hi - lo + c.chunk - 1) / c.chunk;
	bool preempt = th__nopreempt_begin(); /* malloc from a preemptible task */
	c.partials = malloc((size_t)nchunks * sizeof(double));
	th__nopreempt_end(preempt);
	if (!c.partials) { /* no memory for partials: fold serially, same result */
		double acc = init;
		for (int64_t i = lo; i < hi; i++)
			acc = op(acc, f(i, arg));
		return acc;
	}
	atomic_init(&c.next, lo);
	run_chunked(&c);
	/* Folding the chunk results in index order makes the result independent
	 * of which worker ran which chunk: the same bits on every run. */
	double acc = init;
	for (int64_t k = 0; k < nchunks; k++)
		acc = op(acc, c.partials[k]);
	preempt = th__nopreempt_begin();
	free(c.partials);
	th__nopreempt_end(preempt);
	return acc;
}

struct static_map {
	th_index_fn f;
	void *arg;
	double *out;
	int64_t base;
};

static void static_map_body(int64_t lo, int64_t hi, void *p)
{
	struct static_map *m = p;
	for (int64_t i = lo; i < hi; i++)
		m->out[i - m->base] = m->f(i, m->arg);
}

void th_map_static(int64_t lo, int64_t hi, th_index_fn f, void *arg, double *out)
{
	struct static_map m = { .f = f, .arg = arg, .out = out, .base = lo };
	int n = th_nworkers() > 0 ? th_nworkers() : 1;
	struct for_block blocks[TH_MAX_WORKERS];
	for (int i = 0; i < n; i++) {
		blocks[i] = (struct for_block){ .body = static_map_body, .arg = &m };
		th_static_block(lo, hi, n, i, &blocks[i].lo, &blocks[i].hi);
	}
	if (th_nworkers() > 0)
		run_blocks(blocks, n, false);
	else
		run_block(&blocks[0]);
}
