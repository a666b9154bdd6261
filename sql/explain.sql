-- explain: EXPLAIN's output for each kind of continuous query, pinned as text: one window,
-- windows that share sub-aggregates along the window coverage graph (a multi-window
-- query, with the event rate fixed so the plan does not depend on the data), a join of two
-- streams, the count-only join that forms no join tuples, and a stream-table join; then
-- EXPLAIN of a finite query over a table, which runs on the relational engine.
CREATE STREAM s (ts timestamp TIMESTAMPCOLUMN, k text, v integer);
CREATE STREAM u (ts timestamp TIMESTAMPCOLUMN, k text, w integer);
CREATE TABLE dim (k text PRIMARY KEY, label text);
EXPLAIN SELECT k, count(*), avg(v), wtime(*) FROM s [RANGE BY '1 hour' SLIDE BY '10 minutes' START AT '2001-01-01 00:00:00'] GROUP BY k;
EXPLAIN (EVENT_RATE '100 per second') SELECT count(*), sum(v), wtime(*) FROM s [RANGE BY '20 minutes' SLIDE BY '10 minutes' START AT '2001-01-01 00:00:00'] [RANGE BY '40 minutes' SLIDE BY '10 minutes' START AT '2001-01-01 00:00:00'] [RANGE BY '1 hour' SLIDE BY '20 minutes' START AT '2001-01-01 00:00:00'];
EXPLAIN SELECT s.k, sum(v * w), wtime(*) FROM s [RANGE BY '10 seconds' START AT '2001-01-01 00:00:00'] JOIN u [RANGE BY '10 seconds' START AT '2001-01-01 00:00:00'] ON s.k = u.k AND s.v < u.w GROUP BY s.k;
EXPLAIN SELECT s.k, count(*), wtime(*) FROM s [RANGE BY '10 seconds' START AT '2001-01-01 00:00:00'] JOIN u [RANGE BY '10 seconds' START AT '2001-01-01 00:00:00'] USING (k) GROUP BY s.k;
EXPLAIN SELECT d.label, count(*), wtime(*) FROM s [RANGE BY '1 minute' START AT '2001-01-01 00:00:00'] JOIN dim d ON s.k = d.k GROUP BY d.label;
EXPLAIN SELECT s.k, d.label FROM s [RANGE BY '1 minute' START AT '2001-01-01 00:00:00'] LEFT JOIN dim d ON s.k = d.k;
EXPLAIN SELECT k, count(*) FROM dim GROUP BY k;
