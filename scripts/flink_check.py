#!/usr/bin/env python3
"""Run tcq's continuous queries as one exported Flink job on a real cluster, with their rows
delivered back through tcq, and compare every row with tcq's own.

Usage (scripts/flink_check.sh sets up the Python environment and calls this):

    python3 scripts/flink_check.py --tcqd target/debug/tcqd [--data tests/data/flights-head.csv]
        [--queries FILE] [--parallelism 2] [--rest http://127.0.0.1:8081] [--bench]
        [--blackhole --plan flink|wcg|plain --rest URL]

1. tcq alone: tcqd --memory-only; `CREATE STREAM flights (...) WITH (slack = '3 minutes')`;
   every query registered with `psql -c "COPY (SELECT ...) TO STDOUT"`; the data in with one
   `\\copy`; `tcq_advance` two days past the last tuple (Flink's bounded source closes every
   window at its end); DROP STREAM ends the COPYs: tcq's rows per query;
2. a JobManager and two TaskManagers start from PyFlink's distribution on 127.0.0.1
   (scripts/flink_cluster.sh; or --rest names a running cluster);
3. a second tcqd registers the same queries the same way, and
   `EXPLAIN (FORMAT FLINK, PARALLELISM n, SINK 'filesystem', ...) QUERIES ALL` exports them as
   ONE job (one source per stream and SLACK, the shared plans' views, one sink and one INSERT
   per query in a statement set; every query must be in it);
4. `tcqd flink submit --attach ...` sends the job and hands the queries to it: tcq stops
   computing them and delivers the rows it reads back from the job's sink files to the psql
   clients, which end when the job has FINISHED; tcq_queries must show every query on the
   job, and `tcqd flink status` the records the job's windows dropped as late (0 here);
5. each client's rows are compared with tcq's own as multisets: text, integers and
   timestamps exactly, numeric and floating-point values within a relative 1e-12 (tcq prints
   PostgreSQL's numeric for avg(integer), Flink a DECIMAL(38, 18)); the first two queries'
   rows must have come in window order;
6. the Kafka path, without a broker: a stream declared with the Kafka connector exports as
   a Flink Kafka source and Kafka sinks, and `tcqd flink validate` plans that job with
   Flink's planner (a stand-in factory checks the Kafka options where the connector jar is
   missing); a job with a bad Kafka option must be rejected.

The data is perturbed first: every seventh pair of neighbouring tuples less than two minutes
apart is swapped, so the input is out of order within the SLACK, the case in which tcq and
Flink give identical rows (docs/flink.md says why).

With --bench --blackhole (and --rest, a running cluster) only the exported job runs, into
Flink's blackhole sink, and the seconds from submission to FINISHED are printed: what each
PLAN of the export costs Flink, without tcq reading results back.

With --bench nothing is perturbed or validated and the figures are printed: tcq alone from
the start of the \\copy to the end of the last COPY TO STDOUT (rows written to files by
psql), Flink from the submission until every client of tcq had its rows; rows are compared
all the same.

Exit status: 0 when every query's rows agree, 1 otherwise, 2 when PyFlink or Java is missing.
"""

import argparse
import csv
import datetime as dt
import glob
import math
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
START = "START AT '2001-01-01 00:00:00'"
COLUMNS = "(ts timestamp TIMESTAMPCOLUMN, delay integer, distance integer, origin text, destination text)"
STREAM_DDL = f"CREATE STREAM flights {COLUMNS} WITH (slack = '3 minutes')"


def dashboards(n):
    """The first n of scripts/dashboard_queries.py's queries."""
    out = subprocess.run([sys.executable, os.path.join(HERE, "dashboard_queries.py")],
                         capture_output=True, text=True, check=True).stdout
    return [l for l in out.splitlines() if l.strip()][:n]


