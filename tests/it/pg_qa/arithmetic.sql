-- Overflow of every integer operator (22003), division by zero (22012), failing casts
-- (22P02, 22003) and float range errors, with the column types where they answer.
SELECT 2147483647 * 2;
SELECT (-2147483648)::integer / -1;
SELECT -((-2147483648)::integer);
SELECT abs((-2147483648)::integer);
SELECT (-9223372036854775808)::bigint / -1;
SELECT (-9223372036854775808)::bigint * -1;
SELECT 9223372036854775807 - -1;
SELECT 9223372036854775807 + 1;
SELECT (-32768)::smallint / (-1)::smallint;
SELECT (-32768)::smallint * (-1)::smallint;
SELECT 32767::smallint + 1::smallint;
SELECT 32767::smallint - (-1)::smallint;
SELECT (-2147483648)::integer % -1 AS int_mod, (-9223372036854775808)::bigint % -1 AS bigint_mod;
SELECT 5 % 0;
SELECT 5.0 % 0;
SELECT mod(5, 0);
SELECT 1 / 0;
SELECT 1::bigint / 0::bigint;
SELECT 1::smallint / 0::smallint;
SELECT 1::real / 0;
SELECT 1.0 / 0;
SELECT 0::numeric / 0;
SELECT 1::float8 / 0;
SELECT 1e308::float8 * 10;
SELECT 3.4e38::real * 10;
SELECT 2147483648::integer;
SELECT 1e10::integer;
SELECT 'NaN'::float8::integer;
SELECT 'Infinity'::float8::bigint;
SELECT '9223372036854775808'::bigint;
SELECT 32767.5::smallint;
SELECT 32767.4::smallint AS s, 2.5::integer AS half_up, (-2.5)::integer AS neg, 2.5::float8::integer AS even, 3.5::float8::integer AS odd;
SELECT ''::integer;
SELECT ' '::float8;
SELECT '1.5.5'::numeric;
SELECT 'abc'::boolean;
SELECT '  12  '::integer AS a, '+5'::integer AS b, '-0'::integer AS c;
SELECT 12345.678::numeric(5,2);
SELECT 5::smallint + 1::integer AS sum \gdesc
SELECT 1::smallint * 1::smallint AS product, 1::bigint / 1::smallint AS quotient \gdesc
SELECT 0.1 + 0.2 AS a, 1.10 * 2 AS b, 2.000 / 1 AS c, 10::numeric / 3 AS d, round(2.5) AS e, round(-2.5) AS f, round(2.5::float8) AS g;
SELECT 5.5 % 2 AS a, -5.5 % 2 AS b, 5 % -3 AS c, -5 % 3 AS d;
SELECT trunc(1234.5678, -2) AS a, trunc(-1299.9, -2) AS b, trunc(99, -2) AS c, round(1234.5, -2) AS d, trunc(1234.5678, 2) AS e;
