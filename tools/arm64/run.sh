#!/usr/bin/env bash
# run.sh DIR "SKIPPED" TEST... — runs arm64 test binaries under qemu-aarch64-static with
# tests/run.sh, says which suites cannot run there, and smoke-runs DIR/taskhop if built.
set -euo pipefail
cd "$(dirname "$0")/../.."
dir=$1 skipped=$2
shift 2
root=$PWD/$dir/sysroot
# qemu loads the arm64 ld.so and libc from the cross toolchain's tree; the guest's
# ld.so finds cmocka, hwloc and libbpf in the sysroot through LD_LIBRARY_PATH.
export QEMU_LD_PREFIX=/usr/aarch64-linux-gnu
export LD_LIBRARY_PATH=$root/usr/lib/aarch64-linux-gnu:$root/lib/aarch64-linux-gnu
# Tests skip or shrink what the emulator cannot do (huge pages, a million threads).
export TASKHOP_TEST_EMULATED=qemu-user
wrap=$dir/qemu
mkdir -p "$wrap"
wrappers=()
for t in "$@"; do
	w=$wrap/$(basename "$t")
	printf '#!/bin/sh\nexec qemu-aarch64-static %q "$@"\n' "$PWD/$t" > "$w"
	chmod +x "$w"
	wrappers+=("$w")
done
echo "test-arm64: $(qemu-aarch64-static --version | head -1), $(aarch64-linux-gnu-gcc --version | head -1)"
if [ -n "$skipped" ]; then
	echo "test-arm64: not run under qemu-user (it emulates a process, not a kernel: no BPF; the"
	echo "test-arm64: CLI/dist/report/install suites and the plugins are host-only; preemption and"
	echo "test-arm64: BPF activations are x86-64/kernel features): $skipped"
fi
rc=0
bash tests/run.sh "${wrappers[@]}" || rc=$?
if [ -x "$dir/taskhop" ]; then
	out=$(qemu-aarch64-static "$dir/taskhop" run darts --no-bpf --small 1e4 --large 1e5 2>&1) || {
		printf '%s\n' "$out"
		echo "test-arm64: FAILED: $dir/taskhop run darts --no-bpf under qemu"
		rc=1
	}
	[ $rc -ne 0 ] || echo "test-arm64: $dir/taskhop (recorder, BPF objects for __TARGET_ARCH_arm64) built; 'run darts --no-bpf' under qemu: $(printf '%s\n' "$out" | head -1)"
fi
exit "$rc"
