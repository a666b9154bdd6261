"""psycopg's copy-out row API against tcq: `copy.rows()` and `copy.read_row()` parse one row
per CopyData message, as PostgreSQL sends them; a message holding two rows loses the second
without an error. Prints every row it reads."""
import sys

import psycopg

port = sys.argv[sys.argv.index("--port") + 1]
dsn = f"host=127.0.0.1 port={port} user=tcq dbname=tcq"
QUERY = (
    "COPY (SELECT k, count(*), wtime(*) FROM {s} [RANGE BY '10 seconds' START AT '2001-01-01'] "
    "GROUP BY k ORDER BY k LIMIT {n}) TO STDOUT"
)
ROWS = [
    ("2001-01-01 00:00:01", "a"),
    ("2001-01-01 00:00:03", "b"),
    ("2001-01-01 00:00:05", "a"),
    ("2001-01-01 00:00:12", "a"),
    ("2001-01-01 00:00:13", "c"),
    ("2001-01-01 00:00:21", "a"),
]


def wait_registered(feeder, stream):
    import time

    for _ in range(1000):
        if any(stream == row[1] for row in feeder.execute("SELECT id, stream FROM tcq_queries")):
            return
        time.sleep(0.01)
    raise SystemExit("query never registered")


with psycopg.connect(dsn, autocommit=True) as feeder:
    feeder.execute("CREATE STREAM cr (ts timestamp TIMESTAMPCOLUMN, k text)")
    feeder.execute("CREATE STREAM cr2 (ts timestamp TIMESTAMPCOLUMN, k text)")
    with psycopg.connect(dsn, autocommit=True) as reader:
        cur = reader.cursor()
        with cur.copy(QUERY.format(s="cr", n=3)) as copy:
            wait_registered(feeder, "cr")
            feeder.cursor().executemany("INSERT INTO cr VALUES (%s, %s)", ROWS)
            copy.set_types(["text", "int8", "timestamp"])
            for row in copy.rows():
                print("rows():", row[0], row[1], row[2].isoformat(sep=" "))
    with psycopg.connect(dsn, autocommit=True) as reader:
        cur = reader.cursor()
        with cur.copy(QUERY.format(s="cr2", n=4)) as copy:
            wait_registered(feeder, "cr2")
            feeder.execute(
                "INSERT INTO cr2 VALUES ('2001-01-01 00:00:31', 'x'), ('2001-01-01 00:00:32', 'y'),"
                " ('2001-01-01 00:00:41', 'z'), ('2001-01-01 00:00:52', 'z'),"
                " ('2001-01-01 00:01:01', 'z')"
            )
            while (row := copy.read_row()) is not None:
                print("read_row():", row)
