-- aggregates: every aggregate over one window, with PostgreSQL's result types and NULL
-- handling (docs/sql.md): count(*) counts rows, count(x) and the others skip NULLs;
-- sum(integer) is bigint, sum(bigint) is numeric (no overflow at 1.8e19), avg(integer) and
-- avg(bigint) are numeric with PostgreSQL's division scale (16 significant digits, so
-- 1/2 prints as 0.50000000000000000000), float aggregates are double precision. The second
-- instance is empty: count 0 and NULL for everything else.
CREATE STREAM a (ts timestamp TIMESTAMPCOLUMN, i integer, b bigint, d double precision, t text);
BEGIN;
DECLARE ints CURSOR FOR SELECT count(*), count(i), sum(i), avg(i), min(i), max(i), sum(b), avg(b) FROM a [RANGE BY '10 seconds' START AT '2001-01-01 00:00:00'];
DECLARE floats CURSOR FOR SELECT sum(d), avg(d), var_samp(d), var_pop(d), variance(d), stddev_samp(d), stddev_pop(d), stddev(d), min(t), max(t), count(t) FROM a [RANGE BY '10 seconds' START AT '2001-01-01 00:00:00'];
\session feeder
INSERT INTO a VALUES ('2001-01-01 00:00:01', 0, 9000000000000000000, 1.0, 'x'), ('2001-01-01 00:00:02', 1, 9000000000000000000, 3.0, NULL), ('2001-01-01 00:00:03', NULL, NULL, NULL, 'y');
INSERT INTO a (ts) VALUES ('2001-01-01 00:00:25');
\session main
FETCH 2 FROM ints;
FETCH 2 FROM floats;
COMMIT;
