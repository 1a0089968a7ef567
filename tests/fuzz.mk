# fuzz.mk — libFuzzer targets: each tests/fuzz/fuzz_NAME.c defines LLVMFuzzerTestOneInput and
# is linked with the project's sources built by clang -fsanitize=fuzzer-no-link,address,undefined
# into $(B)/fuzz/fuzz_NAME. `make fuzz` runs each for FUZZ_SECONDS on a scratch copy of its
# seeds, tests/fuzz/corpus/NAME/, and fails on any crash, leak or timeout (tests/fuzz/run.sh).

FUZZ_SECONDS ?= 60
FUZZ_CC ?= clang
FUZZ_SRC := $(wildcard tests/fuzz/fuzz_*.c)
FUZZ_BINS := $(patsubst tests/fuzz/%.c,$(B)/fuzz/%,$(FUZZ_SRC))
FUZZ_SAN := -fsanitize=address,undefined -fno-sanitize-recover=undefined
FUZZ_CFLAGS := -O1 -g -std=gnu11 -Wall -Wextra -Werror -fno-omit-frame-pointer -MMD -MP \
	       -fsanitize=fuzzer-no-link $(FUZZ_SAN) -DTASKHOP_SAN_address
FUZZ_LIB := $(B)/fuzz/libfuzzproject.a
FUZZ_LIB_SRC := $(RUNTIME_SRC) $(RECORD_SRC) $(DIST_SRC) $(TOOLS_SRC)
fuzz_obj = $(patsubst %,$(B)/fuzz/obj/%.o,$(1))

.PHONY: fuzz fuzz-build
fuzz-build: $(FUZZ_BINS)

fuzz: $(FUZZ_BINS)
	@FUZZ_SECONDS=$(FUZZ_SECONDS) bash tests/fuzz/run.sh $(FUZZ_BINS)

$(B)/fuzz/obj/%.c.o: %.c
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(CPPFLAGS) $(FUZZ_CFLAGS) -c $< -o $@

$(B)/fuzz/obj/%.S.o: %.S
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(CPPFLAGS) -c $< -o $@

# Like the tools' objects, these may include BPF skeletons and the workload registry.
$(call fuzz_obj,$(FUZZ_LIB_SRC) $(FUZZ_SRC)): $(BPF_SKELS) $(B)/wl_registry.h

$(FUZZ_LIB): $(call fuzz_obj,$(FUZZ_LIB_SRC))
	@rm -f $@
	ar rcs $@ $^

$(B)/fuzz/fuzz_%: $(B)/fuzz/obj/tests/fuzz/fuzz_%.c.o $(FUZZ_LIB)
	$(FUZZ_CC) -fsanitize=fuzzer $(FUZZ_SAN) -o $@ $< $(FUZZ_LIB) $(LDLIBS)

-include $(shell find $(B)/fuzz/obj -name '*.d' 2>/dev/null)
