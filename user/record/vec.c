/* vec.c — the recorder's growable array (vec.h): doubles its room as it fills. */
#include <stdlib.h>
#include <string.h>

#include "vec.h"

void *vec_push(struct vec *v)
{
	if (v->n == v->cap) {
		size_t cap = v->cap ? v->cap * 2 : 256;
		void *p = realloc(v->p, cap * v->size);
		if (!p)
			return NULL;
		v->p = p;
		v->cap = cap;
	}
	void *e = (char *)v->p + v->n++ * v->size;
	memset(e, 0, v->size);
	return e;
}

void vec_free(struct vec *v)
{
	free(v->p);
	v->p = NULL;
	v->n = v->cap = 0;
}