# The paper's 10/20/30/40 example (issue 7's Q2), issue 7's Q1, a hopping set with a factor
# window, windows off their slide's multiple with a START AT off the grid, WHERE and HAVING, a
# jumping window, min over hopping windows (a covered-by edge from a hopping parent),
# count(DISTINCT), stddev and variance of integers, a SLACK of its own (a second source
# table), and 14 of the dashboards (per-origin count, avg, max and min over one window each).
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
    "SELECT origin, wtime(*), count(DISTINCT destination), count(*) FROM flights "
    f"[RANGE BY '30 minutes' {START}] [RANGE BY '1 hour' SLIDE BY '30 minutes' {START}] GROUP BY origin",
    "SELECT origin, wtime(*), stddev(delay), var_pop(delay), variance(distance) FROM flights "
    f"[RANGE BY '1 hour' {START}] [RANGE BY '2 hours' {START}] GROUP BY origin",
    "SELECT destination, wtime(*), sum(delay), max(distance) FROM flights "
    f"[RANGE BY '15 minutes' {START} SLACK '10 minutes'] GROUP BY destination",
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
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
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
        out = subprocess.run(self.psql_args() + ["-At", "-c", sql], capture_output=True, text=True)
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


def perturb(src, dst):
    """Copy the CSV (header dropped), swapping every seventh pair of neighbouring rows less
    than two minutes apart: out of order within the SLACK of 3 minutes."""
    with open(src, newline="") as f:
        rows = list(csv.reader(f))[1:]
    i, pair = 0, 0
    while i + 1 < len(rows):
        a = dt.datetime.fromisoformat(rows[i][0])
        b = dt.datetime.fromisoformat(rows[i + 1][0])
        if a != b and (b - a) < dt.timedelta(minutes=2):
            pair += 1
            if pair % 7 == 0:
                rows[i], rows[i + 1] = rows[i + 1], rows[i]
                i += 2
                continue
        i += 1
    with open(dst, "w", newline="") as f:
        csv.writer(f, lineterminator="\n").writerows(rows)
    return max(dt.datetime.fromisoformat(r[0]) for r in rows), len(rows)


def register(tcq, queries):
    """Register every query with a psql COPY TO STDOUT; the processes and their files, and
    each query's id."""
    outs = []
    for q in queries:
        f = tempfile.TemporaryFile(mode="w+")
        err = tempfile.TemporaryFile(mode="w+")
        p = subprocess.Popen(tcq.psql_args() + ["-c", f"COPY ({q}) TO STDOUT WITH (FORMAT csv)"],
                             stdout=f, stderr=err, text=True)
        outs.append((p, f, err))
        # One at a time, so ids follow the list.
        for _ in range(300):
            if int(tcq.run("SELECT count(*) FROM tcq_queries").strip()) >= len(outs):
                break
            if p.poll() is not None:
                err.seek(0)
                raise SystemExit(f"query failed: {q}\n{err.read()}")
            time.sleep(0.05)
        else:
            raise SystemExit(f"query did not register: {q}\n{err.read()}")
    ids = [int(x) for x in tcq.run("SELECT id FROM tcq_queries ORDER BY id").split()]
    return outs, ids


def tcq_rows(tcq, outs, data, end):
    """Ingest, close every window, end the queries: rows per query, seconds taken."""
    t0 = time.monotonic()
    subprocess.run(tcq.psql_args() + ["-c", f"\\copy flights FROM '{data}' WITH (FORMAT csv)"],
                   check=True)
    tcq.run(f"SELECT tcq_advance('flights', '{end + dt.timedelta(days=2)}')")
    tcq.run("DROP STREAM flights")
    for p, _, _ in outs:
        p.wait(timeout=3600)
    seconds = time.monotonic() - t0
    rows = []
    for p, f, e in outs:
        e.seek(0)
        err = e.read()
        if p.returncode != 0 and "does not exist" not in err and err.strip():
            print(f"tcq COPY: {err.strip()}", file=sys.stderr)
        f.seek(0)
        rows.append(list(csv.reader(f)))
    return rows, seconds


def tcqd_cmd(tcqd, *args):
    out = subprocess.run([tcqd, "flink", *args], capture_output=True, text=True)
    if out.returncode != 0:
        raise SystemExit(f"tcqd flink {args[0]} failed:\n{out.stdout}{out.stderr}")
    return out.stdout.strip()


