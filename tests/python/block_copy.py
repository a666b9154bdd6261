"""psycopg's `cursor.copy()` over `COPY (SELECT ...) TO STDOUT` of an aggregate query whose
slide events leave the executor as column blocks: every CopyData message is printed as it
arrives (text and CSV, one JSON string per message), and binary COPY is decoded by
`copy.rows()` with the column types set (each row as a JSON list of str() values); then a
server-side cursor reads the same query two rows per fetch."""
import json
import sys
import time

import psycopg
from block_fixture import CREATE, SELECT, TUPLES

port = sys.argv[sys.argv.index("--port") + 1]
dsn = f"host=127.0.0.1 port={port} user=tcq dbname=tcq"


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
