#!/usr/bin/env bash
# activations.sh — `make bench` lines for activations: compute tasks' mean completion with
# 2 blockers (10 x 50 ms nanosleep each) over without, per policy and mode (median of 7), and the latency
# from a block to a spare serving the worker (bpf mode). Usage: activations.sh TASKHOP
set -euo pipefail
taskhop=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
common=(darts --workers 2 --small 1e7 --large 1e7 --count 20 --no-bpf --quiet)

compute_mean() { # json file -> compute tasks' mean completion (s)
	python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["extra"]["compute_mean_completion_s"])' "$1"
}

modes=(off explicit)
if "$taskhop" run "${common[@]}" --count 1 --small 10 --large 10 --activations bpf \
	--json "$tmp/probe.json" >/dev/null 2>&1; then
	modes=(off bpf explicit)
else
	echo "bench: (bpf activations unavailable: not root? blockers_compute_slowdown_*_bpf skipped)"
fi
# Seven repeats, interleaved (policy, mode, repeat); the figure is the median of the
# per-repeat ratios. One pair's ratio spreads from 0.64 to 1.26 on the 2-vCPU Zen 5 guest
# (the same darts run's compute mean moves from 0.08 to 0.17 s with the host's load), so
# three repeats missed 1.10 in 2 of 28 readings where the others read 0.85 to 1.07.
# The pair's order alternates (without first in odd repeats, with first in even ones),
# so that an order effect falls on both sides alike: a run after the blockers' idle tail
# starts on vCPUs idle for 0.4 s (12 pairs of shared/explicit showed no clear effect).
reps=${TH_ACT_REPS:-7}
run_pair() { # policy mode repeat
	local without=("$taskhop" run "${common[@]}" --policy "$1" --activations "$2" --json "$tmp/a.json")
	local with=("$taskhop" run "${common[@]}" --policy "$1" --activations "$2" \
		--blockers 2 --block-ms 50 --json "$tmp/b.json")
	if [ $(($3 % 2)) = 1 ]; then
		"${without[@]}" && "${with[@]}"
	else
		"${with[@]}" && "${without[@]}"
	fi
}
for r in $(seq 1 "$reps"); do
	for policy in steal shared; do
		for mode in "${modes[@]}"; do
			run_pair "$policy" "$mode" "$r"
			if [ "$mode" = bpf ]; then cp "$tmp/b.json" "$tmp/lat_${policy}_$r.json"; fi
			echo "$policy $mode $(compute_mean "$tmp/a.json") $(compute_mean "$tmp/b.json")" >>"$tmp/ratios"
		done
	done
done
python3 - "$tmp/ratios" <<'PY'
import sys
by = {}
for line in open(sys.argv[1]):
    pol, mode, without, with_ = line.split()
    by.setdefault((pol, mode), []).append(float(with_) / float(without))
for (pol, mode), rs in by.items():
    s = sorted(rs)
    print("bench: blockers_compute_slowdown_%s_%s %.3f ratio" % (pol, mode, s[len(s) // 2]))
    print("#   %s/%s: %d repeats, %s" % (pol, mode, len(s), " ".join("%.3f" % x for x in rs)))
PY
if ls "$tmp"/lat_*.json >/dev/null 2>&1; then
	python3 - "$tmp"/lat_*.json <<'PY'
import json, sys
med = [json.load(open(f))["activation"]["latency_us_median"] for f in sys.argv[1:]]
p99 = [json.load(open(f))["activation"]["latency_us_p99"] for f in sys.argv[1:]]
med = [x for x in med if x is not None]; p99 = [x for x in p99 if x is not None]
if med:
    print("bench: activation_latency_us_median %.1f us" % sorted(med)[len(med) // 2])
    print("bench: activation_latency_us_p99 %.1f us" % max(p99))
PY
fi
# What activations cost when nothing blocks: darts with no blockers, bpf over off, median of
# 7 interleaved runs of one compare (the spread of one run is ±2 %, so the median's about ±1 %;
# the issue's goal: within 1 %; 15 runs took a minute of make bench's 5).
if [ "${modes[1]}" = bpf ]; then
	"$taskhop" compare darts --policies steal,shared --activations off,bpf --repeat 7 --workers 2 \
		--no-bpf --large 1e8 --force --out "$tmp/idle" >/dev/null 2>&1
	python3 - "$tmp/idle/report.json" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))["policies"]
for pol in ("steal", "shared"):
    off, bpf = p[pol + "/off"]["mean_completion_s"]["median"], p[pol + "/bpf"]["mean_completion_s"]["median"]
    print("bench: activations_idle_cost_%s_bpf_over_off %.3f ratio" % (pol, bpf / off))
PY
fi
