#!/usr/bin/env python3
"""Cross-query sharing benchmark: 100 dashboard queries over the flights stream.

    scripts/bench_share.sh [--rows N] [--queries 100] [--seed 9] [--only on|off]
                           [--mix paper|random|family]

(bench_share.sh builds tcqd in release mode and calls this script; the flights CSV is
prepared and cached by scripts/bench.py's code under bench-data/.)

The queries: per-origin count(*), avg(delay), max(delay), min(delay) over 1-3 windows each,
drawn (seeded) as the paper's generators draw them (section 5, Algorithm 5): RandomGen
(slide 1..12 hours, range k * slide with k in 1..4) for half the queries, ChainGen (each
window covered by the one before it) for the other half, all with START AT '2001-01-01'.
Each is a dashboard of the busy airports: HAVING count(*) >= 100 per hour of its shortest
range, so the rows sent stay small beside the work of aggregating.

One run per mode, each on a fresh `tcqd --memory-only`:
- all queries are registered before ingest, each by its own psql reading
  `COPY (...) TO STDOUT` (with `SET tcq.share_across_queries = off` first for "off");
- the clock runs from the start of `\\copy flights FROM '<csv>'` until every reader has
  received its last row (tcq_advance past the end, every query's tuples_in complete, then
  DROP STREAM ends the statements), as scripts/bench.py measures one query;
- with sharing on: `EXPLAIN` of the last query before it registers gives the model cost of
  the plan with and without sharing (the shared plan it joins), and after the ingest the
  time to register one more query into the running plan of all of them (psycopg,
  `DECLARE ... CURSOR` round trip, median of 21) is measured.

Throughput is tuples per second of the prefix ingested; the row counts of the two modes must
agree (they are the same queries).

`--mix` picks the queries: `paper` (the default, above); `random`, the seeded mix of 84
dashboards of `scripts/dashboard_queries.py --mix random` (grouped and ungrouped, three
WHERE clauses, co-prime slides of 1 to 60 minutes, HAVING on about half; `--seed` and
`--queries` pass through, default seed 33); `family`, the four dashboards whose slides
share only a one-minute pane (40/20, 45/15, 90/30 with 60, 143/13 minutes, one WHERE and
GROUP BY origin), which sharing must not make slower.
"""

import argparse
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench  # noqa: E402  (Server, make_csv, CSV, STREAM)
import dashboard_queries  # noqa: E402

END = "2001-07-01 01:00:00"
O = "START AT '2001-01-01 00:00:00'"


def random_gen(rng, n, s_max=12, k_max=4):
    """Algorithm 5: slide from [1, s_max], range k * slide (hours)."""
    out = []
    while len(out) < n:
        s = rng.randint(1, s_max)
        w = (rng.randint(1, k_max) * s, s)
        if w not in out:
            out.append(w)
    return out


def chain_gen(rng, n, s_max=12, k_max=4):
    """ChainGen: W_{i+1} covered by W_i (slide a multiple, range grown by whole slides)."""
    r, s = random_gen(rng, 1, s_max, k_max)[0]
    out = [(r, s)]
    while len(out) < n:
        s2 = s * rng.randint(1, 3)
        r2 = r + s * rng.randint(0, 3)
        while r2 < s2:
            r2 += s
        if (r2, s2) not in out:
            out.append((r2, s2))
        r, s = r2, s2
    return out


def queries(n, seed):
    rng = random.Random(seed)
    out = []
    for i in range(n):
        gen = random_gen if i % 2 == 0 else chain_gen
        ws = gen(rng, rng.randint(1, 3))
        clauses = " ".join(
            f"[RANGE BY '{r} hours' SLIDE BY '{s} hours' {O}]" for r, s in ws
        )
        min_r = min(r for r, _ in ws)
        out.append(
            "SELECT origin, wtime(*), wrange(*), count(*), avg(delay), max(delay), min(delay) "
            f"FROM flights {clauses} GROUP BY origin HAVING count(*) >= {100 * min_r}"
        )
    return out


def prefix_csv(rows):
    bench.make_csv()
    if rows is None:
        return bench.CSV
    path = os.path.join(bench.CACHE, f"flights-{rows}.csv")
    if not os.path.exists(path):
        tmp = path + ".tmp"
        with open(bench.CSV) as src, open(tmp, "w") as dst:
            for i, line in enumerate(src):
                if i > rows:  # the header plus `rows` lines
                    break
                dst.write(line)
        os.replace(tmp, path)
    return path