def norm_ts(v):
    # Flink's CSV keeps milliseconds; PostgreSQL drops zero ones.
    m = re.fullmatch(r"(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d)(\.\d+)?", v)
    if not m:
        return v
    frac = (m.group(2) or "").rstrip("0").rstrip(".")
    return m.group(1) + frac


def number(v):
    try:
        # Flink's CSV writes a DECIMAL such as 30 as 3E+1.
        return float(v) if re.fullmatch(r"-?\d+(\.\d*)?([eE][+-]?\d+)?", v) else None
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


def compare(label, query, tcq_rows_, flink_rows):
    t = sorted(([norm_ts(v) for v in r] for r in tcq_rows_), key=key)
    f = sorted(([norm_ts(v) for v in r] for r in flink_rows), key=key)
    bad = [(a, b) for a, b in zip(t, f) if not same(a, b)]
    ok = len(t) == len(f) and not bad
    print(f"{label}: tcq {len(t)} rows, Flink {len(f)} rows: {'same' if ok else 'DIFFERENT'}")
    if not ok:
        print(f"  {query}")
        for a, b in bad[:5]:
            print(f"  tcq   {a}\n  flink {b}")
    return ok


def check_kafka(tcqd, queries):
    """Export the queries over a Kafka-fed stream and plan the job with Flink's planner."""
    tcq = Tcq(tcqd)
    work = tempfile.mkdtemp(prefix="tcq-flink-kafka-")
    try:
        tcq.run(f"CREATE STREAM flights {COLUMNS} WITH (connector = 'kafka', topic = 'flights', "
                "bootstrap_servers = '127.0.0.1:9', format = 'json', start = 'earliest', "
                "paused = true)")
        opts = "FORMAT FLINK, PARALLELISM 2, CHECKPOINT_INTERVAL '10 seconds', STATE_BACKEND 'rocksdb'"
        job = "\n".join(tcq.run(f"EXPLAIN ({opts}) {q}") for q in queries[:1])
        path = os.path.join(work, "kafka-job.sql")
        with open(path, "w") as f:
            f.write(job)
        for want in ["'connector' = 'kafka', 'topic' = 'flights'", "'scan.watermark.idle-timeout'",
                     "'key.fields' = 'tcq_wend;tcq_k0'", "'scan.startup.mode' = 'earliest-offset'"]:
            if want not in job:
                raise SystemExit(f"the Kafka export lacks {want}:\n{job}")
        plans = tcqd_cmd(tcqd, "validate", path)
        ok = plans.endswith("validated")
        print(f"Kafka job planned by Flink's planner: {'validated' if ok else 'NOT validated'}")
        bad = os.path.join(work, "bad-job.sql")
        with open(bad, "w") as f:
            f.write(job.replace("'earliest-offset'", "'earliest-record'"))
        out = subprocess.run([tcqd, "flink", "validate", bad], capture_output=True, text=True)
        rejected = out.returncode != 0 and "scan.startup.mode" in out.stdout + out.stderr
        print(f"Kafka job with a bad option: {'rejected' if rejected else 'NOT rejected'}")
        return ok and rejected
    finally:
        tcq.stop()
        shutil.rmtree(work, ignore_errors=True)


def tcq_alone(tcqd, queries, data, end):
    """tcq's own rows per query (its reference), and the seconds from ingest to the end."""
    tcq = Tcq(tcqd)
    try:
        tcq.run(STREAM_DDL)
        outs, _ = register(tcq, queries)
        return tcq_rows(tcq, outs, data, end)
    finally:
        tcq.stop()


