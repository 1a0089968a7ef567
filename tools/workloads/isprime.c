/* isprime.c — the article's data-parallel example: map isprime (trial division) over
 * lo:hi with th_map (Folds.map), or the plain serial loop, and count the primes. */
#include <stdlib.h>
#include <string.h>

#include "numparse.h"
#include "workload.h"

/* Numbers stay exact as doubles (< 2^53); a range is one result byte per number. */
#define MAX_NUMBER 9000000000000000ULL
#define MAX_SPAN 1000000000.0

struct isprime_params {
	double lo, hi;        /* inclusive, as Julia's 1000:9999999 */
	bool serial;
	bool split_static;    /* equal segments, one per worker (Folds' default) */
	double chunk;         /* dynamic split: indices per chunk, 0 = automatic */
};

static void isprime_defaults(void *p)
{
	struct isprime_params *d = p;
	memset(d, 0, sizeof(*d));
	d->lo = 1000;
	d->hi = 9999999;
}

static int value_of(int argc, char **argv, int *i, double min, double *out, char *err, size_t errlen)
{
	const char *opt = argv[*i];
	if (*i + 1 >= argc) {
		snprintf(err, errlen, "%s needs a value", opt);
		return -1;
	}
	uint64_t v;
	if (num_flag_u64(opt, argv[++*i], (uint64_t)min, MAX_NUMBER, &v, err, errlen))
		return -1;
	*out = (double)v;
	return 1;
}

static int isprime_parse(void *p, int argc, char **argv, int *i, char *err, size_t errlen)
{
	struct isprime_params *d = p;
	const char *opt = argv[*i];
	if (strcmp(opt, "--serial") == 0) {
		d->serial = true;
		return 1;
	}
	if (strcmp(opt, "--lo") == 0)
		return value_of(argc, argv, i, 0, &d->lo, err, errlen);
	if (strcmp(opt, "--hi") == 0)
		return value_of(argc, argv, i, 0, &d->hi, err, errlen);
	if (strcmp(opt, "--chunk") == 0)
		return value_of(argc, argv, i, 1, &d->chunk, err, errlen);
	if (strcmp(opt, "--split") == 0) {
		const char *v = *i + 1 < argc ? argv[++*i] : "";
		if (strcmp(v, "static") == 0 || strcmp(v, "dynamic") == 0) {
			d->split_static = strcmp(v, "static") == 0;
			return 1;
		}
		snprintf(err, errlen, "--split must be 'static' or 'dynamic', not '%s'", v);
		return -1;
	}
	return 0;
}

/* The article's isprime(x::Int), on Int64 as there; isqrt via sqrt, corrected to be exact. */
static bool isprime(int64_t x)
{
	if (x < 2)
		return false;
	int64_t u = (int64_t)__builtin_sqrt((double)x);
	while (u * u > x)
		u--;
	while ((u + 1) * (u + 1) <= x)
		u++;
	for (int64_t n = 2; n <= u; n++)
		if (x % n == 0)
			return false;
	return true;
}

static double isprime_fn(int64_t i, void *arg)
{
	(void)arg;
	return isprime(i) ? 1.0 : 0.0;
}

/* The map, as a task body: with --preempt it runs in a preemptible task. */
struct map_call {
	const struct isprime_params *p;
	int64_t lo, hi;
	double *out;
};

static void *map_task(void *arg)
{
	struct map_call *c = arg;
	if (c->p->split_static)
		th_map_static(c->lo, c->hi, isprime_fn, NULL, c->out);
	else
		th_map(c->lo, c->hi, (int64_t)c->p->chunk, isprime_fn, NULL, c->out);
	return NULL;
}

static bool isprime_needs_runtime(const void *params)
{
	return !((const struct isprime_params *)params)->serial;
}