def rate_per_hour(csv):
    """Tuples per hour of stream time in `csv` (first to last timestamp)."""
    from datetime import datetime

    with open(csv) as f:
        next(f)
        first = next(f).split(",")[0]
        n, last = 1, first
        for line in f:
            n += 1
            last = line.split(",")[0]
    hours = (datetime.fromisoformat(last) - datetime.fromisoformat(first)).total_seconds() / 3600
    return max(1, round(n / max(hours, 1e-9)))


def register_time_ms(port, text, n=21):
    """Median round trip of DECLARE (registration into the running plan) and CLOSE."""
    import psycopg

    times = []
    with psycopg.connect(f"host=127.0.0.1 port={port} user=tcq dbname=tcq", autocommit=True) as c:
        # A START AT after the data: it may join the running plan.
        late = text.replace(O, "START AT '2001-08-01 00:00:00'")
        for _ in range(n):
            c.execute("BEGIN")
            t0 = time.perf_counter()
            c.execute(f"DECLARE r CURSOR FOR {late}")
            times.append((time.perf_counter() - t0) * 1000)
            plan = c.execute(
                "SELECT plan_id FROM tcq_queries ORDER BY id DESC LIMIT 1"
            ).fetchone()[0]
            c.execute("CLOSE r")
            c.execute("COMMIT")
    return statistics.median(times), plan


def end_of(csv):
    """Where time is advanced to once the data is in: an hour past the flights for the whole
    file; for a prefix, two days and an hour past its last flight (every mix's longest RANGE
    is at most two days), so both modes close the same instances instead of racing DROP
    STREAM through months of empty slide events."""
    if csv == bench.CSV:
        return END
    from datetime import datetime, timedelta

    with open(csv, "rb") as f:
        f.seek(max(0, os.path.getsize(csv) - 4096))
        last = f.read().decode().strip().splitlines()[-1]
    return str(datetime.fromisoformat(last.split(",")[0]) + timedelta(days=2, hours=1))


def settle_rows_out(server):
    """Wait until the queries' rows_out stops growing (the stream has emitted every slide
    event up to the advance): DROP STREAM would otherwise cut the last ones short."""
    last = None
    while True:
        now = server.psql("SELECT sum(rows_out) FROM tcq_queries").strip()
        if now == last:
            return
        last = now
        time.sleep(0.3)


