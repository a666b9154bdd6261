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
-- sum and avg of intervals (PostgreSQL's interval_pl and interval_div: the average's month
-- and day fractions cascade into days and time), then the bit and regular expression
-- operators and the formatting and date functions over the same stream (issue 30).
CREATE STREAM spans (ts timestamp TIMESTAMPCOLUMN, k integer, t text, span interval);
BEGIN;
DECLARE sums CURSOR FOR SELECT sum(span), avg(span), count(span) FROM spans [RANGE BY '10 seconds' START AT '2001-01-01 00:00:00'];
DECLARE funcs CURSOR FOR SELECT k & 6, k # 1, k << 2, ~k, t ~ '^a', t !~* 'B$', t SIMILAR TO '%b', md5(t), regexp_replace(t, 'b', 'X', 'g'), to_char(ts, 'FMDay DD Mon YYYY HH24:MI:SS'), to_char(k, 'FM9,999.00'), date_bin('15 minutes', ts, '2000-01-01'), age(ts, '2000-01-01') FROM spans;
\session feeder
INSERT INTO spans VALUES ('2001-01-01 00:00:01', 7, 'abcb', '1 mon 1 day'), ('2001-01-01 00:00:02', 1234, 'xb', '1 day 01:00:00'), ('2001-01-01 00:00:03', -3, 'a', NULL);
INSERT INTO spans (ts) VALUES ('2001-01-01 00:00:25');
\session main
FETCH 2 FROM sums;
FETCH 4 FROM funcs;
COMMIT;
-- bit_and, bit_or, bit_xor over a hopping window (partial states merged across panes), and
-- gcd, div, translate, make_date over the same stream: 6 & 3 & 7 = 2, 6 | 3 | 7 = 7,
-- 6 # 3 # 7 = 2 in the first instance; the second holds 3 and 7 only (3, 7, 4).
CREATE STREAM bits (ts timestamp TIMESTAMPCOLUMN, k integer, s smallint);
BEGIN;
DECLARE folds CURSOR FOR SELECT bit_and(k), bit_or(k), bit_xor(k), bit_and(s), bit_xor(s) FROM bits [RANGE BY '10 seconds' SLIDE BY '5 seconds' START AT '2001-01-01 00:00:00'];
DECLARE calls CURSOR FOR SELECT gcd(k, 4), lcm(k, 4), div(k, 2), translate('abc', 'b', k::text), make_date(2001, k, 1), num_nulls(s) FROM bits;
\session feeder
INSERT INTO bits VALUES ('2001-01-01 00:00:01', 6, 6::smallint), ('2001-01-01 00:00:06', 3, NULL), ('2001-01-01 00:00:07', 7, 7::smallint);
INSERT INTO bits (ts) VALUES ('2001-01-01 00:00:31');
\session main
FETCH 3 FROM folds;
FETCH 3 FROM calls;
COMMIT;
-- Over a stream too: to_date/to_timestamp read by a template, make_interval with named
-- arguments, and OVERLAPS of (start, end) and (start, interval) rows (NULL where a NULL
-- end decides it).
CREATE STREAM visits (ts timestamp TIMESTAMPCOLUMN, k integer, day text, stay interval);
BEGIN;
DECLARE reads CURSOR FOR SELECT to_date(day, 'DD Mon YYYY'), to_timestamp(day || ' 10:30 PM', 'DD Mon YYYY HH12:MI AM'), make_interval(days => k, secs => 1.5), (ts, stay) OVERLAPS (timestamp '2001-01-02', interval '1 day'), (ts, ts) OVERLAPS (ts, NULL::timestamp) FROM visits;
\session feeder
INSERT INTO visits VALUES ('2001-01-01 12:00:00', 2, '16 Feb 2001', '1 day'), ('2001-01-01 13:00:00', -1, '1 mar 2001', '1 hour'), ('2001-01-01 14:00:00', NULL, NULL, NULL);
\session main
FETCH 3 FROM reads;
COMMIT;
