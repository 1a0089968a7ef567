/* vec.c — the recorder's growable array (vec.h): doubles its room as it fills.
 *
 * Why big arrays get their own mapping: a recording of fib(30) joins 2.7
 * million runs of 1.6 million tasks at stop, about a gigabyte of arrays, and
 * malloc's fresh memory costs a page fault per 4 KiB. On the VM measured a
 * fault costs 5 to 80 us, and faults were a fifth of the recorder's time at
 * stop. From 2 MiB on, an array is a mapping with transparent huge pages (a
 * fault per 2 MiB), grown by mremap (page tables move, nothing is copied). */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "vec.h"

#define HUGE_PAGE ((size_t)2 << 20)

/* Moves v's elements into a mapping of `bytes` (a multiple of HUGE_PAGE). */
static void *grow_mapped(struct vec *v, size_t bytes)
{
	void *p;
	if (v->mapped) {
		p = mremap(v->p, v->mapped, bytes, MREMAP_MAYMOVE);
	} else {
		p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p != MAP_FAILED) {
			(void)madvise(p, bytes, MADV_HUGEPAGE); /* a hint: else 4 KiB pages */
			if (v->n)
				memcpy(p, v->p, v->n * v->size);
			free(v->p);
		}
	}
	if (p == MAP_FAILED)
		return NULL;
	v->mapped = bytes;
	return p;
}

/* Room for at least `cap` elements: 0, or -1 with v unchanged. */
static int grow(struct vec *v, size_t cap)
{
	if (cap > SIZE_MAX / 2 / v->size)
		return -1;
	size_t bytes = cap * v->size;
	void *p;
	if (bytes < HUGE_PAGE && !v->mapped) {
		p = realloc(v->p, bytes);
	} else {
		bytes = (bytes + HUGE_PAGE - 1) / HUGE_PAGE * HUGE_PAGE;
		p = grow_mapped(v, bytes);
	}
	if (!p)
		return -1;
	v->p = p;
	v->cap = bytes / v->size;
	return 0;
}

void *vec_push(struct vec *v)
{
	if (v->n == v->cap && grow(v, v->cap ? v->cap * 2 : 256) != 0)
		return NULL;
	void *e = (char *)v->p + v->n++ * v->size;
	memset(e, 0, v->size);
	return e;
}

int vec_reserve(struct vec *v, size_t more)
{
	if (more > SIZE_MAX - v->n)
		return -1;
	return v->n + more <= v->cap ? 0 : grow(v, v->n + more);
}

void vec_free(struct vec *v)
{
	if (v->mapped)
		munmap(v->p, v->mapped);
	else
		free(v->p);
	v->p = NULL;
	v->n = v->cap = v->mapped = 0;
}
