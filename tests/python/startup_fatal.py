"""A FATAL at start-up through asyncpg and psycopg: each driver gets the server's SQLSTATE,
and asyncpg reports no protocol violation (a ReadyForQuery after the ErrorResponse made it
log "cannot process message 'Z'").

    python3 startup_fatal.py --port PORT --full-port FULL

PORT requires SCRAM (user alice, password wonderland); FULL already has its one connection.
Prints one line per case: `driver case: SQLSTATE`.
"""
import argparse
import asyncio
import logging
import sys

import asyncpg
import psycopg

args = argparse.ArgumentParser()
args.add_argument("--port", type=int, required=True)
args.add_argument("--full-port", type=int, required=True)
args = args.parse_args()

# asyncpg reports a protocol violation through asyncio's logger; collect what it says.
logged = []


class Collect(logging.Handler):
    def emit(self, record):
        logged.append(record.getMessage())


logging.getLogger("asyncio").addHandler(Collect())


async def asyncpg_case(name, port, password):
    try:
        conn = await asyncpg.connect(host="127.0.0.1", port=port, user="alice",
                                     password=password, database="tcq", ssl=False)
        await conn.close()
        print(f"asyncpg {name}: connected")
    except asyncpg.PostgresError as e:
        print(f"asyncpg {name}: {e.sqlstate}")
    # Give the event loop a turn to deliver anything the server sent after the error.
    await asyncio.sleep(0.3)


def psycopg_case(name, port, password):
    try:
        psycopg.connect(host="127.0.0.1", port=port, user="alice", password=password,
                        dbname="tcq", sslmode="disable").close()
        print(f"psycopg {name}: connected")
    except psycopg.OperationalError as e:
        # libpq keeps the server's message; psycopg's sqlstate is None at connect time.
        text = str(e)
        code = "28P01" if "password authentication failed" in text else (
            "53300" if "too many clients" in text else text.strip())
        print(f"psycopg {name}: {code}")


async def main():
    await asyncpg_case("wrong password", args.port, "wrong")
    await asyncpg_case("too many clients", args.full_port, "x")
    psycopg_case("wrong password", args.port, "wrong")
    psycopg_case("too many clients", args.full_port, "x")
    violations = [m for m in logged if "cannot process message" in m or "Fatal error" in m]
    print(f"asyncpg protocol errors: {len(violations)}")
    for m in violations:
        print(m.splitlines()[0], file=sys.stderr)


asyncio.run(main())
