#!/usr/bin/env python3
"""tcq from Python with asyncpg: create a stream, load it with COPY (copy_to_table, CSV)
and executemany, and iterate a continuous query with a cursor.

Run (with tcqd serving on 127.0.0.1:5433, e.g. `cargo run --release`):

    pip install asyncpg
    python3 clients/python_asyncpg.py [--port 5433] [--stream apg_flights]

asyncpg cursors fetch through extended-protocol portals with a row limit (`prefetch`), so
each fetch waits until the server has that many rows or the query ends. The cursor needs a
transaction, as in PostgreSQL. The writer waits until the query appears in tcq_queries.
Prints one `row:` line per result row, then `done`.
"""

import argparse
import asyncio
import datetime as dt
import io

import asyncpg

CSV = b"""2001-01-01 00:10:00,5,ATL
2001-01-01 00:20:00,15,ORD
2001-01-01 00:40:00,25,ATL
"""

MORE = [
    (dt.datetime(2001, 1, 1, 1, 5), -3, "ORD"),
    (dt.datetime(2001, 1, 1, 1, 30), 7, "ATL"),
    (dt.datetime(2001, 1, 1, 2, 0), 0, "SFO"),
]


async def read(dsn, stream, started):
    conn = await asyncpg.connect(dsn)
    query = (
        f"SELECT origin, count(*), max(delay), wtime(*) FROM {stream} "
        "[RANGE BY '1 hour' START AT '2001-01-01 00:00:00'] "
        "GROUP BY origin ORDER BY origin LIMIT 4"
    )
    try:
        async with conn.transaction():
            cursor = conn.cursor(query, prefetch=2)
            started.set()
            async for r in cursor:
                print(f"row: {r['origin']} {r['count']} {r['max']} {r['wtime']}", flush=True)
    finally:
        await conn.close()


async def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=5433)
    ap.add_argument("--stream", default="apg_flights")
    args = ap.parse_args()
    dsn = f"postgresql://tcq@{args.host}:{args.port}/tcq"

    conn = await asyncpg.connect(dsn)
    await conn.execute(
        f"CREATE STREAM {args.stream} (ts timestamp TIMESTAMPCOLUMN, delay integer, origin text)"
    )
    before = await conn.fetchval("SELECT count(*) FROM tcq_queries")
    started = asyncio.Event()
    reader = asyncio.create_task(read(dsn, args.stream, started))
    await started.wait()
    async with asyncio.timeout(10):
        while await conn.fetchval("SELECT count(*) FROM tcq_queries") <= before:
            await asyncio.sleep(0.02)
    await conn.copy_to_table(args.stream, source=io.BytesIO(CSV), format="csv")
    await conn.executemany(
        f"INSERT INTO {args.stream} (ts, delay, origin) VALUES ($1, $2, $3)", MORE
    )
    async with asyncio.timeout(10):
        await reader
    await conn.execute(f"DROP STREAM {args.stream}")
    await conn.close()
    print("done")


if __name__ == "__main__":
    asyncio.run(main())
