#!/usr/bin/env python3
"""Latency benchmark: time from the tuple that closes a window to that window's row at
each subscribed client, p50 and p99, with 1 and 100 subscribers.

    python3 scripts/bench_latency.py [--tcqd target/release/tcqd] [--subscribers 1,100]
                                     [--windows 300] [--interval-ms 20]

A fresh `tcqd --memory-only` on a loopback port; stream
`s (ts timestamp TIMESTAMPCOLUMN, v integer)`. N clients (asyncpg, one event loop in this
process) each run `COPY (SELECT count(*), wtime(*) FROM s [RANGE BY '1 second'
SLIDE BY '1 second' START AT '2001-01-01 00:00:00']) TO STDOUT`, so every row reaches them
as its own CopyData message the moment the server flushes it. One writer connection then
INSERTs one tuple per window, `interval-ms` apart in real time, at 2001-01-01 00:00:00 + k
seconds: tuple k closes window k-1 (its end is k s), so the clock for window k-1's row
starts just before tuple k's INSERT is sent and stops when a client has read the row.
The first 10 windows are a warm-up and not counted. Every (window, client) pair is one
sample; the script prints p50, p99 and the maximum in milliseconds, tcqd's CPU time per
window (what the figures would approach on an idle machine, where nothing else competes
for the cores), and checks that every client received every window exactly once with
count 1.

Needs the asyncpg pip package (`.ci/run` installs it) and a release build
(`cargo build --release --bin tcqd`). Client and server share the machine's cores, so the
figures include the Python clients' own scheduling; they are upper bounds.
"""

import argparse
import asyncio
import os
import socket
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
T0 = 978_307_200  # 2001-01-01 00:00:00 UTC, seconds
WARMUP = 10
# asyncpg's copy_from_query sends it as COPY (...) TO STDOUT.
QUERY = (
    "SELECT count(*), wtime(*) FROM s [RANGE BY '1 second' SLIDE BY '1 second' "
    "START AT '2001-01-01 00:00:00']"
)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(tcqd):
    port = free_port()
    proc = subprocess.Popen(
        [tcqd, "--listen", f"127.0.0.1:{port}", "--memory-only"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env={**os.environ, "RUST_LOG": "warn"},
    )
    for _ in range(500):
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.1).close()
            return proc, port
        except OSError:
            time.sleep(0.01)
    proc.kill()
    raise RuntimeError("tcqd did not start")


def cpu_secs(pid):
    """User plus system CPU seconds process `pid` has used."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def wtime_second(field):
    """`2001-01-01 00:00:07` -> 7 (seconds since T0)."""
    hms = field.split(" ")[1]
    h, m, s = hms.split(":")
    day = int(field.split(" ")[0].split("-")[2]) - 1
    return ((day * 24 + int(h)) * 60 + int(m)) * 60 + int(float(s))


async def run(tcqd, n_subs, windows, interval):
    import asyncpg

    proc, port = start_server(tcqd)
    dsn = f"postgresql://tcq@127.0.0.1:{port}/tcq"
    try:
        writer = await asyncpg.connect(dsn)
        await writer.execute("CREATE STREAM s (ts timestamp TIMESTAMPCOLUMN, v integer)")
        # arrivals[i][k]: when client i read the row of the window ending at k s.
        arrivals = [dict() for _ in range(n_subs)]
        bad = []

        def sink_for(i):
            partial = [b""]

            async def sink(data):
                now = time.perf_counter()
                text = partial[0] + bytes(data)
                *lines, partial[0] = text.split(b"\n")
                for line in lines:
                    count, wtime = line.decode().split("\t")
                    k = wtime_second(wtime)
                    if count != "1" or k in arrivals[i]:
                        bad.append((i, line))
                    arrivals[i][k] = now

            return sink

        readers = []
        conns = []
        for i in range(n_subs):
            c = await asyncpg.connect(dsn)
            conns.append(c)
            readers.append(asyncio.ensure_future(c.copy_from_query(QUERY, output=sink_for(i))))
        # Every query registered (and attached to the stream) before the first tuple.
        for _ in range(1000):
            n = await writer.fetchval("SELECT count(*) FROM tcq_queries")
            if n == n_subs:
                break
            await asyncio.sleep(0.01)
        else:
            raise RuntimeError(f"only {n} of {n_subs} queries registered")
        sent = {}
        cpu0 = cpu_secs(proc.pid)
        insert = "INSERT INTO s VALUES ($1, 1)"
        import datetime

        base = datetime.datetime(2001, 1, 1)
        next_at = time.perf_counter()
        for k in range(windows + 1):
            next_at += interval
            delay = next_at - time.perf_counter()
            if delay > 0:
                await asyncio.sleep(delay)
            sent[k] = time.perf_counter()  # tuple k closes the window ending at k s
            await writer.execute(insert, base + datetime.timedelta(seconds=k))
        # Let the last rows arrive.
        deadline = time.perf_counter() + 10
        while time.perf_counter() < deadline:
            if all(len(a) >= windows for a in arrivals):
                break
            await asyncio.sleep(0.01)
        cpu = cpu_secs(proc.pid) - cpu0
        samples = []
        missing = 0
        for a in arrivals:
            for k in range(WARMUP + 1, windows + 1):
                if k in a:
                    samples.append((a[k] - sent[k]) * 1000)
                else:
                    missing += 1
        await writer.execute("DROP STREAM s")
        for r in readers:
            try:
                await asyncio.wait_for(r, 5)
            except Exception:
                pass
        for c in conns + [writer]:
            await c.close()
        return samples, missing, bad, cpu / (windows + 1)
    finally:
        proc.terminate()
        proc.wait()


def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p / 100 * (len(xs) - 1))))]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tcqd", default=os.path.join(ROOT, "target", "release", "tcqd"))
    ap.add_argument("--subscribers", default="1,100")
    ap.add_argument("--windows", type=int, default=300)
    ap.add_argument("--interval-ms", type=float, default=20)
    args = ap.parse_args()
    print(f"{os.cpu_count()} cores; {args.windows} windows, one closing tuple every "
          f"{args.interval_ms:g} ms")
    print("| subscribers | samples | p50 ms | p99 ms | max ms | tcqd CPU ms per window |")
    print("|---|---|---|---|---|---|")
    ok = True
    for n in [int(x) for x in args.subscribers.split(",")]:
        samples, missing, bad, cpu = asyncio.run(
            run(args.tcqd, n, args.windows, args.interval_ms / 1000)
        )
        print(f"| {n} | {len(samples):,} | {pct(samples, 50):.2f} | {pct(samples, 99):.2f} | "
              f"{max(samples):.2f} | {cpu * 1000:.2f} |", flush=True)
        if missing or bad:
            ok = False
            print(f"  {missing} rows missing, {len(bad)} unexpected: {bad[:3]}")
    if not ok:
        sys.exit("bench_latency: some client did not get every window exactly once")


if __name__ == "__main__":
    main()
