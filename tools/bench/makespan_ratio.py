#!/usr/bin/env python3
"""makespan_ratio.py — one policy's darts makespan with and without preemption, from ONE
compare that interleaved them (`--policies POLICY --preempt MS,0`: runs labelled
POLICY/pMS and POLICY/p0, one of each per repeat, back to back), as bench lines: the two
medians and their ratio; then, as '#' lines, the ratios of the pairs (repeat i with over
repeat i without: the two ran a second apart, so machine drift cancels in each), their
median, min and max. Usage: makespan_ratio.py POLICY REPORT.json"""
import json
import statistics
import sys


def makespans(runs, label):
    """{repeat: makespan_s} of the runs labelled `label`."""
    return {int(r["repeat"]): r["makespan_s"] for r in runs
            if r.get("policy") == label and r.get("makespan_s") is not None}


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: makespan_ratio.py POLICY REPORT.json (a compare --preempt MS,0)")
    policy, path = sys.argv[1:]
    try:
        with open(path) as f:
            runs = json.load(f)["runs"]
    except (OSError, KeyError, TypeError, ValueError) as e:
        sys.exit(f"makespan_ratio.py: no runs in {path}: {e}")
    labels = sorted({r.get("policy") for r in runs
                     if str(r.get("policy", "")).startswith(policy + "/p")})
    without = makespans(runs, policy + "/p0")
    with_labels = [lab for lab in labels if lab != policy + "/p0"]
    if not without or len(with_labels) != 1:
        sys.exit(f"makespan_ratio.py: {path} needs {policy}/p0 and one {policy}/pMS "
                 f"(compare --policies {policy} --preempt MS,0); it has {labels}")
    with_ = makespans(runs, with_labels[0])
    pairs = sorted(set(with_) & set(without))
    if not pairs:
        sys.exit(f"makespan_ratio.py: no repeat of {path} has both {with_labels[0]} and {policy}/p0")
    with_s = statistics.median(with_.values())
    without_s = statistics.median(without.values())
    ratios = [with_[i] / without[i] for i in pairs]
    print(f"bench: darts_makespan_{policy}_preempt {with_s:.4f} s")
    print(f"bench: darts_makespan_{policy} {without_s:.4f} s")
    print(f"bench: darts_makespan_{policy}_preempt_over_without {with_s / without_s:.3f} ratio")
    print(f"# darts_makespan_{policy}_preempt_over_without: {with_labels[0]} over {policy}/p0 "
          f"per repeat, {len(pairs)} pairs: median {statistics.median(ratios):.3f}, "
          f"min {min(ratios):.3f}, max {max(ratios):.3f}")
    print("#   pairs: " + " ".join(f"{x:.3f}" for x in ratios))


if __name__ == "__main__":
    main()
