/* test_dist.c — worker processes: registry, frames, pmap/spawnat over forked workers,
 * worker deaths and bad frames, and the same pmap under `mpirun -n 3` (MPI transport). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "dist.h"
#include "dist_int.h" /* th_dist_out's call id, for a worker that forges frames */
#include "frame.h"
#include "taskhop.h"

/* ---- functions every process of the pool knows ------------------------------ */

/* A deterministic, input-dependent result whose length varies with the input. */
static int square_list(const void *arg, size_t len, th_dist_out *out)
{
	uint64_t n;
	if (len != sizeof n)
		return th_dist_fail(out, "square_list wants 8 bytes, got %zu", len);
	memcpy(&n, arg, sizeof n);
	for (uint64_t i = 0; i < n % 37 + 1; i++) {
		uint64_t v = n * n + i;
		th_dist_write(out, &v, sizeof v);
	}
	return 0;
}
TH_EVERYWHERE(square_list)

static int my_pid(const void *arg, size_t len, th_dist_out *out)
{
	(void)arg;
	(void)len;
	int32_t pid = (int32_t)getpid();
	return th_dist_write(out, &pid, sizeof pid);
}
TH_EVERYWHERE(my_pid)

/* 1 MiB of a pattern: crosses many 64 KiB PART frames. */
static int big_result(const void *arg, size_t len, th_dist_out *out)
{
	(void)arg;
	(void)len;
	for (uint32_t i = 0; i < (1u << 20) / 4; i++) {
		uint32_t v = i * 2654435761u;
		if (th_dist_write(out, &v, sizeof v))
			return -1;
	}
	return 0;
}
TH_EVERYWHERE(big_result)

/* A result of `bytes` bytes with a size hint that is wrong in the way the
 * input asks for: too small, too large, beyond any allocation, or given
 * halfway through the writing. */
enum hint_kind { HINT_SMALL, HINT_LARGE, HINT_ABSURD, HINT_MIDWAY, HINT_EXACT, HINT_KINDS };
static const uint32_t hint_bytes[HINT_KINDS] = { 300u << 10, 100u << 10, 200u << 10, 3u << 20, 5u << 19 };

static int wrong_hint(const void *arg, size_t len, th_dist_out *out)
{
	uint32_t kind;
	if (len != sizeof kind)
		return th_dist_fail(out, "wrong_hint wants a u32");
	memcpy(&kind, arg, sizeof kind);
	uint32_t n = hint_bytes[kind] / 4;
	size_t hint = kind == HINT_SMALL ? 100 : kind == HINT_LARGE ? 3u << 20 : kind == HINT_ABSURD ? SIZE_MAX / 2
		      : (size_t)n * 4;
	if (kind != HINT_MIDWAY && th_dist_size_hint(out, hint))
		return -1;
	for (uint32_t i = 0; i < n; i++) {
		uint32_t v = (i + kind) * 2654435761u;
		if (i == n / 2 && kind == HINT_MIDWAY && th_dist_size_hint(out, hint))
			return -1;
		if (th_dist_write(out, &v, sizeof v))
			return -1;
	}
	return 0;
}
TH_EVERYWHERE(wrong_hint)

static int sleep_ms(const void *arg, size_t len, th_dist_out *out)
{
	uint32_t ms = 0;
	memcpy(&ms, arg, len < sizeof ms ? len : sizeof ms);
	nanosleep(&(struct timespec){ ms / 1000, (long)(ms % 1000) * 1000000 }, NULL);
	return th_dist_write(out, &ms, sizeof ms);
}
TH_EVERYWHERE(sleep_ms)

static int fails_on_odd(const void *arg, size_t len, th_dist_out *out)
{
	uint64_t n;
	memcpy(&n, arg, len < sizeof n ? len : sizeof n);
	if (n % 2)
		return th_dist_fail(out, "odd input %llu", (unsigned long long)n);
	return th_dist_write(out, &n, sizeof n);
}
TH_EVERYWHERE(fails_on_odd)

/* Misbehaving workers: write straight into the driver socket, the only
 * socket a local worker holds. */
static int driver_socket(void)
{
	for (int fd = 3; fd < 256; fd++) {
		struct stat st;
		if (fstat(fd, &st) == 0 && S_ISSOCK(st.st_mode))
			return fd;
	}
	return -1;
}

static int write_garbage(const void *arg, size_t len, th_dist_out *out)
{
	(void)arg;
	(void)len;
	(void)out;
	const char junk[] = "this is not a taskhop frame, it is garbage!";
	if (write(driver_socket(), junk, sizeof junk) < 0)
		return -1;
	sleep(30); /* the driver must not wait for more */
	return 0;
}
TH_EVERYWHERE(write_garbage)

