#!/usr/bin/env python3
"""Print 100 dashboard queries over the flights stream, one per line, deterministically.

Each query is one dashboard: per-origin count, avg, max and min of delay over one hopping
window. The windows follow the paper's generators (Wu et al., section 5, as src/wcg/eval.rs
implements them), in minutes: 50 from RandomGen (Algorithm 5: a slide s in [1, S_MAX], a
range k*s with k in [1, K_MAX]) and 50 from ChainGen in chains of 5 (each window covered by
the one before it: its slide a multiple of the previous slide, its range at least the
previous range and a whole number of previous slides beyond it). This is a Python port of the
same rules with its own random numbers (seed 2021), not the Rust generator's exact draws.

    python3 scripts/dashboard_queries.py > /tmp/dashboards.sql

`--mix random [--n 84] [--seed 33]` prints a seeded mix of dashboard queries instead
(`random_dashboards`, which scripts/bench_share.py runs): grouped by origin and ungrouped,
with one of three WHERE clauses, one or two windows each whose slides come from a set of
co-prime lengths (1, 7, 13, 15, 17 and 60 minutes) and whose ranges are 1 to 24 slides
(at most a day), one to four aggregates, and a HAVING on about half of them.
"""

import argparse
import random

S_MAX, K_MAX, SEED = 20, 10, 2021
START = "START AT '2001-01-01 00:00:00'"


def random_gen(rng, n, seen):
    out = []
    while len(out) < n:
        s = rng.randint(1, S_MAX)
        w = (rng.randint(1, K_MAX) * s, s)
        if w not in seen:
            seen.add(w)
            out.append(w)
    return out


def chain_gen(rng, n, seen):
    out = []
    while len(out) < n:
        s = rng.randint(1, 5)
        chain = [(rng.randint(1, K_MAX) * s, s)]
        while len(chain) < 5:
            r0, s0 = chain[-1]
            s = s0 * rng.randint(1, 3)
            # r - r0 a multiple of s0 and r a multiple of s: r = r0 + j*s0 for some j >= 0.
            cands = [r0 + j * s0 for j in range(0, 4 * K_MAX) if (r0 + j * s0) % s == 0]
            w = (rng.choice(cands[:4]), s)
            if w in chain:
                continue
            chain.append(w)
        for w in chain:
            if w not in seen and len(out) < n:
                seen.add(w)
                out.append(w)
    return out


def queries():
    rng = random.Random(SEED)
    seen = set()
    windows = random_gen(rng, 50, seen) + chain_gen(rng, 50, seen)
    return [
        "SELECT origin, wtime(*), count(*), avg(delay), max(delay), min(delay) FROM flights "
        f"[RANGE BY '{r} minutes' SLIDE BY '{s} minutes' {START}] GROUP BY origin"
        for r, s in windows
    ]


WHERES = [None, "delay > 15", "distance > 1000"]
SLIDES = [1, 7, 13, 15, 17, 60]
MULTIPLES = [1, 2, 3, 4, 6, 12, 24]
AGGREGATES = ["count(*)", "avg(delay)", "max(delay)", "min(delay)", "sum(distance)"]


def random_dashboards(n=84, seed=33):
    """A seeded mix of `n` dashboard queries (see the module docs), as SQL text."""
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        grouped = rng.random() < 0.5
        where = rng.choice(WHERES)
        windows = []
        for _ in range(rng.choice([1, 1, 2])):
            s = rng.choice(SLIDES)
            k = rng.choice([m for m in MULTIPLES if m * s <= 1440])
            if (k * s, s) not in windows:
                windows.append((k * s, s))
        aggs = [a for a in AGGREGATES if rng.random() < 0.5] or ["count(*)"]
        having = ""
        if rng.random() < 0.5:
            min_r = min(r for r, _ in windows)
            having = (
                f" HAVING count(*) >= {max(1, min_r // 6)}"
                if grouped
                else " HAVING max(delay) > 60"
            )
        clauses = " ".join(
            f"[RANGE BY '{r} minutes' SLIDE BY '{s} minutes' {START}]" for r, s in windows
        )
        select = ", ".join((["origin"] if grouped else []) + ["wtime(*)"] + aggs)
        text = f"SELECT {select} FROM flights {clauses}"
        if where:
            text += f" WHERE {where}"
        if grouped:
            text += " GROUP BY origin"
        out.append(text + having)
    return out


# The four dashboards of issue 33 whose slides (20, 15, 30, 13 minutes) share only a
# one-minute pane: one WHERE and GROUP BY, windows 40/20, 45/15, 90/30 with 60, and 143/13.
FAMILY = [
    [(40, 20)],
    [(45, 15)],
    [(90, 30), (60, 60)],
    [(143, 13)],
]


def family():
    """The issue's four-query family, as SQL text."""
    return [
        "SELECT origin, wtime(*), count(*), avg(delay), max(delay) FROM flights "
        + " ".join(f"[RANGE BY '{r} minutes' SLIDE BY '{s} minutes' {START}]" for r, s in ws)
        + " WHERE delay > 0 GROUP BY origin"
        for ws in FAMILY
    ]


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--mix", choices=["paper", "random", "family"], default="paper")
    ap.add_argument("--n", type=int, default=84)
    ap.add_argument("--seed", type=int, default=33)
    args = ap.parse_args()
    if args.mix == "random":
        qs = random_dashboards(args.n, args.seed)
    elif args.mix == "family":
        qs = family()
    else:
        qs = queries()
    for q in qs:
        print(q)
