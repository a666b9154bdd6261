"""The stream, query and tuples block_copy.py and block_asyncpg.py both read: the tuples of
tests/it/result_blocks.rs (TUPLES), whose keys need every kind of escaping, so the query's
slide events leave the executor as column blocks with such texts in them."""

SELECT = (
    "SELECT k, wtime(*), count(*), sum(v), avg(v), min(t), max(t), min(f), max(f) FROM s "
    "[RANGE BY '10 seconds' START AT '2001-01-01'] GROUP BY k"
)
CREATE = (
    "CREATE STREAM s (ts timestamp TIMESTAMPCOLUMN, k text, v integer, "
    "f double precision, t text)"
)
# (second, k, v, f, t).
TUPLES = [
    (1, "a,b", 1, 2.5, "pear"),
    (1, 'say "hi"', 2, -0.125, "apple"),
    (2, "back\\slash", 3, None, None),
    (2, "tab\there", 4, 0.1, "tab\tin t"),
    (3, "new\nline", 5, None, None),
    (3, "cr\rx", None, None, None),
    (4, "", 6, None, ""),
    (4, None, 7, 1e20, "x"),
    (5, "naïve café ☕", 8, None, "ü"),
    (5, "a key longer than twenty-four bytes", 9, None, None),
    (6, "\\.", 10, None, None),
    (6, "vt\x0bx", 11, None, None),
    (6, "semi;colon", 12, None, None),
    (6, "it's", 13, None, None),
    (6, "NULL", 14, None, None),
    (7, "a,b", 2, 7.75, "zebra"),
    (8, 'say "hi"', None, None, None),
    (8, None, 8, -3.0, "x"),
    (15, "a,b", 10, 1.0, "mid"),
    (25, "end", 0, 0.0, "end"),
]
