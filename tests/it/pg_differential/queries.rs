//! The queries of the PostgreSQL differential test: the tables both servers load, the
//! listed families (every aggregate over every column type, scalar functions and operators
//! per type, casts between every pair of types, set operations and the statements users
//! reach for), each over `ta` alone and again with `CROSS JOIN one`, and seeded-random
//! SELECT-WHERE-GROUP BY queries.
//!
//! Every query that returns rows in an order the comparison reads (`ORDER BY`) orders them
//! totally (by `id`, or by every group key), so two correct servers print the same rows in
//! the same order.

/// Statements that create and fill the tables on both servers.
pub const SETUP: &[&str] = &[
    "CREATE TABLE ta (id integer, k integer, s smallint, big bigint, r real, \
     d double precision, n numeric, t text, v varchar(8), b boolean, ts timestamp, \
     tz timestamptz, iv interval)",
    // Every column has a NULL; bigints near 2^62 (four of them overflow a bigint sum);
    // -0.0 beside 0.0; text with multi-byte characters.
    "INSERT INTO ta VALUES \
     (1, 1, 1, 4611686018427387904, 1.5, 2.5, 1.25, 'abc', 'ab', true, '2001-01-01 10:00:00', '2001-01-01 10:00:00+00', '1 hour'), \
     (2, 1, 2, 4611686018427387903, 421.36, -0.0, 2.5, 'ÄÖü', 'xyz', false, '2001-01-02 11:30:00', '2001-01-02 11:30:00+00', '2 days'), \
     (3, 2, NULL, 4611686018427387905, NULL, 0.0, NULL, NULL, NULL, NULL, NULL, NULL, NULL), \
     (4, 2, -3, -4611686018427387904, -2.25, 1e15, 100.125, 'a~b', 'q', true, '2000-02-29 23:59:59', '2000-02-29 23:59:59+00', '-30 minutes'), \
     (5, NULL, 5, 7, 0.5, 3, -7.5, '', '', false, '1999-12-31 00:00:00', '1999-12-31 00:00:00+00', '1 mon'), \
     (6, 3, 32767, NULL, 1e10, -1.5e-7, 0.001, '日本語', '日本', NULL, '2024-06-15 12:34:56.789', '2024-06-15 12:34:56.789+00', '3 days 04:05:06'), \
     (7, 7, -32768, 4611686018427387904, 3.25, -2.5, 99999.99, 'Zebra b', 'zz', true, '2001-01-01 10:00:00', '2001-01-01 10:00:00+00', '00:00:01'), \
     (8, 1, 0, 0, -0.0, 1, 0, 'a b', 'a', false, '2001-03-04 05:06:07', '2001-03-04 05:06:07+00', '1 year 2 mons')",
    "CREATE TABLE one (x integer)",
    "INSERT INTO one VALUES (1)",
    "CREATE TABLE tb (id integer, k integer, label text)",
    "INSERT INTO tb VALUES (1, 1, 'one'), (2, 2, 'two'), (3, NULL, 'none'), (4, 9, 'nine')",
    // Dates, times of day and blank-padded text; a leap day, midnight and 24:00:00.
    "CREATE TABLE td (id integer, dt date, tm time, c char(3))",
    "INSERT INTO td VALUES (1, '2001-01-01', '10:00:00', 'a'), (2, '2000-02-29', '23:59:59.5', 'abc'), \
     (3, NULL, NULL, NULL), (4, '1999-12-31', '00:00:00', ''), (5, '2024-06-15', '24:00:00', 'xy '), \
     (6, '2001-01-01', '12:34:56.789', 'Z')",
    // character(n) keys of another width, with varchar and text beside them: values that
    // differ only in trailing blanks, an empty and an all-blank value, and a NULL.
    "CREATE TABLE tc (id integer, c char(5), v varchar(5), t text)",
    "INSERT INTO tc VALUES (1, 'a', 'a', 'a'), (2, 'a  ', 'a  ', 'a  '), (3, 'xy', 'xy', 'xy'), \
     (4, 'xy ', 'xy ', 'xy '), (5, '', '', ''), (6, ' ', ' ', ' '), (7, NULL, NULL, NULL), \
     (8, 'abc', 'abc ', 'abc')",
    // Numeric NaN beside numbers, wide ones and NULL.
    "CREATE TABLE tn (id integer, n numeric, f double precision)",
    "INSERT INTO tn VALUES (1, 'NaN', 'NaN'), (2, 1.5, 1.5), (3, NULL, NULL), (4, 'nan', -2), \
     (5, -3, 0), (6, 1e40, 1e300)",
    // Columns with fractional-second digits: values are stored rounded (INSERT, COPY, UPDATE).
    "CREATE TABLE tp (id integer, a timestamp(0), b timestamptz(2), c time(1), d timestamp(6), e timestamp(3) without time zone)",
    "INSERT INTO tp VALUES (1, '2001-01-01 10:00:00.5', '2001-01-01 10:00:00.555+00', '23:59:59.96', '2001-01-01 10:00:00.123456', '1999-12-31 23:59:59.9995'), \
     (2, '1960-06-01 00:00:00.5', '1960-06-01 00:00:00.125+00', '12:00:00.05', '2001-01-01 00:00:00.1', '2001-01-01 00:00:00.0005'), \
     (3, 'infinity', '-infinity', NULL, NULL, '2000-01-01 00:00:00.0015')",
    "UPDATE tp SET e = '2010-01-01 00:00:00.9999' WHERE id = 2",
    // Infinite timestamps and dates beside finite ones.
    "CREATE TABLE tinf (id integer, ts timestamp, tz timestamptz, dt date)",
    "INSERT INTO tinf VALUES (1, 'infinity', 'infinity', 'infinity'), \
     (2, '-infinity', '-infinity', '-infinity'), (3, '2001-01-01 10:00', '2001-01-01 10:00+00', '2001-01-01'), \
     (4, NULL, NULL, NULL)",
];

/// The FROM clauses the date family runs over.
const DATE_FROMS: [&str; 2] = ["td", "td CROSS JOIN one"];

/// Expressions over `td`'s date (`dt`), time (`tm`) and char(3) (`c`) columns, each as
/// `SELECT id, expr ... ORDER BY id`.
const DATE_EXPRS: &[&str] = &[
    "dt",
    "dt + 1",
    "1 + dt",
    "dt - 1",
    "dt - '2000-01-01'",
    "dt - '2000-01-01'::date",
    "dt + interval '1 day'",
    "interval '1 hour' + dt",
    "dt - interval '1 hour'",
    "dt + tm",
    "dt < '2001-01-01'",
    "dt = '2001-01-01'",
    "dt >= '2000-06-01 12:00'::timestamp",
    "dt < now()",
    "dt::timestamp",
    "dt::timestamptz",
    "dt::text",
    "dt::char(2)",
    "dt::varchar(4)",
    "pg_typeof(dt)",
    "coalesce(dt, '2000-01-01')",
    "dt BETWEEN '2000-01-01' AND '2001-01-01'",
    "dt IN ('2001-01-01', '1999-12-31')",
    "extract(year from dt)",
    "date_part('day', dt)",
    "date_trunc('month', dt)",
    "greatest(dt, '2001-01-01')",
    "CASE WHEN dt > '2000-12-31' THEN dt END",
    "tm",
    "tm + interval '1 hour'",
    "interval '90 minutes' + tm",
    "tm - interval '30 minutes'",
    "tm - '10:00'",
    "tm - '10:00'::time",
    "tm < '12:00'",
    "tm = '24:00'",
    "tm::text",
    "tm::interval",
    "tm::char(5)",
    "pg_typeof(tm)",
    "c",
    "c = 'a'",
    "c::char(2)",
    "c::char(5)",
    "c::text",
    "c::varchar(5)",
    "c || '|'",
    "length(c)",
    "octet_length(c)",
    "c IN ('a', 'x')",
    "c NOT IN ('b', 'abc')",
    "c IS DISTINCT FROM 'a'",
    "CASE c WHEN 'a' THEN 1 ELSE 0 END",
    "c LIKE 'a%'",
    "c LIKE 'a'",
    "coalesce(c, 'zz') || '|'",
    "to_char(dt, 'YYYY-MM-DD HH24:MI')",
    "age(dt, '2000-01-01')",
    "upper(c)",
    "c = 'a  '",
    "c < 'b'",
    "pg_typeof(c)",
    "dt::integer",
    "tm::date",
    "dt::time",
    "dt::interval",
];

/// The date family over `td`, alone and with `CROSS JOIN one`: each expression, the
/// aggregates dates and times have, grouping, DISTINCT and ordering by them.
fn dates(out: &mut Vec<String>) {
    for from in DATE_FROMS {
        for e in DATE_EXPRS {
            out.push(format!("SELECT id, {e} FROM {from} ORDER BY id"));
        }
        for q in [
            "SELECT min(dt), max(dt), count(dt), min(tm), max(tm), count(tm) FROM {F}",
            "SELECT dt, count(*) FROM {F} GROUP BY dt ORDER BY 1",
            "SELECT tm, min(dt) FROM {F} GROUP BY tm ORDER BY 1 DESC",
            "SELECT DISTINCT dt FROM {F} ORDER BY 1",
            "SELECT id, dt, tm FROM {F} ORDER BY dt, tm DESC, id",
            "SELECT id FROM {F} WHERE dt > '2000-01-01' AND tm < '23:00' ORDER BY id",
            "SELECT array_agg(dt ORDER BY id), array_agg(tm ORDER BY id) FROM {F}",
            "SELECT string_agg(dt::text, ',' ORDER BY dt) FROM {F}",
            "SELECT * FROM {F} ORDER BY id",
            "SELECT max(c), min(c) || '|', pg_typeof(min(c)) FROM {F}",
            "SELECT c, count(*) FROM {F} GROUP BY c ORDER BY 1",
        ] {
            out.push(q.replace("{F}", from));
        }
    }
    for q in [
        "SELECT id, ts, tz, dt FROM tinf ORDER BY id",
        "SELECT id FROM tinf ORDER BY ts, id",
        "SELECT id FROM tinf ORDER BY tz DESC, id",
        "SELECT id FROM tinf ORDER BY dt NULLS FIRST, id",
        "SELECT min(ts), max(ts), min(tz), max(tz), min(dt), max(dt) FROM tinf",
        "SELECT id, ts > '2001-01-01', tz < '2001-01-01', dt = 'infinity' FROM tinf ORDER BY id",
        "SELECT id, ts + interval '1 day', tz - interval '1 hour' FROM tinf ORDER BY id",
        "SELECT id, ts::date, dt::timestamp, tz::timestamp, ts::timestamptz FROM tinf ORDER BY id",
        "SELECT id, ts::text, dt + 1 FROM tinf ORDER BY id",
        "SELECT id FROM tinf WHERE ts = 'infinity' OR dt = '-infinity' ORDER BY id",
        "SELECT 'infinity'::date, '-infinity'::date, 'infinity'::timestamptz, '-infinity'::timestamptz",
        "SELECT 'infinity'::timestamp > '2001-01-01', '-infinity'::timestamp < '1000-01-01', 'infinity'::timestamp + interval '1 day'",
        "SELECT '+infinity'::timestamp, 'INFINITY'::timestamp, '-Infinity'::date",
        "SELECT 'infinity'::timestamp - '2001-01-01'::timestamp",
        "SELECT 'infinity'::date - '2001-01-01'::date",
        "SELECT date '2001-01-01' + time '10:00', date '2001-01-01' - 1, date '2001-03-01' - date '2001-02-01'",
        "SELECT timestamp '2001-01-01 10:00' - date '2001-01-01', date '2001-01-02' - timestamp '2001-01-01 10:00'",
        "SELECT '2001-01-01 10:30'::date, ' 2001-02-03 '::date, '2001-01-01 23:00+05'::timestamptz::date",
        "SELECT '1 day 02:00'::interval::time, '10:00'::time::interval, '10:00'::time - '09:00'::time",
        "SELECT time '23:30' + interval '1 hour', time '00:30' - interval '1 hour', time '10:00' + interval '1 day 2 hours'",
        "SELECT '10:00:05.123456'::time, '24:00'::time, '2001-01-01 04:05:06'::time",
        "SELECT 1::date",
        "SELECT 1.5::date",
        "SELECT true::date",
        "SELECT '1 day'::interval::date",
        "SELECT date '2001-01-01' + 1.5",
        "SELECT date '2001-01-01' + date '2001-01-01'",
        "SELECT '2001-02-30'::date",
        "SELECT 'nope'::date",
        "SELECT 'x'::time",
        "SELECT '25:00'::time",
        "SELECT 'a'::char(3), 'abc'::char(3), 'abcd'::char, 'ab'::bpchar, 'abc'::character(2)",
        "SELECT pg_typeof('a'::char(3)), pg_typeof('a'::bpchar), pg_typeof(date '2001-01-01'), pg_typeof(time '10:00')",
        "SELECT 'abc'::varchar(2), 'abc'::char(2), 'a'::char(3)",
        "SELECT extract(year from date '2001-02-03'), date_part('month', date '2001-02-03'), date_trunc('year', date '2001-02-03')",
        "SELECT date_trunc('day', 'infinity'::timestamp), date_part('year', '-infinity'::timestamp), date_part('hour', 'infinity'::timestamptz), 'infinity'::timestamp::time",
        "SELECT '2001-01-01'::date::text, '10:00'::time::varchar, ('x'::char(2))::text",
        "SELECT '2001-01-01'::date + 2145031582, '4714-11-24 BC'::date",
        "SELECT '2001-01-01'::date + 2145031583",
        "SELECT '4714-11-24 BC'::date - 1",
        "SELECT ('2001-01-01'::date + 2145031582)::timestamp",
        "SELECT '10:00 PM'::time, '12:30 am'::time, '10:00:00+02'::time, 'allballs'::time, ' 1:2:3 '::time",
        "SELECT '13:00 PM'::time",
        "SELECT '10:00 tomorrow'::time",
        "SELECT '2001-1-2'::date, '20010102'::date, 'epoch'::date",
        "SELECT current_date = now()::date, pg_typeof(current_date), current_date > '2000-01-01'",
        "SELECT id, dt < current_date, current_date - dt > 0 FROM td ORDER BY id",
        "SELECT id, dt < current_date FROM td CROSS JOIN one ORDER BY id",
    ] {
        out.push(q.to_string());
    }
}

