-- errors: error messages as psql prints them, with the position of the fault (psql's
-- LINE n: and caret) where tcq reports one, HINTs for misspelled columns and streams, and,
-- under \set VERBOSITY verbose, the SQLSTATE. Apart from CREATE STREAM and a string
-- literal that spans two lines, every statement here fails, and the session goes on.
CREATE STREAM flights (ts timestamp TIMESTAMPCOLUMN, delay integer, origin text);
SELECT delya FROM flights;
SELECT origin, count(*) FROM flihgts [RANGE BY '1 hour'] GROUP BY origin;
SELECT origin,
       count(*),
       max(dealy)
FROM flights [RANGE BY '1 hour']
GROUP BY origin;
SELEC 1;
SELECT 'unterminated;
';
SELECT origin, count(*) FROM flights [RANGE BY '1 month'] GROUP BY origin;
SELECT count(*) FROM flights [RANGE BY '10 minutes' SLIDE BY '0 minutes'];
SELECT count(*) FROM flights [RANGE BY '10 minutes' START AT '2001-13-01'];
SELECT origin, delay FROM flights [RANGE BY '1 hour'] GROUP BY origin;
SELECT median(delay) FROM flights [RANGE BY '1 hour'];
SELECT 1/0;
SELECT 'abc'::integer;
SELECT '2001-02-30 00:00'::timestamp;
INSERT INTO flights VALUES ('2001-01-01 00:00', 'late', 'SFO');
INSERT INTO flights (ts, nosuch) VALUES ('2001-01-01 00:00', 1);
CREATE STREAM flights (ts timestamp);
CREATE STREAM bad (a timestamp TIMESTAMPCOLUMN, b timestamp TIMESTAMPCOLUMN);
CREATE STREAM bad (a geometry);
DROP STREAM nosuch;
FETCH 1 FROM nosuch;
\set VERBOSITY verbose
SELECT delya FROM flights;
SELECT count(*) FROM flights [RANGE BY '1 year'];
\set VERBOSITY default
-- A failed statement inside a transaction block fails the block until ROLLBACK.
BEGIN;
SELECT nosuch FROM flights;
SELECT 1;
ROLLBACK;
SELECT 'after rollback' AS ok;
-- Identifiers longer than 63 bytes are cut to 63 (on a character boundary) with a NOTICE,
-- as PostgreSQL's scanner does; the cut name is the one that counts.
CREATE TABLE a_table_name_that_is_much_longer_than_sixty_three_bytes_in_all_of_it (id int);
CREATE TABLE "xxété_été_été_été_été_été_été_été_été_été_été_" (x int);
\dt
SELECT id FROM a_table_name_that_is_much_longer_than_sixty_three_bytes_in_all_of_it_too;
