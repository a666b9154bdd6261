-- connection: what psql shows about the session it opened: \conninfo (the port is written
-- <port> by the runner), the settings psql and drivers read at start-up through SHOW and
-- ParameterStatus (psql's SERVER_VERSION_* variables come from server_version), the user
-- and database names as given (tcq accepts any), and psql's output modes over a
-- non-continuous query.
\conninfo
SELECT current_user, current_database(), current_setting('application_name') AS application;
\echo :SERVER_VERSION_NAME :SERVER_VERSION_NUM :USER :DBNAME :ENCODING
SHOW server_version;
SHOW server_encoding;
SHOW client_encoding;
SHOW DateStyle;
SHOW TimeZone;
SHOW integer_datetimes;
SHOW standard_conforming_strings;
SHOW no_such_setting;
\encoding
SELECT 1 AS one, 'two' AS two, NULL AS three, 2.50::numeric AS four;
\pset null '(null)'
SELECT NULL AS three;
\pset null ''
\x on
SELECT 1 AS a, 'b' AS b;
\x off
\pset format unaligned
SELECT 1 AS a, 'b' AS b;
\pset format aligned
\pset tuples_only on
SELECT 'no header';
\pset tuples_only off
\c - other_user
\conninfo
SELECT current_user;
