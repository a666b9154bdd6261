-- streaming: reading a continuous query's rows as windows close, the ways psql can. A
-- plain SELECT shows nothing until the statement ends, so psql must fetch through a cursor
-- (\set FETCH_COUNT n, which psql runs as DECLARE and FETCH FORWARD n) or use COPY
-- (SELECT ...) TO STDOUT (one line per row as it arrives); LIMIT ends the query. The
-- tuples come from a feeder started in the background (sql/psql/feed.sh) once the query
-- is registered: 10-minute windows over three airports, and a tuple at 00:35 that closes
-- the window ending at 00:30.
CREATE STREAM flights (ts timestamp TIMESTAMPCOLUMN, delay integer, origin text);
\set FETCH_COUNT 2
\pset pager off
\! sh sql/psql/feed.sh 1 -c "INSERT INTO flights VALUES ('2001-01-01 00:01', 5, 'SFO'), ('2001-01-01 00:04', 15, 'LAX'), ('2001-01-01 00:09', -3, 'SFO'), ('2001-01-01 00:12', 7, 'SFO'), ('2001-01-01 00:25', 30, 'JFK'), ('2001-01-01 00:35', 0, 'SFO')" &
SELECT origin, count(*), avg(delay), max(delay), wtime(*)
FROM flights [RANGE BY '10 minutes' START AT '2001-01-01 00:00']
GROUP BY origin ORDER BY origin LIMIT 4;
\unset FETCH_COUNT
-- COPY TO STDOUT, in text and in CSV with a header; the same feed each time, into a new
-- stream, since a query sees only the tuples that arrive after it.
DROP STREAM flights;
CREATE STREAM flights (ts timestamp TIMESTAMPCOLUMN, delay integer, origin text);
\! sh sql/psql/feed.sh 1 -c "INSERT INTO flights VALUES ('2001-01-01 00:01', 5, 'SFO'), ('2001-01-01 00:04', 15, 'LAX'), ('2001-01-01 00:09', -3, 'SFO'), ('2001-01-01 00:12', 7, 'SFO'), ('2001-01-01 00:25', 30, 'JFK'), ('2001-01-01 00:35', 0, 'SFO')" &
COPY (SELECT origin, count(*), sum(delay), wtime(*) FROM flights [RANGE BY '10 minutes' START AT '2001-01-01 00:00'] GROUP BY origin ORDER BY origin LIMIT 4) TO STDOUT;
DROP STREAM flights;
CREATE STREAM flights (ts timestamp TIMESTAMPCOLUMN, delay integer, origin text);
\! sh sql/psql/feed.sh 1 -c "INSERT INTO flights VALUES ('2001-01-01 00:01', 5, 'SFO'), ('2001-01-01 00:04', 15, 'LAX'), ('2001-01-01 00:09', -3, 'SFO'), ('2001-01-01 00:12', 7, 'SFO'), ('2001-01-01 00:25', 30, 'JFK'), ('2001-01-01 00:35', 0, 'SFO')" &
\copy (SELECT origin, count(*), wstart(*), wtime(*) FROM flights [RANGE BY '20 minutes' SLIDE BY '10 minutes' START AT '2001-01-01 00:00'] GROUP BY origin ORDER BY origin LIMIT 4) TO STDOUT WITH (FORMAT csv, HEADER)
-- Without GROUP BY every window emits a row, empty ones too (count 0, NULL aggregates);
-- tcq_advance closes windows when no tuple comes.
DROP STREAM flights;
CREATE STREAM flights (ts timestamp TIMESTAMPCOLUMN, delay integer, origin text);
\! sh sql/psql/feed.sh 1 -c "INSERT INTO flights VALUES ('2001-01-01 00:01', 5, 'SFO')" -c "SELECT tcq_advance('flights', '2001-01-01 00:30')" &
SELECT count(*), max(delay), wtime(*) FROM flights [RANGE BY '10 minutes' START AT '2001-01-01 00:00'] LIMIT 3;