/// Joins, semi-joins and groupings on `character(n)` keys (PostgreSQL's bpchar comparison
/// ignores trailing blanks; beside text the blank-padded value loses its padding and
/// compares as text; beside varchar it compares as bpchar), over `td.c` (char(3)) and `tc`.
const CHAR_KEY_QUERIES: &[&str] = &[
    "SELECT td.id, tc.id FROM td JOIN tc ON td.c = tc.c ORDER BY 1, 2",
    "SELECT td.id, tc.id FROM td JOIN tc ON tc.c = td.c ORDER BY 1, 2",
    "SELECT td.id, tc.id FROM td, tc WHERE td.c = tc.c ORDER BY 1, 2",
    "SELECT td.id, tc.id FROM td LEFT JOIN tc ON td.c = tc.c ORDER BY 1, 2",
    "SELECT td.id, tc.id FROM td RIGHT JOIN tc ON td.c = tc.c ORDER BY 1, 2",
    "SELECT td.id, tc.id FROM td FULL JOIN tc ON td.c = tc.c ORDER BY 1, 2",
    "SELECT td.id, tc.id FROM td JOIN tc USING (c) ORDER BY 1, 2",
    "SELECT c, td.id, tc.id FROM td JOIN tc USING (c) ORDER BY 2, 3",
    "SELECT td.id, tc.id FROM td JOIN tc ON td.c = tc.c AND tc.id > 1 ORDER BY 1, 2",
    "SELECT td.id, tc.id FROM td JOIN tc ON td.c = tc.t ORDER BY 1, 2",
    "SELECT td.id, tc.id FROM td JOIN tc ON tc.t = td.c ORDER BY 1, 2",
    "SELECT td.id, tc.id FROM td JOIN tc ON td.c = tc.v ORDER BY 1, 2",
    "SELECT td.id, tc.id FROM td JOIN tc ON td.c::text = tc.t ORDER BY 1, 2",
    "SELECT a.id, b.id FROM tc a JOIN tc b ON a.c = b.c ORDER BY 1, 2",
    "SELECT a.id, b.id FROM tc a JOIN tc b ON a.c = b.t ORDER BY 1, 2",
    "SELECT a.id, b.id FROM tc a JOIN tc b ON a.c = b.v ORDER BY 1, 2",
    "SELECT a.id, b.id FROM tc a JOIN tc b ON a.v = b.t ORDER BY 1, 2",
    "SELECT td.id FROM td WHERE c IN (SELECT c FROM tc) ORDER BY 1",
    "SELECT td.id FROM td WHERE c IN (SELECT t FROM tc) ORDER BY 1",
    "SELECT td.id FROM td WHERE c NOT IN (SELECT c FROM tc WHERE c IS NOT NULL) ORDER BY 1",
    "SELECT td.id FROM td WHERE EXISTS (SELECT 1 FROM tc WHERE tc.c = td.c) ORDER BY 1",
    "SELECT td.id FROM td WHERE c = ANY (SELECT c FROM tc) ORDER BY 1",
    "SELECT td.id, td.c = 'a', td.c = 'a    ' FROM td ORDER BY 1",
    "SELECT id, c = v, c = t, v = t FROM tc ORDER BY 1",
    "SELECT c, count(*) FROM tc GROUP BY c ORDER BY 1",
    "SELECT DISTINCT c FROM tc ORDER BY 1",
    "SELECT c FROM td UNION SELECT c FROM tc ORDER BY 1",
    "SELECT c FROM td INTERSECT SELECT c FROM tc ORDER BY 1",
    "SELECT count(DISTINCT c) FROM tc",
];

/// The two FROM clauses every family runs over: one table, and a join with a one-row table.
const FROMS: [&str; 2] = ["ta", "ta CROSS JOIN one"];

#[derive(Clone, Copy, PartialEq)]
enum Kind {
    Int,
    Float,
    Numeric,
    Text,
    Bool,
    Time,
    Interval,
}

const COLUMNS: &[(&str, Kind)] = &[
    ("k", Kind::Int),
    ("s", Kind::Int),
    ("big", Kind::Int),
    ("r", Kind::Float),
    ("d", Kind::Float),
    ("n", Kind::Numeric),
    ("t", Kind::Text),
    ("v", Kind::Text),
    ("b", Kind::Bool),
    ("ts", Kind::Time),
    ("tz", Kind::Time),
    ("iv", Kind::Interval),
];

fn is_number(k: Kind) -> bool {
    matches!(k, Kind::Int | Kind::Float | Kind::Numeric)
}

const AGGREGATES: &[&str] = &[
    "count",
    "sum",
    "avg",
    "min",
    "max",
    "stddev",
    "stddev_samp",
    "stddev_pop",
    "variance",
    "var_samp",
    "var_pop",
    "bool_and",
    "bool_or",
    "every",
    "bit_and",
    "bit_or",
    "bit_xor",
];

/// Every aggregate over every column, alone, grouped, DISTINCT and with FILTER.
fn aggregates(from: &str, out: &mut Vec<String>) {
    for agg in AGGREGATES {
        for (c, _) in COLUMNS {
            out.push(format!("SELECT {agg}({c}) FROM {from}"));
            out.push(format!(
                "SELECT k, {agg}({c}) FROM {from} GROUP BY k ORDER BY 1"
            ));
        }
    }
    for agg in ["count", "sum", "avg", "min", "max"] {
        for (c, _) in COLUMNS {
            out.push(format!("SELECT {agg}(DISTINCT {c}) FROM {from}"));
        }
    }
    for (c, _) in COLUMNS {
        out.push(format!("SELECT array_agg({c} ORDER BY id) FROM {from}"));
        out.push(format!(
            "SELECT string_agg({c}::text, ',' ORDER BY id) FROM {from}"
        ));
    }
    for q in [
        "SELECT count(*) FROM {F}",
        "SELECT k, count(*) FROM {F} GROUP BY k ORDER BY 1",
        "SELECT count(*) FILTER (WHERE b) FROM {F}",
        "SELECT sum(k) FILTER (WHERE k > 1), avg(d) FILTER (WHERE t IS NOT NULL) FROM {F}",
        "SELECT k, count(*) FILTER (WHERE b), max(t) FILTER (WHERE id > 2) FROM {F} GROUP BY k ORDER BY 1",
        "SELECT string_agg(t, ', ' ORDER BY t DESC) FROM {F}",
        "SELECT string_agg(DISTINCT v, ',' ORDER BY v) FROM {F}",
        "SELECT array_agg(DISTINCT k ORDER BY k) FROM {F}",
        "SELECT sum(big), avg(big), sum(big) / count(big) FROM {F}",
        "SELECT sum(k) + 1, avg(k) * 2, max(k) - min(k), count(*) + count(k) FROM {F}",
        "SELECT k, sum(d) FROM {F} GROUP BY k HAVING sum(d) > 0 ORDER BY 1",
        "SELECT b, count(*), min(ts), max(tz) FROM {F} GROUP BY b ORDER BY 1",
        "SELECT d, count(*) FROM {F} GROUP BY d ORDER BY 1",
        "SELECT DISTINCT d FROM {F} ORDER BY 1",
        "SELECT count(DISTINCT d) FROM {F}",
        "SELECT r, count(*) FROM {F} GROUP BY r ORDER BY 1",
    ] {
        out.push(q.replace("{F}", from));
    }
}

/// Scalar expressions per kind of operand (`{c}`), each as `SELECT id, expr ... ORDER BY id`.
const NUMBER_EXPRS: &[&str] = &[
    "abs({c})",
    "-{c}",
    "+{c}",
    "round({c})",
    "round({c}, 1)",
    "ceil({c})",
    "ceiling({c})",
    "floor({c})",
    "trunc({c})",
    "sign({c})",
    "sqrt(abs({c}))",
    "{c} + 1",
    "{c} - 1.5",
    "{c} * 2",
    "{c} / 3",
    "{c} / 2.0",
    "{c} % 3",
    "mod({c}, 3)",
    "power({c}, 2)",
    "{c} ^ 2",
    "greatest({c}, 0)",
    "least({c}, 1, 2)",
    "coalesce({c}, 0)",
    "nullif({c}, 1)",
    "pg_typeof({c})",
    "{c}::text",
    "{c} = 1",
    "{c} <> 2",
    "{c} < 2",
    "{c} >= 0",
    "{c} BETWEEN 0 AND 5",
    "{c} NOT BETWEEN 0 AND 5",
    "{c} IN (1, 2, 3)",
    "{c} NOT IN (1, 7)",
    "{c} IS NULL",
    "{c} IS DISTINCT FROM 1",
    "{c} & 3",
    "{c} | 1",
    "{c} # 5",
    "~{c}",
    "{c} << 1",
    "{c} >> 1",
    "exp({c} / 1e20)",
    "ln(abs({c}) + 1)",
    "log(abs({c}) + 1)",
    "to_char({c}, '999D99')",
    "{c} + {c}",
    "{c} * 1.5",
    "{c} + 0.5",
    "{c}::float8 / 7",
    "CASE WHEN {c} > 1 THEN {c} ELSE 0 END",
    "width_bucket({c}, 0, 10, 5)",
];

const TEXT_EXPRS: &[&str] = &[
    "lower({c})",
    "upper({c})",
    "length({c})",
    "char_length({c})",
    "octet_length({c})",
    "substr({c}, 2)",
    "substr({c}, 2, 1)",
    "substring({c} from 2 for 2)",
    "left({c}, 2)",
    "right({c}, 2)",
    "lpad({c}, 6, '*')",
    "rpad({c}, 6, '.')",
    "reverse({c})",
    "replace({c}, 'a', 'A')",
    "split_part({c}, ' ', 1)",
    "md5({c})",
    "btrim({c})",
    "ltrim({c}, 'a')",
    "rtrim({c})",
    "trim(both 'a' from {c})",
    "concat({c}, '!')",
    "concat_ws('-', {c}, id)",
    "{c} || '!'",
    "{c} || id",
    "position('b' in {c})",
    "strpos({c}, 'b')",
    "initcap({c})",
    "repeat({c}, 2)",
    "starts_with({c}, 'a')",
    "{c} LIKE 'a%'",
    "{c} ILIKE '%B%'",
    "{c} NOT LIKE '%b'",
    "{c} ~ 'b'",
    "{c} ~* 'B'",
    "{c} !~ 'b'",
    "{c} SIMILAR TO 'a%'",
    "quote_ident({c})",
    "quote_literal({c})",
    "ascii({c})",
    "coalesce({c}, 'none')",
    "nullif({c}, 'abc')",
    "{c} = 'abc'",
    "{c} < 'b'",
    "{c} IN ('abc', 'q')",
    "pg_typeof({c})",
    "length({c}::text)",
    "{c}::varchar(2)",
    "{c} > {c}",
    "to_hex(id * 255)",
    "chr(65 + id)",
    "upper({c}) || lower({c})",
    "CASE {c} WHEN 'abc' THEN 1 WHEN 'q' THEN 2 ELSE 0 END",
    "regexp_replace({c}, 'b', 'B')",
];

const BOOL_EXPRS: &[&str] = &[
    "NOT {c}",
    "{c} AND true",
    "{c} OR false",
    "{c} IS TRUE",
    "{c} IS NOT FALSE",
    "{c} IS UNKNOWN",
    "{c}::integer",
    "{c}::text",
    "coalesce({c}, false)",
    "pg_typeof({c})",
    "{c} = true",
    "{c} AND k > 1",
    "CASE WHEN {c} THEN 'y' ELSE 'n' END",
];

const TIME_EXPRS: &[&str] = &[
    "date_trunc('day', {c})",
    "date_trunc('month', {c})",
    "date_trunc('hour', {c})",
    "date_trunc('year', {c})",
    "extract(year from {c})",
    "extract(epoch from {c})",
    "extract(dow from {c})",
    "extract(second from {c})",
    "date_part('minute', {c})",
    "date_part('epoch', {c})",
    "{c} + interval '1 day'",
    "{c} - interval '1 hour'",
    "{c} - '2000-01-01 00:00:00'",
    "{c}::date",
    "{c}::time",
    "to_char({c}, 'YYYY-MM-DD HH24:MI')",
    "age({c}, '2000-01-01')",
    "date_bin('15 minutes', {c}, '2000-01-01')",
    "{c} > '2001-01-01'",
    "{c}::text",
    "pg_typeof({c})",
    "{c} AT TIME ZONE 'UTC'",
    "{c} AT TIME ZONE 'America/New_York'",
    "{c} + iv",
    "{c} BETWEEN '2000-01-01' AND '2001-12-31'",
    "greatest({c}, '2001-01-01')",
    "{c} = '2001-01-01 10:00:00'",
];

const INTERVAL_EXPRS: &[&str] = &[
    "extract(epoch from {c})",
    "{c} * 2",
    "{c} / 2",
    "-{c}",
    "{c} + interval '1 hour'",
    "date_part('day', {c})",
    "{c}::text",
    "justify_hours({c})",
    "date_trunc('hour', {c})",
    "pg_typeof({c})",
    "{c} > '1 hour'",
    "{c} = '60 minutes'",
    "{c} * 1.5",
];

fn scalars(from: &str, out: &mut Vec<String>) {
    for (c, kind) in COLUMNS {
        let exprs = match kind {
            Kind::Int | Kind::Float | Kind::Numeric => NUMBER_EXPRS,
            Kind::Text => TEXT_EXPRS,
            Kind::Bool => BOOL_EXPRS,
            Kind::Time => TIME_EXPRS,
            Kind::Interval => INTERVAL_EXPRS,
        };
        for e in exprs {
            let e = e.replace("{c}", c);
            out.push(format!("SELECT id, {e} FROM {from} ORDER BY id"));
        }
    }
    for q in [
        "SELECT id, k + s, k * big, s * s, k / s, d / r, n / 3, k + d, k + n, r + d, n * d FROM {F} ORDER BY id",
        "SELECT id, k::numeric / 3, big::numeric * 3, n / 7 FROM {F} ORDER BY id",
        "SELECT id, coalesce(k, s, 0), coalesce(n, d), coalesce(t, v), greatest(k, s, 0), least(n, 2) FROM {F} ORDER BY id",
        "SELECT id, CASE WHEN k = 1 THEN 'one' WHEN k IS NULL THEN NULL ELSE 'many' END FROM {F} ORDER BY id",
        "SELECT id, CASE k WHEN 2 THEN 2.5 ELSE 0 END, CASE WHEN b THEN k ELSE big END FROM {F} ORDER BY id",
        "SELECT id, t || v, t || k, k || t, concat(t, k, b, d, n, ts, iv) FROM {F} ORDER BY id",
        "SELECT id, ts - ts, tz - tz, ts + iv, tz - iv, ts::timestamptz, tz::timestamp FROM {F} ORDER BY id",
        "SELECT id, 1 + 1, 1 + 1.0, 2 * 3.5, 7 / 2, 7 / 2.0, -7 % 3, 2 ^ 10 FROM {F} ORDER BY id",
        "SELECT pg_typeof(1 + 1.0), pg_typeof(1::smallint + 1), pg_typeof(1.5::real * 2), pg_typeof('a'::text || 1) FROM {F}",
        "SELECT id, (k, s) = (1, 1), k IS NOT DISTINCT FROM s FROM {F} ORDER BY id",
        "SELECT id, (k, s) <> (1, 1), (k, s) < (2, 1), (k, s) <= (1, NULL), (k, t) > (1, 'a'), (s, k, d) >= (1, 1, 0) FROM {F} ORDER BY id",
        "SELECT id, 'x' || NULL, NULL::integer + 1, NULLIF(NULL, 1) FROM {F} ORDER BY id",
        "SELECT id, random() < 2, clock_timestamp() > '2000-01-01', now() > '2000-01-01' FROM {F} ORDER BY id",
        "SELECT id, current_user IS NOT NULL, current_database() IS NOT NULL, version() LIKE 'PostgreSQL%' FROM {F} ORDER BY id",
    ] {
        out.push(q.replace("{F}", from));
    }
}

