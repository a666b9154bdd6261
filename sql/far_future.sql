-- far_future: a far-future timestamp must neither hang the server nor exhaust its memory
-- (docs/sql.md, Windows). The policy (README, "Limits"): after one jump of current time, at most
-- 100,000 consecutive empty slide events are emitted; the rest of the run is skipped with a
-- NOTICE. A 1-second window and a jump of 100 years (3,155,673,600 window ends): the first
-- instance holds one tuple, 100,000 empty instances follow (HAVING hides them), the other
-- 3,155,573,599 are skipped, and the next row is the instance holding the tuple after the
-- jump. The query reads concurrently (plain SELECT), so its output queue never stalls ingest.
CREATE STREAM clock (ts timestamp TIMESTAMPCOLUMN, v integer);
\async
SELECT count(*), sum(v), wtime(*) FROM clock [RANGE BY '1 second' START AT '2001-01-01 00:00:00'] HAVING count(*) > 0 LIMIT 2;
\session feeder
INSERT INTO clock VALUES ('2001-01-01 00:00:00.5', 1);
INSERT INTO clock VALUES ('2101-01-01 00:00:00.5', 2);
INSERT INTO clock VALUES ('2101-01-01 00:00:01.5', 3);
\session main
\await
-- the server still answers
SELECT name FROM tcq_streams;
