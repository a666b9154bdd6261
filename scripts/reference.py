#!/usr/bin/env python3
"""Batch reference for the flights demo, in plain Python (no database, no pyarrow).

    python3 scripts/reference.py [data/flights-2001-01.csv.gz] [out.csv]

Computes what the demo's continuous query must emit:

    SELECT origin, count(*), avg(delay), max(delay), wtime(*)
    FROM flights [RANGE BY '1 hour' SLIDE BY '10 minutes' START AT '2001-01-01 00:00:00']
    GROUP BY origin

by the definition of docs/sql.md, Windows, not by simulating slide events: instance m is
[o + m*s, o + m*s + r); it is emitted once current time (the largest timestamp ingested)
reaches its end; a group with no tuples in an instance emits nothing. Writes one CSV row per
(instance, origin), sorted by wtime then origin: wtime,origin,count,avg,max, with avg
rounded to 6 decimals, and prints a summary that `scripts/check_demo.py` and the report use.
"""

import csv
import datetime as dt
import gzip
import sys
from collections import defaultdict

RANGE = dt.timedelta(hours=1)
SLIDE = dt.timedelta(minutes=10)
START = dt.datetime(2001, 1, 1)


def instances_of(ts):
    """Indices m of every instance [START + m*SLIDE, START + m*SLIDE + RANGE) holding ts."""
    if ts < START:
        return range(0)
    last = (ts - START) // SLIDE  # the latest instance starting at or before ts
    first = max(0, (ts - START - RANGE) // SLIDE + 1)  # the earliest ending after ts
    return range(first, last + 1)


def main(path, out_path):
    opener = gzip.open if path.endswith(".gz") else open
    groups = defaultdict(lambda: [0, 0, None])  # (m, origin) -> [count, sum, max]
    now = None
    tuples = 0
    with opener(path, "rt", encoding="utf-8", newline="") as f:
        for row in csv.DictReader(f):
            ts = dt.datetime.strptime(row["ts"], "%Y-%m-%d %H:%M:%S")
            delay = int(row["delay"])
            now = ts if now is None else max(now, ts)
            tuples += 1
            for m in instances_of(ts):
                g = groups[(m, row["origin"])]
                g[0] += 1
                g[1] += delay
                g[2] = delay if g[2] is None else max(g[2], delay)
    rows = []
    for (m, origin), (count, total, biggest) in groups.items():
        wtime = START + m * SLIDE + RANGE
        if wtime <= now:  # emitted: current time has reached the instance's end
            rows.append((wtime, origin, count, total / count, biggest))
    rows.sort(key=lambda r: (r[0], r[1]))
    if out_path:
        with open(out_path, "w", newline="") as out:
            w = csv.writer(out, lineterminator="\n")
            w.writerow(["wtime", "origin", "count", "avg", "max"])
            for wtime, origin, count, avg, biggest in rows:
                w.writerow([wtime.strftime("%Y-%m-%d %H:%M:%S"), origin, count, f"{avg:.6f}", biggest])
    ends = sorted({r[0] for r in rows})
    print(f"tuples                 {tuples}")
    print(f"current time at end    {now}")
    print(f"slide events with rows {len(ends)} (first wtime {ends[0]}, last {ends[-1]})")
    print(f"rows                   {len(rows)}")
    print(f"sum of count(*)        {sum(r[2] for r in rows)}")
    print(f"sum of max(delay)      {sum(r[4] for r in rows)}")
    top = max(rows, key=lambda r: (r[2], r[0]))
    print(f"busiest row            {top[0]} {top[1]} count={top[2]} avg={top[3]:.6f} max={top[4]}")
    for probe in [(dt.datetime(2001, 1, 1, 1, 0), "ORD"), (dt.datetime(2001, 1, 15, 18, 0), "ATL")]:
        for r in rows:
            if (r[0], r[1]) == probe:
                print(f"probe                  {r[0]} {r[1]} count={r[2]} avg={r[3]:.6f} max={r[4]}")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "data/flights-2001-01.csv.gz",
         sys.argv[2] if len(sys.argv) > 2 else None)