const CAST_TARGETS: &[&str] = &[
    "smallint",
    "integer",
    "bigint",
    "real",
    "double precision",
    "numeric",
    "numeric(6,2)",
    "text",
    "varchar(3)",
    "boolean",
    "timestamp",
    "timestamptz",
    "interval",
    "date",
    "char(2)",
];

fn casts(from: &str, out: &mut Vec<String>) {
    for (c, _) in COLUMNS {
        for t in CAST_TARGETS {
            out.push(format!("SELECT id, {c}::{t} FROM {from} ORDER BY id"));
        }
    }
}

/// Statements users reach for beyond the families: set operations, DISTINCT, ordering and
/// paging, the errors PostgreSQL gives for ill-formed ones, and what clients send.
fn others(out: &mut Vec<String>) {
    for q in [
        "SELECT 1 UNION SELECT 2.5 ORDER BY 1",
        "SELECT 1 UNION ALL SELECT 1 ORDER BY 1",
        "SELECT k FROM ta UNION SELECT big FROM ta ORDER BY 1",
        "SELECT k FROM ta UNION ALL SELECT s FROM ta ORDER BY 1",
        "SELECT k FROM ta INTERSECT SELECT s FROM ta ORDER BY 1",
        "SELECT k FROM ta INTERSECT ALL SELECT k FROM ta ORDER BY 1",
        "SELECT k FROM ta EXCEPT SELECT 2 ORDER BY 1",
        "SELECT k FROM ta EXCEPT ALL SELECT 2 ORDER BY 1",
        "SELECT k FROM ta EXCEPT ALL SELECT k FROM tb ORDER BY 1",
        "SELECT d FROM ta UNION SELECT 0 ORDER BY 1",
        "SELECT t FROM ta UNION SELECT v FROM ta ORDER BY 1",
        "SELECT n FROM ta UNION SELECT k FROM ta ORDER BY 1",
        "SELECT 'a' UNION SELECT 'b' ORDER BY 1",
        "SELECT NULL UNION SELECT 1 ORDER BY 1",
        "SELECT DISTINCT k FROM ta ORDER BY id",
        "SELECT DISTINCT k FROM ta ORDER BY 1",
        "SELECT DISTINCT k, b FROM ta ORDER BY 1, 2",
        "SELECT DISTINCT ON (k) k, id FROM ta ORDER BY k, id",
        "SELECT id FROM ta ORDER BY id FETCH FIRST 3 ROWS ONLY",
        "SELECT id FROM ta ORDER BY id OFFSET 2 ROWS FETCH NEXT 2 ROWS ONLY",
        "SELECT id FROM ta CROSS JOIN one ORDER BY id FETCH FIRST 3 ROWS ONLY",
        "SELECT id FROM ta CROSS JOIN one ORDER BY id OFFSET 2 ROWS FETCH NEXT 2 ROWS ONLY",
        "SELECT id FROM ta ORDER BY id FETCH FIRST ROW ONLY",
        "SELECT count(*) FROM (SELECT id FROM ta FETCH FIRST 2 ROWS ONLY) s",
        "SELECT id FROM ta ORDER BY id LIMIT 1 FETCH FIRST 2 ROWS ONLY",
        "SELECT (1, 2) = (1, 2, 3)",
        // A subquery in a CASE branch not taken runs not (and raises nothing), as
        // PostgreSQL runs it only when the branch is reached.
        "SELECT id, CASE WHEN id < 0 THEN (SELECT 1 / (k - k) FROM tb WHERE id = 1) ELSE id END FROM ta ORDER BY 1",
        "SELECT id, CASE WHEN k > 100 THEN (SELECT ta.id / 0 FROM one) ELSE k END FROM ta ORDER BY id",
        "SELECT id, CASE WHEN k IS NULL THEN (SELECT ta.id / 0 FROM one) ELSE k END FROM ta ORDER BY id",
        "SELECT id, coalesce(k, (SELECT ta.id / 0 FROM one)) FROM ta WHERE k IS NOT NULL ORDER BY id",
        "SELECT id, (SELECT x FROM one) IS NOT NULL AND b IS NOT FALSE, k IN (1, (SELECT x + 1 FROM one)) FROM ta ORDER BY id",
        "SELECT id FROM ta WHERE (k, s) = (1, 1) ORDER BY id",
        "SELECT id FROM ta ORDER BY id LIMIT 3 OFFSET 2",
        "SELECT id, t FROM ta ORDER BY t NULLS FIRST, id",
        "SELECT id, d FROM ta ORDER BY d DESC, id",
        "SELECT id, r FROM ta ORDER BY r DESC NULLS LAST, id",
        "SELECT id, k FROM ta ORDER BY k, id DESC",
        "SELECT id FROM ta NATURAL JOIN tb ORDER BY id",
        "SELECT id, k, label FROM ta NATURAL JOIN tb ORDER BY id",
        "SELECT id, label FROM ta NATURAL LEFT JOIN tb ORDER BY id",
        "SELECT id, x FROM ta NATURAL JOIN one ORDER BY id",
        "SELECT id, label FROM ta CROSS JOIN one NATURAL JOIN tb ORDER BY id",
        "SELECT count(*) FROM ta NATURAL JOIN ta t2",
        "SELECT ta.id, label FROM ta JOIN tb USING (id) ORDER BY 1",
        "SELECT ta.id, tb.label FROM ta LEFT JOIN tb ON ta.k = tb.k ORDER BY 1, 2",
        "SELECT id FROM ta JOIN tb ON ta.k = tb.k ORDER BY 1",
        "SELECT k FROM ta JOIN tb ON ta.id = tb.id ORDER BY 1",
        "SELECT ta.k, count(*) FROM ta JOIN tb ON ta.k = tb.k GROUP BY ta.k ORDER BY 1",
        "SELECT id, row_number() OVER (ORDER BY id) FROM ta ORDER BY id",
        "SELECT id, rank() OVER (ORDER BY k) FROM ta ORDER BY id",
        "SELECT id, dense_rank() OVER (ORDER BY k) FROM ta ORDER BY id",
        "SELECT id, sum(k) OVER (PARTITION BY b) FROM ta ORDER BY id",
        "SELECT id, count(*) OVER () FROM ta ORDER BY id",
        "SELECT id, lag(k) OVER (ORDER BY id), lead(k) OVER (ORDER BY id) FROM ta ORDER BY id",
        "SELECT id, first_value(t) OVER (ORDER BY id) FROM ta ORDER BY id",
        "SELECT id, sum(k) OVER (ORDER BY id) FROM ta ORDER BY id",
        "SELECT id, rank() OVER (PARTITION BY b ORDER BY k DESC NULLS LAST), dense_rank() OVER (PARTITION BY b ORDER BY k) FROM ta ORDER BY id",
        "SELECT id, last_value(t) OVER (ORDER BY k, id), first_value(k) OVER (PARTITION BY b ORDER BY id DESC) FROM ta ORDER BY id",
        "SELECT id, lag(big, 2) OVER (ORDER BY id), lead(n, 1, 0) OVER (ORDER BY id), lag(t, 1, 'none') OVER (PARTITION BY b ORDER BY id) FROM ta ORDER BY id",
        "SELECT id, avg(k) OVER (PARTITION BY b ORDER BY k), min(t) OVER (ORDER BY k), max(big) OVER () FROM ta ORDER BY id",
        "SELECT id, sum(big) OVER (ORDER BY k), sum(r) OVER (PARTITION BY b), count(k) OVER (ORDER BY k) FROM ta ORDER BY id",
        "SELECT id, count(*) FILTER (WHERE b) OVER (ORDER BY id), string_agg(t, ',') OVER (ORDER BY id) FROM ta ORDER BY id",
        "SELECT b, count(*), sum(count(*)) OVER (), rank() OVER (ORDER BY count(*) DESC) FROM ta GROUP BY b ORDER BY b",
        "SELECT count(*), count(*) OVER () FROM ta",
        "SELECT id, row_number() OVER (PARTITION BY k ORDER BY id) FROM ta CROSS JOIN one ORDER BY id",
        "SELECT id, sum(k) OVER (ORDER BY id ROWS BETWEEN 1 PRECEDING AND CURRENT ROW) FROM ta ORDER BY id",
        "SELECT id, sum(k) OVER (ORDER BY id ROWS BETWEEN 1 PRECEDING AND 1 FOLLOWING), avg(n) OVER (ORDER BY id ROWS 2 PRECEDING) FROM ta ORDER BY id",
        "SELECT id, count(*) OVER (PARTITION BY b ORDER BY id ROWS BETWEEN CURRENT ROW AND UNBOUNDED FOLLOWING), max(t) OVER (ORDER BY id ROWS BETWEEN 2 FOLLOWING AND 3 FOLLOWING) FROM ta ORDER BY id",
        "SELECT id, sum(k) OVER (ORDER BY k RANGE BETWEEN CURRENT ROW AND UNBOUNDED FOLLOWING), sum(k) OVER (ORDER BY k, id RANGE BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING) FROM ta ORDER BY id",
        "SELECT id, sum(id) OVER (ORDER BY k GROUPS BETWEEN 1 PRECEDING AND CURRENT ROW), count(*) OVER (ORDER BY b GROUPS BETWEEN CURRENT ROW AND 1 FOLLOWING) FROM ta ORDER BY id",
        "SELECT id, first_value(id) OVER (ORDER BY id ROWS BETWEEN 1 FOLLOWING AND 2 FOLLOWING), last_value(id) OVER (ORDER BY id ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING), nth_value(id, 2) OVER (ORDER BY id ROWS 1 PRECEDING) FROM ta ORDER BY id",
        "SELECT id, string_agg(t, ',') OVER (ORDER BY id ROWS BETWEEN 1 PRECEDING AND 1 FOLLOWING) FROM ta ORDER BY id",
        "SELECT id, sum(k) OVER (ORDER BY id ROWS BETWEEN -1 PRECEDING AND CURRENT ROW) FROM ta ORDER BY id",
        "SELECT id, sum(k) OVER (ORDER BY id ROWS BETWEEN UNBOUNDED FOLLOWING AND CURRENT ROW) FROM ta ORDER BY id",
        "SELECT id, sum(k) OVER (ORDER BY id ROWS BETWEEN CURRENT ROW AND 1 PRECEDING) FROM ta ORDER BY id",
        "SELECT id, sum(k) OVER (ORDER BY k RANGE BETWEEN 1 PRECEDING AND CURRENT ROW) FROM ta ORDER BY id",
        "SELECT id, ntile(3) OVER (ORDER BY id), ntile(4) OVER (PARTITION BY b ORDER BY id) FROM ta ORDER BY id",
        "SELECT id, percent_rank() OVER (ORDER BY k), cume_dist() OVER (PARTITION BY b ORDER BY k) FROM ta ORDER BY id",
        "SELECT id, nth_value(t, 2) OVER (ORDER BY id) FROM ta ORDER BY id",
        "SELECT id, ntile(0) OVER (ORDER BY id) FROM ta ORDER BY id",
        "SELECT id, lag(k, 2147483647) OVER (ORDER BY id), lead(k, -2147483647, 0) OVER (ORDER BY id), nth_value(id, 2147483647) OVER () FROM ta ORDER BY id",
        "SELECT id, lag(k, 9223372036854775807) OVER (ORDER BY id) FROM ta ORDER BY id",
        "SELECT id, ntile(2.5) OVER (ORDER BY id) FROM ta ORDER BY id",
        "SELECT id, sum(rank() OVER (ORDER BY id)) OVER () FROM ta ORDER BY id",
        "SELECT id, rank(k) OVER (ORDER BY id) FROM ta ORDER BY id",
        "SELECT id FROM ta WHERE rank() OVER (ORDER BY id) > 1",
        "SELECT * FROM unnest(current_schemas(true))",
        "SELECT nspname FROM pg_namespace WHERE nspname = ANY(current_schemas(true)) ORDER BY 1",
        "SELECT unnest(ARRAY[1, 2, 3])",
        "SELECT generate_series(1, 3)",
        "SELECT * FROM generate_series(1, 5) g WHERE g > 2",
        "SELECT -0.0::float8, 0.0::float8 = -0.0::float8, '-0'::float8",
        "SELECT 1::float8 / 3, 1e300 * 10, 0.1::real + 0.2::real",
        "SELECT 9223372036854775807 + 1",
        "SELECT 2147483647 + 1",
        "SELECT 32767::smallint + 1::smallint",
        "SELECT 1 / 0",
        "SELECT 1.0 / 0",
        "SELECT 1::float8 / 0",
        "SELECT 'abc'::integer",
        "SELECT '2001-02-30'::timestamp",
        "SELECT sqrt(-1)",
        "SELECT ln(0)",
        "SELECT k FROM ta CROSS JOIN tb",
        "SELECT id FROM ta, tb WHERE ta.k = tb.k",
        "SELECT nosuch FROM ta",
        "SELECT k FROM nosuch",
        "SELECT sum(t) FROM ta",
        "SELECT avg(b) FROM ta",
        "SELECT k, count(*) FROM ta GROUP BY 1 HAVING k > 1 ORDER BY 1",
        "SELECT k, t FROM ta GROUP BY k ORDER BY 1",
        "SELECT count(*) FROM ta WHERE count(*) > 1",
        "SELECT id, k FROM ta WHERE k > (SELECT avg(k) FROM ta) ORDER BY id",
        "SELECT id FROM ta WHERE k IN (SELECT k FROM tb) ORDER BY id",
        "SELECT id FROM ta WHERE EXISTS (SELECT 1 FROM tb WHERE tb.k = ta.k) ORDER BY id",
        "SELECT (SELECT count(*) FROM tb), count(*) FROM ta",
        "WITH w AS (SELECT k, count(*) AS c FROM ta GROUP BY k) SELECT * FROM w ORDER BY 1",
        "SELECT * FROM (SELECT k, sum(d) FROM ta GROUP BY k) sub ORDER BY 1",
        "VALUES (1, 'a'), (2, 'b')",
        "SELECT * FROM (VALUES (1, 2.5), (2, 3)) v(a, b) ORDER BY 1",
        "SELECT CAST(k AS text) || '-' || CAST(id AS varchar) FROM ta ORDER BY id",
        "SELECT ARRAY[k, s] FROM ta ORDER BY id",
        "SELECT id FROM ta WHERE k = ANY(ARRAY[1, 2]) ORDER BY id",
        "SELECT id, k = ANY(ARRAY[1, 2.5]), k <> ALL(ARRAY[k, NULL]), t = ANY(ARRAY['a', t]), d > ALL(ARRAY[1, 2]) FROM ta ORDER BY id",
        "SELECT ta.id, k >= SOME(ARRAY[x, 2]), n < ALL(ARRAY[r, 50]) FROM ta CROSS JOIN one ORDER BY 1",
        "SELECT id, c = ANY(ARRAY['a', 'xy']), c <> ALL(ARRAY['abc']) FROM td ORDER BY id",
        "SELECT 1 = ANY(ARRAY['1', '2'])",
        "SELECT 1 = ANY(ARRAY[])",
        "SELECT 1 = ANY(ARRAY[1, 'a'::text])",
        "SELECT 'x' = ANY(ARRAY[1])",
        "SELECT 'pg_class'::regclass::text, 'int4'::regtype::varchar(3), pg_typeof(NULL::integer), pg_typeof('a'::text)",
        "SELECT trim('xax', 'x'), trim(leading 'x' from 'xax'), trim(trailing from 'a ')",
        "SELECT trim(1)",
        "SELECT 'a' LIKE 'a' ESCAPE 'ab'",
        // A qualifier naming no relation of FROM, in both plans.
        "SELECT x.id FROM ta",
        "SELECT x.id FROM ta a JOIN tb b ON a.id = b.id",
        // Conditions of the relational plan: a column or literal of another type is
        // 42804, an unknown literal reads as a boolean.
        "SELECT count(*) FROM ta a JOIN tb b ON a.k = b.k WHERE a.id",
        "SELECT count(*) FROM ta a JOIN tb b ON a.k = b.k WHERE 't'",
        "SELECT count(*) FROM ta a JOIN tb b ON a.k = b.k WHERE 'x'",
        "SELECT count(*) FROM ta a JOIN tb b ON a.id",
        "SELECT count(*) FROM ta a JOIN tb b ON 'true'",
        "SELECT a.k FROM ta a JOIN tb b ON a.k = b.k GROUP BY a.k HAVING a.k",
        "SELECT count(*) FILTER (WHERE k), count(*) FROM ta",
        "SELECT count(*) FILTER (WHERE 't'), count(*) FILTER (WHERE NULL), count(*) FILTER (WHERE b) FROM ta",
        "SELECT count(*) FILTER (WHERE t) FROM ta",
        "SELECT count(*) FROM (SELECT id, k = 1 OR k = 2 AS x FROM ta) s JOIN tb USING (id) WHERE x",
        // Conditions of any typed expression (calls, arithmetic, CASE, a scalar
        // subquery) that is not boolean: 42804 rather than no row.
        "SELECT count(*) FROM ta a JOIN tb b ON a.k = b.k WHERE abs(a.k)",
        "SELECT count(*) FROM ta a JOIN tb b ON a.k + b.k",
        "SELECT count(*) FROM ta a JOIN tb b ON a.k = b.k WHERE CASE WHEN a.id > 1 THEN a.t END",
        "SELECT count(*) FROM ta a JOIN tb b ON a.k = b.k WHERE (SELECT 1)",
        "SELECT count(*) FROM ta a JOIN tb b ON a.k = b.k WHERE coalesce(a.b, b.k > 1)",
        "SELECT count(*) FROM ta a JOIN tb b ON a.k = b.k WHERE lower(a.t) = 'abc' OR a.b",
        "SELECT a.k FROM ta a JOIN tb b ON a.k = b.k GROUP BY a.k HAVING sum(a.id) * 2",
        "SELECT a.k FROM ta a JOIN tb b ON a.k = b.k GROUP BY a.k HAVING sum(a.id) > 2 ORDER BY 1",
        "SELECT count(*) FILTER (WHERE length(t)), count(*) FROM ta",
        "SELECT count(*) FILTER (WHERE k::boolean), count(*) FILTER (WHERE k + 1 > 2) FROM ta",
        // x [NOT] LIKE|ILIKE ANY|SOME|ALL (subquery): NULL rows, no row, types, columns.
        "SELECT id, t LIKE ANY (SELECT label || '%' FROM tb), t NOT LIKE ALL (SELECT '%' || label FROM tb) FROM ta ORDER BY id",
        "SELECT id FROM ta WHERE t ILIKE SOME (SELECT 'A%' UNION ALL SELECT '%B') ORDER BY id",
        "SELECT id, t LIKE ALL (SELECT p FROM (VALUES ('%'), (NULL)) v(p)), t LIKE ANY (SELECT label FROM tb WHERE false) FROM ta ORDER BY id",
        "SELECT 'ab' LIKE ALL (SELECT 'a%' UNION ALL SELECT '%b'), 'ab' NOT ILIKE ALL (SELECT 'X%'), 'ab' ~~ ANY (SELECT 'a_')",
        "SELECT id, t LIKE ANY (SELECT label FROM tb WHERE tb.id = ta.id) FROM ta ORDER BY id",
        "SELECT 'ab' LIKE ANY (SELECT 'a%', 'b')",
        "SELECT 1 LIKE ANY (SELECT 'a')",
        "SELECT 'a' LIKE ALL (SELECT 1)",
        "SELECT 'a' = ANY (SELECT 'a', 'b')",
        "SELECT id FROM ta WHERE k IN (SELECT k, id FROM tb)",
        "SELECT ARRAY(SELECT 1, 2)",
        // The left side of an empty array is typed all the same.
        "SELECT 1 LIKE ANY (ARRAY[]::text[])",
        "SELECT k LIKE ALL (ARRAY[]::text[]) FROM ta",
        "SELECT 1 = ANY (ARRAY[]::text[])",
        "SELECT 'a' LIKE 1",
        "SELECT k NOT ILIKE 'a' FROM ta",
        // LIKE|ILIKE ANY|SOME|ALL: NULL elements and operands, empty arrays, backslash
        // escapes in the elements, ESCAPE (a syntax error there), operand types.
        "SELECT id, t LIKE ANY (ARRAY['a%', '%b']), t NOT LIKE ANY (ARRAY['a%', '%b']), t LIKE ALL (ARRAY['a%', '%c']), t NOT LIKE ALL (ARRAY['a%', 'Z%']) FROM ta ORDER BY id",
        "SELECT id, t ILIKE ANY (ARRAY['A%', 'z%']), t NOT ILIKE ALL (ARRAY['%B%', NULL]), v LIKE SOME (ARRAY[t, 'x%']), t LIKE ANY (ARRAY[NULL, '%']) FROM ta ORDER BY id",
        "SELECT id FROM ta WHERE t LIKE ANY (ARRAY['a%', '日%']) ORDER BY id",
        "SELECT ta.id, t LIKE ALL (ARRAY['%' || x || '%', '%']) FROM ta CROSS JOIN one ORDER BY 1",
        "SELECT id, c LIKE ANY (ARRAY['a%', 'xy%']), c ILIKE ALL (ARRAY['%']) FROM td ORDER BY id",
        "SELECT 'a_c' LIKE ANY (ARRAY['a\\_c']), 'abc' LIKE ANY (ARRAY['a\\_c']), 'a%' LIKE ALL (ARRAY['a\\%', '_%'])",
        "SELECT 'abc' LIKE ANY (ARRAY['x%', NULL]), 'abc' LIKE ALL (ARRAY['a%', NULL]), 'abc' LIKE ALL (ARRAY['x%', NULL]), NULL LIKE ANY (ARRAY['a%'])",
        "SELECT 'abc' LIKE ANY (ARRAY[]::text[]), 'abc' LIKE ALL (ARRAY[]::text[]), NULL NOT ILIKE ALL (ARRAY[]::text[])",
        "SELECT 'abc' LIKE ANY (ARRAY[])",
        "SELECT 'abc' LIKE ANY (ARRAY['a%']) ESCAPE '#'",
        "SELECT 'abc' LIKE ANY (ARRAY['a\\'])",
        "SELECT k LIKE ANY (ARRAY['1']) FROM ta",
        "SELECT 'abc' LIKE ANY (ARRAY[1, 2])",
        "SELECT 'abc' ~~ ANY (ARRAY['a%']), 'ABC' ~~* ALL (ARRAY['a%', '%c']), 'abc' !~~ ANY (ARRAY['a%'])",
        "SELECT relname FROM pg_class WHERE relname LIKE ANY (string_to_array('pg_clas_,pg_type', ',')) ORDER BY 1",
        "SELECT relname FROM pg_class WHERE relname IN ('ta', 'tb', 'pg_class') AND relname NOT LIKE ALL (string_to_array('pg_%,x', ',')) ORDER BY 1",
        "SELECT 'a' || true, 'a' || 1 || false, true || 'a'",
        "SELECT id, t || b, b || v FROM ta ORDER BY id",
        "SELECT ta.id, t || b, b || v, ARRAY[k] || ARRAY[x], ARRAY[k] || '{5}', pg_typeof(ARRAY[k] || ARRAY[x]) FROM ta CROSS JOIN one ORDER BY 1",
        "SELECT id, t FROM ta WHERE t ~ '^a' ORDER BY id",
        "SELECT id, t FROM ta WHERE t COLLATE \"C\" < 'b' ORDER BY id",
        "SELECT '1 day'::interval + '2001-01-01'::date",
        "SELECT date '2001-01-01' + 1, time '10:00' + interval '1 hour'",
        "SELECT timestamp '2001-01-01 10:00' - timestamp '2000-01-01'",
        "SELECT to_timestamp(0), to_timestamp(1e9)",
        "SELECT extract(year from timestamp '2001-02-03'), date_part('year', timestamp '2001-02-03')",
        "SELECT '2001-01-01'::date - '2000-01-01'::date",
        "SELECT 'infinity'::timestamp, '-infinity'::timestamp",
        "SELECT 'NaN'::float8, 'Infinity'::float8",
        "SELECT 1.5::numeric(3,1) * 100",
        "SELECT 123.456::numeric(5,2)",
        "SELECT 'abc'::varchar(2), 'abc'::char(2)",
        "SELECT true AND NULL, false AND NULL, true OR NULL, NOT NULL::boolean",
        "SELECT 5 BETWEEN SYMMETRIC 7 AND 1",
        "SELECT ROW(1, 2)",
        "SELECT 79228162514264337593543950335 + 0.5, 1.2345678901234567 * 1.2345678901234567, 1 / 3.0, 2 / 3::numeric, 10 / 4.0, -7.5 % 2",
        "SELECT min(x), max(x), count(x) FROM (VALUES (1e30), (2e30), (1e-30)) v(x)",
        "SELECT x FROM (VALUES (1e30), (2e30), (1e30), (1e-30)) v(x) GROUP BY x ORDER BY x",
        "SELECT sum(x) FROM (VALUES (1e30), (1e-30)) v(x)",
        "SELECT 1e20 / 3, 123456789012345678.9 / 7, 0.1 / 3e-20, 1e-20 * 1e-20, exp(1.5), ln(1e300), log(1e-40)",
        "SELECT count(*) FROM ta t1, ta t2",
        "SELECT t1.id, t2.id FROM ta t1 JOIN ta t2 ON t1.d = t2.d ORDER BY 1, 2",
        "SELECT t1.id FROM ta t1 JOIN ta t2 ON t1.r = t2.r ORDER BY 1",
    ] {
        out.push(q.to_string());
    }
}

