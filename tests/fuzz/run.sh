#!/usr/bin/env bash
# Runs each libFuzzer binary given as an argument for $FUZZ_SECONDS on a scratch copy of its
# seed corpus (tests/fuzz/corpus/NAME/, never written to), prints one "fuzz: NAME ..." line
# each, and exits 1 if any target found a crash, a leak or a timeout (its input is kept).
set -u
secs=${FUZZ_SECONDS:-60}
failed=()
for bin in "$@"; do
	name=$(basename "$bin"); name=${name#fuzz_}
	work=$(mktemp -d "${TMPDIR:-/tmp}/taskhop-fuzz-$name.XXXXXX")
	[ -d "tests/fuzz/corpus/$name" ] && cp -r "tests/fuzz/corpus/$name/." "$work/"
	artifacts=$(dirname "$bin")/artifacts/$name
	mkdir -p "$artifacts"
	log=$(dirname "$bin")/$name.log
	# a single allocation over 256 MiB from a small input is a finding (a length taken on trust)
	"$bin" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -malloc_limit_mb=256 -print_final_stats=1 \
		-artifact_prefix="$artifacts/" "$work" >"$log" 2>&1
	rc=$?
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
	if [ "$rc" -ne 0 ]; then
		failed+=("$name")
		grep -E '^(==[0-9]+==ERROR|SUMMARY|.*runtime error|ALARM|.*Test unit written)' "$log" | head -5
		echo "fuzz: $name FAILED after ${execs:-?} executions in ${secs}s (log: $log, input in $artifacts/)"
	else
		echo "fuzz: $name ${execs:-?} executions in ${secs}s, no crash, leak or timeout"
	fi
	rm -rf "$work"
done
[ ${#failed[@]} -eq 0 ] || { echo "fuzz: failing targets: ${failed[*]}"; exit 1; }
