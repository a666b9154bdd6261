"""Session state through the drivers' own APIs: psycopg nested transaction() (savepoints),
conn.notifies(), server-side bound tcq_advance; asyncpg add_listener() and a pool whose
reset (pg_advisory_unlock_all(), CLOSE ALL, UNLISTEN *, RESET ALL) runs on every release.
Prints what it sees; the Rust test compares it exactly.
"""
import asyncio
import sys

import asyncpg
import psycopg

port = sys.argv[sys.argv.index("--port") + 1]
dsn = f"host=127.0.0.1 port={port} user=tcq dbname=tcq"
url = f"postgresql://tcq@127.0.0.1:{port}/tcq"

with psycopg.connect(dsn, autocommit=True) as a, psycopg.connect(dsn, autocommit=True) as b:
    a.execute("CREATE STREAM st (ts timestamp TIMESTAMPCOLUMN, v integer)")
    a.execute("LISTEN jobs")
    b.execute("NOTIFY jobs, 'hello'")
    b.execute("SELECT pg_notify(%s, %s)", ("jobs", "bound"))
    for n in a.notifies(timeout=5, stop_after=2):
        print("notify:", n.channel, n.payload, n.pid == b.info.backend_pid)
    # Savepoints: the inner block fails and rolls back to its savepoint; the outer commits.
    with b.transaction():
        b.execute("INSERT INTO st VALUES (%s, %s)", ("2001-01-01 00:00:01", 1))
        try:
            with b.transaction():
                b.execute("SELECT nope FROM st")
        except psycopg.errors.UndefinedColumn as e:
            print("inner:", e.sqlstate)
        print("outer continues:", b.execute("SELECT 1").fetchone()[0])
    print("after:", b.info.transaction_status.name)
    print("advance:", b.execute("SELECT tcq_advance(%s, %s)", ("st", "2001-01-01 00:00:05")).fetchone()[0])
    # TimeZone is reported with ParameterStatus; psycopg then loads timestamptz in the zone.
    b.execute("SET TIME ZONE 'America/New_York'")
    when = b.execute("SELECT '2021-03-14 07:00+00'::timestamptz").fetchone()[0]
    print("tz:", b.info.parameter_status("TimeZone"), when.isoformat())

# pg_terminate_backend: the victim gets PostgreSQL's FATAL 57P01 (psycopg's AdminShutdown).
with psycopg.connect(dsn, autocommit=True) as a, psycopg.connect(dsn, autocommit=True) as victim:
    print("terminate:", a.execute("SELECT pg_terminate_backend(%s)", (victim.info.backend_pid,)).fetchone()[0])
    try:
        victim.execute("SELECT 1")
        print("terminated: no")
    except psycopg.errors.AdminShutdown as e:
        print("terminated:", e.sqlstate)


async def main():
    pool = await asyncpg.create_pool(url, min_size=1, max_size=1)
    async with pool.acquire() as con:
        print("lock:", await con.fetchval("SELECT pg_try_advisory_lock(1)"))
        await con.execute("LISTEN leftover")
    other = await asyncpg.connect(url)
    # The pool's reset released the session lock of the connection it handed back.
    print("free after release:", await other.fetchval("SELECT pg_try_advisory_lock(1)"))
    async with pool.acquire() as con:
        print("pool reused:", await con.fetchval("SELECT 2"))
    got = asyncio.Queue()
    # A start-up TimeZone (asyncpg's server_settings, pgjdbc's TimeZone) sets the zone and
    # is reported back; a zone PostgreSQL refuses ends the start-up with 22023.
    tokyo = await asyncpg.connect(url, server_settings={"TimeZone": "Asia/Tokyo"})
    print("startup tz:", tokyo.get_settings().TimeZone,
          await tokyo.fetchval("SELECT '2001-01-01 00:00+00'::timestamptz::text"))
    await tokyo.close()
    try:
        await asyncpg.connect(url, server_settings={"TimeZone": "Mars/Base"})
    except asyncpg.exceptions.InvalidParameterValueError as e:
        print("startup tz refused:", e.sqlstate)
    listener = await asyncpg.connect(url)
    await listener.add_listener("ch", lambda c, pid, ch, payload: got.put_nowait(payload))
    await other.execute("NOTIFY ch, 'x1'")
    print("listener:", await asyncio.wait_for(got.get(), 5))
    await listener.close()
    await other.close()
    await pool.close()


asyncio.run(main())