/// PostgreSQL syntax beyond the families: BETWEEN SYMMETRIC, ROW constructors, DISTINCT ON,
/// RANGE frames with offsets (integer, numeric, float and interval keys, NULL keys,
/// overflowing bounds, and the errors PostgreSQL gives), `name` values, and numerics wider
/// than 28 digits (variances of bigints near 2^62) ordered, compared and cast.
fn syntax(from: &str, out: &mut Vec<String>) {
    for q in [
        "SELECT id, k BETWEEN SYMMETRIC 3 AND 1, d NOT BETWEEN SYMMETRIC 2 AND -1, k BETWEEN SYMMETRIC NULL AND 2 FROM {F} ORDER BY id",
        "SELECT id FROM {F} WHERE n BETWEEN SYMMETRIC 100 AND 1 + 0.5 ORDER BY id",
        "SELECT id, ts BETWEEN SYMMETRIC '2001-01-02' AND '2000-01-01', k NOT BETWEEN ASYMMETRIC 2 AND 1 FROM {F} ORDER BY id",
        "SELECT id, ROW(k, t), ROW(id, NULL, 'a b', '', 'x\"y') FROM {F} ORDER BY id",
        "SELECT DISTINCT ON (k) k, id FROM {F} ORDER BY k, id DESC",
        "SELECT DISTINCT ON (b) b, id, t FROM {F} ORDER BY b DESC, id",
        "SELECT DISTINCT ON (k, b) id FROM {F} ORDER BY k, b, id",
        "SELECT DISTINCT ON (k % 2) k % 2, id FROM {F} ORDER BY k % 2, id",
        "SELECT DISTINCT ON (k) id FROM {F} ORDER BY id",
        "SELECT id, sum(k) OVER (ORDER BY k RANGE BETWEEN 1 PRECEDING AND 1 FOLLOWING), count(*) OVER (ORDER BY k DESC RANGE BETWEEN 2 PRECEDING AND CURRENT ROW) FROM {F} ORDER BY id",
        "SELECT id, sum(n) OVER (ORDER BY n RANGE BETWEEN 10 PRECEDING AND 0.5 FOLLOWING), max(id) OVER (ORDER BY n DESC RANGE 100 PRECEDING) FROM {F} ORDER BY id",
        "SELECT id, count(*) OVER (ORDER BY ts RANGE BETWEEN interval '1 day' PRECEDING AND CURRENT ROW), count(*) OVER (ORDER BY iv RANGE BETWEEN CURRENT ROW AND '1 day' FOLLOWING) FROM {F} ORDER BY id",
        "SELECT id, count(*) OVER (ORDER BY d NULLS FIRST RANGE BETWEEN 1 PRECEDING AND 1 FOLLOWING), min(id) OVER (ORDER BY s RANGE BETWEEN 100 FOLLOWING AND UNBOUNDED FOLLOWING) FROM {F} ORDER BY id",
        "SELECT id, sum(k) OVER (ORDER BY r RANGE BETWEEN 1 PRECEDING AND 1 FOLLOWING), count(*) OVER (ORDER BY big RANGE BETWEEN 9223372036854775807 PRECEDING AND 1 FOLLOWING) FROM {F} ORDER BY id",
        "SELECT id, count(*) OVER (ORDER BY ts::date RANGE BETWEEN '2 days' PRECEDING AND '1 day' FOLLOWING) FROM {F} ORDER BY id",
        "SELECT id, sum(k) OVER (ORDER BY k, id RANGE 1 PRECEDING) FROM {F} ORDER BY id",
        "SELECT id, sum(k) OVER (ORDER BY k RANGE -1 PRECEDING) FROM {F} ORDER BY id",
        "SELECT id, sum(k) OVER (ORDER BY k RANGE 1.5 PRECEDING) FROM {F} ORDER BY id",
        "SELECT id, sum(k) OVER (ORDER BY t RANGE 1 PRECEDING) FROM {F} ORDER BY id",
        "SELECT id, s FROM {F}, unnest(current_schemas(true)) s ORDER BY 1, 2",
        "SELECT k, var_samp(big), stddev_pop(big) FROM {F} GROUP BY k ORDER BY 2 DESC NULLS LAST, 1",
        "SELECT k, var_pop(big)::float8, var_pop(big)::text, stddev(big)::bigint FROM {F} GROUP BY k ORDER BY 1",
        "SELECT k FROM {F} GROUP BY k HAVING var_samp(big) > 1e20 ORDER BY 1",
        "SELECT DISTINCT var_pop(big) FROM {F} GROUP BY k ORDER BY 1",
        "SELECT var_pop(big) + 1, var_pop(big) * 2.5, var_pop(big) / 7, -var_pop(big) % 1000 FROM {F}",
        "SELECT round(var_pop(big)), round(-var_pop(big) / 7, -3), trunc(var_pop(big) / 1e30, 3), abs(-var_pop(big)), sign(-var_pop(big)) FROM {F}",
        "SELECT floor(-1e30 / 7), ceil(-1e30 / 7), floor(1e30 / 7), ceil(1e30 / 7), round(1e-30, 31), sqrt(var_pop(big)), sqrt(1e-40), sqrt(2e300) FROM {F}",
        "SELECT sqrt(-var_pop(big)) FROM {F}",
        "SELECT power(var_pop(big), 2) FROM {F}",
        "SELECT id, big / 1e20, k / 1e20 * 3, n * 1e-30, big::numeric * big * big FROM {F} ORDER BY id",
        "SELECT 1e300 * 10, -1e-40, 1.5e30 / 7, 1e30::float8, 1e-30::numeric(5,2)",
    ] {
        out.push(q.replace("{F}", from));
    }
}

