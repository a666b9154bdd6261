-- paths: the same aggregates, scalar functions, casts and operators over one stored table,
-- each run alone and again with CROSS JOIN a one-row table. A SELECT over one table and one
-- over a join must give the same rows and the same column types (the type line under each
-- header), as they do in PostgreSQL 15, whose answers these are.
CREATE TABLE ta (id integer, k integer, s smallint, big bigint, r real, d double precision, n numeric, t text, v varchar(5), b boolean, ts timestamp, tz timestamptz, iv interval);
INSERT INTO ta VALUES
  (1, 1, 1, 4611686018427387904, 1.5, 2.5, 1.25, 'abc', 'ab', true, '2001-01-01 10:00:00', '2001-01-01 10:00:00+00', '1 hour'),
  (2, 1, 2, 4611686018427387903, 421.36, -0.0, 2.5, 'ÄÖü', 'xyz', false, '2001-01-02 11:30:00', '2001-01-02 11:30:00+00', '2 days'),
  (3, 2, NULL, 4611686018427387905, NULL, 0.0, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
  (4, 2, -3, -4611686018427387904, -2.25, 1e15, 100.125, 'a~b', 'q', true, '2000-02-29 23:59:59', '2000-02-29 23:59:59+00', '-30 minutes'),
  (5, NULL, 5, 7, 0.5, 3, -7.5, '', '', false, '1999-12-31 00:00:00', '1999-12-31 00:00:00+00', '1 mon');
CREATE TABLE one (x integer);
INSERT INTO one VALUES (1);

SELECT count(*), count(k), count(r), count(t) FROM ta;
SELECT count(*), count(k), count(r), count(t) FROM ta CROSS JOIN one;
SELECT count(*) FILTER (WHERE b) FROM ta;
SELECT count(*) FILTER (WHERE b) FROM ta CROSS JOIN one;
SELECT sum(k), sum(s), sum(big), sum(r), sum(d), sum(n) FROM ta;
SELECT sum(k), sum(s), sum(big), sum(r), sum(d), sum(n) FROM ta CROSS JOIN one;
SELECT avg(k), avg(s), avg(big), avg(r), avg(d), avg(n) FROM ta;
SELECT avg(k), avg(s), avg(big), avg(r), avg(d), avg(n) FROM ta CROSS JOIN one;
SELECT min(k), max(k), min(big), max(big), min(r), max(d), min(n), max(n) FROM ta;
SELECT min(k), max(k), min(big), max(big), min(r), max(d), min(n), max(n) FROM ta CROSS JOIN one;
SELECT min(t), max(t), min(v), max(v), min(ts), max(tz), min(iv), max(iv) FROM ta;
SELECT min(t), max(t), min(v), max(v), min(ts), max(tz), min(iv), max(iv) FROM ta CROSS JOIN one;
SELECT stddev(k), variance(k), stddev_pop(d), var_pop(n), stddev_samp(big), var_samp(r) FROM ta;
SELECT stddev(k), variance(k), stddev_pop(d), var_pop(n), stddev_samp(big), var_samp(r) FROM ta CROSS JOIN one;
SELECT string_agg(t, ',' ORDER BY id), array_agg(k ORDER BY id), bool_and(b), bool_or(b), every(b) FROM ta;
SELECT string_agg(t, ',' ORDER BY id), array_agg(k ORDER BY id), bool_and(b), bool_or(b), every(b) FROM ta CROSS JOIN one;
SELECT k, count(*), sum(big), avg(d) FROM ta GROUP BY k ORDER BY k;
SELECT k, count(*), sum(big), avg(d) FROM ta CROSS JOIN one GROUP BY k ORDER BY k;
SELECT d, count(*) FROM ta GROUP BY d ORDER BY d;
SELECT d, count(*) FROM ta CROSS JOIN one GROUP BY d ORDER BY d;
SELECT DISTINCT d FROM ta ORDER BY d;
SELECT DISTINCT d FROM ta CROSS JOIN one ORDER BY d;
SELECT id, abs(k), round(d), round(n, 1), floor(r), ceil(n), sqrt(abs(d)) FROM ta ORDER BY id;
SELECT id, abs(k), round(d), round(n, 1), floor(r), ceil(n), sqrt(abs(d)) FROM ta CROSS JOIN one ORDER BY id;
SELECT id, coalesce(t, 'none'), nullif(k, 1), greatest(k, s), least(r, d) FROM ta ORDER BY id;
SELECT id, coalesce(t, 'none'), nullif(k, 1), greatest(k, s), least(r, d) FROM ta CROSS JOIN one ORDER BY id;
SELECT id, lower(t), upper(t), length(t), octet_length(t), substr(t, 2), concat(t, k, b) FROM ta ORDER BY id;
SELECT id, lower(t), upper(t), length(t), octet_length(t), substr(t, 2), concat(t, k, b) FROM ta CROSS JOIN one ORDER BY id;
SELECT id, date_trunc('day', ts), date_trunc('day', tz), extract(year FROM ts), date_part('hour', ts), extract(epoch FROM iv) FROM ta ORDER BY id;
SELECT id, date_trunc('day', ts), date_trunc('day', tz), extract(year FROM ts), date_part('hour', ts), extract(epoch FROM iv) FROM ta CROSS JOIN one ORDER BY id;
SELECT id, n::numeric(5,1), t::varchar(2), v::varchar(1), r::numeric, big::double precision, d::real FROM ta ORDER BY id;
SELECT id, n::numeric(5,1), t::varchar(2), v::varchar(1), r::numeric, big::double precision, d::real FROM ta CROSS JOIN one ORDER BY id;
SELECT id, k::text, s::bigint, b::integer, ts::timestamptz, '42'::integer + k FROM ta ORDER BY id;
SELECT id, k::text, s::bigint, b::integer, ts::timestamptz, '42'::integer + k FROM ta CROSS JOIN one ORDER BY id;
SELECT pg_typeof(k), pg_typeof(1 + 1.0), pg_typeof(min(big) + 1), pg_typeof(sum(k)), pg_typeof(avg(d)) FROM ta GROUP BY k ORDER BY k LIMIT 1;
SELECT pg_typeof(k), pg_typeof(1 + 1.0), pg_typeof(min(big) + 1), pg_typeof(sum(k)), pg_typeof(avg(d)) FROM ta CROSS JOIN one GROUP BY k ORDER BY k LIMIT 1;
SELECT id, k + s, big / 2, k / 2, k % 2, d / 2, n * 2, -k, ts + iv, ts - ts FROM ta ORDER BY id;
SELECT id, k + s, big / 2, k / 2, k % 2, d / 2, n * 2, -k, ts + iv, ts - ts FROM ta CROSS JOIN one ORDER BY id;
SELECT id, t LIKE 'a%', t ILIKE 'A%', t ~ 'b', t || v, k IN (1, 3), b IS TRUE, k BETWEEN 1 AND 2 FROM ta ORDER BY id;
SELECT id, t LIKE 'a%', t ILIKE 'A%', t ~ 'b', t || v, k IN (1, 3), b IS TRUE, k BETWEEN 1 AND 2 FROM ta CROSS JOIN one ORDER BY id;
SELECT id, CASE WHEN k = 1 THEN 'one' WHEN k IS NULL THEN NULL ELSE 'many' END, CASE k WHEN 2 THEN 2.5 ELSE 0 END FROM ta ORDER BY id;
SELECT id, CASE WHEN k = 1 THEN 'one' WHEN k IS NULL THEN NULL ELSE 'many' END, CASE k WHEN 2 THEN 2.5 ELSE 0 END FROM ta CROSS JOIN one ORDER BY id;
SELECT id, mod(k, 2), power(k, 2), trunc(d), lpad(t, 5, '*'), left(t, 1), split_part('a,b,c', ',', id), md5(t) FROM ta ORDER BY id;
SELECT id, mod(k, 2), power(k, 2), trunc(d), lpad(t, 5, '*'), left(t, 1), split_part('a,b,c', ',', id), md5(t) FROM ta CROSS JOIN one ORDER BY id;
SELECT DISTINCT k FROM ta ORDER BY id;
SELECT DISTINCT k FROM ta CROSS JOIN one ORDER BY id;
SELECT k FROM ta UNION SELECT big FROM ta ORDER BY 1;
SELECT k FROM ta CROSS JOIN one UNION SELECT big FROM ta ORDER BY 1;
SELECT k FROM ta EXCEPT ALL SELECT 2 ORDER BY 1;
SELECT k FROM ta CROSS JOIN one EXCEPT ALL SELECT 2 ORDER BY 1;
SELECT 1 UNION SELECT 2.5 ORDER BY 1;
SELECT 1 UNION SELECT 2.5 ORDER BY 1;
