-- errors: what a continuous query may not say, each with PostgreSQL's SQLSTATE
-- (docs/sql.md): window lengths in months or years have no fixed length and non-positive
-- RANGE/SLIDE are invalid (22023); malformed interval and timestamp literals (22007);
-- grouping errors (42803), unknown functions (42883), syntax errors (42601); cursors outside
-- a transaction block (25P01), unknown cursors (34000), and a failed block (25P02).
CREATE STREAM w (ts timestamp TIMESTAMPCOLUMN, k text, v integer);
SELECT count(*) FROM w [RANGE BY '1 month'];
SELECT count(*) FROM w [RANGE BY '1 day' SLIDE BY '1 year'];
SELECT count(*) FROM w [RANGE BY '0 seconds'];
SELECT count(*) FROM w [RANGE BY '10 seconds' SLIDE BY '-5 seconds'];
SELECT count(*) FROM w [RANGE BY 'abc'];
SELECT count(*) FROM w [RANGE BY '10 seconds' START AT 'not a time'];
SELECT k, count(*) FROM w [RANGE BY '10 seconds'];
SELECT median(v) FROM w [RANGE BY '10 seconds'];
SELECT count(*) FROM w [RANGE BY '10 seconds'] GROUP BY nosuch;
SELEC count(*) FROM w;
DECLARE c CURSOR FOR SELECT count(*) FROM w [RANGE BY '10 seconds'];
BEGIN;
FETCH 1 FROM nosuch;
FETCH 1 FROM nosuch;
ROLLBACK;
DROP STREAM w;
