# Makefile — taskhop: the runtime (libtaskhop), the BPF recorder, worker
# processes, the `taskhop` command and the cmocka tests. `make help` lists targets.
#
# Each part may add rules in a fragment next to its code (user/dist/dist.mk,
# tools/bench/bench.mk, ...: every bpf/*.mk user/*/*.mk tools/*.mk tools/*/*.mk
# tests/*.mk); `bench::` and `demo::` are double-colon so that every fragment can add a step.

SAN ?=
# DEBUG=1: the runtime's invariant checks (user/runtime/core_check.h) without a
# sanitizer; SAN builds have them too, the release build does not.
DEBUG ?=
B ?= build$(if $(SAN),-$(SAN))$(if $(DEBUG),-debug)
PREFIX ?= /usr/local
ARCH := $(shell uname -m | sed 's/x86_64/x86/; s/aarch64/arm64/')

# gcc unless the command line or the environment names another compiler (make CC=clang).
ifeq ($(origin CC),default)
CC := gcc
endif
CLANG ?= clang
BPFTOOL ?= $(shell command -v bpftool 2>/dev/null || echo /usr/sbin/bpftool)

SANFLAGS_address := -fsanitize=address,undefined -fno-sanitize-recover=undefined
SANFLAGS_thread := -fsanitize=thread
SANFLAGS := $(SANFLAGS_$(SAN))
ifneq ($(SAN),)
ifeq ($(SANFLAGS),)
$(error SAN must be 'address' or 'thread', not '$(SAN)')
endif
endif

CFLAGS ?= -O2 -g
CFLAGS += -std=gnu11 -Wall -Wextra -Werror -fno-omit-frame-pointer $(SANFLAGS) -MMD -MP \
	  -DTASKHOP_SAN_$(or $(SAN),none) $(if $(DEBUG),-DTASKHOP_DEBUG)
# Every object can go into a shared library. Only what the public headers declare is
# exported (they say `#pragma GCC visibility push(default)`); the rest stays inside.
CFLAGS += -fPIC -fno-semantic-interposition -fvisibility=hidden
CPPFLAGS += -Iuser/runtime -Iuser/record -Iuser/dist -Ibpf -Itools -I$(B)
LDFLAGS += $(SANFLAGS)
LDLIBS += -lbpf -lelf -lz -lhwloc -lpthread -lm

obj = $(patsubst %,$(B)/obj/%.o,$(1))

RUNTIME_SRC := $(wildcard user/runtime/*.c user/runtime/*.S)
RECORD_SRC := $(wildcard user/record/*.c)
DIST_SRC := $(wildcard user/dist/*.c)
TOOLS_MAIN := tools/taskhop.c
TOOLS_SRC := $(filter-out $(TOOLS_MAIN),$(wildcard tools/*.c tools/workloads/*.c tools/workloads/*/*.c \
	     tools/report/*.c))
TEST_SRC := $(wildcard tests/test_*.c)
TEST_LIB_SRC := $(wildcard tests/lib/*.c)
BPF_SRC := $(wildcard bpf/*.bpf.c)

LIB_RUNTIME := $(B)/libtaskhop.a
LIB_RECORD := $(B)/libthrecord.a
LIB_DIST := $(B)/libthdist.a
LIB_TOOLS := $(B)/libthtools.a
LIBS := $(LIB_TOOLS) $(LIB_RECORD) $(LIB_DIST) $(LIB_RUNTIME)
TASKHOP := $(B)/taskhop
TESTS := $(patsubst tests/%.c,$(B)/tests/%,$(TEST_SRC))
BPF_SKELS := $(patsubst bpf/%.bpf.c,$(B)/%.skel.h,$(BPF_SRC))

.PHONY: all deps test demo bench install clean help
all: $(LIBS) $(TASKHOP) $(TESTS)

help:
	@echo "make          build everything into $(B)/"
	@echo "make deps     install the Debian packages taskhop needs (root)"
	@echo "make test     deps + build + run every cmocka suite (SAN=address|thread, DEBUG=1)"
	@echo "make demo     compare migration policies on the article's darts experiment"
	@echo "make bench    micro-benchmarks and peers, one 'bench: NAME VALUE UNIT' line each"
	@echo "make install  install taskhop, the libraries and headers under PREFIX=$(PREFIX)"

deps:
	@bash tools/deps.sh

# ---- C objects -------------------------------------------------------------
$(B)/obj/%.c.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -c $< -o $@

$(B)/obj/%.S.o: %.S
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(SANFLAGS) -c $< -o $@

# An object waits for (and is rebuilt with) the BPF skeletons its source includes: read
# from the #include lines, since the compiler's -MMD list exists only after a first build.
SKEL_INCLUDES := $(shell awk -F'"' '/^\#include "[a-z_]+\.skel\.h"/ { print FILENAME ":" $$2 }' \
	$(wildcard user/*/*.c tools/*.c tools/*/*.c tools/*/*/*.c tests/*.c tests/*/*.c))
