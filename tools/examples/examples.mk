# examples.mk — builds the README's runtime example and the example policy plugin
# (build/examples/policy_lifo.so), the plugin against the public headers only, so
# that neither can rot.
EXAMPLE_PLUGINS_SRC := $(wildcard tools/examples/policy_*.c)
EXAMPLES_SRC := $(filter-out $(EXAMPLE_PLUGINS_SRC),$(wildcard tools/examples/*.c))
EXAMPLES := $(patsubst tools/examples/%.c,$(B)/examples/%,$(EXAMPLES_SRC))
all: $(EXAMPLES)
$(foreach s,$(EXAMPLE_PLUGINS_SRC),$(eval $(call plugin_rule,$(s),$(B)/examples/$(basename $(notdir $(s))).so)))

$(B)/examples/%: $(B)/obj/tools/examples/%.c.o $(LIB_RUNTIME)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $< $(LIB_RUNTIME) -lhwloc -lpthread -lm
