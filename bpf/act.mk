# act.mk — the activation object needs BPF atomics (compare-and-swap): -mcpu=v3, which
# the BPF object rules (the Makefile's, tools/arm64/arm64.mk's) read as BPF_CPU_<name>.
BPF_CPU_taskhop_act := -mcpu=v3