static int write_truncated(const void *arg, size_t len, th_dist_out *out)
{
	(void)arg;
	(void)len;
	(void)out;
	struct th_frame_hdr h = { TH_FRAME_MAGIC, TH_FRAME_VERSION, TH_FR_RESULT, 0, 0, 1000 };
	if (write(driver_socket(), &h, sizeof h) < 0 || write(driver_socket(), "abc", 3) < 0)
		return -1;
	_exit(0); /* the frame promised 1000 body bytes and the stream ends after 3 */
}
TH_EVERYWHERE(write_truncated)

/* A size hint frame whose body is 4 bytes, not the u64 it must be. */
static int write_bad_hint(const void *arg, size_t len, th_dist_out *out)
{
	(void)arg;
	(void)len;
	struct th_frame_hdr h = { TH_FRAME_MAGIC, TH_FRAME_VERSION, TH_FR_SIZE, out->call_id, 0, 4 };
	if (write(driver_socket(), &h, sizeof h) < 0 || write(driver_socket(), "abcd", 4) < 0)
		return -1;
	sleep(30); /* the driver must not wait for more */
	return 0;
}
TH_EVERYWHERE(write_bad_hint)

static int runtime_workers(const void *arg, size_t len, th_dist_out *out)
{
	(void)arg;
	(void)len;
	int32_t n = th_nworkers();
	return th_dist_write(out, &n, sizeof n);
}
TH_EVERYWHERE(runtime_workers)

static int late_fn(const void *arg, size_t len, th_dist_out *out)
{
	(void)arg;
	(void)len;
	return th_dist_write(out, "x", 1);
}

/* ---- helpers ----------------------------------------------------------------- */
static struct th_bytes *u64_inputs(size_t n)
{
	struct th_bytes *in = calloc(n, sizeof *in);
	for (size_t i = 0; i < n; i++) {
		in[i].data = malloc(8);
		in[i].len = 8;
		uint64_t v = i * 7919 + 3;
		memcpy(in[i].data, &v, 8);
	}
	return in;
}

static void free_all(struct th_bytes *b, size_t n)
{
	for (size_t i = 0; i < n; i++)
		th_bytes_free(&b[i]);
	free(b);
}

static int start_local(int n, int threads, int grace_ms)
{
	struct th_procs_config cfg;
	th_procs_config_default(&cfg);
	cfg.procs = n;
	cfg.threads = threads;
	cfg.stop_grace_ms = grace_ms;
	int rc = th_procs_start_cfg(&cfg);
	if (rc)
		print_error("th_procs_start: %s\n", th_dist_last_error());
	return rc;
}

/* Children of this process that are zombies right now. */
static int zombie_children(void)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	int zombies = 0;
	while (d && (e = readdir(d))) {
		char path[300], buf[512];
		snprintf(path, sizeof path, "/proc/%s/stat", e->d_name);
		FILE *f = fopen(path, "r");
		if (!f)
			continue;
		if (fgets(buf, sizeof buf, f)) {
			char *rp = strrchr(buf, ')');
			char state;
			int ppid;
			if (rp && sscanf(rp + 2, "%c %d", &state, &ppid) == 2 && ppid == getpid() && state == 'Z')
				zombies++;
		}
		fclose(f);
	}
	if (d)
		closedir(d);
	return zombies;
}

static bool no_children_left(void)
{
	int st;
	return waitpid(-1, &st, WNOHANG) == -1 && errno == ECHILD;
}

/* ---- registry and frames ------------------------------------------------------------ */
static void registry_finds_functions_by_name_and_refuses_a_second_owner(void **state)
{
	(void)state;
	assert_ptr_equal(th_dist_lookup("square_list"), square_list);
	assert_null(th_dist_lookup("no_such_function"));
	assert_int_equal(th_everywhere("square_list", square_list), 0); /* same fn: fine */
	assert_int_equal(th_everywhere("square_list", my_pid), -1);
	assert_non_null(strstr(th_dist_last_error(), "already registered"));
	assert_int_equal(th_everywhere("has space", my_pid), -1);
}

static void call_local_runs_the_function_in_this_process(void **state)
{
	(void)state;
	struct th_bytes out;
	assert_int_equal(th_dist_call_local("my_pid", NULL, 0, &out), 0);
	assert_int_equal(out.len, 4);
	assert_int_equal(*(int32_t *)out.data, getpid());
	th_bytes_free(&out);
	assert_int_equal(th_dist_call_local("nope", NULL, 0, &out), -1);
	assert_non_null(strstr(th_dist_last_error(), "unknown function 'nope'"));
}

