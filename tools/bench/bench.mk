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

# ---- preemption (cfg.preempt_ns, --preempt) and the feedback policy ----------------------
$(THB)/preempt_cost: $(B)/obj/tools/bench/preempt_cost.c.o $(LIBS)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $< -Wl,--start-group $(LIBS) -Wl,--end-group $(LDLIBS)

all: $(THB)/preempt_cost

# What one preemption costs; darts under feedback with and without a 1 ms quantum in both
# spawn orders (the goal: <= 1.10 of the SPT bound in both), steal with it for contrast, and
# fcfs's makespan with it over without (the cost of the ticks on a whole run: goal <= 1.02).
# Ratios of runs within one `compare` each, interleaved, so machine load hits all alike.
# The fcfs makespan ratio: one compare of fcfs with and without the quantum (--preempt 1,0:
# fcfs/p1 and fcfs/p0 back to back in each repeat), not two compares minutes apart (this VM's
# darts makespan varies +-15 % from run to run; one such pair gave 1.37). 6 repeats, about
# 1.4 s a run (17 s); one pair's ratio has an sd of about 0.08, so the median is good to
# about +-0.035. The pairs' median, min and max follow as '#' lines.
PREEMPT_DARTS = $(B)/taskhop compare darts --force --repeat 3 --workers 2 --no-bpf
bench:: $(THB)/preempt_cost $(TASKHOP)
	@$(THB)/preempt_cost
	@$(PREEMPT_DARTS) --policies feedback,steal,fcfs --preempt 1 --out $(B)/bench/darts-preempt >/dev/null
	@$(B)/taskhop report $(B)/bench/darts-preempt --bench | grep '^bench: darts_mean_over_ideal' | \
		sed 's/^\(bench: [a-z_]*\) /\1_preempt /'
	@$(PREEMPT_DARTS) --policies feedback --large-first --out $(B)/bench/darts-large-first-fb >/dev/null
	@$(B)/taskhop report $(B)/bench/darts-large-first-fb --bench | grep '^bench: darts_mean_over_ideal' | \
		sed 's/darts_/darts_large_first_/'
	@$(PREEMPT_DARTS) --policies feedback --large-first --preempt 1 \
		--out $(B)/bench/darts-large-first-fb-preempt >/dev/null
	@$(B)/taskhop report $(B)/bench/darts-large-first-fb-preempt --bench | \
		grep '^bench: darts_mean_over_ideal' | sed 's/darts_/darts_large_first_/; s/^\(bench: [a-z_]*\) /\1_preempt /'
	@$(B)/taskhop compare darts --force --workers 2 --no-bpf --policies fcfs --preempt 1,0 \
		--repeat 6 --out $(B)/bench/darts-fcfs-preempt >/dev/null
	@python3 tools/bench/makespan_ratio.py fcfs $(B)/bench/darts-fcfs-preempt/report.json

# activations: compute slowdown with blockers per policy and mode, activation latency
bench:: $(TASKHOP)
	@bash tools/bench/activations.sh $(TASKHOP)
