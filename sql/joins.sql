-- joins: two streams under their own windows (docs/sql.md, Windows). The query's current time is
-- the lowest of its streams' times; a tuple is live from the end of its first instance to
-- the end of the instance after its last; a join tuple from the latest birth to the
-- earliest death of its parts; one slide event per distinct window end. Here a is hopping
-- (RANGE 10 s SLIDE 5 s) and b tumbling (5 s), so a tuple of a meets b's tuples of two
-- consecutive instances, and ends at 5, 10, 15 ... are shared by both windows.
CREATE STREAM a (ts timestamp TIMESTAMPCOLUMN, k text, v integer);
CREATE STREAM b (ts timestamp TIMESTAMPCOLUMN, k text, w integer);
BEGIN;
DECLARE agg CURSOR FOR SELECT a.k, count(*), sum(v * w), wtime(*) FROM a [RANGE BY '10 seconds' SLIDE BY '5 seconds' START AT '2001-01-01 00:00:00'] JOIN b [RANGE BY '5 seconds' START AT '2001-01-01 00:00:00'] USING (k) GROUP BY a.k ORDER BY a.k;
DECLARE live CURSOR FOR SELECT a.v, b.w, wtime(*) FROM a [RANGE BY '10 seconds' SLIDE BY '5 seconds' START AT '2001-01-01 00:00:00'], b [RANGE BY '5 seconds' START AT '2001-01-01 00:00:00'] WHERE a.k = b.k AND b.w > 1 ORDER BY a.v, b.w;
\session feeder
INSERT INTO a VALUES ('2001-01-01 00:00:01', 'x', 1), ('2001-01-01 00:00:06', 'x', 2), ('2001-01-01 00:00:07', 'y', 3);
INSERT INTO b VALUES ('2001-01-01 00:00:02', 'x', 10), ('2001-01-01 00:00:08', 'x', 1), ('2001-01-01 00:00:09', 'y', 100), ('2001-01-01 00:00:12', 'x', 1000);
SELECT "current_time", stream_times FROM tcq_queries ORDER BY id;
INSERT INTO a VALUES ('2001-01-01 00:00:30', 'z', 0);
INSERT INTO b VALUES ('2001-01-01 00:00:30', 'z', 0);
\session main
FETCH 3 FROM agg;
FETCH 2 FROM live;
COMMIT;
