#!/usr/bin/env python3
"""tcq from Python with psycopg 3: create a stream, insert with executemany, and read a
continuous query's rows as they arrive.

Run (with tcqd serving on 127.0.0.1:5433, e.g. `cargo run --release`):

    pip install 'psycopg[binary]'
    python3 clients/python_psycopg.py [--port 5433] [--stream py_flights]

One connection reads `SELECT ... LIMIT 4` with `cursor.stream()`, which yields each row as
the server sends it (at every slide event); the other inserts flights with executemany.
The reader is started first and the writer waits until the server lists the query in
tcq_queries, so no tuple arrives before the query is installed. Prints one `row:` line per
result row, then `done`.
"""

import argparse
import threading
import time

import psycopg

ROWS = [
    ("2001-01-01 00:10:00", 5, "ATL"),
    ("2001-01-01 00:20:00", 15, "ORD"),
    ("2001-01-01 00:40:00", 25, "ATL"),
    ("2001-01-01 01:05:00", -3, "ORD"),
    ("2001-01-01 01:30:00", 7, "ATL"),
    ("2001-01-01 02:00:00", 0, "SFO"),
]


def read(conninfo, stream, out):
    query = (
        f"SELECT origin, count(*), max(delay), wtime(*) FROM {stream} "
        "[RANGE BY '1 hour' START AT '2001-01-01 00:00:00'] "
        "GROUP BY origin ORDER BY origin LIMIT 4"
    )
    with psycopg.connect(conninfo, autocommit=True) as conn:
        for origin, count, max_delay, wtime in conn.cursor().stream(query):
            line = f"row: {origin} {count} {max_delay} {wtime}"
            print(line, flush=True)
            out.append(line)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=5433)
    ap.add_argument("--stream", default="py_flights")
    args = ap.parse_args()
    conninfo = f"host={args.host} port={args.port} user=tcq dbname=tcq"

    with psycopg.connect(conninfo, autocommit=True) as conn:
        conn.execute(
            f"CREATE STREAM {args.stream} (ts timestamp TIMESTAMPCOLUMN, delay integer, origin text)"
        )
        queries_before = conn.execute("SELECT count(*) FROM tcq_queries").fetchone()[0]
        rows = []
        reader = threading.Thread(target=read, args=(conninfo, args.stream, rows))
        reader.start()
        deadline = time.monotonic() + 10
        while conn.execute("SELECT count(*) FROM tcq_queries").fetchone()[0] <= queries_before:
            if time.monotonic() > deadline:
                raise SystemExit("the continuous query did not start")
            time.sleep(0.02)
        with conn.cursor() as cur:
            cur.executemany(
                f"INSERT INTO {args.stream} (ts, delay, origin) VALUES (%s, %s, %s)", ROWS
            )
        reader.join(timeout=10)
        if reader.is_alive():
            raise SystemExit("the continuous query did not end")
    # A fresh connection drops the stream: after a DROP, psycopg clears the statements that
    # executemany prepared with DEALLOCATE ALL, which tcq does not implement.
    with psycopg.connect(conninfo, autocommit=True) as conn:
        conn.execute(f"DROP STREAM {args.stream}")
    print("done")


if __name__ == "__main__":
    main()
