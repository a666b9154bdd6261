"""psycopg's conn.cancel() stops a SELECT over a table that would run for minutes.

A second thread cancels once pg_stat_activity shows the statement active, again each
second until it ends. Prints the error's SQLSTATE and message, then a query's result on
the same connection.
"""
import sys
import threading
import time

import psycopg

port = sys.argv[sys.argv.index("--port") + 1]
dsn = f"host=127.0.0.1 port={port} user=tcq dbname=tcq"
SLOW = (
    "SELECT count(*) FROM t a WHERE (SELECT count(*) FROM t b"
    " WHERE b.i < a.i + (SELECT count(*) FROM t c WHERE c.i > b.i)) > 0"
)
with psycopg.connect(dsn, autocommit=True) as c, psycopg.connect(dsn, autocommit=True) as w:
    c.execute("CREATE TABLE t (i int)")
    c.execute("INSERT INTO t VALUES " + ",".join(f"({i})" for i in range(1, 1501)))
    pid = c.info.backend_pid
    done = threading.Event()

    def cancel():
        active = "SELECT count(*) FROM pg_stat_activity WHERE pid = %s AND state = 'active'"
        while not done.is_set() and w.execute(active, (pid,)).fetchone()[0] == 0:
            time.sleep(0.02)
        while not done.is_set():
            c.cancel()
            done.wait(1)

    canceller = threading.Thread(target=cancel)
    canceller.start()
    try:
        c.execute(SLOW)
        print("not cancelled:", c.fetchall())
    except psycopg.errors.QueryCanceled as e:
        print("error:", e.sqlstate, e.diag.message_primary)
    finally:
        done.set()
        canceller.join()
    print("after:", c.execute("SELECT 1").fetchone())
