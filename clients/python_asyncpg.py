#!/usr/bin/env python3
"""tcq from Python with asyncpg: every way asyncpg has to ingest and to read a continuous
query's rows as they arrive, a pool, and cancelling a query.

Run (with tcqd serving on 127.0.0.1:5433, e.g. `cargo run --release`):

    pip install asyncpg
    python3 clients/python_asyncpg.py [--port 5433]

For each reader (a cursor, `copy_from_query` with an output callback that sees each row as
it arrives, and a cursor on a pooled connection) the program creates a stream, starts
`SELECT k, count(*), sum(v), wtime(*) ... [RANGE BY '10 seconds'] GROUP BY k ... LIMIT 3`,
waits until tcq lists it in tcq_queries, then sends three tuples by a bulk path
(`copy_records_to_table`, binary COPY; or `copy_to_table` with CSV) and two with
`executemany` (a parameterised INSERT). Each prints the same three rows. asyncpg cursors
fetch through extended-protocol portals with a row limit (`prefetch`) and need a
transaction, as in PostgreSQL. Last, a query is cancelled by asyncpg's timeout, which sends
a CancelRequest, and the pool's reset (run on every release) is exercised.
"""

import argparse
import asyncio
import datetime as dt
import io

import asyncpg

BULK = [(dt.datetime(2001, 1, 1, 0, 0, 1), "a", 1),
        (dt.datetime(2001, 1, 1, 0, 0, 3), "b", 2),
        (dt.datetime(2001, 1, 1, 0, 0, 5), "a", 3)]
BULK_CSV = b"2001-01-01 00:00:01,a,1\n2001-01-01 00:00:03,b,2\n2001-01-01 00:00:05,a,3\n"
INSERTED = [(dt.datetime(2001, 1, 1, 0, 0, 12), "a", 10),
            (dt.datetime(2001, 1, 1, 0, 0, 25), "z", 0)]


def query(stream):
    return (f"SELECT k, count(*), sum(v), wtime(*) FROM {stream} "
            "[RANGE BY '10 seconds' START AT '2001-01-01'] GROUP BY k ORDER BY k LIMIT 3")


async def wait_for_query(conn, before):
    async with asyncio.timeout(10):
        while await conn.fetchval("SELECT count(*) FROM tcq_queries") <= before:
            await asyncio.sleep(0.02)


async def read_cursor(conn, sql, out):
    async with conn.transaction():
        async for r in conn.cursor(sql, prefetch=2):
            out.append((r["k"], r["count"], r["sum"], r["wtime"]))


async def read_copy(conn, sql, out):
    async def on_data(chunk):
        # asyncpg hands over what has arrived; a slide event's rows may come together.
        for line in chunk.decode().splitlines():
            k, n, s, wtime = line.split(",")
            out.append((k, int(n), int(s), wtime))
    await conn.copy_from_query(sql, output=on_data, format="csv")


async def run(admin, connect, name, read, csv=False):
    stream = f"apg_{name}"
    # Dropped first, so that the program runs again on the same server.
    await admin.execute(f"DROP STREAM IF EXISTS {stream}")
    await admin.execute(
        f"CREATE STREAM {stream} (ts timestamp TIMESTAMPCOLUMN, k text, v integer)")
    before = await admin.fetchval("SELECT count(*) FROM tcq_queries")
    rows = []

    async def reader():
        async with connect() as conn:
            await read(conn, query(stream), rows)

    task = asyncio.create_task(reader())
    await wait_for_query(admin, before)
    if csv:
        await admin.copy_to_table(stream, source=io.BytesIO(BULK_CSV), format="csv",
                                  columns=["ts", "k", "v"])
    else:
        await admin.copy_records_to_table(stream, records=BULK, columns=["ts", "k", "v"])
    await admin.executemany(f"INSERT INTO {stream} (ts, k, v) VALUES ($1, $2, $3)", INSERTED)
    async with asyncio.timeout(10):
        await task
    for k, n, s, wtime in rows:
        print(f"{name}: {k} {n} {s} {wtime}", flush=True)


class Connect:
    """`async with Connect(dsn)` opens and closes a plain connection."""

    def __init__(self, dsn):
        self.dsn = dsn

    async def __aenter__(self):
        self.conn = await asyncpg.connect(self.dsn)
        return self.conn

    async def __aexit__(self, *exc):
        await self.conn.close()


async def cancel(admin, dsn):
    await admin.execute("DROP STREAM IF EXISTS apg_cancel")
    await admin.execute("CREATE STREAM apg_cancel (ts timestamp TIMESTAMPCOLUMN, v integer)")
    conn = await asyncpg.connect(dsn)
    try:
        await conn.fetch("SELECT v FROM apg_cancel", timeout=0.5)
        print("cancel: not cancelled")
    except asyncio.TimeoutError:
        # asyncpg sent a CancelRequest; the connection is usable again.
        print("cancel: timed out, then", await conn.fetchval("SELECT 1"))
    await conn.close()


async def introspect(admin):
    # asyncpg's type introspection: set_type_codec looks the type up in pg_type and
    # pg_namespace by name, then decodes with the codec given.
    await admin.set_type_codec(
        "numeric", schema="pg_catalog", encoder=str, decoder=lambda s: "numeric " + s,
        format="text")
    print("codec:", await admin.fetchval("SELECT 1.5::numeric"))
    # A catalog query: the streams with their schemas and TIMESTAMPCOLUMN types.
    rows = await admin.fetch(
        "SELECT n.nspname, c.relname, format_type(a.atttypid, a.atttypmod) "
        "FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace "
        "JOIN pg_catalog.pg_attribute a ON a.attrelid = c.oid AND a.attnum = 1 "
        "WHERE c.relkind = 'f' AND c.relname LIKE 'apg_%' ORDER BY 2")
    for r in rows:
        print("catalog:", *r)
    # Arrays arrive typed, in binary: asyncpg decodes text[], smallint[] and oid values
    # into Python lists and ints by the types RowDescription names (for smallint[] after
    # looking the type up with its introspection query).
    row = await admin.fetchrow(
        "SELECT array_agg(a.attname::text ORDER BY a.attnum DESC), "
        "array_agg(a.attnum ORDER BY a.attnum), c.oid, ARRAY['x y', NULL] "
        "FROM pg_catalog.pg_class c JOIN pg_catalog.pg_attribute a ON a.attrelid = c.oid "
        "WHERE c.relname = 'apg_cursor' AND a.attnum > 0 GROUP BY c.oid")
    print("arrays:", row[0], row[1], type(row[2]).__name__, row[3])


async def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=5433)
    args = ap.parse_args()
    dsn = f"postgresql://tcq@{args.host}:{args.port}/tcq"
    admin = await asyncpg.connect(dsn)
    pool = await asyncpg.create_pool(dsn, min_size=1, max_size=1)
    await run(admin, lambda: Connect(dsn), "cursor", read_cursor)
    await run(admin, lambda: Connect(dsn), "copy_from_query", read_copy, csv=True)
    await run(admin, pool.acquire, "pool_cursor", read_cursor)
    # The pool's connection was reset on release (pg_advisory_unlock_all(), CLOSE ALL,
    # UNLISTEN *, RESET ALL) and is handed out again.
    async with pool.acquire() as conn:
        print("pool reused:", await conn.fetchval("SELECT 1"))
    await cancel(admin, dsn)
    await introspect(admin)
    await pool.close()
    await admin.close()
    print("done")


if __name__ == "__main__":
    asyncio.run(main())
