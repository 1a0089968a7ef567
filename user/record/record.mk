# record.mk — the recorder's build steps: its overhead benchmarks (tools/bench/rec_*.c),
# built with everything and run by `make bench`.
REC_BENCH_SRC := $(wildcard tools/bench/rec_*.c)
REC_BENCH := $(patsubst tools/bench/%.c,$(B)/rec-bench/%,$(REC_BENCH_SRC))
REC_DARTS_OBJ := $(B)/obj/tests/lib/rec_darts.c.o

$(B)/rec-bench/%: $(B)/obj/tools/bench/%.c.o $(REC_DARTS_OBJ) $(LIBS)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $< $(REC_DARTS_OBJ) -Wl,--start-group $(LIBS) -Wl,--end-group $(LDLIBS)

all: $(REC_BENCH)

bench:: $(REC_BENCH)
	@for b in $(REC_BENCH); do $$b || exit 1; done

# tests/test_join.c reads captured recordings from tests/fixtures, wherever it runs.
$(B)/obj/tests/test_join.c.o: CPPFLAGS += -DTH_FIXTURES=\"$(abspath tests/fixtures)\"
