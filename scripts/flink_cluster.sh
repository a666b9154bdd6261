#!/usr/bin/env bash
# A Flink standalone cluster on 127.0.0.1 from PyFlink's distribution: one JobManager and
# N TaskManagers, each a process of its own, with one task slot each.
#
#   scripts/flink_cluster.sh start DIR [TASKMANAGERS [MANAGED_MEMORY]]   # default 2, 256m (MB)
#   scripts/flink_cluster.sh stop DIR
#
# DIR holds the cluster's configuration, logs, process ids and uploaded jars; `start`
# prints the REST address (http://127.0.0.1:PORT) once the REST API reports every
# TaskManager registered, and writes it to DIR/rest. `stop` stops the processes it started.
# FLINK_HOME defaults to the distribution inside PyFlink's venv ($TCQ_FLINK_VENV, default
# ~/.cache/tcq/flink-venv; scripts/flink_check.sh --install makes it). Needs Java 11 or 17.
# Exit status: 0, 1 when the cluster does not come up, 2 when Java or Flink is missing.
set -euo pipefail
cd "$(dirname "$0")/.."
venv=${TCQ_FLINK_VENV:-$HOME/.cache/tcq/flink-venv}
if [ -z "${FLINK_HOME:-}" ]; then
    FLINK_HOME=$("$venv/bin/python" -c 'import os, pyflink; print(os.path.dirname(pyflink.__file__))' 2>/dev/null) || {
        echo "SKIP: PyFlink is not installed in $venv (run scripts/flink_check.sh --install)"
        exit 2
    }
fi
command -v java >/dev/null 2>&1 || { echo "SKIP: no java on PATH"; exit 2; }
export FLINK_HOME
cmd=${1:?start or stop}
dir=$(realpath -m "${2:?the cluster directory}")
export FLINK_CONF_DIR=$dir/conf FLINK_LOG_DIR=$dir/log FLINK_PID_DIR=$dir/pid

free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

case $cmd in
start)
    tms=${3:-2}
    managed=${4:-256m}
    # Managed memory (window state) on top of what a TaskManager needs besides.
    process=$(( $(echo "$managed" | tr -d 'mM') + 1150 ))m
    mkdir -p "$dir/conf" "$dir/log" "$dir/pid" "$dir/tmp" "$dir/upload"
    cp "$FLINK_HOME"/conf/log4j*.properties "$dir/conf/"
    rest=$(free_port)
    rpc=$(free_port)
    # The distribution's JVM options (module opens) and this cluster's addresses and sizes.
    sed -n '/^env:/,/^[a-z]/p' "$FLINK_HOME/conf/config.yaml" | sed '$d' >"$dir/conf/config.yaml"
    cat >>"$dir/conf/config.yaml" <<EOF
jobmanager.rpc.address: 127.0.0.1
jobmanager.rpc.port: $rpc
jobmanager.bind-host: 127.0.0.1
jobmanager.memory.process.size: 1024m
taskmanager.bind-host: 127.0.0.1
taskmanager.host: 127.0.0.1
taskmanager.numberOfTaskSlots: 1
taskmanager.memory.process.size: $process
taskmanager.memory.managed.size: $managed
rest.address: 127.0.0.1
rest.bind-address: 127.0.0.1
rest.port: $rest
web.upload.dir: $dir/upload
io.tmp.dirs: $dir/tmp
parallelism.default: 1
# Two cores shared with builds: be patient with a busy machine.
pekko.ask.timeout: 120 s
heartbeat.timeout: 300000
EOF
    "$FLINK_HOME/bin/jobmanager.sh" start >/dev/null
    for _ in $(seq "$tms"); do
        "$FLINK_HOME/bin/taskmanager.sh" start >/dev/null
    done
    url=http://127.0.0.1:$rest
    for _ in $(seq 240); do
        n=$(curl -sf "$url/taskmanagers" 2>/dev/null \
            | python3 -c 'import json, sys; print(len(json.load(sys.stdin)["taskmanagers"]))' 2>/dev/null || echo 0)
        if [ "$n" -ge "$tms" ]; then
            echo "$url" >"$dir/rest"
            echo "$url"
            exit 0
        fi
        sleep 0.5
    done
    echo "the cluster did not report $tms TaskManagers in 2 minutes; logs in $dir/log" >&2
    exit 1
    ;;
stop)
    # Only the processes this directory's pid files name.
    "$FLINK_HOME/bin/taskmanager.sh" stop-all >/dev/null 2>&1 || true
    "$FLINK_HOME/bin/jobmanager.sh" stop-all >/dev/null 2>&1 || true
    ;;
*)
    echo "usage: $0 start|stop DIR" >&2
    exit 64
    ;;
esac
