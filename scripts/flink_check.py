#!/usr/bin/env python3
"""Run tcq's EXPLAIN (FORMAT FLINK) output on PyFlink and compare every row with tcq's.

Usage (scripts/flink_check.sh sets up the Python environment and calls this):

    python3 scripts/flink_check.py --tcqd target/debug/tcqd --data tests/data/flights-head.csv \
        [--queries FILE] [--bench]

For each query (by default the set in QUERIES below; --queries reads one per line):
1. tcqd --memory-only on a free port; CREATE STREAM flights; EXPLAIN (FORMAT FLINK) gives the
   Flink script;
2. every query is registered on tcq with `psql -c "COPY (SELECT ...) TO STDOUT"` before
   ingest, the CSV goes in with one `\\copy`, `tcq_advance` moves the stream's time two days
   past its last tuple so every window holding a tuple closes (Flink's bounded source closes
   them all at end of input), and DROP STREAM ends the COPYs;
3. the scripts run together in one Flink job on the local mini-cluster (streaming mode,
   filesystem CSV source, parallelism 1): each script's views are renamed apart, its sink
   SELECT is tagged with the query's number and the results are collected;
4. the two row multisets are compared per query: text, integers and timestamps exactly,
   numeric and floating-point columns with a relative tolerance of 1e-12 (tcq prints
   PostgreSQL's numeric for avg(integer), Flink a DECIMAL(38, 18)).

With --bench the script prints end-to-end tuples/s on both sides and compares nothing: tcq
from the start of the \\copy to the end of the last COPY TO STDOUT (rows written to files by
psql), Flink from the job's submission (mini-cluster start-up included) to the end of the job,
its rows going to a blackhole sink; setting up the table environment is reported apart.

Exit status: 0 when every query's rows agree, 1 otherwise, 2 when PyFlink is missing.
"""

import argparse
import csv
import datetime as dt
import io
import math
import os
import re
import socket
import subprocess
import sys
import tempfile
import time

START = "START AT '2001-01-01 00:00:00'"
STREAM_DDL = (
    "CREATE STREAM flights (ts timestamp TIMESTAMPCOLUMN, delay integer, "
    "distance integer, origin text, destination text)"
)