def run(tcqd, qs, csv, nrows, share):
    server = bench.Server(tcqd)
    result = {}
    try:
        server.psql(bench.STREAM)
        tmpdir = tempfile.mkdtemp(prefix="tcq-share-")
        readers = []
        setting = "on" if share else "off"
        for i, q in enumerate(qs):
            if share and i == len(qs) - 1:
                while server.psql("SELECT count(*) FROM tcq_queries").strip() != str(i):
                    time.sleep(0.05)
                plan = server.psql(f"EXPLAIN {q}").splitlines()
                result["explain"] = [l.strip() for l in plan if "Model cost" in l or "shared plan" in l]
                # The model at the data's own rate (the plan is chosen before any data, when
                # the rate is unknown and taken to be high).
                plan = server.psql(
                    f"EXPLAIN (EVENT_RATE '{rate_per_hour(csv)} per hour') {q}").splitlines()
                result["explain_rate"] = [l.strip() for l in plan if "Model cost" in l]
            out = open(os.path.join(tmpdir, f"q{i}.csv"), "w")
            readers.append((subprocess.Popen(
                ["psql", "-h", "127.0.0.1", "-p", str(server.port), "-U", "tcq", "-d", "tcq",
                 "-X", "-q", "-c", f"SET tcq.share_across_queries = {setting}",
                 "-c", f"COPY ({q}) TO STDOUT WITH (FORMAT csv)"],
                stdout=out, stderr=subprocess.PIPE,
            ), out))
        while server.psql("SELECT count(*) FROM tcq_queries").strip() != str(len(qs)):
            time.sleep(0.05)
        plans = server.psql("SELECT count(DISTINCT plan_id), count(plan_id) FROM tcq_queries")
        result["plans"] = plans.strip()
        if os.environ.get("TCQ_BENCH_PERF"):
            server.start_profile(os.path.join(bench.CACHE, f"perf-share-{setting}.data"))
        cpu0 = server.cpu_secs()
        t0 = time.perf_counter()
        server.psql(f"\\copy flights FROM '{csv}' WITH (FORMAT csv, HEADER)")
        server.psql(f"SELECT tcq_advance('flights', '{end_of(csv)}')")
        while True:
            done = server.psql("SELECT min(tuples_in) FROM tcq_queries").strip()
            if done == str(nrows):
                break
            time.sleep(0.05)
        if share:
            t_reg = time.perf_counter()
            result["register_ms"], result["register_plan"] = register_time_ms(server.port, qs[0])
            paused = time.perf_counter() - t_reg
        else:
            paused = 0.0
        nodes = server.psql("SELECT count(*), sum(tuples_folded), sum(partials_merged) FROM tcq_plans")
        result["nodes"] = nodes.strip()
        settle_rows_out(server)
        server.psql("DROP STREAM flights")
        for p, out in readers:
            p.wait()
            out.close()
            if p.returncode != 0:
                raise RuntimeError(p.stderr.read().decode())
        result["secs"] = time.perf_counter() - t0 - paused
        result["cpu"] = server.cpu_secs() - cpu0
        rows = 0
        for i in range(len(qs)):
            with open(os.path.join(tmpdir, f"q{i}.csv")) as f:
                rows += sum(1 for _ in f)
        result["rows"] = rows
    finally:
        server.stop()
    return result


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tcqd", default=os.path.join(bench.ROOT, "target", "release", "tcqd"))
    ap.add_argument("--rows", type=int, default=None, help="a prefix of the 3 M flights")
    ap.add_argument("--queries", type=int, default=None, help="100 (paper) or 84 (random)")
    ap.add_argument("--seed", type=int, default=None, help="9 (paper) or 33 (random)")
    ap.add_argument("--only", choices=["on", "off"])
    ap.add_argument("--mix", choices=["paper", "random", "family"], default="paper")
    args = ap.parse_args()
    csv = prefix_csv(args.rows)
    with open(csv) as f:
        nrows = sum(1 for _ in f) - 1
    if args.mix == "random":
        args.queries, args.seed = args.queries or 84, 33 if args.seed is None else args.seed
        qs = dashboard_queries.random_dashboards(args.queries, args.seed)
    elif args.mix == "family":
        qs = dashboard_queries.family()
        args.queries, args.seed = len(qs), 0
    else:
        args.queries, args.seed = args.queries or 100, 9 if args.seed is None else args.seed
        qs = queries(args.queries, args.seed)
    print(f"data: {csv}, {nrows:,} rows; {args.queries} queries ({args.mix}, seed {args.seed}); "
          f"{os.cpu_count()} cores; load average {os.getloadavg()[0]:.1f}")
    results = {}
    for mode in ["on", "off"]:
        if args.only and args.only != mode:
            continue
        r = run(args.tcqd, qs, csv, nrows, mode == "on")
        results[mode] = r
        print(f"sharing {mode}: {r['secs']:.1f} s, {nrows / r['secs']:,.0f} tuples/s, "
              f"tcqd CPU {r['cpu']:.1f} s, {r['rows']:,} rows; "
              f"plans (distinct, members): {r['plans']}; plan nodes, folds, merges: {r['nodes']}")
        for line in r.get("explain", []):
            print(f"  EXPLAIN before ingest: {line}")
        for line in r.get("explain_rate", []):
            print(f"  EXPLAIN at the data's rate: {line}")
        if "register_ms" in r:
            print(f"  registration into the running plan: {r['register_ms']:.2f} ms "
                  f"(median of 21; joined plan {r['register_plan']})")
    if "on" in results and "off" in results:
        on, off = results["on"], results["off"]
        if on["rows"] != off["rows"]:
            raise SystemExit(f"row counts differ: {on['rows']} vs {off['rows']}")
        print(f"throughput ratio on/off: {off['secs'] / on['secs']:.1f}x "
              f"(CPU {off['cpu'] / max(on['cpu'], 1e-9):.1f}x)")


if __name__ == "__main__":
    main()
