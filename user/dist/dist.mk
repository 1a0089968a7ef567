# dist.mk — worker processes (user/dist): the MPI transport plugin, built with mpicc only
# when OpenMPI is installed, so that no other binary has to link libmpi.
#
# libthdist.a holds the registry, framing, pool, local fork+socketpair transport and
# the MPI *loader*; the code that calls MPI lives in $(B)/libthdist_mpi.so, which
# the loader dlopens when a run asks for --mpi. One `taskhop` binary therefore runs
# both `taskhop run leibniz --procs 2` and `mpirun -n 3 taskhop run leibniz --mpi`.

MPICC ?= $(shell command -v mpicc 2>/dev/null)
DIST_MPI_PLUGIN := $(if $(MPICC),$(B)/libthdist_mpi.so)

all: $(DIST_MPI_PLUGIN)

$(B)/libthdist_mpi.so: user/dist/mpi/th_mpi_plugin.c user/dist/dist_int.h user/dist/frame.h user/dist/dist.h \
			  user/runtime/errbuf.h
	@mkdir -p $(dir $@)
	$(MPICC) -std=gnu11 -O2 -g -Wall -Wextra -Werror -fPIC -shared -Iuser/dist -Iuser/runtime -o $@ $<

.PHONY: install-dist-mpi
install: install-dist-mpi
install-dist-mpi: $(DIST_MPI_PLUGIN)
	$(if $(DIST_MPI_PLUGIN),install -d $(DESTDIR)$(PREFIX)/lib/taskhop && install -m 644 $(DIST_MPI_PLUGIN) $(DESTDIR)$(PREFIX)/lib/taskhop/,@echo "install: no mpicc, the MPI transport plugin was not built")

# ---- make bench: the article's Leibniz pmap, serial vs 2 processes vs mpirun -n 3 ----
# tools/bench/leibniz_bench.c runs `taskhop run leibniz --procs 2` (which also times the
# serial map in the same process) LZ_BENCH_REPS times (default 7, ~4 s: the whole
# `make bench` must stay under 5 min), prints the minimum times (as the article's @btime),
# the median and worst per-run speedup and the median memory as `bench: NAME VALUE UNIT`,
# then `mpirun -n 3 taskhop run leibniz --mpi`.
LZ_BENCH := $(B)/leibniz_bench
all: $(LZ_BENCH)
$(LZ_BENCH): $(B)/obj/tools/bench/leibniz_bench.c.o $(LIBS)
	$(CC) $(LDFLAGS) -o $@ $< -Wl,--start-group $(LIBS) -Wl,--end-group $(LDLIBS)

bench:: $(LZ_BENCH) $(TASKHOP) $(DIST_MPI_PLUGIN)
	@echo "== leibniz pmap (user/dist): 2 x 10^8 terms, serial vs 2 worker processes vs mpirun -n 3"
	@$(LZ_BENCH) $${LZ_BENCH_REPS:-7} $(B)/taskhop
