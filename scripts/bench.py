#!/usr/bin/env python3
"""End-to-end benchmark: tcq against DuckDB on the three million real flights.

    scripts/bench.sh [--runs N] [--only q1,q2,q3,day_minute,day_hour_origin,week_second,copy]
                     [--skip-duckdb]

(bench.sh builds tcqd in release mode and calls this script.) What it measures, in one run:

- tcq end to end, wire included: a fresh `tcqd` per query on a loopback port; the query is
  registered by `psql -c "COPY (SELECT ...) TO STDOUT WITH (FORMAT csv)"` writing to a file,
  then a second psql session sends the data with `\\copy flights FROM 'flights-3m.csv' WITH
  (FORMAT csv, HEADER)`. The clock runs from the start of that session until the output psql
  has received every row: once the `\\copy` returned, the same session's `tcq_advance` moves
  time past the last instance holding data (so every tuple is in the results), `SELECT ...
  FROM tcq_queries` waits for the stream to finish its work, and `DROP STREAM` then ends the
  query's statement.
- "copy": the same `\\copy` into a stream that no query reads.
- Long windows that slide often: "day_minute" (ungrouped count and max over the last day,
  every minute), "day_hour_origin" (the same per origin, every hour) and "week_second"
  (ungrouped, the last 7 days every second: 15.6 M slide events, whose rows psql writes to
  /dev/null; the server's `rows_out` counts them and DuckDB is not run). Time advances past
  the last instance holding a tuple (a day or a week after the data).
- DuckDB (pip package `duckdb`) on the same queries, written as batch SQL over window
  instances, with 1 and 2 threads: over the CSV file (`read_csv`) and over a table loaded in
  memory beforehand (load time not counted). Its result is reduced to a row count and a
  checksum inside DuckDB (Q3 counts its empty instances too, which tcq emits as count 0), so DuckDB pays no client transfer (tcq does, through psql).

Every figure is tuples per second (3,000,000 / seconds). Rows and checksums must agree
between tcq and DuckDB (Q1 sum(max) 81,210,347; Q2 sum(min) -7,021,787; Q3 sum(sum)
20,003,603; the sliding queries sum(count) + sum(max), computed by DuckDB from minute or
hour partials with a window function or an expansion). tcqd's peak memory is its VmHWM from /proc when the run ends.

The CSV is written once from the parquet file (by DuckDB, in file order) and cached under
`bench-data/` (gitignored).
"""

import argparse
import os
import shutil
import socket
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CACHE = os.path.join(ROOT, "bench-data")
PARQUET = os.environ.get(
    "TCQ_BENCH_PARQUET", os.path.join(ROOT, "..", "shared", "data", "flights-3m.parquet"))
CSV = os.path.join(CACHE, "flights-3m.csv")

STREAM = (
    "CREATE STREAM flights (ts timestamp TIMESTAMPCOLUMN, delay integer, "
    "distance integer, origin text, destination text)"
)
O = "START AT '2001-01-01 00:00:00'"
QUERIES = {
    "q1": (
        "SELECT origin, wtime(*), count(*), avg(delay), max(delay) FROM flights "
        f"[RANGE BY '1 hour' SLIDE BY '10 minutes' {O}] GROUP BY origin",
        4,  # checksum column (0-based): max
        81_210_347,
    ),
    "q2": (
        "SELECT origin, wtime(*), min(delay) FROM flights "
        f"[RANGE BY '10 minutes' {O}] [RANGE BY '20 minutes' {O}] "
        f"[RANGE BY '30 minutes' {O}] [RANGE BY '40 minutes' {O}] GROUP BY origin",
        2,
        -7_021_787,
    ),
    "q3": (
        f"SELECT count(*), sum(delay), wtime(*) FROM flights [RANGE BY '1 minute' {O}]",
        1,
        20_003_603,
    ),
    # Long windows that slide often (issue 33). Checksums: sum(count) + sum(max).
    "day_minute": (
        f"SELECT count(*), max(delay), wtime(*) FROM flights "
        f"[RANGE BY '1 day' SLIDE BY '1 minute' {O}]",
        (0, 1),
        None,
    ),
    "day_hour_origin": (
        f"SELECT origin, count(*), max(delay), wtime(*) FROM flights "
        f"[RANGE BY '1 day' SLIDE BY '1 hour' {O}] GROUP BY origin",
        (1, 2),
        None,
    ),
    # 15.7 M slide events; the rows go to /dev/null and are counted by the server.
    "week_second": (
        f"SELECT count(*), max(delay), wtime(*) FROM flights "
        f"[RANGE BY '7 days' SLIDE BY '1 second' {O}]",
        None,
        None,
    ),
}

