-- streams: CREATE STREAM and DROP STREAM, the column types a stream may declare,
-- TIMESTAMPCOLUMN and TYPE, schema-qualified names, and the errors of each (docs/sql.md).
-- Error codes are PostgreSQL's: 42P07 duplicate, 42P01 unknown relation, 42704 unknown
-- type, 42P16 invalid stream definition, 42601 syntax.
CREATE STREAM flights (ts timestamp TIMESTAMPCOLUMN, delay integer, distance integer, origin text, destination text);
CREATE STREAM flights (ts timestamp TIMESTAMPCOLUMN, delay integer);
CREATE STREAM archived_ok (ts timestamptz TIMESTAMPCOLUMN, v bigint) TYPE UNARCHIVED;
CREATE STREAM every_type (a boolean, b smallint, c integer, d bigint, e real, f double precision, g numeric, h text, i varchar(10), j timestamp, k timestamptz, l interval);
CREATE STREAM network.tcpdump (ts timestamp TIMESTAMPCOLUMN, src text, bytes integer);
-- an unknown type is an error that names it
CREATE STREAM bad_type (ts timestamp TIMESTAMPCOLUMN, b blob);
-- at most one TIMESTAMPCOLUMN, and it must be a timestamp
CREATE STREAM two_clocks (a timestamp TIMESTAMPCOLUMN, b timestamp TIMESTAMPCOLUMN);
CREATE STREAM int_clock (a integer TIMESTAMPCOLUMN);
-- a column named twice
CREATE STREAM twice (a integer, a integer);
SELECT name FROM tcq_streams ORDER BY name;
DROP STREAM every_type;
DROP STREAM every_type;
DROP STREAM IF EXISTS every_type;
DROP STREAM network.tcpdump;
DROP STREAM archived_ok;
SELECT name FROM tcq_streams ORDER BY name;
-- a query over a stream that does not exist, or a column it does not have
SELECT * FROM nosuch;
SELECT nosuch FROM flights;
DROP STREAM flights;
