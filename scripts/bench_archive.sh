#!/usr/bin/env bash
# COPY of the 3 M flights into an archived stream (--sync batch), an unarchived stream and a
# logged PostgreSQL table in one run; bytes on disk per flight; Q1's back-fill replay rate.
# See scripts/bench_archive.py. Needs psql, python3 (duckdb, for the CSV cache) and
# Debian's postgresql package (apt-get install postgresql).
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -c 'import duckdb' 2>/dev/null \
    || python3 -m pip install --quiet --disable-pip-version-check duckdb \
    || python3 -m pip install --quiet --disable-pip-version-check --break-system-packages duckdb
cargo build --release --quiet --bin tcqd
exec python3 scripts/bench_archive.py "$@"