# The paper's 10/20/30/40 example (issue 7's Q2), issue 7's Q1, a hopping set with a factor
# window, windows off their slide's multiple with a START AT off the grid, WHERE and HAVING, a
# jumping window, and min over hopping windows (a covered-by edge from a hopping parent).
QUERIES = [
    "SELECT origin, wtime(*), min(delay) FROM flights "
    f"[RANGE BY '10 minutes' {START}] [RANGE BY '20 minutes' {START}] "
    f"[RANGE BY '30 minutes' {START}] [RANGE BY '40 minutes' {START}] GROUP BY origin",
    "SELECT origin, wtime(*), count(*), avg(delay), max(delay) FROM flights "
    f"[RANGE BY '1 hour' SLIDE BY '10 minutes' {START}] GROUP BY origin",
    "SELECT origin, wstart(*), wtime(*), sum(distance), count(delay), avg(delay) FROM flights "
    f"[RANGE BY '20 minutes' SLIDE BY '10 minutes' {START}] "
    f"[RANGE BY '30 minutes' SLIDE BY '10 minutes' {START}] "
    f"[RANGE BY '40 minutes' SLIDE BY '20 minutes' {START}] GROUP BY origin",
    "SELECT destination, wtime(*), max(delay) - min(delay) AS spread, count(*) FROM flights "
    "[RANGE BY '25 minutes' SLIDE BY '10 minutes' START AT '2001-01-01 00:07:00'] "
    "[RANGE BY '50 minutes' SLIDE BY '20 minutes' START AT '2001-01-01 00:07:00'] "
    "WHERE distance > 300 GROUP BY destination HAVING count(*) > 1",
    "SELECT origin, wtime(*), min(delay), max(delay) FROM flights "
    f"[RANGE BY '5 minutes' SLIDE BY '15 minutes' {START}] GROUP BY origin",
    "SELECT origin, wstart(*), min(delay) FROM flights "
    f"[RANGE BY '20 minutes' SLIDE BY '10 minutes' {START}] "
    f"[RANGE BY '40 minutes' SLIDE BY '20 minutes' {START}] GROUP BY origin",
]


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Tcq:
    """A tcqd process and psql against it."""

    def __init__(self, tcqd):
        self.port = free_port()
        self.proc = subprocess.Popen(
            [tcqd, "--memory-only", "--listen", f"127.0.0.1:{self.port}", "--http", "off"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        for _ in range(100):
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.2).close()
                return
            except OSError:
                time.sleep(0.1)
        raise SystemExit("tcqd did not start")

    def psql_args(self):
        return ["psql", "-h", "127.0.0.1", "-p", str(self.port), "-U", "tcq", "-X", "-q",
                "-v", "ON_ERROR_STOP=1"]

    def run(self, sql):
        out = subprocess.run(self.psql_args() + ["-At", "-c", sql], capture_output=True,
                             text=True)
        if out.returncode != 0:
            raise SystemExit(f"psql failed on {sql!r}: {out.stderr}")
        return out.stdout

    def stop(self):
        self.proc.terminate()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            print("tcqd did not stop on SIGTERM in 10 s; killed", file=sys.stderr)
            self.proc.kill()
            self.proc.wait()


def last_ts(path):
    with open(path, newline="") as f:
        r = csv.reader(f)
        next(r)
        last = None
        for row in r:
            last = row[0]
    return dt.datetime.fromisoformat(last)


def explain(tcqd, queries):
    """The EXPLAIN (FORMAT FLINK) script of each query."""
    tcq = Tcq(tcqd)
    try:
        tcq.run(STREAM_DDL)
        return [tcq.run(f"EXPLAIN (FORMAT FLINK) {q}") for q in queries]
    finally:
        tcq.stop()


def run_tcq(tcqd, data, queries, share=True):
    """tcq's rows per query (lists of CSV fields) and the ingest-to-end time.

    With share=False each query's session turns tcq.share_across_queries off, so every
    query runs its own plan."""
    tcq = Tcq(tcqd)
    try:
        tcq.run(STREAM_DDL)
        outs = []
        for q in queries:
            f = tempfile.TemporaryFile(mode="w+")
            # A file, not a pipe: a client with many NOTICEs must not block on a full pipe
            # while this waits for it.
            err = tempfile.TemporaryFile(mode="w+")
            setting = [] if share else ["-c", "SET tcq.share_across_queries = off"]
            p = subprocess.Popen(tcq.psql_args() + setting
                                 + ["-c", f"COPY ({q}) TO STDOUT WITH (FORMAT csv)"],
                                 stdout=f, stderr=err, text=True)
            outs.append((p, f, err))
        for _ in range(300):
            n = int(tcq.run("SELECT count(*) FROM tcq_queries").strip())
            if n >= len(queries):
                break
            time.sleep(0.1)
        else:
            raise SystemExit("the queries did not register")
        t0 = time.monotonic()
        subprocess.run(tcq.psql_args() + ["-c", f"\\copy flights FROM '{data}' WITH (FORMAT csv, HEADER)"],
                       check=True)
        end = last_ts(data) + dt.timedelta(days=2)
        tcq.run(f"SELECT tcq_advance('flights', '{end}')")
        tcq.run("DROP STREAM flights")
        for p, _, _ in outs:
            p.wait(timeout=600)
        # The clock stops when every client has its rows on disk; reading them back into
        # Python below is the check's work, not tcq's.
        seconds = time.monotonic() - t0
        rows = []
        for p, f, e in outs:
            e.seek(0)
            err = e.read()
            if p.returncode != 0 and "does not exist" not in err and err.strip():
                print(f"tcq COPY: {err.strip()}", file=sys.stderr)
            f.seek(0)
            rows.append([r for r in csv.reader(f)])
    finally:
        tcq.stop()
    return rows, seconds


STMT_END = re.compile(r";\s*$")


def statements(script):
    """Split an EXPLAIN (FORMAT FLINK) script into statements, comments dropped."""
    stmts, cur = [], []
    for line in script.splitlines():
        if line.startswith("--") or not line.strip():
            continue
        cur.append(line)
        if STMT_END.search(line):
            stmts.append("\n".join(cur).rstrip().rstrip(";"))
            cur = []
    return stmts


def flink_job(scripts, data_no_header):
    """One SELECT uniting every query's sink rows, tagged with the query's number, all cast to
    STRING; and the DDL to run first."""
    ddl, selects, width = [], [], 0
    source_done = False
    parsed = []
    for i, script in enumerate(scripts):
        sink_cols, body = 0, None
        for s in statements(script):
            s = s.replace("tcq_input", f"q{i}_input").replace("tcq_n", f"q{i}_n")
            if s.startswith("SET "):
                continue
            if s.startswith("CREATE TEMPORARY TABLE tcq_sink"):
                sink_cols = len(re.findall(r"^  `", s, re.M))
                continue
            if s.startswith("CREATE TEMPORARY TABLE"):
                if not source_done:
                    ddl.append(re.sub(r"'path' = '[^']*'", f"'path' = '{data_no_header}'", s))
                    source_done = True
                continue
            if s.startswith("INSERT INTO tcq_sink"):
                body = s[len("INSERT INTO tcq_sink"):].strip()
                continue
            ddl.append(s)
        width = max(width, sink_cols)
        parsed.append((sink_cols, body))
    for i, (n, body) in enumerate(parsed):
        cols = [f"CAST(`c{j}` AS STRING)" for j in range(n)] + ["CAST(NULL AS STRING)"] * (width - n)
        names = ", ".join(f"`c{j}`" for j in range(n))
        selects.append(f"SELECT {i} AS qid, {', '.join(cols)} FROM ({body}) AS t{i} ({names})")
    return ddl, "\nUNION ALL\n".join(selects), [n for n, _ in parsed]


def run_flink(scripts, data, bench=False):
    try:
        from pyflink.table import EnvironmentSettings, TableEnvironment
    except ImportError:
        print("SKIP: PyFlink is not installed (pip install apache-flink)", file=sys.stderr)
        sys.exit(2)
    plain = tempfile.NamedTemporaryFile(mode="w", suffix=".csv", delete=False)
    with open(data) as f:
        next(f)
        for line in f:
            plain.write(line)
    plain.close()
    t0 = time.monotonic()
    env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    conf = env.get_config()
    conf.set("parallelism.default", "1")
    conf.set("table.local-time-zone", "UTC")
    # Every window aggregation takes a share of the slot's managed memory; a hundred of them
    # need more than the mini-cluster's default.
    conf.set("taskmanager.memory.managed.size", "2g")
    ddl, union, widths = flink_job(scripts, plain.name)
    for s in ddl:
        env.execute_sql(s)
    t1 = time.monotonic()
    rows = [[] for _ in scripts]
    if bench:
        # Rows go to a blackhole sink: the figure is Flink's work, not Python's collection.
        cols = ", ".join(f"c{j} STRING" for j in range(max(widths)))
        env.execute_sql(f"CREATE TEMPORARY TABLE bench_sink (qid INT, {cols}) "
                        "WITH ('connector' = 'blackhole')")
        env.execute_sql(f"INSERT INTO bench_sink {union}").wait()
        t2 = time.monotonic()
        os.unlink(plain.name)
        return rows, t1 - t0, t2 - t1
    with env.execute_sql(union).collect() as it:
        for r in it:
            vals = list(r)
            rows[vals[0]].append(vals[1 : 1 + widths[vals[0]]])
    t2 = time.monotonic()
    os.unlink(plain.name)
    return rows, t1 - t0, t2 - t1


def norm_ts(v):
    # Flink's CAST(TIMESTAMP(3) AS STRING) keeps milliseconds; PostgreSQL drops zero ones.
    m = re.fullmatch(r"(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d)(\.\d+)?", v)
    if not m:
        return v
    frac = (m.group(2) or "").rstrip("0").rstrip(".")
    return m.group(1) + frac


def number(v):
    try:
        return float(v) if re.fullmatch(r"-?\d+\.\d*(e-?\d+)?|-?\d+e-?\d+", v) else None
    except ValueError:
        return None


def key(row):
    out = []
    for v in row:
        x = number(v)
        out.append(f"{x:.9g}" if x is not None else v)
    return out


def same(a, b):
    if len(a) != len(b):
        return False
    for x, y in zip(a, b):
        if x == y:
            continue
        fx, fy = number(x), number(y)
        if fx is None or fy is None or not math.isclose(fx, fy, rel_tol=1e-12, abs_tol=1e-12):
            return False
    return True


def compare(i, query, tcq_rows, flink_rows):
    t = sorted((["" if v is None else norm_ts(v) for v in r] for r in tcq_rows), key=key)
    f = sorted((["" if v is None else norm_ts(v) for v in r] for r in flink_rows), key=key)
    bad = [(a, b) for a, b in zip(t, f) if not same(a, b)]
    ok = len(t) == len(f) and not bad
    print(f"query {i}: tcq {len(t)} rows, Flink {len(f)} rows: {'same' if ok else 'DIFFERENT'}")
    if not ok:
        print(f"  {query}")
        for a, b in bad[:5]:
            print(f"  tcq   {a}\n  flink {b}")
    return ok


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tcqd", default="target/debug/tcqd")
    ap.add_argument("--data", default="tests/data/flights-head.csv")
    ap.add_argument("--queries", help="a file with one query per line")
    ap.add_argument("--bench", action="store_true")
    ap.add_argument("--no-share", action="store_true",
                    help="run each query on tcq in its own plan (tcq.share_across_queries = off)")
    ap.add_argument("--tcq-only", action="store_true",
                    help="with --bench: measure tcq and skip Flink")
    ap.add_argument("--run-tcqd", help="the tcqd that runs the queries (e.g. a release "
                    "build); EXPLAIN always asks --tcqd")
    args = ap.parse_args()
    if args.tcq_only and not args.bench:
        ap.error("--tcq-only measures tcq's side of --bench; the check needs Flink's rows")
    queries = QUERIES
    if args.queries:
        with open(args.queries) as f:
            queries = [l.strip() for l in f if l.strip() and not l.startswith("#")]
    data = os.path.abspath(args.data)
    ntuples = sum(1 for _ in open(data)) - 1
    scripts = explain(args.tcqd, queries)
    tcq_rows, tcq_s = run_tcq(args.run_tcqd or args.tcqd, data, queries, not args.no_share)
    if args.bench:
        mode = "each query its own plan" if args.no_share else "sharing across queries"
        print(f"{len(queries)} queries, {ntuples} tuples, "
              f"{sum(len(r) for r in tcq_rows)} rows from tcq")
        print(f"tcq ({mode}): {tcq_s:.2f} s, {ntuples / tcq_s:,.0f} tuples/s end to end",
              flush=True)
        if args.tcq_only:
            return
    flink_rows, start_s, flink_s = run_flink(scripts, data, args.bench)
    if args.bench:
        print(f"Flink: {flink_s:.2f} s, {ntuples / flink_s:,.0f} tuples/s end to end "
              f"(+ {start_s:.1f} s to set up the table environment)")
        return
    ok = all([compare(i, q, t, f) for i, (q, t, f) in enumerate(zip(queries, tcq_rows, flink_rows))])
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