static int isprime_check(const void *params, char *err, size_t errlen)
{
	const struct isprime_params *p = params;
	if (p->hi < p->lo) {
		snprintf(err, errlen, "--hi (%.0f) is below --lo (%.0f)", p->hi, p->lo);
		return -1;
	}
	if (p->hi - p->lo + 1 > MAX_SPAN) {
		snprintf(err, errlen, "--lo %.0f --hi %.0f spans %.0f numbers; at most %.0f (one result byte each)",
			 p->lo, p->hi, p->hi - p->lo + 1, MAX_SPAN);
		return -1;
	}
	return 0;
}

/* pi(9999999) - pi(999) = 664579 - 168: the article's default range, to check the result. */
#define DEFAULT_PRIMES 664411

static int isprime_run(const void *params, const struct wl_env *env, struct wl_result *res,
		       char *err, size_t errlen)
{
	const struct isprime_params *p = params;
	int64_t lo = (int64_t)p->lo, hi = (int64_t)p->hi + 1, n = hi - lo;
	/* map() returns an array as in the article, so every mode pays for the
	 * output, and every mode gets it from the same allocator. */
	double *out = th_result_alloc((size_t)n * sizeof(*out));
	if (!out) {
		snprintf(err, errlen, "out of memory for %lld results", (long long)n);
		return -1;
	}
	res->t0_ns = th_now_ns();
	const char *mode;
	if (p->serial) {
		mode = "serial";
		for (int64_t i = lo; i < hi; i++)
			out[i - lo] = isprime_fn(i, NULL);
	} else {
		mode = p->split_static ? "static" : "dynamic";
		struct map_call call = { p, lo, hi, out };
		if (env->preempt) /* th_map's tasks are preemptible when their spawner is */
			th_wait(th_spawn_opts(map_task, &call, &(struct th_spawn_opts){ .preemptible = true }));
		else
			map_task(&call);
	}
	double secs = (double)(th_now_ns() - res->t0_ns) / 1e9;
	int64_t count = 0;
	for (int64_t i = 0; i < n; i++)
		count += out[i] != 0;
	free(out);
	bool dflt = p->lo == 1000 && p->hi == 9999999;
	res->extra = json_obj();
	json_set_str(res->extra, "split", mode);
	json_set_num(res->extra, "lo", p->lo);
	json_set_num(res->extra, "hi", p->hi);
	json_set_num(res->extra, "primes", (double)count);
	json_set_num(res->extra, "map_s", secs);
	snprintf(res->summary, sizeof(res->summary), "primes in [%.0f, %.0f]: %lld%s (%s map, %.3f s)\n",
		 p->lo, p->hi, (long long)count,
		 dflt ? (count == DEFAULT_PRIMES ? ", as expected" : ", WRONG: expected 664411") : "",
		 mode, secs);
	if (dflt && count != DEFAULT_PRIMES) {
		snprintf(err, errlen, "counted %lld primes in [1000, 9999999], expected %d",
			 (long long)count, DEFAULT_PRIMES);
		return -1;
	}
	return 0;
}

const struct th_workload th_workload_isprime = {
	.name = "isprime",
	.description = "the article's Folds.map example: trial-division isprime over 1000:9999999 "
		       "with th_map (or --serial)",
	.options_help = "  --lo N               first number (default 1000)\n"
			"  --hi N               last number, inclusive (default 9999999)\n"
			"  --serial             the plain loop, no runtime (the baseline)\n"
			"  --split static|dynamic  static = equal segments per worker as Folds does;\n"
			"                       dynamic = chunks from a shared counter (default)\n"
			"  --chunk N            dynamic split: numbers per chunk (default automatic)\n",
	.example = "taskhop run isprime --workers 2 --hi 2000000 --no-bpf",
	.params_size = sizeof(struct isprime_params),
	.defaults = isprime_defaults,
	.parse = isprime_parse,
	.check = isprime_check,
	.needs_runtime = isprime_needs_runtime,
	.run = isprime_run,
	.baseline_option = "--serial",
	.preemptible = true,
};
