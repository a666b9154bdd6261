#!/usr/bin/env python3
"""Compare the demo's result rows with the batch reference.

    cargo run --release -- demo --quiet --output /tmp/demo.csv
    python3 scripts/reference.py data/flights-2001-01.csv.gz /tmp/reference.csv
    python3 scripts/check_demo.py /tmp/reference.csv /tmp/demo.csv

Both files are CSV with header wtime,origin,count,avg,max. Rows are compared as sets keyed
by (wtime, origin), since the order of groups within one slide event is not specified; avg
is compared after rounding to 6 decimals (the server sends numeric with PostgreSQL's scale).
Exits 1 and prints the first differences if the files disagree.
"""

import csv
import sys
from decimal import Decimal, ROUND_HALF_EVEN


def load(path):
    rows = {}
    with open(path, newline="") as f:
        for r in csv.DictReader(f):
            key = (r["wtime"], r["origin"])
            avg = Decimal(r["avg"]).quantize(Decimal("0.000001"), rounding=ROUND_HALF_EVEN)
            value = (int(r["count"]), avg, int(r["max"]))
            if key in rows:
                sys.exit(f"{path}: duplicate row for {key}")
            rows[key] = value
    return rows


def main(reference_path, demo_path):
    reference, demo = load(reference_path), load(demo_path)
    missing = sorted(set(reference) - set(demo))
    extra = sorted(set(demo) - set(reference))
    differ = sorted(k for k in set(reference) & set(demo) if reference[k] != demo[k])
    print(f"reference rows {len(reference)}, demo rows {len(demo)}")
    print(f"missing {len(missing)}, extra {len(extra)}, different {len(differ)}")
    for label, keys, show in [("missing", missing, reference), ("extra", extra, demo)]:
        for k in keys[:10]:
            print(f"  {label}: {k} {show[k]}")
    for k in differ[:10]:
        print(f"  differ: {k} reference {reference[k]} demo {demo[k]}")
    if missing or extra or differ:
        sys.exit(1)
    print("the demo's rows equal the batch reference")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