/// Types PostgreSQL resolves over several expressions at once: the columns of a VALUES
/// list and the elements of `ARRAY[...]` (select_common_type over all of them, unknown
/// literals cast to the result), set operations with unknown branches.
const RESOLVED_TYPES: &[&str] = &[
    "VALUES (1, 'a'), (2.5, NULL), (NULL, 'b')",
    "VALUES (NULL), (NULL), (1::smallint), (2)",
    "SELECT x, pg_typeof(x) FROM (VALUES ('b'), ('a'), (NULL)) v(x) ORDER BY x",
    "SELECT x FROM (VALUES (1::real), (2::bigint), (0.5)) v(x) ORDER BY x",
    "SELECT x, pg_typeof(x) FROM (VALUES ('2001-01-01'::date), ('2000-01-01 10:00'::timestamp)) v(x) ORDER BY x",
    "SELECT * FROM (VALUES (1), ('x')) v(x)",
    "VALUES (1), ('a'::text)",
    "SELECT id, (SELECT max(x) FROM (VALUES (k), (d)) v(x)), (SELECT pg_typeof(max(x)) FROM (VALUES (k), (d)) v(x)) FROM ta ORDER BY id",
    "SELECT 1.5::float8 AS x UNION ALL SELECT 'NaN' UNION ALL SELECT '-Infinity' UNION ALL SELECT '-0' ORDER BY 1",
    "SELECT id, ARRAY[s, big], ARRAY[r, k], pg_typeof(ARRAY[r, k]), ARRAY[n, k], ARRAY[t, v] FROM ta ORDER BY id",
    "SELECT ARRAY[NULL, 2], ARRAY['x', 'y'], pg_typeof(ARRAY['x']), ARRAY[1.5::float8, 'NaN'], ARRAY[NULL, NULL]",
    "SELECT ARRAY[1, 'a'::text]",
    "SELECT ARRAY[1, 'a']",
];

/// Column references into relations with duplicate column names: ambiguous (42702)
/// when named, fine through `*`; one alias given to two relations (42712).
const DUPLICATE_NAMES: &[&str] = &[
    "SELECT s.a FROM (SELECT 1 AS a, 2 AS a) s",
    "SELECT * FROM (SELECT 1 AS a, 2 AS a) s",
    "SELECT s.* FROM (SELECT 1 AS a, 2 AS a, 3 AS b) s",
    "SELECT b FROM (SELECT 1 AS a, 2 AS a, 3 AS b) s WHERE a = 1",
    "WITH w AS (SELECT 1 AS a, 2 AS a) SELECT a FROM w",
    "SELECT x FROM (VALUES (1, 2)) v(x, x)",
    "SELECT k FROM (SELECT * FROM ta JOIN tb USING (id)) s",
    "SELECT id, label FROM (SELECT * FROM ta JOIN tb USING (id)) s ORDER BY id",
    "SELECT * FROM ta x, tb x",
    "SELECT * FROM (SELECT 1) s, (SELECT 2) s",
    "SELECT * FROM ta JOIN tb ta ON true",
];

/// Set-returning functions: generate_series' overloads (integer, bigint, numeric,
/// timestamp, timestamptz) in FROM and in the select list, where several calls advance in
/// lockstep (PostgreSQL 10 and later), the shorter ones giving NULL.
const SET_RETURNING: &[&str] = &[
    "SELECT generate_series(1, 3) AS a, generate_series(1, 5) AS b, unnest(ARRAY['x', 'y'])",
    "SELECT id, generate_series(1, k), generate_series(k, 1, -1) FROM ta WHERE id < 6 ORDER BY id, 2",
    "SELECT k, generate_series(0.5, k, 1.25) FROM ta WHERE k IS NOT NULL AND id < 5 ORDER BY 1, 2",
    "SELECT id, generate_series(ts, ts + interval '2 days', '1 day') FROM ta WHERE id < 3 ORDER BY 1, 2",
    "SELECT generate_series(1, 2) + 10, generate_series(1, 3) * 2",
    "SELECT count(*) FROM (SELECT generate_series(1, 3), generate_series(1, 4)) s",
    "SELECT id, (SELECT count(*) FROM generate_series(1, k)) FROM ta ORDER BY id",
    "SELECT * FROM generate_series(1.5, 3, 0.5)",
    "SELECT * FROM generate_series(1, 3, 1.5) a, generate_series(1::bigint, 2) b",
    "SELECT * FROM generate_series(1, 2), generate_series(1, 2)",
    "SELECT * FROM generate_series('2001-01-31'::timestamp, '2001-05-01', '1 mon')",
    "SELECT x, pg_typeof(x) FROM generate_series('2001-01-03 00:00+00'::timestamptz, '2001-01-01', '-12 hours') g(x)",
    "SELECT pg_typeof(generate_series('2001-01-01'::date, '2001-01-02'::date, '1 day'))",
    "SELECT generate_series('1', '3')",
    "SELECT generate_series('2001-01-01'::timestamp, '2001-01-03')",
    "SELECT generate_series(1, 3.5::float8)",
    "SELECT generate_series(1::int2, 3::int2)",
    "SELECT generate_series(1.0, 2, 0)",
    "SELECT generate_series('2001-01-01'::timestamp, '2001-01-03', '0 days')",
    "SELECT * FROM unnest(ARRAY[1, 2], ARRAY['a', 'b', 'c']) AS u(n, s) ORDER BY s DESC",
    "SELECT u.*, pg_typeof(u.n) FROM unnest(ARRAY[1.5, 2], NULL::int[], ARRAY[true]) WITH ORDINALITY AS u(n)",
    "SELECT unnest(ARRAY[1, 2]), unnest(ARRAY[3])",
    "SELECT unnest(ARRAY[1], ARRAY[2])",
    "SELECT * FROM generate_series(1, 3, NULL), generate_series(1.0, 3, NULL) b",
    "SELECT generate_series(1, 3, NULL), generate_series(NULL::timestamp, '2001-01-01', '1 day')",
    "SELECT id FROM ta WHERE generate_series(1, 2) > 1",
    "SELECT sum(generate_series(1, 3))",
    "SELECT count(*) FROM ta HAVING generate_series(1, 2) > 0",
    "SELECT ta.id FROM ta JOIN tb ON generate_series(1, 2) = 1",
    "SELECT id FROM ta LIMIT generate_series(1, 2)",
    "VALUES (generate_series(1, 2))",
    "SELECT * FROM generate_series(1, generate_series(1, 2))",
    "SELECT id FROM ta WHERE k IN (SELECT generate_series(1, 2)) ORDER BY id",
    "SELECT id, (SELECT max(g) FROM (SELECT generate_series(1, ta.k) AS g) s) FROM ta ORDER BY id",
    "SELECT generate_series(1, generate_series(1, 3))",
    "SELECT CASE WHEN true THEN generate_series(1, 2) END",
    "SELECT coalesce(generate_series(1, 2), 1)",
    "SELECT 1 + CASE WHEN generate_series(1, 2) > 1 THEN 1 END",
    "SELECT CASE generate_series(1, 2) WHEN 1 THEN 'a' END",
    "SELECT id, CASE WHEN id > 1 THEN 'x' END, generate_series(1, 2) + coalesce(k, 0) FROM ta WHERE id < 3 ORDER BY 1, 3",
    "SELECT coalesce((SELECT generate_series(1, 1)), 0)",
];

/// Operators spelled as PostgreSQL's catalog names them (`~~` is LIKE), and operators
/// whose operands are all unknown literals (42725 where several candidates fit).
const OPERATORS: &[&str] = &[
    "SELECT id, t ~~ '%b%', t !~~* '%B', t OPERATOR(pg_catalog.~~) 'a%', v ~~ t, t !~~ NULL FROM ta ORDER BY id",
    "SELECT id, c ~~ 'a%', c ~~* 'A%', c !~~ '%' FROM td ORDER BY id",
    "SELECT count(*) FROM ta WHERE t ~~ '%b%' AND NOT t !~~* '%B'",
    "SELECT 'a_c' ~~ 'a\\_c', 'abc' ~~ 'a\\_c', 'ÄBC' ~~* 'äbc'",
    "SELECT 'a' - 'b'",
    "SELECT NULL + NULL",
    "SELECT '1' & '2'",
    "SELECT -'1'",
    "SELECT ~NULL",
    "SELECT '1' + 1, 1 + '1', '1' + 1.5, 'a' || 'b', pg_typeof('1' + 1), '1' ^ '2'",
    "SELECT '1.5' + 1",
    "SELECT |/ 4, pg_typeof(|/ 4), ||/ 27.0, pg_typeof(||/ 27), @ -4, pg_typeof(@ -4), @ -4.5, @ '-1'",
    "SELECT id, |/ abs(d), ||/ k, @ n, @ s, pg_typeof(@ s), @ r FROM ta ORDER BY id",
    "SELECT |/ -1",
    "SELECT @ 'a'::text",
];

/// Functions returning text arrays and regular expressions: regexp_match's groups,
/// regexp_matches' rows, the regexp_split_to_* pieces, string_to_array's pieces (NULL
/// separator, NULL string), `.` matching a newline.
const TEXT_ARRAYS: &[&str] = &[
    "SELECT id, regexp_match(t, '(a)(.)?'), regexp_match(t, 'B', 'i'), string_to_array(t, NULL), string_to_array(v, 'b', 'a') FROM ta ORDER BY id",
    "SELECT string_to_array('a,b,,c', ','), string_to_array('a,b,,c', ',', ''), string_to_array('abc', NULL), string_to_array('abc', ''), string_to_array('', ','), string_to_array(NULL, ',')",
    "SELECT regexp_match('foobarbequebaz', '(bar)(beque)'), regexp_match('abc', '(x)?b'), regexp_match('abc', 'z'), pg_typeof(regexp_match('a', 'a')), (regexp_match('k=v', '(\\w)=(\\w)'))[2]",
    "SELECT regexp_match('abc', 'b', 'g')",
    "SELECT regexp_match('abc', '(')",
    "SELECT E'a\\nb' ~ 'a.b', E'a\\nb' ~ '^b', regexp_replace(E'a\\nb', '.', 'x', 'g'), regexp_match(E'x\\ny', 'x.y')",
    "SELECT regexp_split_to_array('a1b22c', '\\d+'), regexp_split_to_array('hello', ''), regexp_split_to_array('', ','), regexp_split_to_array('abca', 'a'), regexp_split_to_array(' a ', '\\s*'), regexp_split_to_array('aXbxc', 'x', 'i')",
    "SELECT regexp_split_to_array('a,b', ',', 'g')",
    "SELECT id, regexp_split_to_array(t, ' '), pg_typeof(regexp_split_to_array(t, ' ')) FROM ta ORDER BY id",
    "SELECT id, regexp_matches(t, '[a-c]', 'g') FROM ta ORDER BY 1, 2",
    "SELECT regexp_matches('a1b22c', '(\\d)(\\d)?'), regexp_matches('aaa', '', 'g')",
    "SELECT * FROM regexp_matches('abcabc', '(b)(c)', 'g') m",
    "SELECT id, regexp_split_to_table(t, '') AS c FROM ta WHERE id < 3 ORDER BY 1, 2",
    "SELECT * FROM regexp_split_to_table('a b  c', '\\s+') WITH ORDINALITY",
    "SELECT * FROM regexp_split_to_table('a b  c', '\\s+') x",
    "SELECT * FROM generate_series(5, 7) WITH ORDINALITY g",
    "SELECT * FROM generate_series(5, 7) WITH ORDINALITY AS g(v, n)",
    "SELECT t.*, pg_typeof(ordinality) FROM unnest(ARRAY['x', 'y']) WITH ORDINALITY t",
];

