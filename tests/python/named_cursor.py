"""psycopg server-side (named) cursors and DEALLOCATE against tcq.

A named cursor is a SQL DECLARE that psycopg describes as a protocol portal before its
FETCHes; after DDL psycopg sends DEALLOCATE ALL. Prints what it reads.
"""
import sys

import psycopg

port = sys.argv[sys.argv.index("--port") + 1]
dsn = f"host=127.0.0.1 port={port} user=tcq dbname=tcq"
with psycopg.connect(dsn, autocommit=True) as c:
    c.execute("CREATE STREAM nc (ts timestamp TIMESTAMPCOLUMN, v integer)")
    c.cursor().executemany("INSERT INTO nc VALUES (%s, %s)", [("2001-01-01 00:00:00", 1)] * 6)
    c.execute("DEALLOCATE ALL")
with psycopg.connect(dsn) as c, psycopg.connect(dsn, autocommit=True) as feeder:
    with c.cursor(name="sc") as s:
        s.execute("SELECT v, wtime(*) FROM nc [RANGE BY '1 second' START AT '2001-01-01']")
        feeder.execute("INSERT INTO nc VALUES ('2001-01-01 00:00:00.5', 7), ('2001-01-01 00:00:01', 8)")
        print("columns:", [d.name for d in s.description])
        print("rows:", s.fetchmany(1))
