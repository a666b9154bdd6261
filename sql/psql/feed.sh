#!/bin/sh
# Feeds a stream from the background of a psql regression script once the continuous query
# it feeds is registered, since a query sees only the tuples that arrive after it:
#
#     \! sh sql/psql/feed.sh N PSQL-ARGS... &
#
# waits (10 s at most) until tcq_queries lists at least N continuous queries, then runs
# `psql -X -q -v ON_ERROR_STOP=1 PSQL-ARGS...` (`-c "INSERT ..."`, `-f FILE`) against the
# same server: PGHOST, PGPORT, PGUSER and PGDATABASE come from the environment that psql
# passes on to `\!`. Its output is discarded; its errors go to stderr, which is the script's
# output, so the diff shows them.
n=$1
shift
tries=0
until [ "$(psql -X -A -t -c 'SELECT count(*) FROM tcq_queries' 2>/dev/null)" -ge "$n" ] 2>/dev/null; do
    tries=$((tries + 1))
    if [ "$tries" -gt 200 ]; then
        echo "feed.sh: fewer than $n continuous queries after 10 s" >&2
        exit 1
    fi
    sleep 0.05
done
exec psql -X -q -v ON_ERROR_STOP=1 "$@" >/dev/null
