-- time_zones: timestamptz as psql shows it in the session's zone, across New York's
-- daylight-saving changes (spring forward 2021-03-14 02:00 EST -> 03:00 EDT, fall back
-- 2021-11-07 02:00 EDT -> 01:00 EST), with SET TimeZone, SET TIME ZONE and offsets; a
-- continuous query's windows stay in absolute time while its wtime prints in the zone.
SHOW TimeZone;
SET TimeZone = 'America/New_York';
SHOW TimeZone;
-- One UTC hour apart each, across the spring change: 01:30 EST, then 03:30 EDT.
SELECT '2021-03-14 06:30+00'::timestamptz AS before, '2021-03-14 07:30+00'::timestamptz AS after;
-- Across the fall change: 01:30 EDT, then 01:30 EST (the same wall time twice).
SELECT '2021-11-07 05:30+00'::timestamptz AS first_0130, '2021-11-07 06:30+00'::timestamptz AS second_0130;
-- Local input: 02:30 on the spring day does not exist, 01:30 on the fall day is ambiguous.
SELECT '2021-03-14 02:30'::timestamptz AS in_gap, '2021-11-07 01:30'::timestamptz AS in_fold;
SELECT '2021-03-14 12:00'::timestamptz - '2021-03-14 00:00'::timestamptz AS spring_half_day;
SELECT '2021-03-14 12:00'::timestamptz AT TIME ZONE 'UTC' AS utc_wall, '2021-03-14 12:00'::timestamp AT TIME ZONE 'Europe/Paris' AS paris_noon;
SET TIME ZONE 'Europe/Paris';
SELECT '2021-03-28 00:30+00'::timestamptz AS before, '2021-03-28 01:30+00'::timestamptz AS after;
-- A POSIX offset counts hours west of Greenwich, as in PostgreSQL.
SET TIME ZONE '+05:30';
SHOW TimeZone;
SELECT '2021-01-01 00:00+00'::timestamptz AS posix_west;
SET TIME ZONE 'Nowhere/Special';
SHOW TimeZone;
RESET TimeZone;
SELECT '2021-03-14 07:30+00'::timestamptz AS utc_again;
-- A one-hour tumbling window over the spring change: instances are UTC hours; the rows
-- print in New York time, so the first instance runs from 01:00 EST to 03:00 EDT, one hour.
SET TIME ZONE 'America/New_York';
CREATE STREAM tz_events (ts timestamptz TIMESTAMPCOLUMN, v integer);
\! sh sql/psql/feed.sh 1 -c "INSERT INTO tz_events VALUES ('2021-03-14 06:10+00', 1), ('2021-03-14 06:50+00', 2), ('2021-03-14 07:20+00', 4), ('2021-03-14 08:00+00', 8), ('2021-03-14 09:00+00', 16)" &
SELECT count(*), sum(v), wstart(*), wtime(*) FROM tz_events [RANGE BY '1 hour' START AT '2021-03-14 01:00'] LIMIT 3;
