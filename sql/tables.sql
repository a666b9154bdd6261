-- tables: stored tables answered as PostgreSQL answers them (defaults, keys, NOT NULL, the
-- command tags, finite SELECT with GROUP BY / HAVING / ORDER BY / LIMIT / OFFSET), and a
-- stream-table join whose table changes between slide events: each event reads the table
-- as it is then, so a change shows from the next event on and never in an earlier one
-- (at 00:02:00 the DEN flight finds no airport: it was deleted before that event).
CREATE TABLE airports (code text PRIMARY KEY, city text NOT NULL, state varchar(2), hubs integer DEFAULT 0);
INSERT INTO airports VALUES ('SFO', 'San Francisco', 'CA', 2), ('LAX', 'Los Angeles', 'CA'), ('ORD', 'Chicago', 'IL', 1);
INSERT INTO airports (code, city) VALUES ('JFK', 'New York');
INSERT INTO airports VALUES ('SFO', 'Again', 'CA');
INSERT INTO airports VALUES ('SFO', 'Again', 'CA'), ('BOS', 'Boston', 'MA') ON CONFLICT DO NOTHING;
INSERT INTO airports (code) VALUES ('ATL');
SELECT * FROM airports ORDER BY code;
SELECT state, count(*), sum(hubs) FROM airports GROUP BY state HAVING count(*) < 3 ORDER BY 2 DESC, 1 NULLS LAST LIMIT 3 OFFSET 1;
UPDATE airports SET hubs = hubs + 1 WHERE state = 'CA';
DELETE FROM airports WHERE state IS NULL;
COPY airports TO STDOUT WITH (FORMAT csv, HEADER);
CREATE STREAM airports (ts timestamp TIMESTAMPCOLUMN);
CREATE STREAM flights (ts timestamp TIMESTAMPCOLUMN, origin text, delay integer);
BEGIN;
DECLARE j CURSOR FOR SELECT a.state, count(*), avg(f.delay), wtime(*) FROM flights f [RANGE BY '1 minute' START AT '2001-01-01 00:00:00'] JOIN airports a ON f.origin = a.code GROUP BY a.state ORDER BY a.state;
\session feeder
INSERT INTO flights VALUES ('2001-01-01 00:00:10', 'SFO', 10), ('2001-01-01 00:00:20', 'ORD', 20), ('2001-01-01 00:00:30', 'DEN', 30);
INSERT INTO airports VALUES ('DEN', 'Denver', 'CO');
UPDATE airports SET state = 'XX' WHERE code = 'ORD';
INSERT INTO flights VALUES ('2001-01-01 00:01:10', 'DEN', 40), ('2001-01-01 00:01:20', 'ORD', 45);
DELETE FROM airports WHERE code = 'DEN';
INSERT INTO flights VALUES ('2001-01-01 00:02:10', 'SFO', 50);
\session main
FETCH 4 FROM j;
COMMIT;
TRUNCATE airports;
SELECT count(*) FROM airports;
DROP TABLE airports;
DROP TABLE IF EXISTS airports;
