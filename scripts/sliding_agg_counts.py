#!/usr/bin/env python3
"""Panes against Two-Stacks for Q1's hopping window, counted on the real flights.

Q1 (per-origin count/avg/max, RANGE 1 hour SLIDE 10 minutes) keeps one partial table per
10-minute pane; each slide event merges its window's six pane tables (the first is
copied). Two-Stacks (Tangwongsan et al., "General incremental sliding-window
aggregation") keeps suffix aggregates of the older panes and a running aggregate of the
newer ones, so that one window costs one merge of two tables plus the amortised flips.
With grouped aggregates a "merge" is one per group present, so this script counts group
merges and group copies per slide event for both, over the flights' origins:

    python3 scripts/sliding_agg_counts.py [bench-data/flights-3m.csv]

(the CSV is what scripts/bench.py writes from the Parquet file).
"""

import collections
import csv
import sys
from datetime import datetime

K = 6  # panes per window
PANE_S = 600


def panes_of(path):
    panes = collections.defaultdict(set)
    with open(path) as f:
        r = csv.reader(f)
        next(r)
        for row in r:
            panes[int(datetime.fromisoformat(row[0]).timestamp()) // PANE_S].add(row[3])
    lo, hi = min(panes), max(panes)
    return [panes.get(k, set()) for k in range(lo, hi + 1)]


def with_panes(P):
    merges = copies = 0
    for e in range(K - 1, len(P)):
        ws = [p for p in P[e - K + 1:e + 1] if p]
        if ws:
            copies += len(ws[0])
            merges += sum(len(p) for p in ws[1:])
    return merges, copies


def with_two_stacks(P):
    merges = copies = 0
    front, back, back_agg = [], [], set()
    for e, p in enumerate(P):
        back.append(p)
        merges += len(p & back_agg)
        copies += len(p - back_agg)
        back_agg |= p
        if e >= K:
            if not front:  # flip: suffix aggregates of every pane in the back stack
                suffix = set()
                for q in reversed(back):
                    copies += len(suffix) + len(q - suffix)
                    merges += len(q & suffix)
                    suffix = suffix | q
                    front.append(suffix)
                back, back_agg = [], set()
            front.pop()
        if e >= K - 1:
            top = front[-1] if front else set()
            copies += len(top) + len(back_agg - top)
            merges += len(back_agg & top)
    return merges, copies


def main():
    P = panes_of(sys.argv[1] if len(sys.argv) > 1 else "bench-data/flights-3m.csv")
    n = len(P) - K + 1
    groups = sum(len(p) for p in P) / len(P)
    print(f"{n:,} slide events, {groups:.1f} origins per 10-minute pane on average")
    for name, (m, c) in [("panes", with_panes(P)), ("Two-Stacks", with_two_stacks(P))]:
        print(f"{name:>10}: {m / n:6.1f} group merges + {c / n:6.1f} group copies per slide event")


if __name__ == "__main__":
    main()
