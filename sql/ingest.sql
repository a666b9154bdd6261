-- ingest: INSERT (multi-row, column lists, defaults to NULL) and COPY FROM STDIN in text
-- and CSV with HEADER, DELIMITER and NULL, read by a query without a window clause, which
-- passes each matching tuple through as it arrives (docs/sql.md). Bad values are errors
-- with PostgreSQL's codes (22P02, 22007, 42601, 42703, 22P04); a bad row rejects its
-- whole COPY (the good row before it never reaches the query) and the error names the line.
CREATE STREAM s (ts timestamp TIMESTAMPCOLUMN, v integer, k text);
BEGIN;
DECLARE pass CURSOR FOR SELECT ts, v, k FROM s WHERE v > 0;
\session feeder
INSERT INTO s VALUES ('2001-01-01 00:00:01', 1, 'a'), ('2001-01-01 00:00:02', -1, 'b');
INSERT INTO s (v, ts) VALUES (2, '2001-01-01 00:00:03');
INSERT INTO s VALUES ('2001-01-01 00:00:04', 'abc', 'c');
INSERT INTO s VALUES ('not a time', 3, 'c');
INSERT INTO s VALUES ('2001-01-01 00:00:04', 3, 'c', 4);
INSERT INTO s (nosuch) VALUES (1);
COPY s FROM STDIN;
2001-01-01 00:00:05	4	d
2001-01-01 00:00:06	\N	e
\.
COPY s FROM STDIN WITH (FORMAT csv, HEADER);
ts,v,k
2001-01-01 00:00:07,5,"f, quoted"
2001-01-01 00:00:08,6,
\.
COPY s (k, ts, v) FROM STDIN WITH (FORMAT csv, DELIMITER ';', NULL 'none');
g;2001-01-01 00:00:09;7
none;2001-01-01 00:00:10;8
\.
COPY s FROM STDIN WITH (FORMAT csv);
2001-01-01 00:00:11,9,h
2001-01-01 00:00:12,oops,i
\.
COPY s FROM STDIN WITH (FORMAT csv);
2001-01-01 00:00:11,9
\.
INSERT INTO s VALUES ('2001-01-01 00:00:13', 10, 'j');
\session main
FETCH 8 FROM pass;
COMMIT;
