-- wtime: wtime(*) is the end (exclusive) of the instance a row belongs to, wstart(*) its
-- start, wrange(*) and wslide(*) the window's RANGE and SLIDE as intervals (docs/sql.md).
-- Interval literals may be written '00:01:00'. START AT 'epoch' anchors the grid at
-- 1970-01-01 with no first-window cut-off. tcq_advance(stream, time) is the heartbeat that
-- moves an idle stream's time forward and closes its windows. Without START AT the grid
-- starts at submission time, so tuples from 2001 all precede the first window: NOTICE, and
-- no rows until the stream is dropped, which ends the query.
CREATE STREAM m (ts timestamp TIMESTAMPCOLUMN, v integer);
BEGIN;
DECLARE c CURSOR FOR SELECT count(*), wstart(*), wtime(*), wrange(*), wslide(*) FROM m [RANGE BY '00:01:00' SLIDE BY '20 seconds' START AT '2001-01-01 00:00:00'];
DECLARE e CURSOR FOR SELECT v, count(*), wtime(*) FROM m [RANGE BY '30 seconds' START AT 'epoch'] GROUP BY v;
\session feeder
INSERT INTO m VALUES ('2001-01-01 00:00:30', 1);
INSERT INTO m VALUES ('2001-01-01 00:01:05', 2);
INSERT INTO m VALUES ('2001-01-01 00:02:00', 3);
\session main
FETCH 4 FROM c;
FETCH 2 FROM e;
COMMIT;
-- the heartbeat
CREATE STREAM idle (ts timestamp TIMESTAMPCOLUMN, v integer);
BEGIN;
DECLARE beat CURSOR FOR SELECT count(*), sum(v), wtime(*) FROM idle [RANGE BY '10 seconds' START AT '2001-01-01 00:00:00'];
\session feeder
INSERT INTO idle VALUES ('2001-01-01 00:00:01', 5);
SELECT tcq_advance('idle', '2001-01-01 00:00:20');
\session main
FETCH 2 FROM beat;
COMMIT;
-- the default START AT
CREATE STREAM old (ts timestamp TIMESTAMPCOLUMN, v integer);
\async
SELECT count(*), wtime(*) FROM old [RANGE BY '10 seconds'];
\session feeder
INSERT INTO old VALUES ('2001-01-01 00:00:01', 1), ('2001-01-01 00:00:12', 2);
DROP STREAM old;
\session main
\await