static void frame_parse_rejects_truncated_and_garbage_frames(void **state)
{
	(void)state;
	size_t len;
	char *ok = th_frame_build(TH_FR_CALL, 42, "square_list", "12345678", 8, &len);
	struct th_frame f;
	char err[256];
	assert_int_equal(th_frame_parse(ok, len, &f, err, sizeof err), 0);
	assert_int_equal(f.h.call_id, 42);
	assert_string_equal(f.name, "square_list");
	assert_memory_equal(f.body, "12345678", 8);
	th_frame_release(&f);

	/* every cut of a good frame is refused as truncated */
	for (size_t cut = 0; cut < len; cut++) {
		assert_int_equal(th_frame_parse(ok, cut, &f, err, sizeof err), -1);
		assert_non_null(strstr(err, "truncated"));
	}
	/* trailing bytes */
	char *longer = malloc(len + 1);
	memcpy(longer, ok, len);
	assert_int_equal(th_frame_parse(longer, len + 1, &f, err, sizeof err), -1);
	free(longer);

	struct th_frame_hdr h;
	memcpy(&h, ok, sizeof h);
	struct th_frame_hdr bad = h;
	bad.magic = 0x61626364;
	memcpy(ok, &bad, sizeof bad);
	assert_int_equal(th_frame_parse(ok, len, &f, err, sizeof err), -1);
	assert_non_null(strstr(err, "magic"));
	bad = h;
	bad.type = 99;
	memcpy(ok, &bad, sizeof bad);
	assert_int_equal(th_frame_parse(ok, len, &f, err, sizeof err), -1);
	assert_non_null(strstr(err, "type"));
	bad = h;
	bad.body_len = 0xfffffff0u; /* would make the driver allocate 4 GiB */
	memcpy(ok, &bad, sizeof bad);
	assert_int_equal(th_frame_parse(ok, len, &f, err, sizeof err), -1);
	assert_non_null(strstr(err, "limit"));
	bad = h;
	bad.name_len = 0;
	memcpy(ok, &bad, sizeof bad);
	assert_int_equal(th_frame_parse(ok, len, &f, err, sizeof err), -1);
	memcpy(ok, &h, sizeof h);
	ok[sizeof h + 3] = '\n'; /* a name byte that is not printable */
	assert_int_equal(th_frame_parse(ok, len, &f, err, sizeof err), -1);
	free(ok);
}

static void frame_read_rejects_a_stream_cut_inside_a_frame(void **state)
{
	(void)state;
	int sv[2];
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	size_t len;
	char *fr = th_frame_build(TH_FR_RESULT, 7, NULL, "abcdef", 6, &len);
	assert_int_equal(th_frame_write_fd(sv[1], fr, len), 0);  /* one whole frame */
	assert_int_equal(th_frame_write_fd(sv[1], fr, len - 2), 0); /* then a cut one */
	close(sv[1]);
	struct th_frame f;
	char err[256];
	assert_int_equal(th_frame_read_fd(sv[0], &f, err, sizeof err), 1);
	assert_memory_equal(f.body, "abcdef", 6);
	th_frame_release(&f);
	assert_int_equal(th_frame_read_fd(sv[0], &f, err, sizeof err), -1);
	assert_non_null(strstr(err, "truncated"));
	close(sv[0]);
	free(fr);

	/* end of stream exactly between frames is a clean end, not an error */
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	close(sv[1]);
	assert_int_equal(th_frame_read_fd(sv[0], &f, err, sizeof err), 0);
	close(sv[0]);
}

static void call_body_split_rejects_malformed_bodies(void **state)
{
	(void)state;
	const void *args[2] = { "ab", "cde" };
	size_t lens[2] = { 2, 3 }, blen;
	char *body = th_call_body_build(args, lens, 2, &blen);
	uint32_t n;
	const void **a;
	size_t *l;
	char err[256];
	assert_int_equal(th_call_body_split(body, blen, &n, &a, &l, err, sizeof err), 0);
	assert_int_equal(n, 2);
	assert_int_equal(l[1], 3);
	assert_memory_equal(a[1], "cde", 3);
	free(a);
	free(l);
	for (size_t cut = 0; cut < blen; cut++)
		assert_int_equal(th_call_body_split(body, cut, &n, &a, &l, err, sizeof err), -1);
	uint32_t huge = 0x7fffffff; /* claims more inputs than bytes */
	memcpy(body, &huge, 4);
	assert_int_equal(th_call_body_split(body, blen, &n, &a, &l, err, sizeof err), -1);
	free(body);
}

