-- windows: tumbling (SLIDE omitted), hopping (slide < range) and jumping (slide > range)
-- windows over the same eight tuples, read through cursors, with every row computed by hand
-- from docs/sql.md, Windows: instance m is [o + m*s, o + m*s + r); it is emitted once current
-- time (the largest timestamp seen) reaches its end; a tuple on a boundary belongs to the
-- later instance; tuples in a jumping window's gap belong to none; an empty instance gives
-- one row with count 0 and NULL aggregates when ungrouped, nothing when grouped. The last
-- tuple (00:00:50) closes [40,50) but no instance ending after 00:00:50.
CREATE STREAM w (ts timestamp TIMESTAMPCOLUMN, k text, v integer);
BEGIN;
DECLARE tumbling CURSOR FOR SELECT count(*), sum(v), min(v), max(v), avg(v), wstart(*), wtime(*) FROM w [RANGE BY '10 seconds' START AT '2001-01-01 00:00:00'];
DECLARE grouped CURSOR FOR SELECT k, count(*), sum(v), wtime(*) FROM w [RANGE BY '10 seconds' START AT '2001-01-01 00:00:00'] GROUP BY k ORDER BY k;
DECLARE hopping CURSOR FOR SELECT count(*), sum(v), wstart(*), wtime(*) FROM w [RANGE BY '10 seconds' SLIDE BY '5 seconds' START AT '2001-01-01 00:00:00'];
DECLARE jumping CURSOR FOR SELECT count(*), sum(v), wstart(*), wtime(*) FROM w [RANGE BY '5 seconds' SLIDE BY '10 seconds' START AT '2001-01-01 00:00:00'];
\session feeder
INSERT INTO w VALUES ('2001-01-01 00:00:01', 'a', 1), ('2001-01-01 00:00:05', 'b', 2), ('2001-01-01 00:00:09', 'a', 3), ('2001-01-01 00:00:10', 'a', 4);
INSERT INTO w VALUES ('2001-01-01 00:00:15', 'b', 5);
INSERT INTO w VALUES ('2001-01-01 00:00:20', 'b', 6);
INSERT INTO w VALUES ('2001-01-01 00:00:45', 'a', 7), ('2001-01-01 00:00:50', 'a', 8);
\session main
FETCH 5 FROM tumbling;
FETCH 6 FROM grouped;
FETCH 9 FROM hopping;
FETCH 5 FROM jumping;
COMMIT;
DROP STREAM w;
