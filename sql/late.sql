-- late: late tuples and batching. A tuple joins every instance not yet emitted; emitted rows
-- are never revised (docs/sql.md, Windows). The same four tuples arrive one INSERT each, in one
-- multi-row INSERT, and in one COPY: all three must give the same rows, because a batch
-- gives exactly the rows that feeding its tuples one at a time gives. With RANGE 10 s and
-- SLIDE 5 s, 00:00:11 closes [0,10) = {00:00:02}; 00:00:08 is then late for [0,10) but
-- still joins [5,15); 00:00:30 closes [5,15), [10,20), [15,25) and [20,30).
-- A tumbling window drops a late tuple that belongs to no open instance (00:00:03).
CREATE STREAM h1 (ts timestamp TIMESTAMPCOLUMN, v integer);
CREATE STREAM h2 (ts timestamp TIMESTAMPCOLUMN, v integer);
CREATE STREAM h3 (ts timestamp TIMESTAMPCOLUMN, v integer);
CREATE STREAM t (ts timestamp TIMESTAMPCOLUMN, v integer);
BEGIN;
DECLARE one_by_one CURSOR FOR SELECT count(*), sum(v), wtime(*) FROM h1 [RANGE BY '10 seconds' SLIDE BY '5 seconds' START AT '2001-01-01 00:00:00'];
DECLARE one_insert CURSOR FOR SELECT count(*), sum(v), wtime(*) FROM h2 [RANGE BY '10 seconds' SLIDE BY '5 seconds' START AT '2001-01-01 00:00:00'];
DECLARE one_copy CURSOR FOR SELECT count(*), sum(v), wtime(*) FROM h3 [RANGE BY '10 seconds' SLIDE BY '5 seconds' START AT '2001-01-01 00:00:00'];
DECLARE tumbling CURSOR FOR SELECT count(*), sum(v), wtime(*) FROM t [RANGE BY '10 seconds' START AT '2001-01-01 00:00:00'];
\session feeder
INSERT INTO h1 VALUES ('2001-01-01 00:00:02', 1);
INSERT INTO h1 VALUES ('2001-01-01 00:00:11', 2);
INSERT INTO h1 VALUES ('2001-01-01 00:00:08', 4);
INSERT INTO h1 VALUES ('2001-01-01 00:00:30', 8);
INSERT INTO h2 VALUES ('2001-01-01 00:00:02', 1), ('2001-01-01 00:00:11', 2), ('2001-01-01 00:00:08', 4), ('2001-01-01 00:00:30', 8);
COPY h3 FROM STDIN;
2001-01-01 00:00:02	1
2001-01-01 00:00:11	2
2001-01-01 00:00:08	4
2001-01-01 00:00:30	8
\.
INSERT INTO t VALUES ('2001-01-01 00:00:01', 1), ('2001-01-01 00:00:12', 2), ('2001-01-01 00:00:03', 4), ('2001-01-01 00:00:25', 8);
\session main
FETCH 5 FROM one_by_one;
FETCH 5 FROM one_insert;
FETCH 5 FROM one_copy;
FETCH 2 FROM tumbling;
COMMIT;