/* ---- pools ------------------------------------------------------------------------ */
static void pmap_results_equal_the_serial_map(void **state)
{
	(void)state;
	const size_t n = 60;
	struct th_bytes *in = u64_inputs(n), *out = calloc(n, sizeof *out);
	int *proc_of = calloc(n, sizeof *proc_of);
	assert_int_equal(start_local(2, 0, 0), 0);
	struct th_pmap_opts o = { .batch = 1, .proc_of = proc_of };
	assert_int_equal(th_pmap("square_list", in, n, out, &o), 0);
	int used[3] = { 0 };
	for (size_t i = 0; i < n; i++) {
		struct th_bytes ref;
		assert_int_equal(th_dist_call_local("square_list", in[i].data, in[i].len, &ref), 0);
		assert_int_equal(out[i].len, ref.len);
		assert_memory_equal(out[i].data, ref.data, ref.len);
		th_bytes_free(&ref);
		assert_in_range(proc_of[i], 1, 2);
		used[proc_of[i]]++;
	}
	/* dynamic scheduling hands inputs to both workers */
	assert_true(used[1] > 0 && used[2] > 0);
	th_procs_stop();
	assert_true(no_children_left());
	free_all(in, n);
	free_all(out, n);
	free(proc_of);
}

static void pmap_in_batches_gives_the_same_results(void **state)
{
	(void)state;
	const size_t n = 23;
	struct th_bytes *in = u64_inputs(n), *a = calloc(n, sizeof *a), *b = calloc(n, sizeof *b);
	assert_int_equal(start_local(3, 0, 0), 0);
	assert_int_equal(th_pmap("square_list", in, n, a, NULL), 0);
	struct th_pmap_opts o = { .batch = 5 };
	assert_int_equal(th_pmap("square_list", in, n, b, &o), 0);
	for (size_t i = 0; i < n; i++) {
		assert_int_equal(a[i].len, b[i].len);
		assert_memory_equal(a[i].data, b[i].data, a[i].len);
	}
	th_procs_stop();
	free_all(in, n);
	free_all(a, n);
	free_all(b, n);
}

static void large_results_arrive_whole_through_many_pieces(void **state)
{
	(void)state;
	struct th_bytes in[3] = { { NULL, 0 }, { NULL, 0 }, { NULL, 0 } }, out[3], ref;
	assert_int_equal(start_local(2, 0, 0), 0);
	assert_int_equal(th_pmap("big_result", in, 3, out, NULL), 0);
	assert_int_equal(th_dist_call_local("big_result", NULL, 0, &ref), 0);
	for (int i = 0; i < 3; i++) {
		assert_int_equal(out[i].len, 1u << 20);
		assert_memory_equal(out[i].data, ref.data, ref.len);
		th_bytes_free(&out[i]);
	}
	th_bytes_free(&ref);
	th_procs_stop();
}

/* A size hint only saves copies: whether too small, too large, impossible
 * or late, the result is exactly what the function wrote, in the driver and
 * in this process alike. */
static void a_wrong_size_hint_never_changes_the_result(void **state)
{
	(void)state;
	uint32_t kinds[HINT_KINDS];
	struct th_bytes in[HINT_KINDS], out[HINT_KINDS], ref;
	for (uint32_t k = 0; k < HINT_KINDS; k++) {
		kinds[k] = k;
		in[k] = (struct th_bytes){ &kinds[k], sizeof kinds[k] };
	}
	assert_int_equal(start_local(2, 0, 0), 0);
	assert_int_equal(th_pmap("wrong_hint", in, HINT_KINDS, out, NULL), 0);
	for (uint32_t k = 0; k < HINT_KINDS; k++) {
		assert_int_equal(th_dist_call_local("wrong_hint", &kinds[k], sizeof kinds[k], &ref), 0);
		assert_int_equal(ref.len, hint_bytes[k]);
		assert_int_equal(out[k].len, hint_bytes[k]);
		assert_memory_equal(out[k].data, ref.data, ref.len);
		th_bytes_free(&ref);
		th_bytes_free(&out[k]);
	}
	th_procs_stop();
}

