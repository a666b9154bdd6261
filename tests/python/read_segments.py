"""Print every tuple of an archived stream's sealed segments as DuckDB reads them.

Usage: python3 read_segments.py STREAM_DIR

One line per tuple, `ts|id|v|n|tag`, segment by segment (oldest first) in each segment's
row order; tests/it/archive.rs compares the lines with what was ingested. Needs the duckdb
module (.ci/run installs it).
"""
import sys

import duckdb

stream_dir = sys.argv[1]
rows = duckdb.sql(
    f"""
    SELECT strftime(ts, '%Y-%m-%d %H:%M:%S.%f'), id, v, n, tag
    FROM read_parquet('{stream_dir}/*.parquet', filename = true, file_row_number = true)
    ORDER BY filename, file_row_number
    """
).fetchall()
for r in rows:
    print("|".join(str(x) for x in r))