def through_flink(args, queries, work, in_dir, rest):
    """Register the queries on a second tcqd, export them as one job, submit it with
    --attach: the clients' rows, which tcq reads back from the job's sink files, per query;
    the ids, the job's status line, tcq_queries' Flink columns while the job ran, and the
    seconds from submission until every client had its rows."""
    out_dir = os.path.join(work, "out")
    tcq = Tcq(args.tcqd)
    try:
        tcq.run(STREAM_DDL)
        outs, ids = register(tcq, queries)
        opts = (f"FORMAT FLINK, PARALLELISM {args.parallelism}, SINK 'filesystem', "
                f"SINK_PATH '{out_dir}', SOURCE_PATH '{in_dir}', JOB_NAME 'tcq check', "
                "CHECKPOINT_INTERVAL '3 seconds'")
        if args.groups:
            opts += f", GROUPS {args.groups}"
        if args.plan:
            opts += f", PLAN '{args.plan}'"
        job_text = tcq.run(f"EXPLAIN ({opts}) QUERIES ALL")
        if "left out" in job_text:
            raise SystemExit("a query was left out of the job:\n" + job_text[:3000])
        job = os.path.join(work, "job.sql")
        with open(job, "w") as f:
            f.write(job_text)
        if args.keep_job:
            shutil.copy(job, args.keep_job)
        print(f"{len(queries)} queries: one job of {job_text.count('-- Shared plan ')} shared "
              f"plans, {job_text.count('CREATE TEMPORARY VIEW ')} views, parallelism "
              f"{args.parallelism}", flush=True)
        t0 = time.monotonic()
        conn = f"host=127.0.0.1 port={tcq.port} user=tcq"
        submitted = tcqd_cmd(args.tcqd, "submit", "--rest", rest, "--parallelism",
                             str(args.parallelism), "--attach", conn, job)
        lines = submitted.splitlines()
        print(lines[0], flush=True)
        print(f"{len(lines) - 1} queries attached to the job", flush=True)
        job_id = lines[0].split()[1]
        flink_cols = tcq.run("SELECT count(*) FROM tcq_queries WHERE flink_job = "
                             f"'{job_id}' AND flink_state IS NOT NULL").strip()
        for p, _, _ in outs:
            p.wait(timeout=args.timeout)
        seconds = time.monotonic() - t0
        status = tcqd_cmd(args.tcqd, "status", "--rest", rest, job_id)
        rows = []
        for p, f, e in outs:
            e.seek(0)
            err = e.read().strip()
            if p.returncode != 0 or err:
                print(f"client of tcq: exit {p.returncode}: {err}", file=sys.stderr)
            f.seek(0)
            rows.append(list(csv.reader(f)))
        return rows, ids, status, flink_cols, seconds
    finally:
        tcq.stop()


def job_alone(args, queries, work, in_dir, rest):
    """The exported job into Flink's blackhole sink, without tcq reading results back: the
    seconds from submission until the job FINISHED (what the job itself costs, to compare
    the plans of the export), and the job's status line."""
    tcq = Tcq(args.tcqd)
    try:
        tcq.run(STREAM_DDL)
        outs, _ = register(tcq, queries)
        opts = (f"FORMAT FLINK, PARALLELISM {args.parallelism}, SINK 'blackhole', "
                f"SOURCE_PATH '{in_dir}', JOB_NAME 'tcq plan'")
        if args.groups:
            opts += f", GROUPS {args.groups}"
        if args.plan:
            opts += f", PLAN '{args.plan}'"
        job = os.path.join(work, "job.sql")
        with open(job, "w") as f:
            f.write(tcq.run(f"EXPLAIN ({opts}) QUERIES ALL"))
        t0 = time.monotonic()
        job_id = tcqd_cmd(args.tcqd, "submit", "--rest", rest, "--parallelism",
                          str(args.parallelism), job).split()[1]
        status = tcqd_cmd(args.tcqd, "status", "--rest", rest, job_id, "--wait", "FINISHED",
                          "--timeout", str(args.timeout))
        seconds = time.monotonic() - t0
        for p, _, _ in outs:
            p.kill()
        return seconds, status.strip()
    finally:
        tcq.stop()