static void spawnat_to_a_named_worker_runs_in_that_process(void **state)
{
	(void)state;
	assert_int_equal(start_local(3, 0, 0), 0);
	assert_int_equal(th_nprocs(), 3);
	pid_t pids[8];
	assert_int_equal(th_procs_pids(pids, 8), 3);
	for (int k = 1; k <= 3; k++) {
		th_future *f = th_spawnat(k, "my_pid", NULL, 0);
		assert_non_null(f);
		struct th_bytes r;
		assert_int_equal(th_future_fetch(f, &r), 0);
		assert_int_equal(th_future_proc(f), k);
		assert_int_equal(*(int32_t *)r.data, th_proc_pid(k));
		assert_int_not_equal(th_proc_pid(k), getpid());
		assert_int_equal(pids[k - 1], th_proc_pid(k));
		th_bytes_free(&r);
		th_future_free(f);
	}
	/* :any goes to some worker, and several may be in flight at once */
	th_future *fs[6];
	for (int i = 0; i < 6; i++)
		assert_non_null(fs[i] = th_spawnat(TH_ANY, "my_pid", NULL, 0));
	for (int i = 5; i >= 0; i--) {
		struct th_bytes r;
		assert_int_equal(th_future_fetch(fs[i], &r), 0);
		assert_int_equal(*(int32_t *)r.data, th_proc_pid(th_future_proc(fs[i])));
		th_bytes_free(&r);
		th_future_free(fs[i]);
	}
	assert_null(th_spawnat(4, "my_pid", NULL, 0));
	assert_non_null(strstr(th_dist_last_error(), "no worker 4"));
	th_procs_stop();
	struct th_proc_stats st;
	assert_int_equal(th_proc_stats(1, &st), 0);
	assert_true(st.calls >= 1);
	assert_true(st.maxrss_kb > 0);
	assert_true(WIFEXITED(st.wait_status) && WEXITSTATUS(st.wait_status) == 0);
}

static void unknown_function_names_are_errors(void **state)
{
	(void)state;
	assert_int_equal(start_local(1, 0, 0), 0);
	struct th_bytes in = { NULL, 0 }, out;
	assert_int_equal(th_pmap("no_such_fn", &in, 1, &out, NULL), -1);
	assert_non_null(strstr(th_dist_last_error(), "unknown function 'no_such_fn'"));
	assert_null(th_spawnat(TH_ANY, "no_such_fn", NULL, 0));
	/* registered in the driver after the fork: the worker does not know it */
	assert_int_equal(th_everywhere("late_fn", late_fn), 0);
	assert_int_equal(th_pmap("late_fn", &in, 1, &out, NULL), -1);
	assert_non_null(strstr(th_dist_last_error(), "unknown function 'late_fn' on worker"));
	/* the worker is fine afterwards */
	th_future *f = th_spawnat(1, "my_pid", NULL, 0);
	struct th_bytes r;
	assert_int_equal(th_future_fetch(f, &r), 0);
	th_bytes_free(&r);
	th_future_free(f);
	th_procs_stop();
}

static void a_failing_function_fails_its_input_only(void **state)
{
	(void)state;
	const size_t n = 4;
	struct th_bytes *in = calloc(n, sizeof *in), out[4];
	for (size_t i = 0; i < n; i++) {
		in[i].data = malloc(8);
		in[i].len = 8;
		uint64_t v = i == 3 ? 7 : 2 * i;
		memcpy(in[i].data, &v, 8);
	}
	assert_int_equal(start_local(2, 0, 0), 0);
	assert_int_equal(th_pmap("fails_on_odd", in, n, out, NULL), -1);
	assert_non_null(strstr(th_dist_last_error(), "input 3 failed"));
	assert_non_null(strstr(th_dist_last_error(), "odd input 7"));
	for (size_t i = 0; i < n; i++)
		assert_null(out[i].data);
	assert_int_equal(th_pmap("fails_on_odd", in, 3, out, NULL), 0);
	for (size_t i = 0; i < 3; i++)
		th_bytes_free(&out[i]);
	th_procs_stop();
	free_all(in, n);
}

struct killer {
	int proc;
	int delay_ms;
};

static void *kill_later(void *arg)
{
	struct killer *k = arg;
	nanosleep(&(struct timespec){ 0, k->delay_ms * 1000000L }, NULL);
	kill(th_proc_pid(k->proc), SIGKILL);
	return NULL;
}

