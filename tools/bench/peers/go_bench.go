// go_bench.go — the taskhop micro-benchmarks written for Go goroutines, the
// peer runtime: prints "bench: go.NAME VALUE UNIT" lines for tools/bench/run.sh.
package main

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"time"
)

// yieldNs: two goroutines on one P yield to each other n times each;
// nanoseconds per switch (2n switches in all).
func yieldNs(n int) float64 {
	runtime.GOMAXPROCS(1)
	done := make(chan struct{})
	start := make(chan struct{})
	body := func() {
		<-start
		for i := 0; i < n; i++ {
			runtime.Gosched()
		}
		done <- struct{}{}
	}
	go body()
	go body()
	t0 := time.Now()
	close(start)
	<-done
	<-done
	return float64(time.Since(t0).Nanoseconds()) / float64(2*n)
}

// spawnJoinNs: spawn + fetch of n empty goroutines in batches of `batch`
// (a future is a 1-slot channel, Go's idiom for fetch); ns per task.
func spawnJoinNs(n, batch, procs int) float64 {
	runtime.GOMAXPROCS(procs)
	futs := make([]chan int, batch)
	sum := 0
	t0 := time.Now()
	for done := 0; done < n; done += batch {
		for i := range futs {
			c := make(chan int, 1)
			futs[i] = c
			go func(v int) { c <- v }(i)
		}
		for _, c := range futs {
			sum += <-c
		}
	}
	el := time.Since(t0).Nanoseconds()
	if sum != n/batch*(batch*(batch-1)/2) {
		fmt.Fprintln(os.Stderr, "go_bench: spawn_join lost a result")
		os.Exit(1)
	}
	return float64(el) / float64(n)
}

// fib: nested spawn, one branch in a new goroutine, the other computed here.
func fib(n int) int {
	if n < 2 {
		return n
	}
	c := make(chan int, 1)
	go func() { c <- fib(n - 1) }()
	b := fib(n - 2)
	return <-c + b
}

func fibMs(n, procs int) float64 {
	runtime.GOMAXPROCS(procs)
	t0 := time.Now()
	r := fib(n)
	el := time.Since(t0)
	if r != 832040 && n == 30 {
		fmt.Fprintln(os.Stderr, "go_bench: fib(30) wrong:", r)
		os.Exit(1)
	}
	return float64(el.Microseconds()) / 1000.0
}

// best of `reps` runs: the figure least disturbed by the rest of the machine.
func best(reps int, f func() float64) float64 {
	b := f()
	for i := 1; i < reps; i++ {
		if v := f(); v < b {
			b = v
		}
	}
	return b
}

func main() {
	yields, tasks, fibn, reps := 10000000, 1000000, 30, 3
	if len(os.Args) == 5 { // quick mode for tests: YIELDS TASKS FIB REPS
		yields, _ = strconv.Atoi(os.Args[1])
		tasks, _ = strconv.Atoi(os.Args[2])
		fibn, _ = strconv.Atoi(os.Args[3])
		reps, _ = strconv.Atoi(os.Args[4])
	} else if len(os.Args) != 1 {
		fmt.Fprintln(os.Stderr, "usage: go_bench [YIELDS TASKS FIB REPS]")
		os.Exit(2)
	}
	// A count of 0 skips that figure (run.sh's extra rounds measure only some).
	if yields > 0 {
		fmt.Printf("bench: go.yield_ns %.1f ns\n", best(reps, func() float64 { return yieldNs(yields) }))
	}
	if tasks > 0 {
		fmt.Printf("bench: go.spawn_join_ns_1w %.1f ns\n", best(reps, func() float64 { return spawnJoinNs(tasks, 1000, 1) }))
		fmt.Printf("bench: go.spawn_join_ns_2w %.1f ns\n", best(reps, func() float64 { return spawnJoinNs(tasks, 1000, 2) }))
	}
	if fibn > 0 {
		fmt.Printf("bench: go.fib_ms %.1f ms\n", best(reps, func() float64 { return fibMs(fibn, 2) }))
	}
}