def in_window_order(rows, column):
    """Whether the rows' values in `column` (a wtime) never go back."""
    times = [r[column] for r in rows]
    return all(a <= b for a, b in zip(times, times[1:]))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tcqd", default="target/debug/tcqd")
    ap.add_argument("--run-tcqd", help="the tcqd that computes tcq's own rows (e.g. a release build)")
    ap.add_argument("--data", default="tests/data/flights-head.csv")
    ap.add_argument("--queries", help="a file with one query per line")
    ap.add_argument("--parallelism", type=int, default=2)
    ap.add_argument("--rest", help="a running cluster's REST address (default: start one)")
    ap.add_argument("--managed-memory", default="256m", help="managed memory per TaskManager")
    ap.add_argument("--groups", help="GROUPS for the Flink cost model")
    ap.add_argument("--plan", help="PLAN of the export: flink (default), wcg or plain")
    ap.add_argument("--bench", action="store_true")
    ap.add_argument("--blackhole", action="store_true",
                    help="with --bench: time the job alone into a blackhole sink (plans compared)")
    ap.add_argument("--keep-job", help="copy the exported job to this file")
    ap.add_argument("--timeout", type=int, default=900)
    args = ap.parse_args()
    queries = QUERIES + dashboards(14)
    if args.queries:
        with open(args.queries) as f:
            queries = [l.strip() for l in f if l.strip() and not l.startswith("#")]
    work = tempfile.mkdtemp(prefix="tcq-flink-check-")
    in_dir = os.path.join(work, "in")
    os.makedirs(in_dir)
    data = os.path.join(in_dir, "flights.csv")
    if args.bench:
        with open(args.data) as src, open(data, "w") as dst:
            next(src)
            shutil.copyfileobj(src, dst)
        end = dt.datetime(2002, 1, 1)
        ntuples = sum(1 for _ in open(data))
    else:
        end, ntuples = perturb(args.data, data)
    print(f"{len(queries)} queries, {ntuples} tuples", flush=True)
    if args.bench and args.blackhole:
        if not args.rest:
            raise SystemExit("--blackhole needs --rest (a running cluster)")
        seconds, status = job_alone(args, queries, work, in_dir, args.rest)
        print(f"{status}\nFlink, plan {args.plan or 'flink'}, blackhole sink: {seconds:.2f} s "
              "from submission to FINISHED", flush=True)
        shutil.rmtree(work, ignore_errors=True)
        sys.exit(0 if "FINISHED" in status else 1)
    ref, tcq_s = tcq_alone(args.run_tcqd or args.tcqd, queries, data, end)
    print(f"tcq alone: {tcq_s:.2f} s end to end, {sum(len(r) for r in ref)} rows", flush=True)
    rest, cluster = args.rest, None
    try:
        if not rest:
            cluster = os.path.join(work, "cluster")
            t0 = time.monotonic()
            rest = subprocess.run([os.path.join(HERE, "flink_cluster.sh"), "start", cluster, "2",
                                   args.managed_memory], capture_output=True, text=True,
                                  check=True).stdout.strip()
            print(f"cluster of 1 JobManager and 2 TaskManagers at {rest} "
                  f"({time.monotonic() - t0:.0f} s to start)", flush=True)
        rows, ids, status, flink_cols, flink_s = through_flink(args, queries, work, in_dir, rest)
        print(status)
        print(f"tcq_queries showed {flink_cols} queries on the job")
        print(f"Flink: {flink_s:.2f} s from submission until every client of tcq had its rows",
              flush=True)
    finally:
        if cluster:
            subprocess.run([os.path.join(HERE, "flink_cluster.sh"), "stop", cluster])
    ok = "FINISHED, 0 late records dropped" in status and flink_cols == str(len(queries))
    for q, i, t, f in zip(queries, ids, ref, rows):
        ok = compare(f"q{i}", q, t, f) and ok
    # The clients got their rows slide event by slide event: wtime never goes back.
    ordered = in_window_order(rows[0], 1) and in_window_order(rows[1], 1)
    print(f"rows reached the clients in window order: {'yes' if ordered else 'NO'}")
    ok = ordered and ok
    if not args.bench:
        ok = check_kafka(args.tcqd, queries) and ok
    shutil.rmtree(work, ignore_errors=True)
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
