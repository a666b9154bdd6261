"""psycopg's `cursor.copy()` over `COPY (SELECT ...) TO STDOUT` of an aggregate query whose
slide events leave the executor as column blocks: every CopyData message is printed as it
arrives (text and CSV, one JSON string per message), and binary COPY is decoded by
`copy.rows()` with the column types set (each row as a JSON list of str() values); then a
server-side cursor reads the same query two rows per fetch."""
import json
import sys
import time

import psycopg

port = sys.argv[sys.argv.index("--port") + 1]
dsn = f"host=127.0.0.1 port={port} user=tcq dbname=tcq"
SELECT = (
    "SELECT k, wtime(*), count(*), sum(v), avg(v), min(t), max(t), min(f), max(f) FROM s "
    "[RANGE BY '10 seconds' START AT '2001-01-01'] GROUP BY k"
)
# (second, k, v, f, t): the tuples of tests/result_blocks.rs (TUPLES).
TUPLES = [
    (1, "a,b", 1, 2.5, "pear"),
    (1, 'say "hi"', 2, -0.125, "apple"),
    (2, "back\\slash", 3, None, None),
    (2, "tab\there", 4, 0.1, "tab\tin t"),
    (3, "new\nline", 5, None, None),
    (3, "cr\rx", None, None, None),
    (4, "", 6, None, ""),
    (4, None, 7, 1e20, "x"),
    (5, "naïve café ☕", 8, None, "ü"),
    (5, "a key longer than twenty-four bytes", 9, None, None),
    (6, "\\.", 10, None, None),
    (6, "vt\x0bx", 11, None, None),
    (6, "semi;colon", 12, None, None),
    (6, "it's", 13, None, None),
    (6, "NULL", 14, None, None),
    (7, "a,b", 2, 7.75, "zebra"),
    (8, 'say "hi"', None, None, None),
    (8, None, 8, -3.0, "x"),
    (15, "a,b", 10, 1.0, "mid"),
    (25, "end", 0, 0.0, "end"),
]


def wait_registered(feeder):
    for _ in range(1000):
        if feeder.execute("SELECT id FROM tcq_queries").fetchall():
            return
        time.sleep(0.01)
    raise SystemExit("query never registered")


def feed_and_drop(feeder):
    wait_registered(feeder)
    feeder.cursor().executemany(
        "INSERT INTO s VALUES (%s, %s, %s, %s, %s)",
        [(f"2001-01-01 00:00:{sec:02}", k, v, f, t) for sec, k, v, f, t in TUPLES],
    )
    feeder.execute("DROP STREAM s")


CREATE = (
    "CREATE STREAM s (ts timestamp TIMESTAMPCOLUMN, k text, v integer, "
    "f double precision, t text)"
)

with psycopg.connect(dsn, autocommit=True) as feeder, psycopg.connect(
    dsn, autocommit=True
) as reader:
    for label, options in [("text", ""), ("csv", "(FORMAT csv, HEADER)")]:
        feeder.execute(CREATE)
        with reader.cursor().copy(f"COPY ({SELECT}) TO STDOUT {options}") as copy:
            feed_and_drop(feeder)
            for data in copy:
                print(label, json.dumps(bytes(data).decode(), ensure_ascii=False))
    feeder.execute(CREATE)
    with reader.cursor().copy(f"COPY ({SELECT}) TO STDOUT (FORMAT binary)") as copy:
        feed_and_drop(feeder)
        copy.set_types(
            ["text", "timestamp", "int8", "int8", "numeric", "text", "text", "float8", "float8"]
        )
        for row in copy.rows():
            print("binary", json.dumps([None if x is None else str(x) for x in row], ensure_ascii=False))
# A server-side cursor (DECLARE, then FETCH FORWARD 2 per fetchmany) inside a transaction:
# each batch is printed as it arrives, an empty one when the query has ended.
with psycopg.connect(dsn, autocommit=True) as feeder, psycopg.connect(dsn) as reader:
    feeder.execute(CREATE)
    with reader.cursor(name="blocks") as cur:
        cur.execute(SELECT)
        feed_and_drop(feeder)
        while True:
            batch = cur.fetchmany(2)
            print("cursor", json.dumps([[None if x is None else str(x) for x in row[:4]] for row in batch], ensure_ascii=False))
            if not batch:
                break
print("done")
