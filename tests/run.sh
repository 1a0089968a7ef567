#!/usr/bin/env bash
# Runs each cmocka test binary given as an argument, shows its output, and
# ends with one "tests: N passed, N failed, N skipped" line; exits 1 if any failed.
set -u
passed=0 failed=0 skipped=0 broken=()
for t in "$@"; do
	echo "== $(basename "$t")"
	out=$(timeout "${TASKHOP_TEST_TIMEOUT:-600}" "$t" 2>&1)
	rc=$?
	printf '%s\n' "$out"
	p=$(printf '%s\n' "$out" | sed -n 's/^\[  PASSED  \] \([0-9]*\) test.*/\1/p' | awk '{s+=$1} END {print s+0}')
	f=$(printf '%s\n' "$out" | sed -n 's/^\[  FAILED  \] \([0-9]*\) test.*/\1/p' | awk '{s+=$1} END {print s+0}')
	s=$(printf '%s\n' "$out" | sed -n 's/^\[  SKIPPED \] \([0-9]*\) test.*/\1/p' | awk '{s+=$1} END {print s+0}')
	passed=$((passed + p)); failed=$((failed + f)); skipped=$((skipped + s))
	if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
		# crashed, timed out or failed outside a test: count the suite as one failure
		failed=$((failed + 1))
		broken+=("$(basename "$t") (exit $rc)")
	elif [ "$rc" -ne 0 ]; then
		broken+=("$(basename "$t")")
	fi
done
[ ${#broken[@]} -gt 0 ] && echo "failing suites: ${broken[*]}"
echo "tests: $passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