$(foreach i,$(SKEL_INCLUDES),$(eval $(call obj,$(firstword $(subst :, ,$(i)))): $(B)/$(lastword $(subst :, ,$(i)))))

$(LIB_RUNTIME): $(call obj,$(RUNTIME_SRC))
$(LIB_RECORD): $(call obj,$(RECORD_SRC))
$(LIB_DIST): $(call obj,$(DIST_SRC))
$(LIB_TOOLS): $(call obj,$(TOOLS_SRC))
$(LIBS):
	@mkdir -p $(dir $@)
	@rm -f $@
	ar rcs $@ $^

$(B)/taskhop: $(call obj,$(TOOLS_MAIN)) $(LIBS)
	$(CC) $(LDFLAGS) -o $@ $< -Wl,--start-group $(LIBS) -Wl,--end-group $(LDLIBS)

$(B)/tests/%: $(B)/obj/tests/%.c.o $(call obj,$(TEST_LIB_SRC)) $(LIBS)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $< $(call obj,$(TEST_LIB_SRC)) -Wl,--start-group $(LIBS) -Wl,--end-group -lcmocka $(LDLIBS)

# ---- public headers, laid out as `make install` lays them: include/taskhop/NAME.h ----
# Examples and plugins compile against $(B)/include alone, as code outside the tree does.
PUBLIC_H := taskhop.h=user/runtime/taskhop.h policy.h=user/runtime/taskhop_policy.h \
	    record.h=user/record/record.h taskhop_abi.h=bpf/taskhop_abi.h dist.h=user/dist/dist.h
public_h_name = $(word 1,$(subst =, ,$(1)))
public_h_src = $(word 2,$(subst =, ,$(1)))
PUBLIC_H_STAGED := $(foreach h,$(PUBLIC_H),$(B)/include/taskhop/$(call public_h_name,$(h)))
define public_h_rule
$(B)/include/taskhop/$(call public_h_name,$(1)): $(call public_h_src,$(1))
	@mkdir -p $$(dir $$@)
	cp $$< $$@
endef
$(foreach h,$(PUBLIC_H),$(eval $(call public_h_rule,$(h))))
all: $(PUBLIC_H_STAGED)

# A policy plugin (taskhop_policy.h): one source compiled as outside code is, and
# linked as a shared object. $(call plugin_rule,SOURCE,PLUGIN.so)
define plugin_rule
$(call obj,$(1)): CPPFLAGS := -I$(B)/include
$(call obj,$(1)): $(PUBLIC_H_STAGED)
$(2): $(call obj,$(1))
	@mkdir -p $$(dir $$@)
	$$(CC) $$(LDFLAGS) -shared -o $$@ $$<
all: $(2)
endef

# Programs that link libtaskhop.a export its API (all that -fvisibility leaves visible)
# to the policy plugins they dlopen.
LDFLAGS += -rdynamic

# ---- BPF: vmlinux.h from the running kernel, objects, skeletons ------------
$(B)/vmlinux.h:
	@mkdir -p $(dir $@)
	@test -r /sys/kernel/btf/vmlinux || { echo "no /sys/kernel/btf/vmlinux: this kernel has no BTF; taskhop's BPF recorder needs CONFIG_DEBUG_INFO_BTF=y" >&2; exit 1; }
	$(BPFTOOL) btf dump file /sys/kernel/btf/vmlinux format c > $@.tmp && mv $@.tmp $@

