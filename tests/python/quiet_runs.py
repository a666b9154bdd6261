"""psycopg's `cursor.copy()` and a plain `cursor.execute()` read one query over a minute
sliding by the second while sparse tuples arrive, so most of its slide events repeat the
one before (emitted as runs): each reader's rows are printed as one JSON list of COPY text
lines ("copy ..." and "select ...")."""
import json
import sys
import threading
import time

import psycopg

port = sys.argv[sys.argv.index("--port") + 1]
dsn = f"host=127.0.0.1 port={port} user=tcq dbname=tcq"
QUERY = (
    "SELECT wtime(*), count(*), max(v) FROM s [RANGE BY '1 minute' SLIDE BY '1 second' "
    "START AT '2001-01-01']"
)
# Seconds after 2001-01-01 00:00:00 and v: tests/it/result_blocks.rs's QUIET.
TUPLES = [(5, 1), (6, 2), (30, 3), (60, 4), (61, 5), (100, 6), (130, 2), (200, 8)]
got = {}


def copy_reader():
    with psycopg.connect(dsn, autocommit=True) as c:
        with c.cursor().copy(f"COPY ({QUERY}) TO STDOUT") as copy:
            got["copy"] = [bytes(m).decode() for m in copy]


def select_reader():
    with psycopg.connect(dsn, autocommit=True) as c:
        rows = c.execute(QUERY).fetchall()
        null = "\\N"
        got["select"] = [
            f"{w:%Y-%m-%d %H:%M:%S}\t{n}\t{null if m is None else m}\n" for w, n, m in rows
        ]


with psycopg.connect(dsn, autocommit=True) as feeder:
    feeder.execute(
        "CREATE STREAM s (ts timestamp TIMESTAMPCOLUMN, k text, v integer, "
        "f double precision, t text)"
    )
    readers = [threading.Thread(target=f) for f in (copy_reader, select_reader)]
    for n, r in enumerate(readers, 1):
        r.start()
        for _ in range(1000):
            if len(feeder.execute("SELECT id FROM tcq_queries").fetchall()) >= n:
                break
            time.sleep(0.01)
        else:
            raise SystemExit("query never registered")
    feeder.cursor().executemany(
        "INSERT INTO s (ts, v) VALUES (%s, %s)",
        [(f"2001-01-01 00:{s // 60:02}:{s % 60:02}", v) for s, v in TUPLES],
    )
    feeder.execute("DROP STREAM s")
    for r in readers:
        r.join()
print("copy", json.dumps(got["copy"]))
print("select", json.dumps(got["select"]))
print("done")