static void a_worker_killed_during_pmap_is_an_error_naming_input_and_worker(void **state)
{
	(void)state;
	const size_t n = 4;
	struct th_bytes in[4], out[4];
	uint32_t ms = 20000; /* far longer than the test may take */
	for (size_t i = 0; i < n; i++)
		in[i] = (struct th_bytes){ &ms, sizeof ms };
	assert_int_equal(start_local(2, 0, 100), 0);
	pid_t victim = th_proc_pid(1);
	pthread_t t;
	struct killer k = { 1, 200 };
	pthread_create(&t, NULL, kill_later, &k);
	uint64_t t0 = (uint64_t)time(NULL);
	assert_int_equal(th_pmap("sleep_ms", in, n, out, NULL), -1);
	/* it did not wait for worker 2's 20 s input */
	assert_true((uint64_t)time(NULL) - t0 < 15);
	pthread_join(t, NULL);
	const char *e = th_dist_last_error();
	char want[64];
	snprintf(want, sizeof want, "worker 1 (pid %d", (int)victim);
	assert_non_null(strstr(e, "input 0 failed"));
	assert_non_null(strstr(e, want));
	assert_non_null(strstr(e, "killed by signal 9 (KILL)"));
	/* the dead worker was reaped at once */
	assert_int_equal(zombie_children(), 0);
	struct th_proc_stats st;
	assert_int_equal(th_proc_stats(1, &st), 0);
	assert_false(st.alive);
	assert_true(WIFSIGNALED(st.wait_status) && WTERMSIG(st.wait_status) == SIGKILL);
	/* spawnat to the dead worker says so; the live one still answers */
	assert_null(th_spawnat(1, "my_pid", NULL, 0));
	assert_non_null(strstr(th_dist_last_error(), "killed by signal 9"));
	th_procs_stop(); /* worker 2 is still in its 20 s sleep: killed after the grace */
	assert_true(no_children_left());
}

/* A SIGSTOPped worker never answers: with a call timeout the pmap fails naming
 * it, instead of waiting forever, and the stopped worker is killed and reaped. */
static void a_stopped_worker_fails_the_pmap_after_the_call_timeout(void **state)
{
	(void)state;
	alarm(120); /* without the timeout this pmap never returns */
	const size_t n = 6;
	struct th_bytes in[6], out[6];
	uint32_t ms = 20;
	for (size_t i = 0; i < n; i++)
		in[i] = (struct th_bytes){ &ms, sizeof ms };
	struct th_procs_config cfg;
	th_procs_config_default(&cfg);
	cfg.procs = 2;
	cfg.call_timeout_ms = 1000;
	assert_int_equal(th_procs_start_cfg(&cfg), 0);
	pid_t victim = th_proc_pid(1);
	assert_int_equal(kill(victim, SIGSTOP), 0);
	assert_int_equal(th_pmap("sleep_ms", in, n, out, NULL), -1);
	const char *e = th_dist_last_error();
	char want[64];
	snprintf(want, sizeof want, "worker 1 (pid %d", (int)victim);
	if (!strstr(e, want) || !strstr(e, "call timeout of 1000 ms"))
		fail_msg("error was: %s", e);
	struct th_proc_stats st;
	assert_int_equal(th_proc_stats(1, &st), 0);
	assert_false(st.alive);
	/* the same for a spawnat future on a stopped worker */
	pid_t second = th_proc_pid(2);
	assert_int_equal(kill(second, SIGSTOP), 0);
	th_future *f = th_spawnat(2, "sleep_ms", &ms, sizeof ms);
	assert_non_null(f);
	struct th_bytes r;
	assert_int_equal(th_future_fetch(f, &r), -1);
	assert_non_null(strstr(th_dist_last_error(), "call timeout of 1000 ms"));
	th_future_free(f);
	th_procs_stop();
	assert_true(no_children_left());
	alarm(0);
}

static void a_worker_sending_garbage_is_stopped_and_reported(void **state)
{
	(void)state;
	struct th_bytes in = { NULL, 0 }, out;
	assert_int_equal(start_local(1, 0, 0), 0);
	assert_int_equal(th_pmap("write_garbage", &in, 1, &out, NULL), -1);
	const char *e = th_dist_last_error();
	assert_non_null(strstr(e, "bad frame"));
	assert_non_null(strstr(e, "magic"));
	assert_non_null(strstr(e, "worker 1"));
	assert_int_equal(zombie_children(), 0);
	/* no worker is left: further calls fail at once instead of hanging */
	assert_int_equal(th_pmap("my_pid", &in, 1, &out, NULL), -1);
	assert_non_null(strstr(th_dist_last_error(), "no worker"));
	th_procs_stop();
	assert_true(no_children_left());
}

static void a_worker_sending_a_malformed_size_hint_is_stopped_and_reported(void **state)
{
	(void)state;
	struct th_bytes in = { NULL, 0 }, out;
	assert_int_equal(start_local(1, 0, 0), 0);
	assert_int_equal(th_pmap("write_bad_hint", &in, 1, &out, NULL), -1);
	const char *e = th_dist_last_error();
	assert_non_null(strstr(e, "size hint of 4 bytes"));
	assert_non_null(strstr(e, "worker 1"));
	th_procs_stop();
	assert_true(no_children_left());
}

