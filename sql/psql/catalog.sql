-- psql's describe commands and plain SQL over the system catalogs. Every catalog query
-- psql sends here runs on tcq's relational engine; streams are foreign tables whose FDW
-- options name the TIMESTAMPCOLUMN and the stream type.
CREATE STREAM flights (ts timestamp TIMESTAMPCOLUMN, delay integer, origin varchar(3));
CREATE STREAM network.tcpdump (src text, bytes bigint);
CREATE TABLE airports (code text PRIMARY KEY, city text NOT NULL, state varchar(2));
INSERT INTO airports VALUES ('SFO', 'San Francisco', 'CA'), ('JFK', 'New York', 'NY');
CREATE TABLE gates (airport text NOT NULL, gate text NOT NULL, terminal int, UNIQUE (airport, gate));
\d
\dt
\dE
\d flights
\d+ flights
\d network.tcpdump
\d airports
\d gates
\di
\d airports_pkey
\d+ gates_airport_gate_key
\d nope
\dn
\l
\df
\df tcq_*
\dx
\conninfo
\du
\dn+
\dL
\dC
\dd
\do
SELECT c.relname, c.relkind, n.nspname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.relkind = 'f' ORDER BY 1;
SELECT 'flights'::regclass, 'flights'::regclass::oid, 'int8'::regtype, 'text[]'::regtype::oid, 'network.tcpdump'::regclass;
SELECT table_schema, table_name, table_type FROM information_schema.tables WHERE table_type = 'FOREIGN' ORDER BY 1, 2;
SELECT column_name, data_type, character_maximum_length, is_nullable FROM information_schema.columns WHERE table_name = 'flights' ORDER BY ordinal_position;
WITH s AS (SELECT relname FROM pg_class WHERE relkind = 'f') SELECT count(*) AS streams FROM s;
SELECT typname, typarray::regtype FROM pg_type WHERE oid = ANY('{20,23}') ORDER BY 1;
SELECT format_type(1043, 7), format_type(1115, NULL), pg_get_userbyid(10) = current_user;
SELECT nspname FROM pg_namespace n WHERE EXISTS (SELECT 1 FROM pg_class c WHERE c.relnamespace = n.oid AND c.relkind = 'f') ORDER BY 1;
SELECT n.nspname, count(c.oid) AS relations FROM pg_namespace n LEFT JOIN pg_class c ON c.relnamespace = n.oid AND c.relkind = 'f' GROUP BY n.nspname ORDER BY 2 DESC, 1;
SELECT relname FROM pg_class WHERE relkind = 'f' UNION SELECT nspname FROM pg_namespace WHERE nspname = 'network' ORDER BY 1;
SELECT DISTINCT relkind FROM pg_class ORDER BY relkind;
SELECT attname FROM pg_attribute WHERE attrelid = 'flights'::regclass ORDER BY length(attname) DESC, attname LIMIT 2 OFFSET 1;
SELECT a.attname, CASE WHEN a.attnotnull THEN 'time' ELSE coalesce(d.description, '-') END AS role FROM pg_attribute a LEFT JOIN pg_description d ON d.objoid = a.attrelid AND d.objsubid = a.attnum WHERE a.attrelid = 'flights'::regclass ORDER BY a.attnum;
SELECT array_to_string(ARRAY(SELECT attname FROM pg_attribute WHERE attrelid = 'flights'::regclass ORDER BY attnum), ', ') AS columns, 'bigint'::regtype::oid = ANY (ARRAY[20, 21]) AS has_int8;
SELECT ftoptions FROM pg_foreign_table WHERE ftrelid = 'network.tcpdump'::regclass;
WITH RECURSIVE up(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM up WHERE n < 3) SELECT n, n * n AS square FROM up;
SELECT word, catcode FROM pg_get_keywords() WHERE word IN ('select', 'stream') ORDER BY 1;
SELECT a.code, c.relkind, (SELECT count(*) FROM pg_attribute t WHERE t.attrelid = c.oid) AS columns FROM airports a JOIN pg_class c ON c.relname = 'airports' ORDER BY a.code;
SELECT conname, contype, conkey, pg_get_constraintdef(oid) FROM pg_constraint ORDER BY 1;
SELECT c.relname, c.relkind, i.indisprimary, i.indkey, pg_get_indexdef(i.indexrelid) FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid ORDER BY 1;
-- Arrays and oids are typed as in PostgreSQL (drivers decode them by these types); psql
-- prints their text form: quoting, NULL, the empty array, an int2vector's spaces.
SELECT con.conname, con.conkey, pg_typeof(con.conkey) AS conkey_type, i.indkey, pg_typeof(i.indkey) AS indkey_type, pg_typeof(con.conrelid) AS conrelid_type FROM pg_constraint con JOIN pg_index i ON i.indexrelid = con.conindid ORDER BY 1;
SELECT ARRAY['a b', NULL, 'c"d', '', 'NULL'] AS quoted, pg_typeof(ARRAY[1, 2]) AS ints, '{}'::oid[] AS empty, '-1'::oid AS wrapped, pg_typeof(current_schemas(true)) AS schemas_type;
SELECT array_agg(attname::text ORDER BY attnum DESC) AS reversed, (array_agg(attnum ORDER BY attnum))[2] AS second FROM pg_attribute WHERE attrelid = 'gates'::regclass AND attnum > 0;
SET application_name = 'catalog';
SELECT name, setting, source FROM pg_settings WHERE name IN ('application_name', 'search_path') ORDER BY 1;
SELECT (SELECT relname FROM pg_class WHERE relkind = 'f');
SELECT relname FROM pg_class WHERE count(*) > 1;
SELECT nope FROM pg_class;
SELECT c.relnme FROM pg_class c;
SELECT relname FROM pg_class ORDER BY 2;
SELECT * FROM pg_nope;
SELECT 'nope'::regclass;
