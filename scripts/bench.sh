#!/usr/bin/env bash
# End-to-end benchmark of tcq against DuckDB on the three million flights; see
# scripts/bench.py for what is measured. Needs psql and python3; installs the duckdb pip
# package if it is missing. Arguments go to bench.py (e.g. --only q1 --runs 3).
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -c 'import duckdb' 2>/dev/null \
    || python3 -m pip install --quiet --disable-pip-version-check duckdb \
    || python3 -m pip install --quiet --disable-pip-version-check --break-system-packages duckdb
cargo build --release --quiet --bin tcqd
exec python3 scripts/bench.py "$@"
