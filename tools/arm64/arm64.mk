# arm64.mk — `make test-arm64`: cross-builds the runtime, its runtime and policy suites,
# the BPF programs and the taskhop command for arm64, and runs them under qemu-aarch64.
#
# Objects go to build-arm64/ with their own rules (the host's CC and LDLIBS stay as
# they are); the arm64 libraries come from Debian's arm64 packages (tools/arm64/sysroot.sh).

A64 := build-arm64
A64_CC := aarch64-linux-gnu-gcc
A64_ROOT := $(A64)/sysroot
A64_LIBDIRS := $(A64_ROOT)/usr/lib/aarch64-linux-gnu $(A64_ROOT)/lib/aarch64-linux-gnu
A64_CPPFLAGS := -Iuser/runtime -Iuser/record -Iuser/dist -Ibpf -Itools -I$(A64) -I$(B) \
	-isystem $(A64_ROOT)/usr/include -isystem $(A64_ROOT)/usr/include/aarch64-linux-gnu
A64_CFLAGS := -O2 -g -std=gnu11 -Wall -Wextra -Werror -fno-omit-frame-pointer -MMD -MP \
	-DTASKHOP_SAN_none
A64_LDFLAGS := $(foreach d,$(A64_LIBDIRS),-L$(d) -Wl,-rpath-link,$(d))
A64_LDLIBS := -lhwloc -lpthread -lm -ljson-c

# The suites that need no kernel of their own: qemu-user emulates a process, not a
# kernel, so the BPF suites (test_record*) cannot load anything there.
# test_policy_plugin loads plugins that tests/plugins.mk builds for the host only.
A64_TEST_NAMES := test_runtime test_deque test_fpenv \
	$(filter-out test_policy_plugin,$(notdir $(basename $(wildcard tests/test_policy*.c))))
A64_TESTS := $(addprefix $(A64)/tests/,$(A64_TEST_NAMES))
A64_SKIPPED := $(filter-out $(A64_TEST_NAMES),$(notdir $(basename $(TEST_SRC))))

A64_LIB_RUNTIME := $(A64)/libtaskhop.a
A64_LIBS := $(A64)/libthtools.a $(A64)/libthrecord.a $(A64)/libthdist.a $(A64_LIB_RUNTIME)
A64_SKELS := $(patsubst bpf/%.bpf.c,$(A64)/%.skel.h,$(BPF_SRC))

$(A64)/obj/%.c.o: %.c
	@mkdir -p $(dir $@)
	$(A64_CC) $(A64_CPPFLAGS) $(A64_CFLAGS) -c $< -o $@

$(A64)/obj/%.S.o: %.S
	@mkdir -p $(dir $@)
	$(A64_CC) $(A64_CPPFLAGS) -c $< -o $@

$(A64_LIB_RUNTIME): $(patsubst %,$(A64)/obj/%.o,$(RUNTIME_SRC))
$(A64)/libthrecord.a: $(patsubst %,$(A64)/obj/%.o,$(RECORD_SRC))
$(A64)/libthdist.a: $(patsubst %,$(A64)/obj/%.o,$(DIST_SRC))
$(A64)/libthtools.a: $(patsubst %,$(A64)/obj/%.o,$(TOOLS_SRC))
$(A64_LIBS):
	@rm -f $@
	aarch64-linux-gnu-ar rcs $@ $^

$(A64)/tests/%: $(A64)/obj/tests/%.c.o $(A64)/obj/tests/lib/child.c.o $(A64_LIB_RUNTIME)
	@mkdir -p $(dir $@)
	$(A64_CC) $(A64_LDFLAGS) -o $@ $^ -lcmocka $(A64_LDLIBS)

# ---- the recorder: BPF objects for __TARGET_ARCH_arm64, skeletons, the command ----
# vmlinux.h: an arm64 machine's own BTF, or (cross-building) this machine's BTF plus the
# one arm64 type the BPF side uses that another architecture's BTF lacks (user_pt_regs,
# USDT arguments). Everything else is read with CO-RE, relocated when the program loads.
$(A64)/vmlinux.h: $(B)/vmlinux.h tools/arm64/vmlinux_arm64_extra.h
	@mkdir -p $(dir $@)
	{ cat $(B)/vmlinux.h; $(if $(filter arm64,$(ARCH)),,cat tools/arm64/vmlinux_arm64_extra.h;) } > $@.tmp
	mv $@.tmp $@

$(A64)/%.bpf.o: bpf/%.bpf.c $(wildcard bpf/*.h) $(A64)/vmlinux.h
	$(CLANG) -g -O2 -target bpf $(BPF_CPU_$*) -D__TARGET_ARCH_arm64 -I$(A64) -Ibpf \
		-isystem $(A64_ROOT)/usr/include -I/usr/aarch64-linux-gnu/include -Wall -Werror -c $< -o $@

$(A64)/%.skel.h: $(A64)/%.bpf.o
	$(BPFTOOL) gen skeleton $< > $@.tmp && mv $@.tmp $@

$(patsubst %,$(A64)/obj/%.o,$(RECORD_SRC) $(TOOLS_SRC) $(TOOLS_MAIN)): $(A64_SKELS) $(B)/wl_registry.h
$(A64)/obj/tools/taskhop.c.o: A64_CPPFLAGS += $(if $(wildcard tools/cmd_record.c),-DTASKHOP_HAVE_CMD_RECORD)

$(A64)/taskhop: $(A64)/obj/$(TOOLS_MAIN).o $(A64_LIBS)
	$(A64_CC) $(A64_LDFLAGS) -o $@ $< -Wl,--start-group $(A64_LIBS) -Wl,--end-group \
		-lbpf -lelf -lz $(A64_LDLIBS)

# Kept, as the host build's objects are (they are not intermediate there).
.SECONDARY: $(patsubst %,$(A64)/obj/%.o,$(addprefix tests/,$(addsuffix .c,$(A64_TEST_NAMES)))) \
	$(patsubst bpf/%.bpf.c,$(A64)/%.bpf.o,$(BPF_SRC))

.PHONY: test-arm64 arm64-runtime arm64-recorder
arm64-runtime: $(A64_TESTS)
arm64-recorder: $(A64)/taskhop

test-arm64:
	@bash tools/arm64/sysroot.sh $(A64_ROOT)
	@$(MAKE) --no-print-directory arm64-runtime
	@if [ -r /sys/kernel/btf/vmlinux ]; then $(MAKE) --no-print-directory arm64-recorder; \
	else echo "test-arm64: recorder not built: no /sys/kernel/btf/vmlinux here to make an arm64 vmlinux.h from"; fi
	@bash tools/arm64/run.sh $(A64) "$(A64_SKIPPED)" $(A64_TESTS)

-include $(shell find $(A64)/obj -name '*.d' 2>/dev/null)

.PHONY: clean-arm64
clean: clean-arm64
clean-arm64:
	rm -rf $(A64)
