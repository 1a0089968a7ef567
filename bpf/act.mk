# act.mk — the activation object needs BPF atomics (compare-and-swap): -mcpu=v3.
$(B)/taskhop_act.bpf.o: bpf/taskhop_act.bpf.c $(wildcard bpf/*.h) $(B)/vmlinux.h
	$(CLANG) -g -O2 -target bpf -mcpu=v3 -D__TARGET_ARCH_$(ARCH) -I$(B) -Ibpf \
		-I/usr/include/$(shell uname -m)-linux-gnu -Wall -Werror -c $< -o $@