$(B)/%.bpf.o: bpf/%.bpf.c $(wildcard bpf/*.h) $(B)/vmlinux.h
	$(CLANG) -g -O2 -target bpf $(BPF_CPU_$*) -D__TARGET_ARCH_$(ARCH) -I$(B) -Ibpf \
		-I/usr/include/$(shell uname -m)-linux-gnu -Wall -Werror -c $< -o $@

$(B)/%.skel.h: $(B)/%.bpf.o
	$(BPFTOOL) gen skeleton $< > $@.tmp && mv $@.tmp $@

# ---- tests -----------------------------------------------------------------
# Runs `make deps` first so that on a fresh machine this is the only command.
test:
	@$(MAKE) --no-print-directory deps
	@$(MAKE) --no-print-directory all
	@TASKHOP_BIN=$(abspath $(TASKHOP)) TASKHOP_BUILD=$(abspath $(B)) bash tests/run.sh $(TESTS)

# ---- shared libraries, pkg-config, install ---------------------------------
# libNAME.so.$(SOVERSION) (its soname) is made from libNAME.a's objects; libNAME.so
# links to it. The CLI's libthtools.a is not installed.
VERSION := $(shell sed -n 's/^\#define TASKHOP_VERSION "\(.*\)"/\1/p' tools/cli.h)
SOVERSION := 0
PUBLIC_LIBS := $(LIB_RUNTIME) $(LIB_RECORD) $(LIB_DIST)
SHLIBS := $(PUBLIC_LIBS:.a=.so.$(SOVERSION))
SHLIB_LDLIBS_taskhop := -lhwloc -lpthread -ldl -lm
SHLIB_LDLIBS_threcord := -L$(B) -ltaskhop -lbpf -lelf -lz
SHLIB_LDLIBS_thdist := -L$(B) -ltaskhop -ldl
$(B)/lib%.so.$(SOVERSION): $(B)/lib%.a
	$(CC) $(LDFLAGS) -shared -Wl,-soname,$(notdir $@) -Wl,--no-undefined -o $@ \
		-Wl,--whole-archive $< -Wl,--no-whole-archive $(SHLIB_LDLIBS_$*)
$(B)/lib%.so: $(B)/lib%.so.$(SOVERSION)
	ln -sf $(notdir $<) $@
$(filter-out $(LIB_RUNTIME:.a=.so.$(SOVERSION)),$(SHLIBS)): $(LIB_RUNTIME:.a=.so)
all: $(SHLIBS) $(SHLIBS:.so.$(SOVERSION)=.so)

# user/*/NAME.pc.in -> lib/pkgconfig/NAME.pc, with PREFIX and VERSION filled in.
PC_IN := $(wildcard user/*/*.pc.in)
LIBDIR := $(PREFIX)/lib
install: all
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(LIBDIR)/pkgconfig $(DESTDIR)$(PREFIX)/include/taskhop
	install -m 755 $(B)/taskhop $(DESTDIR)$(PREFIX)/bin/taskhop
	install -m 644 $(PUBLIC_LIBS) $(DESTDIR)$(LIBDIR)/
	install -m 755 $(SHLIBS) $(DESTDIR)$(LIBDIR)/
	for l in $(notdir $(SHLIBS)); do ln -sf $$l $(DESTDIR)$(LIBDIR)/$${l%.$(SOVERSION)}; done
	install -m 644 $(PUBLIC_H_STAGED) $(DESTDIR)$(PREFIX)/include/taskhop/
	for f in $(PC_IN); do sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@VERSION@|$(VERSION)|' $$f \
		> $(DESTDIR)$(LIBDIR)/pkgconfig/$$(basename $$f .in); done

clean:
	rm -rf build build-address build-thread

# `make bench` times itself: the first and the last of the bench:: steps that
# the part fragments add in between (it must stay under 5 minutes).
bench::
	@mkdir -p $(B) && date +%s.%N > $(B)/.bench-start
	@# Figures are only comparable from an idle machine (2 CPUs: load < 1.5).
	@awk '{ printf "bench: load_avg_1min_at_start %.2f load\n", $$1; \
		if ($$1 >= 1.5) print "# WARNING: load average " $$1 " >= 1.5 at the start: these figures are not comparable" }' /proc/loadavg

-include $(sort $(wildcard bpf/*.mk user/*/*.mk tools/*.mk tools/*/*.mk tests/*.mk))

bench::
	@awk -v s="$$(cat $(B)/.bench-start)" -v e="$$(date +%s.%N)" \
		'BEGIN { printf "bench: make_bench_total %.0f s (limit 300 s)\n", e - s }'
-include $(shell find $(B)/obj -name '*.d' 2>/dev/null)