# Time is advanced to this instant after the data (see END), per query: past the end of
# every instance holding a tuple.
ENDS = {
    "day_minute": "2001-07-02 00:00:00",
    "day_hour_origin": "2001-07-02 00:00:00",
    "week_second": "2001-07-08 00:00:00",
}

# DuckDB: the same results as batch SQL. Instance m of <r, s, o> is [o + m*s, o + m*s + r);
# a tuple at t lies in m = floor((t-o)/s) - k for k = 0 .. r/s - 1 (m >= 0); an instance is
# emitted when its end is <= current time, END at the end of the run.
T0 = "TIMESTAMP '2001-01-01 00:00:00'"
# After the last tuple (2001-07-01 00:00:00) tcq_advance moves time here, past the end of
# every instance holding data, so the results cover all the input.
END = "2001-07-01 01:00:00"


def duck_windowed(src, r_min, s_min, select, outer):
    k = r_min // s_min
    return f"""
    WITH t AS (SELECT * FROM {src}),
        inst AS (
        SELECT t.*, (CAST(floor(epoch(ts - {T0}) / {s_min * 60}) AS BIGINT) - k) AS m
        FROM t, range(0, {k}) AS ks(k)
    ),
    w AS (
        SELECT {select}, {T0} + to_minutes(m * {s_min} + {r_min}) AS wtime
        FROM inst WHERE m >= 0 GROUP BY ALL
    )
    SELECT count(*), {outer} FROM w WHERE wtime <= TIMESTAMP '{END}'"""


def duck_sql(q, src):
    if q == "q1":
        return duck_windowed(
            src, 60, 10, "origin, m, count(*) AS c, avg(delay) AS a, max(delay) AS mx", "sum(mx)"
        )
    if q == "q2":
        parts = " UNION ALL ".join(
            f"SELECT origin, {T0} + to_minutes((CAST(floor(epoch(ts - {T0}) / {r * 60}) AS BIGINT) + 1) * {r}) "
            f"AS wtime, min(delay) AS mn FROM t GROUP BY ALL"
            for r in (10, 20, 30, 40)
        )
        return f"""
        WITH t AS (SELECT * FROM {src}),         w AS ({parts})
        SELECT count(*), sum(mn) FROM w WHERE wtime <= TIMESTAMP '{END}'"""
    if q == "q3":
        return f"""
        WITH t AS (SELECT * FROM {src}),         w AS (SELECT time_bucket(INTERVAL 1 minute, ts) + INTERVAL 1 minute AS wtime,
                     count(*) AS c, sum(delay) AS sm FROM t GROUP BY ALL)
        SELECT epoch(TIMESTAMP '{END}' - {T0}) // 60, sum(sm) FROM w WHERE wtime <= TIMESTAMP '{END}'"""
    if q == "day_minute":
        # Minute partials over a dense series of minutes, then a window function over the
        # 1,440 minutes of each instance (instance m ends m + 1,440 minutes after T0).
        end = ENDS[q]
        return f"""
        WITH t AS (SELECT * FROM {src}),
        p AS (SELECT CAST(floor(epoch(ts - {T0}) / 60) AS BIGINT) AS m, count(*) AS c,
                     max(delay) AS mx FROM t GROUP BY ALL),
        d AS (SELECT g.m, coalesce(p.c, 0) AS c, p.mx FROM
              range(0, CAST(epoch(TIMESTAMP '{end}' - {T0}) AS BIGINT) // 60) AS g(m) LEFT JOIN p USING (m)),
        w AS (SELECT m, sum(c) OVER f AS c, max(mx) OVER f AS mx FROM d
              WINDOW f AS (ORDER BY m RANGE BETWEEN 1439 PRECEDING AND CURRENT ROW))
        SELECT count(*), sum(c) + sum(mx) FROM w WHERE m >= 1439"""
    if q == "day_hour_origin":
        # Hour partials per origin, each expanded to the 24 instances that contain it.
        end = ENDS[q]
        return f"""
        WITH t AS (SELECT * FROM {src}),
        p AS (SELECT origin, CAST(floor(epoch(ts - {T0}) / 3600) AS BIGINT) AS h,
                     count(*) AS c, max(delay) AS mx FROM t GROUP BY ALL),
        w AS (SELECT origin, h + k AS e, sum(c) AS c, max(mx) AS mx
              FROM p, range(0, 24) AS ks(k) WHERE h + k >= 23 GROUP BY ALL)
        SELECT count(*), sum(c) + sum(mx) FROM w
        WHERE e < CAST(epoch(TIMESTAMP '{end}' - {T0}) AS BIGINT) // 3600"""
    raise ValueError(q)


