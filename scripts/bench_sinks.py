#!/usr/bin/env python3
"""What a query without a client costs against a client's: Q1 over the 3 M flights.

Run by scripts/bench_sinks.sh (which builds tcqd in release mode). Each mode starts a
release tcqd (--memory-only), declares `flights`, registers Q1 one way, copies the flights
in with psql's \\copy (bench.py's CSV cache of TCQ_BENCH_PARQUET), and times the copy and
the moment Q1's last row is delivered:
1. client: Q1 read by psql (COPY (Q1) TO STDOUT into /dev/null), as bench_kafka.py does;
2. file sink: CREATE SINK ... AS Q1 WITH (connector = 'file', format = 'json'), into a
   temporary file (fsync after each batch, the default);
3. derived stream: CREATE STREAM d AS Q1, its rows read by nobody.
"Delivered" is when tcq_sinks.rows reaches the query's rows_out in tcq_queries and both
stay still (for the client, when psql's \\copy returns: its rows are already sent). Each
figure is the best of --runs.
"""

import argparse
import os
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench  # noqa: E402
from bench_kafka import COLUMNS, psql, start_tcqd, with_q1  # noqa: E402

ROOT = bench.ROOT
Q1 = bench.QUERIES["q1"][0]


def caught_up(port, name):
    """Wait until sink (or derived stream) `name` has delivered every row its query emitted."""
    last = None
    while True:
        sent = psql(port, f"SELECT rows FROM tcq_sinks WHERE name = '{name}'")
        emitted = psql(port, f"SELECT rows_out FROM tcq_queries WHERE feeds LIKE '% {name}'")
        now = (sent, emitted)
        if now == last and sent == emitted:
            return int(sent)
        last = now
        time.sleep(0.05)


def run(tcqd, mode, out_dir):
    proc, port = start_tcqd(tcqd)
    reader = None
    try:
        psql(port, f"CREATE STREAM c ({COLUMNS})")
        q = Q1.replace("FROM flights", "FROM c")
        if mode == "client":
            reader = with_q1(port, "c")
        elif mode == "file":
            path = os.path.join(out_dir, "q1.ndjson")
            psql(port, f"CREATE SINK k AS {q} WITH (connector = 'file', path = '{path}')")
        else:
            psql(port, f"CREATE STREAM k AS {q}")
        t0 = time.perf_counter()
        psql(port, f"\\copy c FROM '{bench.CSV}' WITH (FORMAT csv, HEADER)")
        copied = time.perf_counter() - t0
        rows = None if mode == "client" else caught_up(port, "k")
        return copied, time.perf_counter() - t0, rows
    finally:
        if reader:
            reader.kill()
        proc.kill()
        proc.wait()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--tcqd", default=os.path.join(ROOT, "target", "release", "tcqd"))
    args = ap.parse_args()
    bench.make_csv()
    with open(bench.CSV, "rb") as f:
        n = sum(1 for _ in f) - 1
    results = {m: [] for m in ("client", "file", "derived")}
    with tempfile.TemporaryDirectory() as out_dir:
        for _ in range(args.runs):
            for mode in results:
                results[mode].append(run(args.tcqd, mode, out_dir))
    print(f"\n{n:,} flights, Q1, best of {args.runs}:")
    for mode, runs in results.items():
        copied = min(r[0] for r in runs)
        done = min(r[1] for r in runs)
        rows = runs[0][2]
        extra = f", {rows:,} rows delivered ({rows / done:,.0f} rows/s)" if rows else ""
        print(f"  {mode:8}  \\copy {copied:6.2f} s ({n / copied:12,.0f} tuples/s), "
              f"last row delivered {done:6.2f} s{extra}")
    print(f"  runs (copy s, delivered s, rows): {results}")


if __name__ == "__main__":
    main()