/// Fields of a time of day: extract (numeric) and date_part (double precision), 24:00:00
/// and fractions of a second; date fields are 0A000, unknown names 22023.
const TIME_FIELDS: &[&str] = &[
    "SELECT id, extract(epoch from tm), extract(second from tm), extract(millisecond from tm), extract(minute from tm), date_part('epoch', tm), date_part('hour', tm), date_part('microseconds', tm) FROM td ORDER BY id",
    "SELECT id, extract(hour from tm) FROM td CROSS JOIN one ORDER BY id",
    "SELECT extract(hour from '10:30'::time), date_part('minute', '10:30:15'::time), extract(seconds from time '23:59:59.999999')",
    "SELECT extract(day from '10:00'::time)",
    "SELECT date_part('timezone', '10:00'::time)",
    "SELECT date_part('foo', '10:00'::time)",
];

/// The listed queries.
pub fn listed() -> Vec<String> {
    let mut out = Vec::new();
    for from in FROMS {
        aggregates(from, &mut out);
        scalars(from, &mut out);
        casts(from, &mut out);
        syntax(from, &mut out);
    }
    others(&mut out);
    dates(&mut out);
    out.extend(CHAR_KEY_QUERIES.iter().map(|q| q.to_string()));
    client_queries(&mut out);
    out.extend(RESOLVED_TYPES.iter().map(|q| q.to_string()));
    out.extend(DUPLICATE_NAMES.iter().map(|q| q.to_string()));
    out.extend(SET_RETURNING.iter().map(|q| q.to_string()));
    out.extend(OPERATORS.iter().map(|q| q.to_string()));
    out.extend(TEXT_ARRAYS.iter().map(|q| q.to_string()));
    out.extend(TIME_FIELDS.iter().map(|q| q.to_string()));
    out.extend(OPERAND_CHECKS.iter().map(|q| q.to_string()));
    out.extend(FORMS_AND_INPUTS.iter().map(|q| q.to_string()));
    out
}

/// Statements once answered otherwise than PostgreSQL 15 does: the arity of COALESCE,
/// GREATEST and NULLIF (syntax errors), ROW(...) comparisons and rows in IN lists with
/// their NULL rules, dates written month-day-year or with month names, `timestamp ±
/// time`, numerics beyond a float's range, factorial, `^@`, substring's regular
/// expression forms, to_char of zero and Roman numerals, to_number, FETCH ... WITH TIES, the types
/// of text/varchar/character set operations, ORDER BY of a set operation, array literals
/// under ANY read before any row, and subqueries reading a grouped level's other columns.
const FORMS_AND_INPUTS: &[&str] = &[
    "SELECT coalesce()",
    "SELECT nullif(1)",
    "SELECT nullif(1, 2, 3)",
    "SELECT greatest()",
    "SELECT id, coalesce(k), nullif(k, 1), least(s) FROM ta ORDER BY id",
    "SELECT row(1, null) = row(1, null), row(1, null) <> row(1, null), row(1, null) < row(1, null), row(1, 2) < row(2, null), row(1, null) IS DISTINCT FROM row(1, null)",
    "SELECT id, row(k, s) = row(1, 1), row(k, s) <> row(2, NULL), (k, s) < (2, 0) FROM ta ORDER BY id",
    "SELECT (1, 2) IN ((1, 2), (3, 4)), (1, null) IN ((1, 2)), (1, null) IN ((1, 2), (1, null)), (1, 2) NOT IN ((5, 6)), row(1, 2) IN (row(1, 2))",
    "SELECT id FROM ta WHERE (k, b) IN ((1, true), (2, false), (7, true)) ORDER BY id",
    "SELECT count(DISTINCT (k, b)), count((k, b)) FROM ta",
    "SELECT '01/02/2024'::date, '2024.01.02'::date, 'Jan 2 2024'::date, '2 Jan 2024'::date, 'January 2, 2024'::date, '1/2/24'::date, '02-Jan-2024'::date, 'Tue Jan 02 2024'::date, '2024 Jan 2'::date",
    "SELECT '01/02/2024 10:00'::timestamp, 'Jan 2 2024 10:00:01'::timestamp, '2 Jan 2024 10:00 pm'::timestamp, 'January 2, 2024 10:00'::timestamp, '2024.01.02 10:00'::timestamp, '12/31/99 23:59'::timestamp, '01/02/2024 10:00+02'::timestamptz, 'Jan 2 2024 BC'::date",
    "SELECT '13/02/2024'::date",
    "SELECT '02/30/2024'::date",
    "SELECT 'Janu 2 2024'::date",
    "SELECT '24-01-02'::date",
    "SELECT '2024-13-01'::timestamp",
    "SELECT id FROM ta WHERE ts < 'Jan 2 2001' ORDER BY id",
    "SELECT id, ts + time '01:30', ts - time '01:30', time '01:30' + ts, tz + time '00:10', iv - time '01:00' FROM ta ORDER BY id",
    "SELECT id, dt + tm, tm + dt, pg_typeof(interval '1 hour' - tm) FROM td ORDER BY id",
    "SELECT time '01:00' + time '02:00'",
    "SELECT (1e308 * 10)::float8",
    "SELECT 1e39::real",
    "SELECT 1e-400::float8",
    "SELECT 1e-50::float4",
    "SELECT 0.0::float4, 0::numeric::float8, 1e-40::float4, 1e38::float4",
    "SELECT factorial(5), factorial(0), factorial(21), pg_typeof(factorial(3))",
    "SELECT factorial(-1)",
    "SELECT factorial(5.0)",
    "SELECT id, factorial(k) FROM ta ORDER BY id",
    "SELECT 'foobar' ^@ 'foo', 'foobar' ^@ 'bar'",
    "SELECT 1 ^@ 'a'",
    "SELECT 'Jan 2 2024 13:00 pm'::timestamp",
    "SELECT id, t ^@ 'a' FROM ta ORDER BY id",
    "SELECT substring('foobar' from 'o.b'), substring('foobar' from 'o(.)b'), substring('foobar' similar '%#\"o_b#\"%' escape '#'), substring('foobar' from '%#\"o%#\"' for '#'), substring('foobar' from 2 for 3)",
    "SELECT id, substring(t from '[a-c]+'), substring(t similar '%#\"b%#\"' escape '#') FROM ta ORDER BY id",
    "SELECT substring('foobar' from 'o' for 2)",
    "SELECT substring('foobar' from 'a#\"b#\"c#\"d' for '#')",
    "SELECT to_char(0, '9999'), to_char(0, 'FM9999'), to_char(0, '9,999'), to_char(0, 'FM9.99'), to_char(0, 'S9999'), to_char(0.4, '9999'), to_char(0, '99.99'), to_char(0.5, '9.99')",
    "SELECT to_char(1994, 'RN'), to_char(4, 'FMRN'), to_char(0, 'RN'), to_char(3999, 'rn'), to_char(4000, 'RN'), to_char(2.5, 'RN')",
    "SELECT id, to_char(k, '9999'), to_char(k, 'RN'), to_char(s, 'FM9999') FROM ta ORDER BY id",
    "SELECT k FROM ta ORDER BY k FETCH FIRST 2 ROWS WITH TIES",
    "SELECT k FROM ta ORDER BY k NULLS FIRST OFFSET 3 FETCH FIRST 1 ROW WITH TIES",
    "SELECT k FROM ta ORDER BY k FETCH FIRST 0 ROWS WITH TIES",
    "SELECT k FROM ta FETCH FIRST 2 ROWS WITH TIES",
    "SELECT 1 AS a UNION SELECT 2 AS b ORDER BY b",
    "SELECT 1 AS a UNION SELECT 2 AS b ORDER BY a + 1",
    "SELECT v FROM ta UNION SELECT t FROM ta ORDER BY 1",
    "SELECT c FROM td UNION SELECT t FROM ta ORDER BY 1",
    "SELECT x FROM (VALUES ('x'::varchar), ('y'::text)) s(x) ORDER BY 1",
    "SELECT coalesce(v, t), CASE WHEN b THEN v ELSE t END FROM ta ORDER BY id",
    "SELECT x = ANY ('{1,a}') FROM (VALUES (1)) v(x)",
    "SELECT id FROM ta WHERE k = ANY ('{1,a}')",
    "SELECT id FROM ta ORDER BY id LIMIT -0.4",
    "SELECT to_number('12,454.8-', '99G999D9S'), to_number('$1,234.50', 'L9,999.99'), to_number('-12.5', '99.9'), to_number('12345', '999'), to_number('<123>', '999PR'), to_number('  123', '999'), to_number('1e3', '9999'), to_number('12.345', '99.99'), pg_typeof(to_number('1', '9'))",
    "SELECT to_number('abc', '999')",
    "SELECT (SELECT y) FROM (VALUES (1, 2)) v(x, y) GROUP BY x",
    "SELECT x, (SELECT count(*) FROM tb WHERE tb.k = v.y) FROM (VALUES (1, 2)) v(x, y) GROUP BY x",
    "SELECT x FROM (VALUES (1, 2)) v(x, y) GROUP BY x HAVING EXISTS (SELECT y)",
    "SELECT max(x), (SELECT y) FROM (VALUES (1, 2)) v(x, y)",
    "SELECT (SELECT sum(y)), (SELECT x + 1), sum((SELECT y)) FROM (VALUES (1, 2), (1, 3)) v(x, y) GROUP BY x",
    "SELECT x FROM (VALUES (1, 2)) v(x, y) WHERE EXISTS (SELECT y) GROUP BY x",
    "SELECT id, to_number(k::text, '999'), to_number(k::text || '.5', '99.9') FROM ta ORDER BY id",
];

/// Statements PostgreSQL refuses (or answers) by the types and places of its operands,
/// each once found answered otherwise: a subquery's column of no comparison with the
/// left side of ANY/ALL/IN (an unknown column is text), `||` of two operands neither of
/// which is text, CASE's unknown operand (text), non-integer constants in ORDER BY and
/// DISTINCT ON, ungrouped columns of derived tables, VALUES and CTEs, CTE column lists
/// shorter or longer than the query's, `split_part`'s field 0, integer input with
/// underscores (PostgreSQL 16's, not 15's), numeric LIMIT and OFFSET (cast to bigint).
const OPERAND_CHECKS: &[&str] = &[
    "SELECT 1 = ANY (SELECT 'a')",
    "SELECT 1 IN (SELECT NULL)",
    "SELECT k IN (SELECT t FROM ta) FROM ta ORDER BY id",
    "SELECT k < ALL (SELECT 'a') FROM ta ORDER BY id",
    "SELECT id FROM ta WHERE k NOT IN (SELECT label FROM tb) ORDER BY id",
    "SELECT 'x' = ANY (SELECT 1)",
    "SELECT id FROM ta WHERE k IN (SELECT n FROM ta) ORDER BY id",
    "SELECT id FROM ta WHERE ts = ANY (SELECT dt FROM td) ORDER BY id",
    "SELECT 1 || 2",
    "SELECT k || d FROM ta ORDER BY id",
    "SELECT b || b FROM ta ORDER BY id",
    "SELECT ts || iv FROM ta ORDER BY id",
    "SELECT k || t, t || k, k || NULL, NULL || NULL, v || k FROM ta ORDER BY id",
    "SELECT CASE t WHEN 'abc' THEN 1 END FROM ta ORDER BY id",
    "SELECT CASE 'a' WHEN 1 THEN 'x' END",
    "SELECT CASE NULL WHEN NULL THEN 'n' ELSE 'e' END",
    "SELECT CASE '1' WHEN k THEN 'x' END FROM ta ORDER BY id",
    "SELECT id FROM ta ORDER BY 'a'",
    "SELECT id FROM ta ORDER BY 1.5",
    "SELECT id FROM ta ORDER BY NULL",
    "SELECT id FROM ta ORDER BY 99999999999",
    "SELECT count(*) FROM ta GROUP BY 'a'",
    "SELECT count(*) FROM (SELECT k FROM ta) s GROUP BY 'a'",
    "SELECT count(*) FROM ta GROUP BY NULL",
    "SELECT k FROM ta GROUP BY 1.0",
    "SELECT count(*) FROM ta GROUP BY 99999999999",
    "SELECT DISTINCT ON ('a') id FROM ta",
    "SELECT DISTINCT ON (5) id FROM ta",
    "SELECT y FROM (VALUES (1, 2)) v(x, y) GROUP BY x",
    "SELECT s.t FROM (SELECT k, t FROM ta) s GROUP BY s.k",
    "SELECT k, max(id) FROM (SELECT k, id FROM ta) s GROUP BY k HAVING id > 1",
    "SELECT sum(k) FROM (SELECT k, id FROM ta) s ORDER BY id",
    "SELECT * FROM (SELECT k, id FROM ta) s GROUP BY k",
    "SELECT k + 1, count(*) FROM (SELECT k FROM ta) s GROUP BY k + 1 ORDER BY 1",
    "SELECT k FROM (SELECT k FROM ta) s GROUP BY k + 1",
    "WITH c AS (SELECT k, id FROM ta) SELECT id FROM c GROUP BY k",
    "WITH c AS (SELECT k, id FROM ta) SELECT k, sum(id) FROM c GROUP BY k ORDER BY k",
    "WITH c(a) AS (SELECT k, id FROM ta) SELECT * FROM c ORDER BY id",
    "WITH c(a) AS (SELECT 1 AS x, 2 AS y) SELECT y FROM c",
    "WITH c(a, b, z) AS (SELECT 1, 2) SELECT * FROM c",
    "WITH RECURSIVE r(n) AS (SELECT 1, 2 UNION ALL SELECT n + 1, 3 FROM r WHERE n < 3) SELECT * FROM r",
    "WITH RECURSIVE r(n, m, z) AS (SELECT 1, 2 UNION ALL SELECT n + 1, 3 FROM r WHERE n < 3) SELECT * FROM r",
    "SELECT split_part(t, 'b', 0) FROM ta ORDER BY id",
    "SELECT split_part('a,b,c', ',', -1), split_part('a,b,c', ',', 5)",
    "SELECT '1_000'::int",
    "SELECT '1_000'::bigint",
    "SELECT '+5'::int, ' -7 '::int, '007'::smallint",
    "SELECT id FROM ta ORDER BY id LIMIT 1.5",
    "SELECT id FROM ta ORDER BY id LIMIT 2e0 OFFSET 0.5",
    "SELECT x FROM (VALUES (1), (2), (3)) v(x) ORDER BY x LIMIT 1.5",
    "SELECT x FROM (VALUES (1), (2), (3)) v(x) ORDER BY x OFFSET 0.5",
];