static void a_worker_cut_off_inside_a_frame_is_reported(void **state)
{
	(void)state;
	struct th_bytes in = { NULL, 0 }, out;
	assert_int_equal(start_local(2, 0, 0), 0);
	assert_int_equal(th_pmap("write_truncated", &in, 1, &out, NULL), -1);
	const char *e = th_dist_last_error();
	assert_non_null(strstr(e, "truncated frame"));
	assert_non_null(strstr(e, "exited with status 0"));
	th_procs_stop();
	assert_true(no_children_left());
}

static void *wait_flag(void *arg)
{
	while (!__atomic_load_n((int *)arg, __ATOMIC_ACQUIRE))
		nanosleep(&(struct timespec){ 0, 1000000 }, NULL);
	return NULL;
}

static void bad_pool_sizes_and_threads_are_refused(void **state)
{
	(void)state;
	assert_int_equal(th_procs_start(0), -1);
	assert_non_null(strstr(th_dist_last_error(), "bad number of worker processes 0"));
	assert_int_equal(th_procs_start(TH_DIST_MAX_PROCS + 1), -1);
	struct th_bytes in = { NULL, 0 }, out;
	assert_int_equal(th_pmap("my_pid", &in, 1, &out, NULL), -1);
	assert_non_null(strstr(th_dist_last_error(), "th_procs_start first"));
	/* fork with running threads is unsafe: refused with the reason */
	struct th_config cfg;
	th_config_default(&cfg);
	cfg.workers = 2;
	assert_int_equal(th_runtime_start(&cfg), 0);
	assert_int_equal(th_procs_start(2), -1);
	assert_non_null(strstr(th_dist_last_error(), "runtime runs in this process"));
	th_runtime_stop();
	/* any other thread too */
	pthread_t t;
	int go = 0;
	pthread_create(&t, NULL, wait_flag, &go);
	assert_int_equal(th_procs_start(2), -1);
	assert_non_null(strstr(th_dist_last_error(), "other thread"));
	__atomic_store_n(&go, 1, __ATOMIC_RELEASE);
	pthread_join(t, NULL);
	assert_int_equal(th_procs_start(1), 0);
	assert_int_equal(th_procs_start(1), -1);
	assert_non_null(strstr(th_dist_last_error(), "already running"));
	th_procs_stop();
}

static void each_worker_process_can_run_the_task_runtime(void **state)
{
	(void)state;
	assert_int_equal(start_local(2, 2, 0), 0);
	struct th_bytes in[2] = { { NULL, 0 }, { NULL, 0 } }, out[2];
	assert_int_equal(th_pmap("runtime_workers", in, 2, out, NULL), 0);
	for (int i = 0; i < 2; i++) {
		assert_int_equal(*(int32_t *)out[i].data, 2);
		th_bytes_free(&out[i]);
	}
	th_procs_stop();
	assert_int_equal(th_nworkers(), 0); /* the driver itself runs no runtime */
}

/* ---- MPI: the test binary re-runs itself under mpirun ------------------------------ */
#define MPI_N 40

/* Rank 0 prints one line per result as hex; the other ranks serve. */
static int mpi_driver_main(void)
{
	struct th_procs_config cfg;
	th_procs_config_default(&cfg);
	cfg.transport = TH_TRANSPORT_MPI;
	cfg.procs = 0;
	if (th_procs_start_cfg(&cfg) != 0) {
		fprintf(stderr, "mpi driver: %s\n", th_dist_last_error());
		return 1;
	}
	struct th_bytes *in = u64_inputs(MPI_N), *out = calloc(MPI_N, sizeof *out);
	int *proc_of = calloc(MPI_N, sizeof *proc_of);
	struct th_pmap_opts o = { .batch = 1, .proc_of = proc_of };
	int rc = th_pmap("square_list", in, MPI_N, out, &o);
	if (rc) {
		fprintf(stderr, "mpi driver: %s\n", th_dist_last_error());
		return 1;
	}
	printf("procs %d pid1 %d pid2 %d self %d\n", th_nprocs(), th_proc_pid(1), th_proc_pid(2), getpid());
	for (size_t i = 0; i < MPI_N; i++) {
		printf("r %zu %d ", i, proc_of[i]);
		for (size_t j = 0; j < out[i].len; j++)
			printf("%02x", ((unsigned char *)out[i].data)[j]);
		printf("\n");
	}
	th_procs_stop();
	free_all(in, MPI_N);
	free_all(out, MPI_N);
	free(proc_of);
	return 0;
}

