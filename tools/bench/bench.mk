# bench.mk — taskhop's micro-benchmarks and the peer runtimes' versions of them
# (tools/bench/peers: Go, Boost.Fiber, OpenMP), built here and run by `make bench`.
THB := $(B)/thbench
THB_PEERS := $(THB)/go_bench $(THB)/boost_fiber_bench $(THB)/omp_bench

$(THB)/th_micro: $(B)/obj/tools/bench/th_micro.c.o $(LIBS)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $< -Wl,--start-group $(LIBS) -Wl,--end-group $(LDLIBS)

# The peers are built as their users would build them: -O2, no sanitizer.
$(THB)/go_bench: tools/bench/peers/go_bench.go
	@mkdir -p $(dir $@)
	GOCACHE=$(abspath $(THB))/gocache GOPATH=$(abspath $(THB))/gopath GO111MODULE=off \
		go build -o $@ $<

$(THB)/boost_fiber_bench: tools/bench/peers/boost_fiber_bench.cpp
	@mkdir -p $(dir $@)
	g++ -O2 -std=c++17 -Wall -Wextra -Werror -o $@ $< -lboost_fiber -lboost_context -lpthread

$(THB)/omp_bench: tools/bench/peers/omp_bench.c
	@mkdir -p $(dir $@)
	$(CC) -O2 -std=gnu11 -Wall -Wextra -Werror -fopenmp -o $@ $<

all: $(THB)/th_micro

# deps first: the peers need golang-go, libboost-fiber-dev and gcc's libgomp.
.PHONY: th-bench-build
th-bench-build: $(THB)/th_micro $(THB_PEERS)

bench::
	@bash tools/deps.sh
	@$(MAKE) --no-print-directory th-bench-build >/dev/null
	@bash tools/bench/run.sh $(THB)

# activations: compute slowdown with blockers per policy and mode, activation latency
bench:: $(TASKHOP)
	@bash tools/bench/activations.sh $(TASKHOP)