/// What clients and people write beyond the families: NULL ordering, COALESCE/NULLIF/
/// GREATEST typing, LIKE escapes, unicode case mapping, numeric scales and negative places,
/// format() widths and positions, interval arithmetic, float range errors, VALUES lists,
/// set operations over mixed types, joins and subqueries, and functions many clients call.
fn client_queries(out: &mut Vec<String>) {
    for q in [
        "SELECT id, d FROM ta ORDER BY d NULLS FIRST, id",
        "SELECT id, t FROM ta ORDER BY t DESC NULLS LAST, id",
        "SELECT id, t FROM ta ORDER BY t NULLS FIRST, id",
        "SELECT id, upper(t), lower(t), initcap(t), upper('straße'), lower('İ'), initcap('ßa ǆa') FROM ta ORDER BY id",
        "SELECT id, trunc(n, -1), trunc(n, -2), round(n, -1), trunc(d), trunc(n, 1), trunc(n * 1000, -3) FROM ta ORDER BY id",
        "SELECT trunc(1234.5678, -2), trunc(-1299.9, -2), trunc(99, -2), trunc(5.5, -40), round(1234.5, -2), trunc(1e20, -5)",
        "SELECT id, nullif(k, 1.0), pg_typeof(nullif(k, 1.0)) FROM ta ORDER BY id",
        "SELECT coalesce(NULL, NULL), pg_typeof(coalesce(NULL, NULL))",
        "SELECT id, coalesce(k, s, big), pg_typeof(coalesce(k, s, big)), coalesce(r, d), greatest(k, d, n), pg_typeof(greatest(k, d, n)), least(t, v) FROM ta ORDER BY id",
        "SELECT coalesce(1, 2.5), pg_typeof(coalesce(1, 2.5)), pg_typeof(coalesce(1::smallint, 2::bigint)), greatest(1, 2.5, NULL), least('b', 'a'), greatest(NULL, NULL)",
        "SELECT coalesce(1, 'a')",
        "SELECT greatest(1, 'x')",
        "SELECT CASE WHEN true THEN 1 ELSE '2' END, pg_typeof(CASE WHEN true THEN 1 ELSE '2' END), pg_typeof(CASE WHEN false THEN 1.5 ELSE 2 END)",
        "SELECT id, CASE k WHEN 1 THEN 'one' WHEN 2 THEN 'two' END, CASE WHEN b THEN d ELSE n END, pg_typeof(CASE WHEN b THEN d ELSE n END) FROM ta ORDER BY id",
        "SELECT x FROM (VALUES (1), (2.5), (0.5)) v(x) ORDER BY x",
        "SELECT pg_typeof(x) FROM (VALUES (1), (2.5)) v(x)",
        "SELECT x FROM (VALUES (1.5::float8), ('NaN'), ('-Infinity'), (NULL), (-0.0)) v(x) ORDER BY x",
        "SELECT a FROM (SELECT 1 AS a, 2 AS a) s",
        "SELECT ARRAY[1, 2.5], pg_typeof(ARRAY[1, 2.5])",
        "SELECT ARRAY[k, d] FROM ta ORDER BY id",
        "SELECT id, ts::timestamp(0), tz::timestamptz(1), '2001-01-01 10:00:00.56'::timestamp(1) FROM ta ORDER BY id",
        "SELECT '1999-12-31 23:59:59.5'::timestamp(0), '1960-06-01 10:00:00.45'::timestamp(1), '1960-06-01 10:00:00.55'::timestamptz(1), 'infinity'::timestamp(2), '-infinity'::timestamptz(0), '2001-01-01 10:00:00.5'::timestamp(6), CAST('0001-01-01 00:00:00.5 BC' AS timestamp(0))",
        "SELECT '23:59:59.5'::time(0), '12:00:00.123456'::time(3), '12:00:00.5'::time(0), pg_typeof('1999-01-01'::timestamp(3) with time zone), pg_typeof('1:00'::time(2))",
        "SELECT id, tm::time(0), tm::time(1), tm::time(5) FROM td ORDER BY id",
        "SELECT id, a, b, c, d, e, pg_typeof(a), pg_typeof(c) FROM tp ORDER BY id",
        "SELECT attname, atttypmod, format_type(atttypid, atttypmod) FROM pg_attribute WHERE attrelid = 'tp'::regclass AND attnum > 0 ORDER BY attnum",
        "SELECT id, a + interval '0.7 seconds', e - a, a::timestamp(0) = a FROM tp ORDER BY id",
        "SELECT 1e-308::float8 * 1e-100",
        "SELECT id, d * 1e-300 * 1e-300 FROM ta ORDER BY id",
        "SELECT id, t LIKE 'a\\_%', t LIKE 'a#%' ESCAPE '#', t NOT ILIKE 'A%', t LIKE '%' || v || '%' FROM ta ORDER BY id",
        "SELECT 'a_c' LIKE 'a\\_c', 'abc' LIKE 'a\\_c', 'a%c' LIKE 'a\\%c', 'a_c' LIKE 'a#_c' ESCAPE '#', 'ab' LIKE 'a\\', 'ÄBC' ILIKE 'äbc', 'x' LIKE '', '' LIKE '%', NULL LIKE 'a'",
        "SELECT id, t ~~ 'a%', t !~~ 'a%', t ~~* 'A%' FROM ta ORDER BY id",
        "SELECT id, iv * 1.5, iv / 3, -iv, iv * 2, justify_hours(iv * 10) FROM ta ORDER BY id",
        "SELECT interval '1 year 2 mons' / 3, interval '1 mon' / 3, interval '1 day' * 1.5, interval '3 days' / 2",
        "SELECT id, ts + iv, tz - iv, ts - '2000-01-01', extract(epoch from iv), extract(epoch from ts), extract(epoch from tz) FROM ta ORDER BY id",
        "SELECT id, date_trunc('week', ts), date_trunc('quarter', ts), date_trunc('decade', ts) FROM ta ORDER BY id",
        "SELECT id, extract(dow from ts), extract(doy from ts), extract(week from ts), extract(isodow from ts), extract(quarter from ts), extract(century from ts) FROM ta ORDER BY id",
        "SELECT id, age(ts, '2000-01-01'), age(tz, '2000-01-01 00:00+00') FROM ta ORDER BY id",
        "SELECT id, extract(hour from tm), extract(microseconds from tm), date_part('minute', tm) FROM td ORDER BY id",
        "SELECT id, make_date(2001, id, 1) FROM td ORDER BY id",
        "SELECT id, isfinite(ts), isfinite(dt) FROM tinf ORDER BY id",
        "SELECT id, format('%s|%5s|%-5s|', t, k, v), format('%2$s-%1$s', t, id), format('%*s|', id, k), quote_nullable(t) FROM ta ORDER BY id",
        "SELECT format('%3L|%-6I|%I', 'x', 'Ab', 'a b'), format('100%%'), format('%s %s', 'a')",
        "SELECT format('%0$s', 'a')",
        "SELECT format('%I', NULL)",
        "SELECT id, translate(t, 'ab', 'xy') FROM ta ORDER BY id",
        "SELECT id, regexp_replace(t, '[a-c]', 'X', 'g'), split_part(t, 'b', 2) FROM ta ORDER BY id",
        "SELECT id, regexp_match(t, 'b'), string_to_array(t, ' ') FROM ta ORDER BY id",
        "SELECT id, t || k, k || t, t || NULL, concat(t, k, b), concat_ws('/', t, v, k) FROM ta ORDER BY id",
        "SELECT id, length(v), octet_length(v), v || 'x', pg_typeof(v || 'x'), left(v, 1), v < t FROM ta ORDER BY id",
        "SELECT id, b::int, b::text, NOT b, b AND k > 1, b IS TRUE, b IS NOT FALSE, b IS UNKNOWN FROM ta ORDER BY id",
        "SELECT id, k IN (SELECT k FROM tb), k NOT IN (SELECT k FROM tb), EXISTS (SELECT 1 FROM tb WHERE tb.k = ta.k) FROM ta ORDER BY id",
        "SELECT id, (SELECT label FROM tb WHERE tb.id = ta.k) FROM ta ORDER BY id",
        "SELECT ta.id, tb.label FROM ta LEFT JOIN tb ON ta.k = tb.k ORDER BY ta.id, tb.label",
        "SELECT ta.id, tb.label FROM ta FULL JOIN tb ON ta.k = tb.k ORDER BY ta.id NULLS FIRST, tb.label",
        "SELECT k FROM ta UNION SELECT k FROM tb ORDER BY 1 NULLS FIRST",
        "SELECT k FROM ta INTERSECT ALL SELECT k FROM tb ORDER BY 1",
        "SELECT d FROM ta UNION SELECT n FROM ta ORDER BY 1",
        "SELECT t FROM ta UNION ALL SELECT v FROM ta ORDER BY 1",
        "SELECT id FROM ta UNION SELECT 'x'",
        "WITH RECURSIVE r(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM r WHERE i < 5) SELECT sum(i) FROM r",
        "SELECT k % 2 AS parity, count(*) FROM ta GROUP BY parity ORDER BY parity",
        "SELECT k, count(*) FROM ta GROUP BY k HAVING count(*) > 1 ORDER BY count(*) DESC, k",
        "SELECT id, k FROM ta ORDER BY k DESC, id LIMIT 3 OFFSET 2",
        "SELECT id FROM ta ORDER BY id LIMIT -1",
        "SELECT id FROM ta ORDER BY id OFFSET -1",
        "SELECT id FROM ta ORDER BY 20",
        "SELECT k, t FROM ta GROUP BY k ORDER BY k",
        "SELECT sum(sum(k)) FROM ta",
        "SELECT id, k, s, k + s, k * s, s * s, pg_typeof(s * s), s / 2, pg_typeof(s / 2), s % 2, s::int * 100000 FROM ta ORDER BY id",
        "SELECT id, big + 1 FROM ta ORDER BY id",
        "SELECT id, big * 2 FROM ta ORDER BY id",
        "SELECT sum(s), sum(k), avg(s), avg(r), sum(r), pg_typeof(sum(r)), pg_typeof(avg(r)) FROM ta",
        "SELECT id, r, r + 0.1, r * 3, r::float8, r = 1.5, r::numeric FROM ta ORDER BY id",
        "SELECT id, d::real, d::text, r::text, round(d::numeric, 2), round(r), round(n, 1) FROM ta ORDER BY id",
        "SELECT 1e15::float8, 1e16::float8, 1.5e-7::float8, 123456789012345678::float8, 0.1::float4, 1e10::float4, 3.4028235e38::float4, 1e-45::float4",
        "SELECT 100::float8, 1e100::float8, -1e-5::float8, 12345678.9::float8, 0.000123::float8, 1 / 3::float8",
        "SELECT 2.0 ^ 10000",
        "SELECT 1.5 ^ 100, power(10::numeric, 40), 0.5 ^ 100, 1.1 ^ -300, (-3.0) ^ 101, 12345678901234567890.5 ^ 3",
        "SELECT 2.0 ^ 0.5, 10.0 ^ 30.5, 1.000001 ^ 1000000, 7.123456789 ^ 3.3, 0.001 ^ 0.25, 1234.5678 ^ -0.75, 1e300 ^ 2, 1e-300 ^ 2",
        "SELECT 2.5 ^ 2, 2.5 ^ 1, 2.5 ^ 0, 2.5 ^ -1, 2.5 ^ -2, 0.0 ^ 0, 0.0 ^ 3, 1.0 ^ 1e10, 3 ^ 2.0, 2::numeric ^ 3",
        "SELECT 1.0000000000000000000000000000001 ^ 3, 2 ^ 0.5::numeric, 100000000000000000000000000000000000000000.5 ^ 2, 0.12345678901234567890123456789012345",
        "SELECT id, n ^ 2, n ^ 0.5, power(n, 3), n ^ -1, power(n, 2.5) FROM ta WHERE n > 0 ORDER BY id",
        "SELECT 0.0 ^ -1",
        "SELECT (-2.0) ^ 0.5",
        "SELECT 10.0 ^ 131072",
        "SELECT 0.5 ^ 1e10",
        "SELECT 'NaN'::numeric + 1",
        "SELECT 1e300::float8::numeric, 1e-30::float8::numeric, 1.5e-7::float8::numeric, 123456789012345678::float8::numeric, 0.1::float4::numeric, 1e-45::float4::numeric, 3.4e38::float4::numeric, (-0.0)::float8::numeric, 1e-310::float8::numeric, 1e28::float8::numeric",
        "SELECT 'nan'::numeric, ' NaN '::numeric, 'NAN'::numeric * 0, 'NaN'::numeric / 0, 1 / 'NaN'::numeric, 'NaN'::numeric % 0, -'NaN'::numeric, pg_typeof('NaN'::numeric)",
        "SELECT 'NaN'::numeric = 'NaN'::numeric, 'NaN'::numeric > 1e300, 'NaN'::numeric < 1, 'NaN'::numeric <> 'NaN'::numeric, 'NaN'::numeric >= 'NaN'::numeric",
        "SELECT 'NaN'::numeric::float8, 'NaN'::float8::numeric, 'NaN'::numeric::real, 'NaN'::numeric::text, 'NaN'::numeric(5,2), 'NaN'::numeric::float8 = 'NaN'::float8",
        "SELECT 'NaN'::numeric::int",
        "SELECT 'NaN'::numeric::bigint",
        "SELECT abs('NaN'::numeric), round('NaN'::numeric, 2), sqrt('NaN'::numeric), sign('NaN'::numeric), floor('NaN'::numeric), trunc('NaN'::numeric)",
        "SELECT 'NaN'::numeric ^ 0, 1.0 ^ 'NaN'::numeric, 'NaN'::numeric ^ 2, 2 ^ 'NaN'::numeric",
        "SELECT 'NaN'::numeric IN (1, 'NaN'), greatest(1, 'NaN'::numeric), least(1, 'NaN'::numeric), coalesce(NULL, 'NaN'::numeric)",
        "SELECT id, n, n + 1, n * 2, n < 'NaN', n = 'NaN', n::float8, f::numeric, round(n, 1), n / 2 FROM tn ORDER BY id",
        "SELECT id, n FROM tn ORDER BY n, id",
        "SELECT id, n FROM tn ORDER BY n DESC NULLS LAST, id",
        "SELECT n, count(*) FROM tn GROUP BY n ORDER BY n",
        "SELECT DISTINCT n FROM tn ORDER BY n",
        "SELECT sum(n), avg(n), max(n), min(n), count(n), var_pop(n), stddev(n), sum(f::numeric) FROM tn",
        "SELECT sum(n), max(n), var_samp(n), var_pop(n), stddev_samp(n), avg(n) FROM tn WHERE id = 1",
        "SELECT id % 2 AS odd, sum(n), avg(n), max(n) FROM tn WHERE id < 6 GROUP BY odd ORDER BY odd",
        "SELECT id, n::int FROM tn ORDER BY id",
        "SELECT a.id, b.id FROM tn a JOIN tn b ON a.n = b.n ORDER BY a.id, b.id",
        "SELECT 'a' + 'b'",
        "SELECT generate_series(1, 3), generate_series('2001-01-01'::timestamp, '2001-01-03', '1 day')",
        "SELECT * FROM generate_series(5, 1, -2)",
        "SELECT id, num_nulls(t, v), num_nonnulls(t, v, k) FROM ta ORDER BY id",
        "SELECT id, cbrt(abs(d)), degrees(1), pi(), gcd(12, 18), div(7, 2), scale(n) FROM ta ORDER BY id",
        "SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY d), mode() WITHIN GROUP (ORDER BY k) FROM ta",
        "SELECT gcd(12::int8, -18), lcm(4, 6), lcm(-4::int8, 6), gcd(12.5, 7.5), lcm(12.0, 8.00), gcd(0, 0), pg_typeof(gcd(1, 2::int8))",
        "SELECT pg_typeof(nullif(1, 1.0)), pg_typeof(nullif(1.0, 1)), pg_typeof(nullif(1, 1::float4)), pg_typeof(nullif(1::float4, 1::float8)), pg_typeof(nullif(1::float8, 1::float4)), pg_typeof(nullif(1.0, 1::float8)), pg_typeof(nullif(1::int2, 1::int8)), nullif(2, 2.0), nullif(2.5, 2::float8), nullif('a'::varchar, 'b')",
        "SELECT gcd(-2147483648, 0)",
        "SELECT lcm(2147483647, 2147483646)",
        "SELECT id, gcd(k, 6), lcm(k, 4), div(n, 0.7), div(-7.5, 2), scale(n * 10), radians(d), degrees(d) FROM ta ORDER BY id",
        "SELECT div(1, 0)",
        "SELECT make_date(2001, 2, 28), make_date(-44, 3, 15), make_time(1, 2, 3.5), make_time(23, 59, 60)",
        "SELECT make_date(2001, 2, 29)",
        "SELECT make_date(0, 1, 1)",
        "SELECT make_time(25, 0, 0)",
        "SELECT make_time(2147483647, 59, 59)",
        "SELECT make_time(-2147483648, 0, 0)",
        "SELECT translate('abcb', 'ab', 'x'), translate('straße', 'ß', 'S'), num_nulls(NULL, 1, NULL), num_nonnulls(NULL)",
        "SELECT isfinite('infinity'::date), isfinite('-infinity'::timestamp), isfinite(now()), isfinite(interval '1 day')",
        "SELECT interval '1 mon 1 day 1 sec' * 0.7, interval '1 mon' * 0.3333333, interval '1 day 10:00' / 3.3, interval '-1 mon -1 day' / 7, interval '1 year' / 7, interval '1 mon' * -0.5",
        "SELECT 1e300::float8 * 1e300, 1::float8 / 1e-310::float8",
        "SELECT 1e-30::float4 * 1e-30::float4",
        "SELECT 1e-300::float8 / 1e300",
        "SELECT 0::float8 * 1e-300, 1e-300::float8 / 'Infinity'::float8, 1e-300::float8 * 1e-5",
        "SELECT upper('ǆ ß ﬀ'), lower('ǅ İ Σ'), initcap('İSTANBUL straße')",
        "SELECT corr(d, k), bit_and(k), bit_or(k) FROM ta",
        "SELECT covar_pop(d, k), covar_samp(k, r), regr_count(n, s), regr_sxx(d, big), regr_syy(r, k), regr_sxy(n, k), regr_avgx(d, k), regr_avgy(d, k), regr_r2(d, k), regr_slope(k, s), regr_intercept(k, s), corr(n, s) FROM ta",
        "SELECT k, corr(id, s), regr_count(id, r), covar_samp(id, id), covar_pop(id, 2), regr_slope(id, 1), regr_r2(1, id), regr_intercept(s, id) FROM ta GROUP BY k ORDER BY k",
        "SELECT corr(d, k), regr_count(d, k), covar_pop(d, k) FROM ta WHERE false",
        "SELECT id, corr(id, k) OVER (ORDER BY id), regr_slope(s, id) OVER (ORDER BY id) FROM ta ORDER BY id",
        "SELECT corr(t, k) FROM ta",
        "SELECT corr(d) FROM ta",
        "SELECT regr_sxx(1e308, id) FROM ta",
        "SELECT percentile_cont(0.25) WITHIN GROUP (ORDER BY k), percentile_disc(0.25) WITHIN GROUP (ORDER BY n), percentile_cont(0.7) WITHIN GROUP (ORDER BY iv), percentile_disc(0.5) WITHIN GROUP (ORDER BY t), percentile_disc(1) WITHIN GROUP (ORDER BY ts DESC), mode() WITHIN GROUP (ORDER BY b), percentile_cont(0) WITHIN GROUP (ORDER BY r) FROM ta",
        "SELECT k, percentile_cont(0.5) WITHIN GROUP (ORDER BY id), percentile_disc(0.5) WITHIN GROUP (ORDER BY s), mode() WITHIN GROUP (ORDER BY v) FROM ta GROUP BY k ORDER BY k",
        "SELECT pg_typeof(percentile_cont(0.5) WITHIN GROUP (ORDER BY k)), pg_typeof(percentile_disc(0.5) WITHIN GROUP (ORDER BY s)), pg_typeof(mode() WITHIN GROUP (ORDER BY v)), pg_typeof(percentile_disc(0.1) WITHIN GROUP (ORDER BY tz)) FROM ta",
        "SELECT percentile_cont(1.5) WITHIN GROUP (ORDER BY d) FROM ta",
        "SELECT percentile_cont(ARRAY[0.25, 0.5, 1]) WITHIN GROUP (ORDER BY d), percentile_disc(ARRAY[0.5, NULL]) WITHIN GROUP (ORDER BY t), pg_typeof(percentile_disc(ARRAY[0.5]) WITHIN GROUP (ORDER BY t)), percentile_cont(ARRAY[0.1, 0.9]) WITHIN GROUP (ORDER BY iv), pg_typeof(percentile_cont(ARRAY[0.5]) WITHIN GROUP (ORDER BY k)) FROM ta",
        "SELECT k, percentile_disc(ARRAY[0, 0.5, 1]) WITHIN GROUP (ORDER BY id) FROM ta GROUP BY k ORDER BY k",
        "SELECT percentile_cont(ARRAY[0.5, 2]) WITHIN GROUP (ORDER BY d) FROM ta",
        "SELECT percentile_cont(ARRAY['a']) WITHIN GROUP (ORDER BY d) FROM ta",
        // A single fraction is checked even over no rows (or only NULLs); an array of
        // them is not.
        "SELECT percentile_cont(-0.1) WITHIN GROUP (ORDER BY d) FROM ta WHERE false",
        "SELECT percentile_disc(1.5) WITHIN GROUP (ORDER BY t) FROM ta WHERE id > 100",
        "SELECT percentile_cont('NaN'::float8) WITHIN GROUP (ORDER BY x) FROM (SELECT 1 AS x WHERE false) s",
        "SELECT percentile_cont(2) WITHIN GROUP (ORDER BY r) FROM ta WHERE r IS NULL",
        "SELECT percentile_cont(NULL) WITHIN GROUP (ORDER BY d), percentile_disc(ARRAY[0.5, 2]) WITHIN GROUP (ORDER BY d), mode() WITHIN GROUP (ORDER BY d), percentile_cont(0.5) WITHIN GROUP (ORDER BY d) FROM ta WHERE false",
        "SELECT k, percentile_disc(1.5) WITHIN GROUP (ORDER BY id) FROM ta WHERE false GROUP BY k",
        "SELECT percentile_cont(0.5) FROM ta",
        "SELECT sum(k) WITHIN GROUP (ORDER BY k) FROM ta",
        "SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY t) FROM ta",
        "SELECT mode() WITHIN GROUP (ORDER BY k) OVER () FROM ta",
        "SELECT '2001-01-01 10:00 PST'::timestamptz, '2001-01-01 10:00 Europe/Paris'::timestamptz",
        "SELECT '2001-07-01 10:00 PDT'::timestamptz, '2001-01-01 10:00 EST'::timestamptz, '2001-01-01 10:00 CET'::timestamptz, '2001-07-01 10:00 CEST'::timestamptz, '2001-01-01 10:00 JST'::timestamptz, '2001-01-01 10:00 MSK'::timestamptz",
        "SELECT '2001-07-01 10:00 europe/paris'::timestamptz, '2001-07-01 10:00 America/New_York'::timestamptz, '2001-03-11 02:30 America/New_York'::timestamptz, '2001-01-01 10:00 America/Port-au-Prince'::timestamptz, '2001-01-01 10:00 EST5EDT'::timestamptz",
        "SELECT '2001-01-01T10:00:00Z'::timestamptz, '2001-01-01 10:00 zulu'::timestamptz, '2001-01-01 10:00 UTC+3'::timestamptz, '2001-01-01 10:00 GMT-3'::timestamptz, '2001-01-01 10:00-0530'::timestamptz",
        "SELECT '2001-01-01 10:00 PST'::timestamp, '2001-01-01 10:00 Europe/Paris'::timestamp, '2001-01-01 Europe/Paris'::date, '2001-01-01 10:00 AD PST'::timestamptz, '2001-01-01 Asia/Kolkata'::timestamptz",
        "SELECT '2001-01-01 10:00 Nowhere/Land'::timestamptz",
        "SELECT '2001-01-01 10:00 XYZ'::timestamptz",
        "SELECT id, ts::text || ' Europe/Paris', (ts::text || ' Europe/Paris')::timestamptz, (ts::text || ' PST')::timestamptz FROM ta ORDER BY id",
        "SELECT 'abc' COLLATE \"C\" < 'abd', 'a' < 'B', 'Z' < 'a', 'é' > 'f', '' < ' '",
    ] {
        out.push(q.to_string());
    }
}

