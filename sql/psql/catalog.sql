-- psql's describe commands and plain SQL over the system catalogs. Every catalog query
-- psql sends here runs on tcq's relational engine; streams are foreign tables whose FDW
-- options name the TIMESTAMPCOLUMN and the stream type.
CREATE STREAM flights (ts timestamp TIMESTAMPCOLUMN, delay integer, origin varchar(3));
CREATE STREAM network.tcpdump (src text, bytes bigint);
\d
\dt
\dE
\d flights
\d+ flights
\d network.tcpdump
\d nope
\dn
\l
\df
\df tcq_*
\dx
\conninfo
SELECT c.relname, c.relkind, n.nspname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.relkind = 'f' ORDER BY 1;
SELECT 'flights'::regclass, 'flights'::regclass::oid, 'int8'::regtype, 'text[]'::regtype::oid, 'network.tcpdump'::regclass;
SELECT table_schema, table_name, table_type FROM information_schema.tables WHERE table_type = 'FOREIGN' ORDER BY 1, 2;
SELECT column_name, data_type, character_maximum_length, is_nullable FROM information_schema.columns WHERE table_name = 'flights' ORDER BY ordinal_position;
WITH s AS (SELECT relname FROM pg_class WHERE relkind = 'f') SELECT count(*) AS streams FROM s;
SELECT typname, typarray::regtype FROM pg_type WHERE oid = ANY('{20,23}') ORDER BY 1;
SELECT format_type(1043, 7), format_type(1115, NULL), pg_get_userbyid(10) = current_user;
SELECT nspname FROM pg_namespace n WHERE EXISTS (SELECT 1 FROM pg_class c WHERE c.relnamespace = n.oid AND c.relkind = 'f') ORDER BY 1;
SELECT nope FROM pg_class;
SELECT * FROM pg_nope;
SELECT 'nope'::regclass;
