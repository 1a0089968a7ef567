#!/usr/bin/env python3
"""feedback_model.py — the feedback policy on darts without runtime costs: mean completion
over the SPT bound for a range of fixed top quanta q0, and for q0 learned as policy_feedback.c
does (1.5 x the median attained time of the last 16 finished tasks, 50 ms until one has), both
spawn orders, with and without preemption.

usage: feedback_model.py [--small MS] [--large MS] [--count K] [--workers W] [--preempt MS]
                         [--spread LO,HI]
Defaults: darts' sizes on an idle machine here (1e7 draws ~ 11 ms, 1e9 ~ 1100 ms).
--spread: each short task's size drawn uniformly from [LO, HI] ms instead (the mean of 30
seeded trials), as identical tasks measure on a VM whose speed drifts: 14 to 27 ms for
1e7 draws within one darts run on the 2026-12 test guest."""
import argparse
import heapq
import random

from darts_model import spt_mean


LEARN_START_MS, LEARN_MULT, LEARN_RECENT, LEARN_MIN_MS = 50.0, 1.5, 16, 0.1


def simulate(sizes, workers, q0, preempt, levels=8):
    """sizes: work per task in ms, in spawn order; each is 10 cycles with a yield before
    each. q0 None: learned. Returns the mean completion time in ms."""
    learn = q0 is None
    state = {"q0": LEARN_START_MS if learn else q0}
    recent = []

    def key(t):
        lvl, q, end = 0, state["q0"], state["q0"]
        while lvl < levels - 1 and attained[t] >= end:
            q *= 2
            end += q
            lvl += 1
        return (lvl, t)

    n = len(sizes)
    left = [[s / 10] * 10 for s in sizes]  # work left per cycle
    attained = [0.0] * n
    done = [None] * n
    heap = [key(t) for t in range(n)]
    heapq.heapify(heap)
    run = [None] * workers        # task on each worker
    since = [0.0] * workers       # start of its run (for the preemption tick)
    now = 0.0
    while any(d is None for d in done):
        for w in range(workers):  # idle workers take the top of the heap
            if run[w] is None and heap:
                run[w] = heapq.heappop(heap)[1]
                since[w] = now
        # next event: a cycle ends, or a run reaches its quantum
        step = None
        for w, t in enumerate(run):
            if t is None:
                continue
            c = next(i for i, x in enumerate(left[t]) if x > 0)
            dt = left[t][c]
            if preempt:
                dt = min(dt, since[w] + preempt - now)
            if step is None or dt < step:
                step = dt
        step = max(step, 0.0)
        now += step
        for w, t in enumerate(run):
            if t is None:
                continue
            c = next(i for i, x in enumerate(left[t]) if x > 0)
            left[t][c] -= step
            attained[t] += step
            cycle_end = left[t][c] <= 1e-9
            if cycle_end:
                left[t][c] = 0
            if all(x == 0 for x in left[t]):
                done[t] = now
                run[w] = None
                if learn:
                    recent = (recent + [attained[t]])[-LEARN_RECENT:]
                    med = sorted(recent)[len(recent) // 2]
                    state["q0"] = max(LEARN_MIN_MS, LEARN_MULT * med)
                continue
            if not cycle_end and not (preempt and now - since[w] >= preempt - 1e-9):
                continue
            # a yield (cycle end) or a preemption: it goes on unless a smaller key waits
            if heap and heap[0] < key(t):
                heapq.heappush(heap, key(t))
                run[w] = heapq.heappop(heap)[1]
            since[w] = now
    return sum(done) / n


def ratios(smalls, large, workers, q0, preempt):
    """mean completion over the SPT bound: long task last and first with preemption, and
    first without."""
    last, first = smalls + [large], [large] + smalls
    return [simulate(last, workers, q0, preempt) / spt_mean(last, workers),
            simulate(first, workers, q0, preempt) / spt_mean(first, workers),
            simulate(first, workers, q0, 0) / spt_mean(first, workers)]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--small", type=float, default=11.0)
    ap.add_argument("--large", type=float, default=1100.0)
    ap.add_argument("--count", type=int, default=20)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--preempt", type=float, default=1.0)
    ap.add_argument("--spread", help="LO,HI: short tasks' sizes uniform in [LO, HI] ms")
    a = ap.parse_args()
    trials = [[a.small] * a.count]
    if a.spread:
        try:
            lo, hi = (float(x) for x in a.spread.split(","))
        except ValueError:
            ap.error("--spread takes LO,HI in ms, e.g. 14,27")
        if not 0 < lo <= hi:
            ap.error("--spread: need 0 < LO <= HI")
        rng = random.Random(1)
        trials = [[rng.uniform(lo, hi) for _ in range(a.count)] for _ in range(30)]
    print(f"{'q0 ms':>6} {'last, preempt':>14} {'first, preempt':>15} {'first, none':>12}")
    for q0 in (5, 10, 20, 30, 40, 50, 75, 100, 200, None):
        per = [ratios(smalls, a.large, a.workers, q0, a.preempt) for smalls in trials]
        r = [sum(x[i] for x in per) / len(per) for i in range(3)]
        name = "learn" if q0 is None else q0
        print(f"{name:>6} {r[0]:>14.3f} {r[1]:>15.3f} {r[2]:>12.3f}")


if __name__ == "__main__":
    main()
