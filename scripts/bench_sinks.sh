#!/usr/bin/env bash
# A query without a client against a client's: Q1 over the 3 M flights read by psql, written
# by a file sink, feeding a derived stream. See scripts/bench_sinks.py. Needs psql and
# python3 (duckdb for the CSV cache: installed here if missing).
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -c 'import duckdb' 2>/dev/null \
    || python3 -m pip install --quiet --disable-pip-version-check duckdb 2>/dev/null \
    || python3 -m pip install --quiet --disable-pip-version-check --break-system-packages duckdb
cargo build --release --quiet --bin tcqd
exec python3 scripts/bench_sinks.py "$@"
