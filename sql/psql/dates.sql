-- date, time and char(n) columns of a table and infinite timestamps, as psql prints them:
-- the aligned output, \d's type names, COPY out and in (text and CSV), and the errors of
-- casts PostgreSQL has not.
SET TimeZone = 'America/New_York';
CREATE TABLE visits (id integer, day date, at time, code char(3), seen timestamptz);
INSERT INTO visits VALUES (1, '2001-02-03', '10:00', 'a', '2001-02-03 23:30+00'),
    (2, '2000-02-29', '23:59:59.5', 'abc', 'infinity'), (3, NULL, NULL, NULL, '-infinity');
\d visits
SELECT * FROM visits ORDER BY id;
SELECT id, day + 1 AS next, day - date '2000-01-01' AS days, day + at AS starts,
    at + interval '3 hours' AS later, code || '|' AS code, seen::date AS local_day
FROM visits ORDER BY id;
SELECT id FROM visits ORDER BY seen, id;
SELECT 'abc'::char(2), 'a'::char(3), 'infinity'::timestamp, '-infinity'::date;
COPY visits TO STDOUT;
COPY visits TO STDOUT WITH (FORMAT csv);
COPY visits (id, day, at, code) FROM STDIN;
4	1999-12-31	24:00:00	xy
\.
SELECT id, day, at, code FROM visits WHERE id = 4;
INSERT INTO visits (id, code) VALUES (5, 'abcd');
SELECT 1::date;
SELECT '2001-02-30'::date;
SELECT date '2001-01-01'::time;
CREATE STREAM s (day date);
