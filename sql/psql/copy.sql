-- copy: ingest through psql. COPY ... FROM STDIN with its rows inline (text, CSV with
-- HEADER, a column list, NULLs), psql's own \copy ... FROM STDIN, and a bad row, which
-- rejects its whole COPY with the line number: none of that COPY's rows reach the query.
-- A cursor declared first sees every tuple that arrives after it (a query without a window
-- passes each tuple through), so FETCH shows exactly what was accepted.
CREATE STREAM readings (ts timestamp TIMESTAMPCOLUMN, sensor text, value double precision);
DECLARE seen CURSOR WITH HOLD FOR SELECT ts, sensor, value FROM readings;
COPY readings FROM STDIN;
2001-01-01 00:00:01	a	1.5
2001-01-01 00:00:02	b	\N
\.
COPY readings FROM STDIN WITH (FORMAT csv, HEADER);
ts,sensor,value
2001-01-01 00:00:03,"c, quoted",3
2001-01-01 00:00:04,,4.25
\.
COPY readings (sensor, ts) FROM STDIN WITH (FORMAT csv);
d,2001-01-01 00:00:05
\.
\copy readings FROM STDIN WITH (FORMAT csv)
2001-01-01 00:00:06,e,6
2001-01-01 00:00:07,f,7
\.
-- The second row is bad: the first is not kept either.
COPY readings FROM STDIN WITH (FORMAT csv);
2001-01-01 00:00:08,g,8
2001-01-01 00:00:09,h,not a number
\.
COPY readings FROM STDIN WITH (FORMAT csv);
2001-01-01 00:00:10,i
\.
-- Seven rows were accepted, and nothing of the two rejected COPYs follows them.
FETCH 7 FROM seen;
FETCH 1 FROM seen WITH (timeout = '200ms');
CLOSE seen;
SELECT name, tuples FROM tcq_streams;
-- A table's constraints are checked when its COPY ends: the error names the line of the
-- row (after a header line, and after a quoted field holding line breaks).
CREATE TABLE pairs (k integer PRIMARY KEY, label text NOT NULL);
COPY pairs FROM STDIN WITH (FORMAT csv, HEADER);
k,label
1,a
2,"two
lines"
3,
\.
COPY pairs FROM STDIN WITH (FORMAT csv);
1,a
2,b
1,c
\.
SELECT count(*) FROM pairs;
