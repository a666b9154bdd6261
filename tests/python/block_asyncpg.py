"""asyncpg against an aggregate query whose slide events leave the executor as column
blocks: a cursor in a transaction (extended-protocol portals with a row limit, `prefetch`
rows per Execute), `fetch` (binary results until the query ends), and `copy_from_query` in
CSV. Each reader's rows are printed as JSON: records as lists of str() values, COPY as the
bytes it received."""
import asyncio
import datetime as dt
import json
import sys

import asyncpg
from block_fixture import CREATE, SELECT, TUPLES

port = int(sys.argv[sys.argv.index("--port") + 1])


def record(r):
    """The first five columns (k, wtime, count, sum, avg) as str(), NULL as None."""
    return [None if x is None else str(x) for x in list(r.values())[:5]]


async def with_feed(read):
    """Create the stream, start `read` on its own connection, push TUPLES once the query
    is registered and drop the stream, which ends the query; returns what `read` returns."""
    admin = await asyncpg.connect(host="127.0.0.1", port=port, user="tcq", database="tcq")
    reader = await asyncpg.connect(host="127.0.0.1", port=port, user="tcq", database="tcq")
    await admin.execute(CREATE)
    task = asyncio.create_task(read(reader))
    async with asyncio.timeout(10):
        while await admin.fetchval("SELECT count(*) FROM tcq_queries") == 0:
            await asyncio.sleep(0.01)
    records = [
        (dt.datetime(2001, 1, 1) + dt.timedelta(seconds=sec), k, v, f, t)
        for sec, k, v, f, t in TUPLES
    ]
    await admin.copy_records_to_table("s", records=records, columns=["ts", "k", "v", "f", "t"])
    await admin.execute("DROP STREAM s")
    async with asyncio.timeout(20):
        got = await task
    await reader.close()
    await admin.close()
    return got


async def read_cursor(conn):
    rows = []
    async with conn.transaction():
        async for r in conn.cursor(SELECT, prefetch=3):
            rows.append(record(r))
    return rows


async def read_fetch(conn):
    return [record(r) for r in await conn.fetch(SELECT)]


async def read_copy(conn):
    chunks = []

    async def on_data(chunk):
        chunks.append(bytes(chunk))

    await conn.copy_from_query(SELECT, output=on_data, format="csv")
    return b"".join(chunks).decode()


async def main():
    print("cursor", json.dumps(await with_feed(read_cursor), ensure_ascii=False))
    print("fetch", json.dumps(await with_feed(read_fetch), ensure_ascii=False))
    print("copy", json.dumps(await with_feed(read_copy), ensure_ascii=False))


asyncio.run(main())
print("done")