static void mpirun_3_gives_the_same_pmap_results(void **state)
{
	(void)state;
	bool ci = getenv("TASKHOP_REQUIRE_BPF") && strcmp(getenv("TASKHOP_REQUIRE_BPF"), "1") == 0;
	if (system("command -v mpirun >/dev/null 2>&1") != 0) {
		if (ci)
			fail_msg("mpirun not found: `make deps` installs openmpi-bin");
		skip();
	}
	char exe[4096], cmd[8192];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
	assert_true(n > 0);
	exe[n] = 0;
	/* --allow-run-as-root: CI runs as root; --oversubscribe: 3 ranks on a
	 * 2-core machine. Leak checking is for our code, not OpenMPI's. */
	snprintf(cmd, sizeof cmd,
		 "TASKHOP_DIST_TEST_MPI=1 ASAN_OPTIONS=detect_leaks=0 "
		 "timeout 120 mpirun --allow-run-as-root --oversubscribe -n 3 '%s' 2>&1", exe);
	FILE *p = popen(cmd, "r");
	assert_non_null(p);
	char line[4096];
	int results = 0, procs = 0;
	int seen[3] = { 0 };
	while (fgets(line, sizeof line, p)) {
		size_t idx;
		int proc, a, b, self;
		char hex[3000];
		if (sscanf(line, "procs %d pid1 %d pid2 %d self %d", &procs, &a, &b, &self) == 4) {
			assert_true(a > 0 && b > 0 && a != b && a != self && b != self);
			continue;
		}
		if (sscanf(line, "r %zu %d %2999s", &idx, &proc, hex) != 3) {
			print_message("mpirun: %s", line);
			continue;
		}
		assert_true(idx < MPI_N);
		struct th_bytes *in = u64_inputs(MPI_N), ref;
		assert_int_equal(th_dist_call_local("square_list", in[idx].data, 8, &ref), 0);
		char want[3000];
		for (size_t j = 0; j < ref.len; j++)
			snprintf(want + 2 * j, 3, "%02x", ((unsigned char *)ref.data)[j]);
		want[2 * ref.len] = 0;
		assert_string_equal(hex, want);
		th_bytes_free(&ref);
		free_all(in, MPI_N);
		assert_in_range(proc, 1, 2);
		seen[proc]++;
		results++;
	}
	int st = pclose(p);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	assert_int_equal(procs, 2);
	assert_int_equal(results, MPI_N);
	assert_true(seen[1] > 0 && seen[2] > 0);
}

int main(void)
{
	if (getenv("TASKHOP_DIST_TEST_MPI"))
		return mpi_driver_main();
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(registry_finds_functions_by_name_and_refuses_a_second_owner),
		cmocka_unit_test(call_local_runs_the_function_in_this_process),
		cmocka_unit_test(frame_parse_rejects_truncated_and_garbage_frames),
		cmocka_unit_test(frame_read_rejects_a_stream_cut_inside_a_frame),
		cmocka_unit_test(call_body_split_rejects_malformed_bodies),
		cmocka_unit_test(pmap_results_equal_the_serial_map),
		cmocka_unit_test(pmap_in_batches_gives_the_same_results),
		cmocka_unit_test(large_results_arrive_whole_through_many_pieces),
		cmocka_unit_test(a_wrong_size_hint_never_changes_the_result),
		cmocka_unit_test(spawnat_to_a_named_worker_runs_in_that_process),
		cmocka_unit_test(unknown_function_names_are_errors),
		cmocka_unit_test(a_failing_function_fails_its_input_only),
		cmocka_unit_test(a_worker_killed_during_pmap_is_an_error_naming_input_and_worker),
		cmocka_unit_test(a_stopped_worker_fails_the_pmap_after_the_call_timeout),
		cmocka_unit_test(a_worker_sending_garbage_is_stopped_and_reported),
		cmocka_unit_test(a_worker_sending_a_malformed_size_hint_is_stopped_and_reported),
		cmocka_unit_test(a_worker_cut_off_inside_a_frame_is_reported),
		cmocka_unit_test(bad_pool_sizes_and_threads_are_refused),
		cmocka_unit_test(each_worker_process_can_run_the_task_runtime),
		cmocka_unit_test(mpirun_3_gives_the_same_pmap_results),
	};
	/* TASKHOP_TEST_FILTER=pattern runs only the matching tests (while developing) */
	if (getenv("TASKHOP_TEST_FILTER"))
		cmocka_set_test_filter(getenv("TASKHOP_TEST_FILTER"));
	return cmocka_run_group_tests(tests, NULL, NULL);
}
