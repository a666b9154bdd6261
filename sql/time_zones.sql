-- Time zones: SET TimeZone with IANA names, offsets and POSIX strings; timestamptz text in
-- the session zone across New York's daylight-saving changes (2021-03-14 and 2021-11-07),
-- PostgreSQL's rules for local times in the gap and the fold, AT TIME ZONE, and windows that
-- stay in absolute time whatever the zone.
SHOW TimeZone;
SET TIME ZONE 'america/new_york';
SHOW TimeZone;
SELECT '2021-03-14 06:59:59+00'::timestamptz AS before_spring, '2021-03-14 07:00:00+00'::timestamptz AS after_spring;
SELECT '2021-11-07 05:59:59+00'::timestamptz AS before_fall, '2021-11-07 06:00:00+00'::timestamptz AS after_fall;
-- 02:30 does not exist on 2021-03-14 (the offset before applies); 01:30 on 2021-11-07
-- happens twice (the offset after applies).
SELECT '2021-03-14 02:30'::timestamptz AS in_gap, '2021-11-07 01:30'::timestamptz AS in_fold;
SELECT '2021-07-01 12:00'::timestamptz AS summer, '2021-07-01 12:00+02'::timestamptz AS explicit;
SELECT '2021-07-01 12:00'::timestamp AT TIME ZONE 'Asia/Kolkata' AS kolkata_noon;
SELECT '2021-07-01 12:00+00'::timestamptz AT TIME ZONE 'Asia/Kolkata' AS wall_in_kolkata;
SELECT timezone('UTC', '2021-01-01 00:00-05'::timestamptz) AS utc_wall;
SELECT '2021-07-01 12:00+00'::timestamptz::timestamp AS local_wall;
SELECT '2021-01-01 00:00'::timestamp::timestamptz AS read_in_zone;
SET TIME ZONE -7;
SHOW TimeZone;
SELECT '2001-01-01 00:00+00'::timestamptz AS minus_seven;
SET TimeZone = 'UTC+3';
SELECT '2001-01-01 00:00+00'::timestamptz AS posix_west;
SET TimeZone = '+05:30';
SELECT '2001-01-01 00:00+00'::timestamptz AS posix_colon;
SET TimeZone = 'Mars/Olympus_Mons';
SELECT '2001-01-01 00:00'::timestamp AT TIME ZONE 'Mars/Olympus_Mons';
-- Windows are absolute: a 1-hour window over the spring change closes on UTC hours, and
-- its wtime prints in New York time.
SET TIME ZONE 'America/New_York';
CREATE STREAM tz_events (ts timestamptz TIMESTAMPCOLUMN, v integer);
\async
SELECT count(*), sum(v), wtime(*) FROM tz_events [RANGE BY '1 hour' START AT '2021-03-14 00:00'] LIMIT 3;
\session feeder
SET TIME ZONE 'UTC';
INSERT INTO tz_events VALUES ('2021-03-14 05:30+00', 1), ('2021-03-14 06:30+00', 2), ('2021-03-14 06:45+00', 3), ('2021-03-14 07:10+00', 4), ('2021-03-14 08:00+00', 5);
\session main
\await
RESET TimeZone;
SHOW TimeZone;
SELECT '2021-03-14 02:30'::timestamptz AS utc_again;
SELECT '2021-07-01 12:00'::timestamp AT TIME ZONE 'UTC';
-- tcq_advance on a timestamptz stream reads and returns its time in the session zone.
SET TIME ZONE 'America/New_York';
SELECT tcq_advance('tz_events', '2021-03-14 05:00');
SELECT "current_time" FROM tcq_streams WHERE name = 'tz_events';
-- date_trunc and extract on timestamptz work on the zone's wall clock.
SELECT date_trunc('day', '2021-03-14 12:00-04'::timestamptz) AS day_start, extract(hour FROM '2021-03-14 12:00-04'::timestamptz) AS hour, extract(timezone_hour FROM '2021-03-14 12:00-04'::timestamptz) AS tz_hour;
