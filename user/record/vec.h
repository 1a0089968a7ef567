/* vec.h — the recorder's growable array: what the collectors append to and the join
 * sorts, one element type per array (set once by VEC). vec.c. */
#ifndef TASKHOP_REC_VEC_H
#define TASKHOP_REC_VEC_H

#include <stddef.h>

struct vec {
	void *p;
	size_t n, cap, size; /* elements, room, bytes per element */
};
#define VEC(T) { NULL, 0, 0, sizeof(T) }
#define VAT(v, T, i) (&((T *)(v).p)[i])

/* A pointer to a zeroed new last element, or NULL (no memory; v is unchanged). */
void *vec_push(struct vec *v);
/* Frees the elements; v stays usable (empty, same element size). */
void vec_free(struct vec *v);

#endif