def make_csv():
    if os.path.exists(CSV):
        return
    import duckdb

    os.makedirs(CACHE, exist_ok=True)
    tmp = CSV + ".tmp"
    con = duckdb.connect()
    con.execute(
        f"COPY (SELECT strftime(date, '%Y-%m-%d %H:%M:%S') AS ts, delay, distance, origin, "
        f"destination FROM read_parquet('{PARQUET}')) TO '{tmp}' (HEADER, DELIMITER ',')"
    )
    os.replace(tmp, CSV)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    def __init__(self, tcqd):
        self.port = free_port()
        self.proc = subprocess.Popen(
            [tcqd, "--listen", f"127.0.0.1:{self.port}", "--memory-only"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env={**os.environ, "RUST_LOG": "warn"},
        )
        for _ in range(500):
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.1).close()
                return
            except OSError:
                time.sleep(0.01)
        raise RuntimeError("tcqd did not start")

    def start_profile(self, path):
        """`perf record` of tcqd (flat profile) until stop(); for TCQ_BENCH_PERF."""
        if os.path.exists(path):
            os.replace(path, path + ".old")
        self.perf = subprocess.Popen(
            ["perf", "record", "-q", "-F", os.environ.get("TCQ_BENCH_PERF_HZ", "999"),
             *os.environ.get("TCQ_BENCH_PERF_ARGS", "").split(), "-o", path,
             "-p", str(self.proc.pid)],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )
        # perf attaches to every thread before it samples, which takes a while: a COPY
        # started at once was half over (its parse threads unseen) before the first sample.
        for _ in range(100):
            if os.path.exists(path) and os.path.getsize(path) > 0:
                break
            time.sleep(0.05)
        time.sleep(0.5)

    def psql(self, sql, **kw):
        return subprocess.run(
            ["psql", "-h", "127.0.0.1", "-p", str(self.port), "-U", "tcq", "-d", "tcq",
             "-X", "-q", "-v", "ON_ERROR_STOP=1", "-At", "-c", sql],
            check=True, capture_output=True, text=True, **kw,
        ).stdout

    def cpu_secs(self):
        """User plus system CPU time tcqd has used: robust where the machine is shared."""
        with open(f"/proc/{self.proc.pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def vmhwm_mb(self):
        with open(f"/proc/{self.proc.pid}/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
        return float("nan")

    def stop(self):
        if getattr(self, "perf", None):
            self.perf.send_signal(2)
            self.perf.wait()
        self.proc.terminate()
        self.proc.wait()


def copy_in(server):
    server.psql(f"\\copy flights FROM '{CSV}' WITH (FORMAT csv, HEADER)")


def ingest_session(server, end, nrows):
    """The `\\copy`, `tcq_advance` past the data and, once the query has consumed every
    tuple, `DROP STREAM`, in one psql session, as a user's script runs them (one client
    start-up instead of three). Returns "dropped", or the query's `tuples_in` when it had not
    consumed them all yet (the caller then asks again and drops the stream itself)."""
    script = (
        f"\\copy flights FROM '{CSV}' WITH (FORMAT csv, HEADER)\n"
        f"SELECT tcq_advance('flights', '{end}');\n"
        f"SELECT tuples_in, tuples_in = {nrows} AS done FROM tcq_queries \\gset\n"
        "\\if :done\nDROP STREAM flights;\n\\echo dropped\n\\else\n\\echo :tuples_in\n\\endif\n"
    )
    out = subprocess.run(
        ["psql", "-h", "127.0.0.1", "-p", str(server.port), "-U", "tcq", "-d", "tcq",
         "-X", "-q", "-v", "ON_ERROR_STOP=1", "-At", "-f", "-"],
        input=script, check=True, capture_output=True, text=True,
    ).stdout
    return out.strip().splitlines()[-1]


def run_tcq(tcqd, q, out_path, nrows):
    """One query end to end; returns (seconds, rows, checksum, VmHWM MB, tcqd CPU seconds)."""
    server = Server(tcqd)
    try:
        server.psql(STREAM)
        if os.environ.get("TCQ_BENCH_PERF"):
            server.start_profile(os.path.join(CACHE, f"perf-{q}.data"))
        if q == "copy":
            t0 = time.perf_counter()
            copy_in(server)
            server.psql("SELECT tuples FROM tcq_streams")  # the stream's queue is empty
            secs = time.perf_counter() - t0
            return secs, 0, None, server.vmhwm_mb(), server.cpu_secs()
        text, col, _ = QUERIES[q]
        devnull = col is None
        with open(os.devnull if devnull else out_path, "w") as out:
            reader = subprocess.Popen(
                ["psql", "-h", "127.0.0.1", "-p", str(server.port), "-U", "tcq", "-d", "tcq",
                 "-X", "-q", "-c", f"COPY ({text}) TO STDOUT WITH (FORMAT csv)"],
                stdout=out, stderr=subprocess.PIPE,
            )
            for _ in range(1000):
                if server.psql("SELECT count(*) FROM tcq_queries").strip() == "1":
                    break
                time.sleep(0.01)
            t0 = time.perf_counter()
            if devnull:
                copy_in(server)
                # The end of the input: close every instance that holds data.
                server.psql(f"SELECT tcq_advance('flights', '{ENDS.get(q, END)}')")
                done = None
            else:
                done = ingest_session(server, ENDS.get(q, END), nrows)
            # The view waits up to a second for the stream's task: ask until it has all.
            for _ in range(600):
                if done in (str(nrows), "dropped"):
                    break
                done = server.psql("SELECT tuples_in FROM tcq_queries").strip()
            if devnull:
                # The rows went to /dev/null: the server counts them. Wait until the last
                # instance before the end has been emitted.
                want = expected_rows(q)
                while int(server.psql("SELECT rows_out FROM tcq_queries").strip()) < want:
                    time.sleep(0.01)
                devnull_rows = int(server.psql("SELECT rows_out FROM tcq_queries").strip())
            if done != "dropped":
                server.psql("DROP STREAM flights")
            reader.wait()
            secs = time.perf_counter() - t0
            if reader.returncode != 0:
                raise RuntimeError(f"{q}: the reader failed: {reader.stderr.read().decode()}")
        if done not in (str(nrows), "dropped"):
            raise RuntimeError(f"{q}: query consumed {done} tuples, expected {nrows}")
        if devnull:
            return secs, devnull_rows, None, server.vmhwm_mb(), server.cpu_secs()
        cols = col if isinstance(col, tuple) else (col,)
        rows, checksum = 0, 0
        with open(out_path) as f:
            for line in f:
                rows += 1
                fields = line.rstrip("\n").split(",")
                for c in cols:
                    checksum += int(fields[c]) if fields[c] else 0  # NULL: an empty instance
        return secs, rows, checksum, server.vmhwm_mb(), server.cpu_secs()
    finally:
        server.stop()


def expected_rows(q):
    """Slide events of an ungrouped query from its first instance (START AT T0) to its end."""
    from datetime import datetime

    r_s, s_s = {"week_second": (7 * 86400, 1), "day_minute": (86400, 60)}[q]
    span = (datetime.fromisoformat(ENDS[q]) - datetime(2001, 1, 1)).total_seconds()
    return int((span - r_s) // s_s) + 1


def run_duck(q, threads, source):
    import duckdb

    con = duckdb.connect()
    con.execute(f"SET threads = {threads}")
    csv_src = (
        f"read_csv('{CSV}', header = true, columns = {{'ts': 'TIMESTAMP', 'delay': 'INTEGER', "
        f"'distance': 'INTEGER', 'origin': 'VARCHAR', 'destination': 'VARCHAR'}})"
    )
    if source == "memory":
        con.execute(f"CREATE TABLE flights AS SELECT * FROM {csv_src}")
        src = "flights"
    else:
        src = csv_src
    sql = duck_sql(q, src)
    t0 = time.perf_counter()
    rows, checksum = con.execute(sql).fetchone()
    return time.perf_counter() - t0, rows, int(checksum)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tcqd", default=os.path.join(ROOT, "target", "release", "tcqd"))
    ap.add_argument("--only", default="q1,q2,q3,day_minute,day_hour_origin,week_second,copy")
    ap.add_argument("--runs", type=int, default=1, help="tcq runs per query; the best counts")
    ap.add_argument("--skip-duckdb", action="store_true")
    args = ap.parse_args()
    if not shutil.which("psql"):
        sys.exit("bench: psql is needed (apt-get install postgresql-client)")
    make_csv()
    with open(CSV) as f:
        nrows = sum(1 for _ in f) - 1
    print(f"data: {CSV}, {nrows:,} rows; {os.cpu_count()} cores; "
          f"load average {os.getloadavg()[0]:.1f}")
    # A directory of this run's own: two runs at once must not write one output file.
    tmpdir = os.path.join(CACHE, f"out-{os.getpid()}")
    os.makedirs(tmpdir, exist_ok=True)
    header = "| query | tcq tuples/s | rows | checksum | tcqd VmHWM | tcqd CPU s |"
    duck_cols = ["mem 1t", "mem 2t", "csv 1t", "csv 2t"]
    if not args.skip_duckdb:
        header += " " + " | ".join(f"DuckDB {c}" for c in duck_cols) + " | tcq / DuckDB mem 1t | tcq / DuckDB csv 1t |"
    print(header)
    print("|" + "---|" * (header.count("|") - 1))
    ok = True
    for q in args.only.split(","):
        best = None
        for _ in range(args.runs):
            r = run_tcq(args.tcqd, q, os.path.join(tmpdir, f"{q}.csv"), nrows)
            if best is None or r[0] < best[0]:
                best = r
        secs, rows, checksum, hwm, cpu = best
        tps = nrows / secs
        cells = [q, f"{tps / 1e6:.2f} M", f"{rows:,}", "-" if checksum is None else f"{checksum:,}", f"{hwm:.0f} MB", f"{cpu:.2f}"]
        if q in QUERIES and QUERIES[q][2] is not None and checksum != QUERIES[q][2]:
            ok = False
            cells[3] += f" (expected {QUERIES[q][2]:,})"
        if q in QUERIES and QUERIES[q][1] is None and rows != expected_rows(q):
            ok = False
            cells[2] += f" (expected {expected_rows(q):,})"
        if not args.skip_duckdb:
            if q in QUERIES and QUERIES[q][1] is not None:
                speeds = {}
                for c in duck_cols:
                    source, threads = ("memory" if c.startswith("mem") else "csv"), int(c[-2])
                    d_secs, d_rows, d_sum = run_duck(q, threads, source)
                    speeds[c] = nrows / d_secs
                    mark = "" if (d_rows, d_sum) == (rows, checksum) else f" (rows {d_rows:,}, sum {d_sum:,})"
                    if mark:
                        ok = False
                    cells.append(f"{speeds[c] / 1e6:.2f} M{mark}")
                cells.append(f"{tps / speeds['mem 1t']:.2f}")
                cells.append(f"{tps / speeds['csv 1t']:.2f}")
            else:
                cells += ["-"] * (len(duck_cols) + 2)
        print("| " + " | ".join(cells) + " |", flush=True)
    shutil.rmtree(tmpdir, ignore_errors=True)
    if not ok:
        sys.exit("bench: results disagree (see the marked cells)")


if __name__ == "__main__":
    main()
