-- cursors: DECLARE registers a continuous query at once, so one psql session can declare
-- it, feed the stream and FETCH the rows: FETCH n waits for n rows (or the query's end),
-- FETCH ... WITH (timeout = ...) returns what arrived within the timeout, FETCH ALL reads
-- to the end of a LIMITed query, CLOSE ends it; a WITH HOLD cursor outlives its
-- transaction. Errors: DECLARE outside a transaction block (25P01), an unknown cursor
-- (34000), a cursor name used twice (42P03).
CREATE STREAM trades (ts timestamp TIMESTAMPCOLUMN, symbol text, price numeric, qty integer);
BEGIN;
DECLARE per_symbol CURSOR FOR
    SELECT symbol, count(*), sum(qty), max(price), wtime(*)
    FROM trades [RANGE BY '1 minute' START AT '2001-01-01 09:30']
    GROUP BY symbol ORDER BY symbol;
DECLARE every_trade CURSOR FOR SELECT symbol, price FROM trades WHERE qty >= 100 LIMIT 3;
DECLARE per_symbol CURSOR FOR SELECT symbol FROM trades;
ROLLBACK;
BEGIN;
DECLARE per_symbol CURSOR FOR
    SELECT symbol, count(*), sum(qty), max(price), wtime(*)
    FROM trades [RANGE BY '1 minute' START AT '2001-01-01 09:30']
    GROUP BY symbol ORDER BY symbol;
DECLARE every_trade CURSOR FOR SELECT symbol, price FROM trades WHERE qty >= 100 LIMIT 3;
SELECT count(*) AS queries FROM tcq_queries;
INSERT INTO trades VALUES
    ('2001-01-01 09:30:05', 'ACME', 10.50, 100),
    ('2001-01-01 09:30:20', 'INIT', 3.25, 50),
    ('2001-01-01 09:30:40', 'ACME', 10.75, 200),
    ('2001-01-01 09:31:10', 'INIT', 3.50, 500);
-- The window ending at 09:31 has closed: two rows.
FETCH 2 FROM per_symbol;
-- Nothing more has closed: the timeout returns no row instead of waiting.
FETCH 1 FROM per_symbol WITH (timeout = '100ms');
FETCH ALL FROM every_trade;
INSERT INTO trades VALUES ('2001-01-01 09:32:00', 'ACME', 11.00, 10);
-- That tuple closes the window ending at 09:32, which holds INIT's trade alone.
FETCH 1 FROM per_symbol;
FETCH 5 FROM per_symbol WITH (timeout = '100ms');
CLOSE per_symbol;
FETCH 1 FROM per_symbol;
ROLLBACK;
-- ROLLBACK closed the block's cursors.
FETCH 1 FROM every_trade;
-- Outside a transaction block only a WITH HOLD cursor may be declared.
DECLARE plain CURSOR FOR SELECT symbol FROM trades;
DECLARE held CURSOR WITH HOLD FOR SELECT symbol, qty FROM trades WHERE symbol = 'INIT';
INSERT INTO trades VALUES ('2001-01-01 09:33:00', 'INIT', 3.75, 20), ('2001-01-01 09:33:01', 'ACME', 11.25, 30);
FETCH 1 FROM held;
CLOSE held;
FETCH 1 FROM nosuch;
