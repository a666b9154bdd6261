#!/usr/bin/env python3
"""tcq from Python with psycopg 3: every way psycopg has to ingest and to read a
continuous query's rows as they arrive, and cancelling one.

Run (with tcqd serving on 127.0.0.1:5433, e.g. `cargo run --release`):

    pip install 'psycopg[binary]'
    python3 clients/python_psycopg.py [--port 5433]

For each streaming API (`cursor.stream()`, `copy.rows()` over text and binary COPY, a
named server-side cursor) the program creates a stream, starts the query
`SELECT k, count(*), sum(v), wtime(*) ... [RANGE BY '10 seconds'] GROUP BY k ... LIMIT 3`,
waits until tcq lists it in tcq_queries, then sends three tuples by a bulk path (COPY in
text, COPY in binary) and two by a parameterised INSERT (executemany). Each API prints the
same three rows: the window ending at :10 holds a (2 tuples, sum 4) and b (1, 2); the one
ending at :20 holds a (1, 10). Then a query is cancelled with `connection.cancel()`.
"""

import argparse
import datetime as dt
import threading
import time

import psycopg

BULK = [(dt.datetime(2001, 1, 1, 0, 0, 1), "a", 1),
        (dt.datetime(2001, 1, 1, 0, 0, 3), "b", 2),
        (dt.datetime(2001, 1, 1, 0, 0, 5), "a", 3)]
INSERTED = [(dt.datetime(2001, 1, 1, 0, 0, 12), "a", 10),
            (dt.datetime(2001, 1, 1, 0, 0, 25), "z", 0)]


def query(stream):
    return (f"SELECT k, count(*), sum(v), wtime(*) FROM {stream} "
            "[RANGE BY '10 seconds' START AT '2001-01-01'] GROUP BY k ORDER BY k LIMIT 3")


def wait_for_query(conn, before):
    deadline = time.monotonic() + 10
    while conn.execute("SELECT count(*) FROM tcq_queries").fetchone()[0] <= before:
        if time.monotonic() > deadline:
            raise SystemExit("the continuous query did not start")
        time.sleep(0.02)


def ingest(conn, stream, binary):
    with conn.cursor() as cur:
        fmt = "(FORMAT binary)" if binary else ""
        with cur.copy(f"COPY {stream} (ts, k, v) FROM STDIN {fmt}") as copy:
            if binary:
                copy.set_types(["timestamp", "text", "int4"])
            for row in BULK:
                copy.write_row(row)
        cur.executemany(f"INSERT INTO {stream} (ts, k, v) VALUES (%s, %s, %s)", INSERTED)


def run(conninfo, admin, name, read, binary=False):
    """Start `read` (which prints its rows) on its own connection, then feed the stream."""
    stream = f"psy_{name}"
    # Dropped first, so that the program runs again on the same server.
    admin.execute(f"DROP STREAM IF EXISTS {stream}")
    admin.execute(f"CREATE STREAM {stream} (ts timestamp TIMESTAMPCOLUMN, k text, v integer)")
    before = admin.execute("SELECT count(*) FROM tcq_queries").fetchone()[0]
    lines = []
    errors = []

    def target():
        try:
            with psycopg.connect(conninfo, autocommit=True) as conn:
                for k, n, s, wtime in read(conn, query(stream)):
                    lines.append(f"{name}: {k} {n} {s} {wtime}")
        except Exception as e:  # reported below, in order
            errors.append(e)

    reader = threading.Thread(target=target)
    reader.start()
    wait_for_query(admin, before)
    ingest(admin, stream, binary)
    reader.join(timeout=10)
    if reader.is_alive() or errors:
        raise SystemExit(f"{name}: {errors or 'did not end'}")
    print("\n".join(lines), flush=True)


def read_stream(conn, sql):
    yield from conn.cursor().stream(sql)


def read_copy_text(conn, sql):
    with conn.cursor().copy(f"COPY ({sql}) TO STDOUT") as copy:
        copy.set_types(["text", "int8", "int8", "timestamp"])
        yield from copy.rows()


def read_copy_binary(conn, sql):
    with conn.cursor().copy(f"COPY ({sql}) TO STDOUT (FORMAT binary)") as copy:
        copy.set_types(["text", "int8", "int8", "timestamp"])
        yield from copy.rows()


def read_named_cursor(conn, sql):
    conn.autocommit = False
    with conn.transaction(), conn.cursor(name="c") as cur:
        cur.execute(sql)
        while rows := cur.fetchmany(2):
            yield from rows


def cancel(conninfo, admin):
    """A query without LIMIT runs until cancelled: psycopg's Connection.cancel()."""
    admin.execute("DROP STREAM IF EXISTS psy_cancel")
    admin.execute("CREATE STREAM psy_cancel (ts timestamp TIMESTAMPCOLUMN, v integer)")
    before = admin.execute("SELECT count(*) FROM tcq_queries").fetchone()[0]
    with psycopg.connect(conninfo, autocommit=True) as conn:
        def cancel_when_running():
            wait_for_query(admin, before)
            conn.cancel()
        threading.Thread(target=cancel_when_running).start()
        try:
            for _ in conn.cursor().stream("SELECT v FROM psy_cancel"):
                pass
            print("cancel: not cancelled")
        except psycopg.errors.QueryCanceled as e:
            print(f"cancel: {e.sqlstate}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=5433)
    args = ap.parse_args()
    conninfo = f"host={args.host} port={args.port} user=tcq dbname=tcq"
    with psycopg.connect(conninfo, autocommit=True) as admin:
        run(conninfo, admin, "stream", read_stream)
        run(conninfo, admin, "copy_text", read_copy_text)
        run(conninfo, admin, "copy_binary", read_copy_binary, binary=True)
        run(conninfo, admin, "named_cursor", read_named_cursor, binary=True)
        cancel(conninfo, admin)
    print("done")


if __name__ == "__main__":
    main()
