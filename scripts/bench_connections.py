#!/usr/bin/env python3
"""The "connections" join benchmark: tcq against DuckDB on the same flights, in one run.

The query is a windowed self-join of flights: an arrival into a hub airport (a) and a
departure from it (b) in the same 10-minute tumbling window, counted per hub and window.
tcq runs it as a continuous query over a COPY replay of the whole file, end to end over the
wire (`tcqd demo --join`); DuckDB runs the same join as one batch query, on one thread, over
the same rows already loaded in memory. Both results are checked to agree (rows and the sum
of the counts), then the times are printed with tcq's peak memory.

Usage: python3 scripts/bench_connections.py [flights.parquet] [--tcqd target/release/tcqd]
Needs the duckdb Python package (pip install duckdb) and a release build of tcqd.
"""

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time

QUERY = """
SELECT a.destination AS hub, epoch_us(a.date) // 600000000 AS w, count(*) AS n
FROM f a JOIN f b
  ON a.destination = b.origin
 AND epoch_us(a.date) // 600000000 = epoch_us(b.date) // 600000000
GROUP BY ALL
"""


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("parquet", nargs="?", default=os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "..", "shared", "data", "flights-3m.parquet"))
    ap.add_argument("--tcqd", default="target/release/tcqd")
    args = ap.parse_args()
    try:
        import duckdb
    except ImportError:
        sys.exit("the duckdb Python package is needed: pip install duckdb")

    con = duckdb.connect()
    con.sql("SET threads = 1")
    con.sql(f"CREATE TABLE f AS SELECT * FROM '{args.parquet}'")
    # tcq reads rows in file order; the last window (ending after the last tuple) never
    # closes, so DuckDB's total is compared over the windows that end by the last tuple.
    last_us = con.sql("SELECT epoch_us(max(date)) FROM f").fetchall()[0][0]
    with tempfile.TemporaryDirectory() as tmp:
        csv = os.path.join(tmp, "flights.csv")
        con.sql(
            "COPY (SELECT strftime(date, '%Y-%m-%d %H:%M:%S') AS ts, delay, distance, "
            f"origin, destination FROM f) TO '{csv}' (HEADER)"
        )
        runs = []
        for _ in range(3):
            started = time.perf_counter()
            rows = con.sql(QUERY).fetchall()
            runs.append(time.perf_counter() - started)
        closed = [r for r in rows if (r[1] + 1) * 600_000_000 <= last_us]
        duck_rows, duck_sum = len(closed), sum(r[2] for r in closed)
        out = subprocess.run(
            [args.tcqd, "demo", "--quiet", "--join", "--data", csv],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
    field = lambda name: re.search(rf"^{name}\s+([0-9.]+)", out, re.M).group(1)
    tcq_rows, tcq_sum = int(field("rows emitted")), int(field("sum of count\\(\\*\\)"))
    tcq_secs, rate = float(field("elapsed")), float(field("tuples per second"))
    rss = field(r"peak RSS \(process\)")
    grown = re.search(r"([0-9.]+) MiB more at the peak", out)
    data = re.search(r"([0-9.]+) MiB of replay data", out)
    ok = (tcq_rows, tcq_sum) == (duck_rows, duck_sum)
    print(f"rows (hub, window)        tcq {tcq_rows}  duckdb {duck_rows}")
    print(f"sum of count(*)           tcq {tcq_sum}  duckdb {duck_sum}  {'agree' if ok else 'DIFFER'}")
    print(f"tcq end to end            {tcq_secs:.2f} s, {rate:,.0f} tuples/s, peak RSS {rss} MiB")
    if grown and data:
        print(f"  of it: replay data held by the client {data.group(1)} MiB; "
              f"growth during the run {grown.group(1)} MiB")
    print(f"duckdb 1 thread, batch    {min(runs):.2f} s (best of 3: {', '.join(f'{r:.2f}' for r in runs)})")
    print(f"tcq time / duckdb time    {tcq_secs / min(runs):.2f}")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
