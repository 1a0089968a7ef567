#!/usr/bin/env python3
# darts_model.py — what cooperative policies can reach on the darts experiment, in a
# discrete-event model with no runtime costs: mean completion over the SPT bound.
#
# Units: one short task's work. 20 short tasks and one 100x long task, each a first run
# that only yields, then 10 equal slices with a yield between them; 2 workers; tasks
# placed on a random worker as `@tspawnat rand(1:2)` does. Policies:
#   steal     per-worker FIFO, a yielder to the back of its own queue, an idle worker
#             steals half (rounded up) of the other's queue, oldest first
#   steal-all the same, stealing everything
#   fcfs      one queue in spawn order; a yield lets only older tasks go first
# Usage: darts_model.py [RUNS]   (median over RUNS random placements, default 200)
import heapq
import random
import statistics
import sys


def spt_mean(sizes, workers=2):
    fin = [0.0] * workers
    total = 0.0
    for x in sorted(sizes):
        i = fin.index(min(fin))
        fin[i] += x
        total += fin[i]
    return total / len(sizes)


def run(seed, policy, large_first=False, workers=2, nshort=20, large=100.0):
    rng = random.Random(seed)
    sizes = [1.0] * nshort + [large]
    if large_first:
        sizes = [large] + [1.0] * nshort
    slices = [[0.0] + [x / 10] * 10 for x in sizes]
    queues = [[] for _ in range(workers)]
    for i in range(len(sizes)):
        queues[rng.randrange(workers)].append(i)
    first_run = [True] * len(sizes)  # a placed task starts on its worker

    def pick(w):
        if policy == "fcfs":
            mine = [k for k in queues[w] if first_run[k]]
            if mine:
                queues[w].remove(mine[0])
                return mine[0]
            ready = [k for q in queues for k in q if not first_run[k]]
            if not ready:
                return None
            k = min(ready)
            for q in queues:
                if k in q:
                    q.remove(k)
            return k
        if queues[w]:
            return queues[w].pop(0)
        victims = [v for v in range(workers) if v != w and any(not first_run[k] for k in queues[v])]
        if not victims:
            return None
        v = rng.choice(victims)
        movable = [k for k in queues[v] if not first_run[k]]
        n = len(movable) if policy == "steal-all" else (len(movable) + 1) // 2
        taken = movable[:n]
        for k in taken:
            queues[v].remove(k)
        queues[w].extend(taken[1:])
        return taken[0]

    done, events, idle, clock = {}, [], list(range(workers)), 0.0
    while len(done) < len(sizes):
        for w in list(idle):
            k = pick(w)
            if k is None:
                continue
            idle.remove(w)
            first_run[k] = False
            # fcfs: the task runs on while nothing older is ready
            work = slices[k].pop(0)
            while policy == "fcfs" and slices[k] and not any(
                    j < k and not first_run[j] for q in queues for j in q) and not any(
                    first_run[j] for j in queues[w]):
                work += slices[k].pop(0)
            heapq.heappush(events, (clock + work, w, k))
        if not events:
            break
        clock, w, k = heapq.heappop(events)
        if slices[k]:
            queues[w].append(k)
        else:
            done[k] = clock
        idle.append(w)
    return (sum(done.values()) / len(done)) / spt_mean(sizes)


def main():
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 200
    for policy in ("steal", "steal-all", "fcfs"):
        for large_first in (False, True):
            r = [run(s, policy, large_first) for s in range(runs)]
            print("model: darts %-9s %-12s mean completion / SPT bound: median %.2f" %
                  (policy, "large first" if large_first else "large last", statistics.median(r)))


if __name__ == "__main__":
    main()
