/* test_runpack.c — the packed run logs (user/runtime/runpack.c): any runs come back
 * exactly as packed, in order, however they are unpacked, and a yield loop's runs
 * take a few bytes each. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "runpack.h"

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint64_t next_u64(void)
{
	uint64_t x = rng_state;
	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return rng_state = x;
}

/* Runs of every shape: mostly what a worker logs (a run starts where the one
 * before ended, the same worker and thread, a nearby task), mixed with values
 * only a hostile area or a torn record could give. */
static void make_runs(struct th_run_record *r, size_t n)
{
	struct th_run_record last = { 0 };
	for (size_t i = 0; i < n; i++) {
		uint64_t x = next_u64();
		r[i] = last;
		r[i].start_ns = x & 1 ? last.end_ns : next_u64() >> (x >> 1 & 63);
		r[i].end_ns = x & 2 ? r[i].start_ns + (x >> 8 & 0xff) : next_u64();
		r[i].task_id = x & 4 ? last.task_id : x & 8 ? last.task_id + 1 : next_u64();
		r[i].why = x & 16 ? (uint32_t)(x >> 20 & 7) : (uint32_t)next_u64();
		r[i].worker = x & 32 ? last.worker : (uint32_t)(next_u64() >> (x >> 24 & 31));
		r[i].thread = x & 64 ? last.thread : (uint32_t)next_u64();
		r[i].reserved = x & 128 ? 0 : (uint32_t)next_u64();
		last = r[i];
	}
}

static void assert_runs_equal(const struct th_run_record *a, const struct th_run_record *b, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (memcmp(&a[i], &b[i], sizeof(a[i])) != 0)
			fail_msg("run %zu differs: task %llu/%llu start %llu/%llu end %llu/%llu", i,
				 (unsigned long long)a[i].task_id, (unsigned long long)b[i].task_id,
				 (unsigned long long)a[i].start_ns, (unsigned long long)b[i].start_ns,
				 (unsigned long long)a[i].end_ns, (unsigned long long)b[i].end_ns);
}

static void any_runs_come_back_exactly(void **state)
{
	(void)state;
	enum { N = 200000 };
	struct th_run_record *in = calloc(N, sizeof(*in)), *out = calloc(N + 1, sizeof(*out));
	assert_non_null(in);
	assert_non_null(out);
	make_runs(in, N);
	struct th_runpack p = { 0 };
	/* packed in pieces of any size, as drains do */
	for (size_t at = 0; at < N;) {
		size_t k = 1 + next_u64() % 300;
		k = k > N - at ? N - at : k;
		assert_int_equal(th__runpack_put(&p, in + at, k), 0);
		at += k;
	}
	assert_int_equal(p.n, N);
	/* unpacked in other pieces, as th_run_log calls do */
	struct th_runpack_cursor c = { 0 };
	size_t got = 0;
	for (size_t k; (k = th__runpack_get(&p, &c, out + got, 1 + next_u64() % 500)) > 0;)
		got += k;
	assert_int_equal(got, N);
	assert_runs_equal(in, out, N);
	assert_int_equal(th__runpack_get(&p, &c, out, 1), 0); /* nothing past the end */
	th__runpack_free(&p);
	free(in);
	free(out);
}

/* A worker yielding between two tasks: each run starts where the one before
 * ended and lasts tens of ns. This is the recording that outran the drain. */
static void a_yield_loop_packs_in_three_bytes_a_run(void **state)
{
	(void)state;
	enum { N = 100000 };
	struct th_run_record *in = calloc(N, sizeof(*in)), *out = calloc(N, sizeof(*out));
	assert_non_null(in);
	assert_non_null(out);
	uint64_t t = 1000000000ull;
	for (size_t i = 0; i < N; i++) {
		uint64_t d = 25 + next_u64() % 40;
		in[i] = (struct th_run_record){ .task_id = 7 + i % 2, .start_ns = t, .end_ns = t + d,
						.worker = 1, .why = 1, .thread = 1 };
		t += d;
	}
	struct th_runpack p = { 0 };
	assert_int_equal(th__runpack_put(&p, in, N), 0);
	print_message("a yield loop: %.2f bytes a run\n", (double)p.bytes / N);
	assert_true(p.bytes <= 3 * N + 64);
	struct th_runpack_cursor c = { 0 };
	assert_int_equal(th__runpack_get(&p, &c, out, N), N);
	assert_runs_equal(in, out, N);
	th__runpack_free(&p);
	free(in);
	free(out);
}

static void a_cleared_pack_starts_afresh(void **state)
{
	(void)state;
	struct th_run_record in[64], out[64];
	make_runs(in, 64);
	struct th_runpack p = { 0 };
	assert_int_equal(th__runpack_put(&p, in, 64), 0);
	th__runpack_clear(&p);
	assert_int_equal(p.n, 0);
	assert_int_equal(th__runpack_put(&p, in + 10, 20), 0);
	struct th_runpack_cursor c = { 0 };
	assert_int_equal(th__runpack_get(&p, &c, out, 64), 20);
	assert_runs_equal(in + 10, out, 20);
	th__runpack_free(&p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(any_runs_come_back_exactly),
		cmocka_unit_test(a_yield_loop_packs_in_three_bytes_a_run),
		cmocka_unit_test(a_cleared_pack_starts_afresh),
	};
	return cmocka_run_group_tests_name("runpack", tests, NULL, NULL);
}
