# examples.mk — builds the README's runtime example, so it cannot rot.
EXAMPLES := $(patsubst tools/examples/%.c,$(B)/examples/%,$(wildcard tools/examples/*.c))
all: $(EXAMPLES)
$(B)/examples/%: $(B)/obj/tools/examples/%.c.o $(LIB_RUNTIME)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $< $(LIB_RUNTIME) -lhwloc -lpthread -lm
