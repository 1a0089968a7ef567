#!/usr/bin/env python3
"""makespan_ratio.py — one policy's median darts makespan in two compare reports, and their
ratio, as bench lines: POLICY WITH.json (--preempt) WITHOUT.json."""
import json
import sys


def median_makespan(path, policy):
    with open(path) as f:
        stat = json.load(f)["policies"][policy]["makespan_s"]
    return stat["median"]


def main():
    if len(sys.argv) != 4:
        sys.exit("usage: makespan_ratio.py POLICY WITH_PREEMPT.json WITHOUT.json")
    policy, with_path, without_path = sys.argv[1:]
    try:
        with_s = median_makespan(with_path, policy)
        without_s = median_makespan(without_path, policy)
    except (OSError, KeyError, TypeError, ValueError) as e:
        sys.exit(f"makespan_ratio.py: no {policy} makespan in {with_path} or {without_path}: {e}")
    print(f"bench: darts_makespan_{policy}_preempt {with_s:.4f} s")
    print(f"bench: darts_makespan_{policy} {without_s:.4f} s")
    print(f"bench: darts_makespan_{policy}_preempt_over_without {with_s / without_s:.3f} ratio")


if __name__ == "__main__":
    main()
