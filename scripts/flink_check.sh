#!/usr/bin/env bash
# Check the Flink export for real: 23 continuous queries exported as one job, run on a
# JobManager and two TaskManagers started from PyFlink's distribution at parallelism 2, every
# row compared with tcq's own; and the Kafka form of the job planned by Flink's planner
# (scripts/flink_check.py says how).
#
#   scripts/flink_check.sh --install          # once: a venv with apache-flink (about 900 MB)
#   scripts/flink_check.sh                    # the check, over tests/data/flights-head.csv
#   scripts/flink_check.sh --bench --data F --queries Q --parallelism N   # the figures
#
# PyFlink lives in its own virtual environment, $TCQ_FLINK_VENV (default
# ~/.cache/tcq/flink-venv), because it pins numpy, pandas and pyarrow. It needs Java 11 or 17
# (Debian: openjdk-17-jdk-headless). tcqd is target/debug/tcqd unless $TCQD names another.
# Exit status: 0 when every row agrees, 1 when one does not, 2 when PyFlink or Java is missing.
set -euo pipefail
cd "$(dirname "$0")/.."
venv=${TCQ_FLINK_VENV:-$HOME/.cache/tcq/flink-venv}

if [ "${1:-}" = "--install" ]; then
    mkdir -p "$(dirname "$venv")"
    # Debian's python3 may lack ensurepip (python3-venv); virtualenv from pip does the same.
    python3 -m venv "$venv" 2>/dev/null \
        || { python3 -m pip install --quiet virtualenv && python3 -m virtualenv -q "$venv"; } \
        || { python3 -m pip install --quiet --break-system-packages virtualenv \
             && python3 -m virtualenv -q "$venv"; }
    "$venv/bin/pip" install --quiet --disable-pip-version-check apache-flink
    "$venv/bin/python" -c "import pyflink; print('PyFlink installed in $venv')"
    exit 0
fi
if ! command -v java >/dev/null 2>&1; then
    echo "SKIP: no java on PATH (Flink needs Java 11 or 17; apt-get install openjdk-17-jdk-headless)"
    exit 2
fi
if ! "$venv/bin/python" -c "import pyflink" >/dev/null 2>&1; then
    echo "SKIP: PyFlink is not installed in $venv (run scripts/flink_check.sh --install)"
    exit 2
fi
# tcqd flink submit/validate compile the runner against the distribution's lib/.
FLINK_HOME=${FLINK_HOME:-$("$venv/bin/python" -c 'import os, pyflink; print(os.path.dirname(pyflink.__file__))')}
export FLINK_HOME
command -v javac >/dev/null 2>&1 || { echo "SKIP: no javac on PATH (a JDK builds the runner)"; exit 2; }
tcqd=${TCQD:-target/debug/tcqd}
[ -x "$tcqd" ] || cargo build --quiet --bin tcqd
exec "$venv/bin/python" scripts/flink_check.py --tcqd "$tcqd" "$@"
