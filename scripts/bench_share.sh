#!/usr/bin/env bash
# Cross-query sharing benchmark: 100 dashboard queries over the flights stream with
# tcq.share_across_queries on and off; see scripts/bench_share.py. Needs psql, python3 and
# the psycopg and duckdb pip packages (duckdb writes the cached CSV once). Arguments go to
# bench_share.py (e.g. --rows 500000).
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -c 'import duckdb, psycopg' 2>/dev/null \
    || python3 -m pip install --quiet --disable-pip-version-check duckdb 'psycopg[binary]' \
    || python3 -m pip install --quiet --disable-pip-version-check --break-system-packages duckdb 'psycopg[binary]'
cargo build --release --quiet --bin tcqd
exec python3 scripts/bench_share.py "$@"
