/* vec.h — the recorder's growable array: what the collectors append to and the join
 * sorts, one element type per array (set once by VEC). vec.c. */
#ifndef TASKHOP_REC_VEC_H
#define TASKHOP_REC_VEC_H

#include <stddef.h>

struct vec {
	void *p;
	size_t n, cap, size; /* elements, room, bytes per element */
	size_t mapped;       /* bytes of p's own mapping (a big array), 0: malloc's */
};
#define VEC(T) { NULL, 0, 0, sizeof(T), 0 }
#define VAT(v, T, i) (&((T *)(v).p)[i])

/* A pointer to a zeroed new last element, or NULL (no memory; v is unchanged). */
void *vec_push(struct vec *v);
/* Room for `more` elements past the last without moving again: 0, or -1 (no
 * memory; v is unchanged). */
int vec_reserve(struct vec *v, size_t more);
/* Frees the elements; v stays usable (empty, same element size). */
void vec_free(struct vec *v);

#endif
