#!/usr/bin/env python3
"""tcq's catalogs from Python: psycopg's TypeInfo, SQLAlchemy 2's engine and inspector,
and pandas.read_sql of a LIMITed continuous query.

Run against a server with no streams or tables yet (it creates `flights` and `airports`
and prints every table the inspector lists), e.g. `cargo run --release -- --memory-only`
serving on 127.0.0.1:5433:

    pip install 'psycopg[binary]' asyncpg 'sqlalchemy[asyncio]' pandas
    python3 clients/python_sqlalchemy.py [--port 5433]

Streams are foreign tables to SQLAlchemy (relkind 'f'), so `get_foreign_table_names()`
lists them and `get_table_names()` lists stored tables only (`airports`, whose primary
key and UNIQUE constraint the inspector reflects: key columns come as typed arrays, which
psycopg decodes into lists); `get_columns()` describes both, and `Table(...,
autoload_with=engine)` reflects the table. The same reflection runs through SQLAlchemy's
asyncpg dialect. The program prints what each call returns.
"""

import argparse
import asyncio
import datetime as dt
import threading
import time

import pandas
import psycopg
from psycopg.types import TypeInfo
from sqlalchemy import MetaData, Table, UniqueConstraint, create_engine, inspect, text
from sqlalchemy.ext.asyncio import create_async_engine

ROWS = [(dt.datetime(2001, 1, 1, 0, 0, 1), "a", 1),
        (dt.datetime(2001, 1, 1, 0, 0, 3), "b", 2),
        (dt.datetime(2001, 1, 1, 0, 0, 5), "a", 3),
        (dt.datetime(2001, 1, 1, 0, 0, 12), "a", 10),
        (dt.datetime(2001, 1, 1, 0, 0, 25), "z", 0)]


def type_info(conninfo):
    with psycopg.connect(conninfo, autocommit=True) as conn:
        for name in ["int8", "text", "timestamptz", "numeric"]:
            info = TypeInfo.fetch(conn, name)
            print(f"typeinfo {name}: oid {info.oid} array {info.array_oid}")
        print(f"typeinfo hstore: {TypeInfo.fetch(conn, 'hstore')}")


def inspector(url):
    engine = create_engine(url)
    with engine.connect() as conn:
        print("connect:", conn.execute(text("SELECT 1")).scalar())
    insp = inspect(engine)
    print("schemas:", insp.get_schema_names())
    print("tables:", insp.get_table_names())
    print("foreign tables:", insp.get_foreign_table_names())
    print("views:", insp.get_view_names())
    for c in insp.get_columns("flights"):
        print(f"column: {c['name']} {c['type']} nullable={c['nullable']}")
    for c in insp.get_columns("airports"):
        print(f"column: {c['name']} {c['type']} nullable={c['nullable']}")
    pk = insp.get_pk_constraint("airports")
    print("pk:", pk["name"], pk["constrained_columns"])
    for u in insp.get_unique_constraints("airports"):
        print("unique:", u["name"], u["column_names"])
    for i in insp.get_indexes("airports"):
        print("index:", i["name"], i["column_names"], "unique" if i["unique"] else "",
              i.get("duplicates_constraint"))
    print("foreign keys:", insp.get_foreign_keys("airports"))
    table = Table("airports", MetaData(), autoload_with=engine)
    print("reflected:", [c.name for c in table.columns], list(table.primary_key.columns.keys()),
          sorted(tuple(c.name for c in u.columns) for u in table.constraints
                 if isinstance(u, UniqueConstraint)))
    engine.dispose()


def inspector_asyncpg(url):
    """The same reflection through SQLAlchemy's asyncpg dialect: asyncpg reads every
    column in binary, so arrays, int2vector and oids must decode by their types, and
    asyncpg looks up the types it has no codec for (smallint[], int2vector) inside the
    inspector's transaction."""
    async def run():
        engine = create_async_engine(url)
        async with engine.connect() as conn:
            def reflect(sync_conn):
                insp = inspect(sync_conn)
                pk = insp.get_pk_constraint("airports")
                print("asyncpg pk:", pk["name"], pk["constrained_columns"])
                for u in insp.get_unique_constraints("airports"):
                    print("asyncpg unique:", u["name"], u["column_names"])
                for i in insp.get_indexes("airports"):
                    print("asyncpg index:", i["name"], i["column_names"])
                print("asyncpg columns:", [c["name"] for c in insp.get_columns("flights")])
            await conn.run_sync(reflect)
        await engine.dispose()
    asyncio.run(run())


def read_sql(url, conninfo):
    """pandas.read_sql of a continuous query that ends by its LIMIT; the tuples are sent
    once tcq lists the query in tcq_queries."""
    engine = create_engine(url)
    query = ("SELECT k, count(*) AS n, sum(v) AS s, wtime(*) AS w FROM flights "
             "[RANGE BY '10 seconds' START AT '2001-01-01'] GROUP BY k ORDER BY k LIMIT 3")

    def feed():
        with psycopg.connect(conninfo, autocommit=True) as conn:
            deadline = time.monotonic() + 10
            while conn.execute("SELECT count(*) FROM tcq_queries").fetchone()[0] == 0:
                if time.monotonic() > deadline:
                    return
                time.sleep(0.02)
            with conn.cursor() as cur:
                cur.executemany("INSERT INTO flights (ts, k, v) VALUES (%s, %s, %s)", ROWS)

    feeder = threading.Thread(target=feed)
    feeder.start()
    with engine.connect() as conn:
        frame = pandas.read_sql(text(query), conn)
    feeder.join()
    for row in frame.itertuples(index=False):
        print(f"read_sql: {row.k} {row.n} {row.s} {row.w}")
    engine.dispose()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, default=5433)
    port = parser.parse_args().port
    conninfo = f"host=127.0.0.1 port={port} user=tcq dbname=tcq"
    url = f"postgresql+psycopg://tcq@127.0.0.1:{port}/tcq"
    with psycopg.connect(conninfo, autocommit=True) as conn:
        conn.execute("CREATE STREAM flights (ts timestamp TIMESTAMPCOLUMN, k varchar(8), v integer)")
        conn.execute("CREATE TABLE airports (code varchar(4) PRIMARY KEY, name text NOT NULL, "
                     "city text, UNIQUE (city, name))")
    type_info(conninfo)
    inspector(url)
    inspector_asyncpg(f"postgresql+asyncpg://tcq@127.0.0.1:{port}/tcq")
    read_sql(url, conninfo)
    print("done")


if __name__ == "__main__":
    main()
