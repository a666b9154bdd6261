-- groupby: WHERE, GROUP BY, HAVING, expressions over group keys and aggregates, ORDER BY
-- within one slide event, and LIMIT, which ends the query after that many rows (a FETCH
-- that asks for more returns what there is, then nothing). The last tuple (00:00:35, k 'z')
-- fails every WHERE below, yet it still advances time and closes [20,30) (docs/sql.md, Windows).
-- By hand, per 10-second instance (k: values):
--   [0,10):  a: 1 2 3    b: 10 20   c: 5 5
--   [10,20): a: 7        b: 1 2     c: 1 2 3
--   [20,30): a: 100
-- `spread`'s HAVING reads max and min only; avg and count are finalised for the groups
-- it keeps: (a 2 3) (b 15 2) at 00:00:10, (b 1.5 2) (c 2 3) at 00:00:20.
CREATE STREAM g (ts timestamp TIMESTAMPCOLUMN, k text, v integer);
BEGIN;
DECLARE busy CURSOR FOR SELECT k, count(*) AS n, sum(v) * 10 AS s10, max(v) - min(v) AS spread FROM g [RANGE BY '10 seconds' START AT '2001-01-01 00:00:00'] WHERE k <> 'z' GROUP BY k HAVING count(*) >= 2 ORDER BY n DESC, k;
DECLARE limited CURSOR FOR SELECT k, count(*) AS n FROM g [RANGE BY '10 seconds' START AT '2001-01-01 00:00:00'] WHERE k <> 'z' GROUP BY k HAVING count(*) >= 2 ORDER BY n DESC, k LIMIT 3;
DECLARE only_a CURSOR FOR SELECT count(*), sum(v), wtime(*) FROM g [RANGE BY '10 seconds' START AT '2001-01-01 00:00:00'] WHERE k = 'a';
DECLARE keyed CURSOR FOR SELECT upper(k) AS key, avg(v) FROM g [RANGE BY '10 seconds' START AT '2001-01-01 00:00:00'] WHERE v > 1 AND k <> 'z' GROUP BY k ORDER BY avg(v) DESC;
DECLARE spread CURSOR FOR SELECT k, avg(v) AS mean, count(*) AS n FROM g [RANGE BY '10 seconds' START AT '2001-01-01 00:00:00'] WHERE k <> 'z' GROUP BY k HAVING max(v) - min(v) >= 1 ORDER BY k;
\session feeder
INSERT INTO g VALUES ('2001-01-01 00:00:01', 'a', 1), ('2001-01-01 00:00:02', 'b', 10), ('2001-01-01 00:00:03', 'a', 2), ('2001-01-01 00:00:04', 'c', 5), ('2001-01-01 00:00:05', 'b', 20), ('2001-01-01 00:00:06', 'a', 3), ('2001-01-01 00:00:07', 'c', 5);
INSERT INTO g VALUES ('2001-01-01 00:00:12', 'b', 1), ('2001-01-01 00:00:13', 'b', 2), ('2001-01-01 00:00:14', 'a', 7), ('2001-01-01 00:00:15', 'c', 1), ('2001-01-01 00:00:16', 'c', 2), ('2001-01-01 00:00:17', 'c', 3);
INSERT INTO g VALUES ('2001-01-01 00:00:21', 'a', 100);
INSERT INTO g VALUES ('2001-01-01 00:00:35', 'z', 0);
\session main
FETCH 5 FROM busy;
FETCH 5 FROM limited;
FETCH 5 FROM limited;
FETCH 3 FROM only_a;
FETCH 7 FROM keyed;
FETCH 4 FROM spread;
COMMIT;
