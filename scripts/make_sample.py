#!/usr/bin/env python3
"""Cut the demo's data sample out of the 3-million-row flights Parquet file.

Run from the repository root (needs pyarrow; only for regenerating the sample):

    python3 scripts/make_sample.py /path/to/flights-3m.parquet

Writes:
- data/flights-2001-01.csv.gz: every flight of January 2001 (the demo's input);
- tests/data/flights-head.csv: the first 5,000 rows, for tests that need real rows
  without the big file.

The CSV has a header `ts,delay,distance,origin,destination`; ts is written as
`2001-01-01 00:05:00` (what PostgreSQL's timestamp input accepts); rows keep the source's
order, which is sorted by time. gzip's header carries no timestamp (mtime=0) so that the
same input always gives the same bytes.
"""

import csv
import datetime as dt
import gzip
import io
import sys

import pyarrow.compute as pc
import pyarrow.parquet as pq

START = dt.datetime(2001, 1, 1)
END = dt.datetime(2001, 2, 1)  # exclusive
HEAD_ROWS = 5000


def write_csv(table, out):
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["ts", "delay", "distance", "origin", "destination"])
    cols = [table.column(name).to_pylist() for name in table.column_names]
    for date, delay, distance, origin, destination in zip(*cols):
        writer.writerow(
            [
                date.strftime("%Y-%m-%d %H:%M:%S"),
                "" if delay is None else delay,
                "" if distance is None else distance,
                origin,
                destination,
            ]
        )


def main(parquet_path):
    table = pq.read_table(parquet_path)
    dates = table.column("date")
    mask = pc.and_(pc.greater_equal(dates, START), pc.less(dates, END))
    month = table.filter(mask)
    assert pc.all(pc.greater_equal(dates.slice(1), dates.slice(0, len(dates) - 1))).as_py(), \
        "source is expected to be sorted by time"
    with open("data/flights-2001-01.csv.gz", "wb") as raw:
        with gzip.GzipFile(fileobj=raw, mode="wb", compresslevel=9, mtime=0) as gz:
            with io.TextIOWrapper(gz, encoding="utf-8", newline="") as text:
                write_csv(month, text)
    with open("tests/data/flights-head.csv", "w", encoding="utf-8", newline="") as out:
        write_csv(month.slice(0, HEAD_ROWS), out)
    print(f"January 2001: {month.num_rows} rows; head: {min(HEAD_ROWS, month.num_rows)} rows")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "../shared/data/flights-3m.parquet")