/// A small seeded generator (xorshift64*), so every run draws the same queries.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    fn pick<'a, T>(&mut self, v: &'a [T]) -> &'a T {
        &v[self.below(v.len())]
    }
    fn chance(&mut self, percent: u64) -> bool {
        self.next() % 100 < percent
    }
}

fn literal(rng: &mut Rng, kind: Kind) -> String {
    match kind {
        Kind::Int => rng
            .pick(&["0", "1", "2", "-3", "7", "32767", "4611686018427387904"])
            .to_string(),
        Kind::Float => rng
            .pick(&["0", "1.5", "-2.25", "2.5", "1e10", "-0.0"])
            .to_string(),
        Kind::Numeric => rng
            .pick(&["0", "1.25", "2.5", "-7.5", "100.125"])
            .to_string(),
        Kind::Text => rng
            .pick(&["'abc'", "'a'", "'b'", "''", "'日本'", "'Z'"])
            .to_string(),
        Kind::Bool => rng.pick(&["true", "false"]).to_string(),
        Kind::Time => rng
            .pick(&["'2001-01-01 10:00:00'", "'2000-06-01'", "'2010-01-01'"])
            .to_string(),
        Kind::Interval => rng.pick(&["'1 hour'", "'1 day'", "'0'"]).to_string(),
    }
}

fn atom(rng: &mut Rng) -> String {
    let (c, kind) = *rng.pick(COLUMNS);
    match rng.below(6) {
        0 => format!("{c} IS {}NULL", if rng.chance(50) { "NOT " } else { "" }),
        1 if is_number(kind) => {
            let (a, b) = (literal(rng, kind), literal(rng, kind));
            format!("{c} BETWEEN {a} AND {b}")
        }
        2 if kind == Kind::Text => {
            format!("{c} LIKE {}", rng.pick(&["'a%'", "'%b%'", "'_'", "'%'"]))
        }
        3 if kind == Kind::Bool => format!("{}{c}", if rng.chance(50) { "NOT " } else { "" }),
        4 => {
            let (a, b) = (literal(rng, kind), literal(rng, kind));
            format!("{c} IN ({a}, {b})")
        }
        _ => {
            let op = rng.pick(&["=", "<>", "<", "<=", ">", ">="]);
            format!("{c} {op} {}", literal(rng, kind))
        }
    }
}

fn predicate(rng: &mut Rng) -> String {
    let mut p = atom(rng);
    for _ in 0..rng.below(3) {
        let op = if rng.chance(60) { "AND" } else { "OR" };
        p = format!("{p} {op} {}", atom(rng));
    }
    if rng.chance(15) {
        p = format!("NOT ({p})");
    }
    p
}

fn aggregate_call(rng: &mut Rng) -> String {
    let (c, kind) = *rng.pick(COLUMNS);
    let funcs: &[&str] = match kind {
        Kind::Int | Kind::Float | Kind::Numeric => {
            &["count", "sum", "avg", "min", "max", "stddev", "var_pop"]
        }
        Kind::Interval => &["count", "sum", "avg", "min", "max"],
        Kind::Bool => &["count", "bool_and", "bool_or"],
        Kind::Text | Kind::Time => &["count", "min", "max"],
    };
    let f = rng.pick(funcs);
    if *f == "count" && rng.chance(30) {
        "count(*)".into()
    } else {
        format!("{f}({c})")
    }
}

/// `n` seeded-random SELECT-WHERE-GROUP BY queries, each ordered totally.
pub fn random(seed: u64, n: usize) -> Vec<String> {
    let mut rng = Rng(seed | 1);
    let keys = ["k", "s", "b", "t", "v", "ts", "d", "n"];
    (0..n)
        .map(|_| {
            let from = FROMS[rng.below(2)];
            let filter = if rng.chance(75) {
                format!(" WHERE {}", predicate(&mut rng))
            } else {
                String::new()
            };
            if rng.chance(70) {
                let mut group: Vec<&str> = Vec::new();
                for _ in 0..rng.below(3) {
                    let g = *rng.pick(&keys);
                    if !group.contains(&g) {
                        group.push(g);
                    }
                }
                let mut items: Vec<String> = group.iter().map(|g| g.to_string()).collect();
                for _ in 0..1 + rng.below(3) {
                    items.push(aggregate_call(&mut rng));
                }
                let mut q = format!("SELECT {} FROM {from}{filter}", items.join(", "));
                if !group.is_empty() {
                    q += &format!(" GROUP BY {}", group.join(", "));
                    if rng.chance(25) {
                        q += " HAVING count(*) > 1";
                    }
                    let ordinals: Vec<String> = (1..=group.len()).map(|i| i.to_string()).collect();
                    q += &format!(" ORDER BY {}", ordinals.join(", "));
                }
                q
            } else {
                let mut items = vec!["id".to_string()];
                for _ in 0..1 + rng.below(3) {
                    items.push(rng.pick(COLUMNS).0.to_string());
                }
                format!(
                    "SELECT {} FROM {from}{filter} ORDER BY id",
                    items.join(", ")
                )
            }
        })
        .collect()
}
