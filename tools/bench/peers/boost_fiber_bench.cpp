// boost_fiber_bench.cpp — the taskhop micro-benchmarks for Boost.Fiber with its three
// scheduling algorithms; prints "bench: boost_fiber.ALGO.NAME VALUE UNIT" lines.
#include <boost/fiber/all.hpp>

#include <malloc.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace bf = boost::fibers;
using Clock = std::chrono::steady_clock;

// 64 KiB stacks from malloc. The default (128 KiB) is at glibc's mmap
// threshold, so every fiber would cost an mmap + munmap (~10 us): we give
// the peer its fast setup, not its slow default.
static bf::fixedsize_stack stack_alloc() { return bf::fixedsize_stack(64 * 1024); }
template <typename F> static bf::fiber spawn(F &&f)
{
	return bf::fiber(std::allocator_arg, stack_alloc(), std::forward<F>(f));
}

enum Algo { ROUND_ROBIN, SHARED_WORK, WORK_STEALING };
static const char *algo_name[] = {"round_robin", "shared_work", "work_stealing"};

static void use_algo(Algo a, int nthreads)
{
	switch (a) {
	case ROUND_ROBIN: bf::use_scheduling_algorithm<bf::algo::round_robin>(); break;
	case SHARED_WORK: bf::use_scheduling_algorithm<bf::algo::shared_work>(); break;
	case WORK_STEALING: bf::use_scheduling_algorithm<bf::algo::work_stealing>(nthreads); break;
	}
}

// Runs body() as a fiber on a pool of nthreads threads (this one plus
// helpers) scheduled by `a`. Once per process: work_stealing keeps its
// schedulers in static members, so a second pool in the same process
// crashes; run.sh starts one process per (algorithm, thread count).
static void on_pool(Algo a, int nthreads, const std::function<void()> &body)
{
	bool done = false;
	bf::mutex m;
	bf::condition_variable cv;
	std::vector<std::thread> helpers;
	for (int i = 1; i < nthreads; i++)
		helpers.emplace_back([&] {
			use_algo(a, nthreads);
			std::unique_lock<bf::mutex> lk(m);
			cv.wait(lk, [&] { return done; }); // meanwhile this thread runs fibers
		});
	use_algo(a, nthreads);
	bf::fiber f(std::allocator_arg, stack_alloc(), body);
	f.join();
	{
		std::unique_lock<bf::mutex> lk(m);
		done = true;
	}
	cv.notify_all();
	for (auto &h : helpers)
		h.join();
}

static double since_ns(Clock::time_point t0)
{
	return std::chrono::duration<double, std::nano>(Clock::now() - t0).count();
}

// Two fibers yield to each other n times each: ns per switch.
static double yield_ns(long n)
{
	auto body = [n] {
		for (long i = 0; i < n; i++)
			boost::this_fiber::yield();
	};
	auto t0 = Clock::now();
	bf::fiber a = spawn(body), b = spawn(body);
	a.join();
	b.join();
	return since_ns(t0) / (2.0 * n);
}

// Spawn + join of n empty fibers, `batch` at a time; ns per task. A slow
// algorithm stops after the batch that passes 3 s: the figure is per task.
static double spawn_join_ns(long n, int batch)
{
	const double budget_ns = 3e9;
	std::vector<bf::fiber> fs(batch);
	std::vector<long> out(batch);
	long sum = 0;
	auto t0 = Clock::now();
	long done = 0;
	while (done < n && (done == 0 || since_ns(t0) < budget_ns)) {
		done += batch;
		for (int i = 0; i < batch; i++)
			fs[i] = spawn([&out, i] { out[i] = i; });
		for (int i = 0; i < batch; i++) {
			fs[i].join();
			sum += out[i];
		}
	}
	double el = since_ns(t0);
	if (sum != done / batch * ((long)batch * (batch - 1) / 2)) {
		fprintf(stderr, "boost_fiber_bench: spawn_join lost a result\n");
		exit(1);
	}
	return el / done;
}

// Nested spawn: one branch in a new fiber, the other computed here.
static long fib(int n)
{
	if (n < 2)
		return n;
	long a = 0;
	bf::fiber f = spawn([&a, n] { a = fib(n - 1); });
	long b = fib(n - 2);
	f.join();
	return a + b;
}

static double fib_ms(int n)
{
	auto t0 = Clock::now();
	long r = fib(n);
	double el = since_ns(t0) / 1e6;
	if (n == 30 && r != 832040) {
		fprintf(stderr, "boost_fiber_bench: fib(30) = %ld\n", r);
		exit(1);
	}
	return el;
}

// Best of `reps` runs (the least disturbed), but no new run once 4 s have
// gone: slow algorithms get one run so that make bench stays short.
static double best(int reps, const std::function<double()> &f)
{
	auto t0 = Clock::now();
	double b = f();
	for (int i = 1; i < reps && since_ns(t0) < 4e9; i++)
		b = std::min(b, f());
	return b;
}

static int usage(void)
{
	fprintf(stderr, "usage: boost_fiber_bench round_robin|shared_work|work_stealing 1|2 "
			"[YIELDS TASKS FIB REPS]\n");
	return 2;
}

int main(int argc, char **argv)
{
	long yields = 10000000, tasks = 1000000;
	int fibn = 30, reps = 3;
	if (argc != 3 && argc != 7)
		return usage();
	int algo = -1;
	for (int i = 0; i < 3; i++)
		if (!strcmp(argv[1], algo_name[i]))
			algo = i;
	int nthreads = atoi(argv[2]);
	if (algo < 0 || nthreads < 1 || nthreads > 2)
		return usage();
	if (argc == 7) // quick mode
		yields = atol(argv[3]), tasks = atol(argv[4]), fibn = atoi(argv[5]), reps = atoi(argv[6]);
	const char *an = algo_name[algo];
	// Keep freed stacks in the heap: glibc would otherwise trim and refault
	// them on every batch, and page faults are what would get measured.
	mallopt(M_TRIM_THRESHOLD, 1 << 30);
	mallopt(M_MMAP_THRESHOLD, 1 << 20);
	setvbuf(stdout, NULL, _IOLBF, 0); // lines survive a kill by run.sh's timeout
	on_pool((Algo)algo, nthreads, [&] {
		// a count of 0 skips that figure (run.sh's extra rounds measure only some)
		if (nthreads == 1) {
			if (yields > 0)
				printf("bench: boost_fiber.%s.yield_ns %.1f ns\n", an,
				       best(reps, [&] { return yield_ns(yields); }));
			if (tasks > 0)
				printf("bench: boost_fiber.%s.spawn_join_ns_1w %.1f ns\n", an,
				       best(reps, [&] { return spawn_join_ns(tasks, 1000); }));
		} else {
			if (tasks > 0)
				printf("bench: boost_fiber.%s.spawn_join_ns_2w %.1f ns\n", an,
				       best(reps, [&] { return spawn_join_ns(tasks, 1000); }));
			if (fibn > 0)
				printf("bench: boost_fiber.%s.fib_ms %.1f ms\n", an,
				       best(reps, [&] { return fib_ms(fibn); }));
		}
		fflush(stdout);
	});
	return 0;
}
