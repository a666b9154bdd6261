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
"""

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


if __name__ == "__main__":
    for q in queries():
        print(q)
