/* rng.c — xoshiro256++ streams: one per task, seeded from (run seed, task id),
 * so a task draws the same numbers whatever worker or policy runs it. */
#define _GNU_SOURCE
#include "core.h"

static uint64_t splitmix64(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

void th_rng_seed(struct th_rng *r, uint64_t seed, uint64_t stream)
{
	uint64_t x = seed;
	uint64_t mix = splitmix64(&x) ^ (stream * 0xd1342543de82ef95ULL);
	for (int i = 0; i < 4; i++)
		r->s[i] = splitmix64(&mix);
}

/* The external definitions of the header's inline draws (C99 inline). */
extern inline uint64_t th_rng_next(struct th_rng *r);
extern inline double th_rng_double(struct th_rng *r);

static __thread struct th_rng tls_rng;
static __thread uint64_t tls_rng_seed_plus1; /* 0: not seeded yet */

struct th_rng *th_self_rng(void)
{
	struct th_task *t = th_self_task();
	if (t)
		return &t->rng;
	uint64_t seed = th__rt ? th__rt->cfg.seed : 1;
	if (tls_rng_seed_plus1 != seed + 1) {
		th_rng_seed(&tls_rng, seed, 0);
		tls_rng_seed_plus1 = seed + 1;
	}
	return &tls_rng;
}

uint64_t th_rand_u64(void)
{
	return th_rng_next(th_self_rng());
}

double th_rand_double(void)
{
	return th_rng_double(th_self_rng());
}
