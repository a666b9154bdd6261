//! `numeric(p, s)` columns store what PostgreSQL stores: values rounded half away from
//! zero to the scale, shown with that scale, and 22003 "numeric field overflow" (with
//! PostgreSQL's DETAIL) for a value with more digits before the point than the precision
//! leaves; through INSERT, UPDATE and COPY (the per-row and the two-thread paths), into
//! tables and streams; the catalog shows the modifier. `timestamp(p)`, `timestamptz(p)` and
//! `time(p)` columns likewise store their values rounded to p fractional digits.

use crate::common;

async fn copy_in(
    c: &tokio_postgres::Client,
    sql: &str,
    data: &[u8],
) -> Result<u64, tokio_postgres::Error> {
    common::copy_in(c, sql, data, 64 << 10).await
}

#[tokio::test]
async fn numeric_columns_round_to_their_scale_and_check_their_precision() {
    let port = common::start_server();
    let c = common::connect(port).await;
    common::exec(
        &c,
        "CREATE TABLE n (k integer PRIMARY KEY, y numeric(5,2), z decimal(3))",
    )
    .await;
    common::exec(
        &c,
        "INSERT INTO n VALUES (1, 123.456, 1.5), (2, 1, -2.5), (3, -0.005, 999.4)",
    )
    .await;
    let err = c
        .batch_execute("INSERT INTO n VALUES (4, 1234.5, 0)")
        .await
        .expect_err("past the precision");
    let db = err.as_db_error().expect("a server error");
    assert_eq!(db.code().code(), "22003");
    assert_eq!(db.message(), "numeric field overflow");
    assert_eq!(
        db.detail(),
        Some("A field with precision 5, scale 2 must round to an absolute value less than 10^3.")
    );
    // 999.995 rounds up to 1000.00, which no longer fits.
    let err = c
        .batch_execute("INSERT INTO n VALUES (5, 999.995, 0)")
        .await
        .unwrap_err();
    assert_eq!(common::sqlstate(&err), "22003");
    // COPY, one row at a time (a quoted field takes the per-row path) and UPDATE.
    copy_in(&c, "COPY n FROM STDIN (FORMAT csv)", b"6,\"2.345\",7.5\n")
        .await
        .unwrap();
    let err = copy_in(&c, "COPY n FROM STDIN (FORMAT csv)", b"7,1,1\n8,100000,1\n")
        .await
        .unwrap_err();
    assert_eq!(common::sqlstate(&err), "22003");
    common::exec(&c, "UPDATE n SET y = y / 3 WHERE k = 2").await;
    assert_eq!(
        common::rows(&c, "SELECT k, y, z FROM n ORDER BY k").await,
        common::table(&[
            &["1", "123.46", "2"],
            &["2", "0.33", "-3"],
            &["3", "-0.01", "999"],
            &["6", "2.35", "8"],
        ])
    );
    // The catalog shows the modifier, as psql's \d reads it.
    let rows = common::rows(
        &c,
        "SELECT a.attname, format_type(a.atttypid, a.atttypmod) FROM pg_attribute a \
         JOIN pg_class r ON r.oid = a.attrelid WHERE r.relname = 'n' AND a.attnum > 0 \
         ORDER BY a.attnum",
    )
    .await;
    assert_eq!(
        rows,
        common::table(&[
            &["k", "integer"],
            &["y", "numeric(5,2)"],
            &["z", "numeric(3,0)"]
        ])
    );
    for (sql, state) in [
        ("CREATE TABLE bad (x numeric(1001))", "22023"),
        ("CREATE TABLE bad (x numeric(0))", "22023"),
        ("CREATE TABLE bad (x varchar(10485761))", "22023"),
    ] {
        let e = c.batch_execute(sql).await.unwrap_err();
        assert_eq!(common::sqlstate(&e), state, "{sql}");
    }
}

/// A stream's numeric(p, s) column: its queries aggregate the stored (rounded) values,
/// whether the rows came by INSERT, a small COPY or a large one parsed on two threads.
#[tokio::test]
async fn a_stream_aggregates_the_values_its_column_stores() {
    let port = common::start_server();
    let c = common::connect(port).await;
    common::exec(
        &c,
        "CREATE STREAM s (ts timestamp TIMESTAMPCOLUMN, v numeric(4,1))",
    )
    .await;
    let q = "DECLARE cur CURSOR FOR SELECT count(*), sum(v), max(v) FROM s \
             [RANGE BY '1 day' START AT '2001-01-01 00:00:00']";
    common::exec(&c, &format!("BEGIN; {q}")).await;
    common::wait_for_queries(&c, 1).await;
    // Rows come from another session (a failed COPY must not end the cursor's transaction).
    let reader = c;
    let c = common::connect(port).await;
    common::exec(
        &c,
        "INSERT INTO s VALUES ('2001-01-01 00:00:00', 0.04), ('2001-01-01 00:00:01', 0.05)",
    )
    .await;
    let n = 40_000;
    let data: String = (0..n)
        .map(|i| format!("2001-01-01 01:{:02}:{:02},1.25\n", i / 60 % 60, i % 60))
        .collect();
    assert!(
        data.len() > 512 << 10,
        "large enough for the two-thread parse"
    );
    copy_in(&c, "COPY s FROM STDIN (FORMAT csv)", data.as_bytes())
        .await
        .unwrap();
    let err = copy_in(
        &c,
        "COPY s FROM STDIN (FORMAT csv)",
        b"2001-01-01 02:00:00,999.96\n",
    )
    .await
    .unwrap_err();
    assert_eq!(common::sqlstate(&err), "22003");
    common::exec(&c, "INSERT INTO s VALUES ('2001-01-03 00:00:00', 0)").await;
    let rows = common::rows(&reader, "FETCH 1 FROM cur").await;
    // 0.04 -> 0.0, 0.05 -> 0.1, each 1.25 -> 1.3.
    let expected_sum = format!("{:.1}", 0.1 + 1.3 * n as f64);
    assert_eq!(
        rows,
        common::table(&[&[&(n + 2).to_string(), &expected_sum, "1.3"]])
    );
}

/// Explicit casts: to numeric(p, s) they round and check the precision (22003); to
/// varchar(n) they cut the text to n characters, where an assignment refuses it (22001).
#[tokio::test]
async fn explicit_casts_apply_the_modifier() {
    let port = common::start_server();
    let c = common::connect(port).await;
    assert_eq!(
        common::rows(
            &c,
            "SELECT 2.345::numeric(5,2), (-2.345)::numeric(5,2), 'abcdef'::varchar(3), \
             CAST('ab' AS varchar(3)), 'héllo'::varchar(2)"
        )
        .await,
        common::table(&[&["2.35", "-2.35", "abc", "ab", "hé"]])
    );
    let e = c
        .batch_execute("SELECT 1234.5::numeric(5,2)")
        .await
        .unwrap_err();
    assert_eq!(common::sqlstate(&e), "22003");
    common::exec(&c, "CREATE TABLE v (s varchar(3))").await;
    let e = c
        .batch_execute("INSERT INTO v VALUES ('abcdef')")
        .await
        .unwrap_err();
    assert_eq!(common::sqlstate(&e), "22001");
    common::exec(&c, "INSERT INTO v VALUES ('abcdef'::varchar(3))").await;
    assert_eq!(
        common::rows(&c, "SELECT s FROM v").await,
        common::table(&[&["abc"]])
    );
}

/// A numeric's binary form (`numeric_send`), as a client's driver reads it.
struct NumericBytes(Vec<u8>);

impl<'a> tokio_postgres::types::FromSql<'a> for NumericBytes {
    fn from_sql(
        _: &tokio_postgres::types::Type,
        raw: &'a [u8],
    ) -> Result<Self, Box<dyn std::error::Error + Sync + Send>> {
        Ok(NumericBytes(raw.to_vec()))
    }
    fn accepts(t: &tokio_postgres::types::Type) -> bool {
        *t == tokio_postgres::types::Type::NUMERIC
    }
}

/// Numeric NaN, as a driver binds it: no digits, sign NUMERIC_NAN (0xC000).
#[derive(Debug)]
struct NumericNaN;

impl tokio_postgres::types::ToSql for NumericNaN {
    fn to_sql(
        &self,
        _: &tokio_postgres::types::Type,
        out: &mut bytes::BytesMut,
    ) -> Result<tokio_postgres::types::IsNull, Box<dyn std::error::Error + Sync + Send>> {
        out.extend_from_slice(&[0, 0, 0, 0, 0xC0, 0, 0, 0]);
        Ok(tokio_postgres::types::IsNull::No)
    }
    fn accepts(t: &tokio_postgres::types::Type) -> bool {
        *t == tokio_postgres::types::Type::NUMERIC
    }
    tokio_postgres::types::to_sql_checked!();
}

/// Numeric `NaN` as PostgreSQL has it: read in any case from text, COPY and a binary
/// parameter, stored in a `numeric(p, s)` column (NaN fits every precision), sent in
/// text and binary, equal to itself, and absorbing in sums and averages, over a table
/// and over a stream's window.
#[tokio::test]
async fn numeric_nan_is_stored_sent_and_aggregated_as_postgresql() {
    let port = common::start_server();
    let c = common::connect(port).await;
    common::exec(&c, "CREATE TABLE t (id int, n numeric, m numeric(4,1))").await;
    common::exec(&c, "INSERT INTO t VALUES (1, 'NaN', 'nan'), (2, 2.5, 2.5)").await;
    copy_in(&c, "COPY t FROM STDIN", b"3\tNAN\t1\n")
        .await
        .unwrap();
    c.execute("INSERT INTO t VALUES (4, $1, $1)", &[&NumericNaN])
        .await
        .unwrap();
    assert_eq!(
        common::rows(
            &c,
            "SELECT id, n, m, n = 'NaN', n > 1e300 FROM t ORDER BY id"
        )
        .await,
        common::table(&[
            &["1", "NaN", "NaN", "t", "t"],
            &["2", "2.5", "2.5", "f", "f"],
            &["3", "NaN", "1.0", "t", "t"],
            &["4", "NaN", "NaN", "t", "t"],
        ])
    );
    assert_eq!(
        common::rows(&c, "SELECT sum(n), avg(n), max(n), min(n), sum(m) FROM t").await,
        common::table(&[&["NaN", "NaN", "NaN", "2.5", "NaN"]])
    );
    let row = c
        .query_one("SELECT n FROM t WHERE id = 1", &[])
        .await
        .unwrap();
    assert_eq!(row.get::<_, NumericBytes>(0).0, [0, 0, 0, 0, 0xC0, 0, 0, 0]);
    common::exec(
        &c,
        "CREATE STREAM s (ts timestamp TIMESTAMPCOLUMN, v numeric)",
    )
    .await;
    common::exec(
        &c,
        "BEGIN; DECLARE cur CURSOR FOR SELECT sum(v), max(v), count(*) FROM s \
         [RANGE BY '10 seconds' START AT '2001-01-01 00:00:00']",
    )
    .await;
    common::exec(
        &c,
        "INSERT INTO s VALUES ('2001-01-01 00:00:01', 1.5), ('2001-01-01 00:00:02', 'NaN'), \
         ('2001-01-01 00:00:11', 2), ('2001-01-01 00:00:25', 3)",
    )
    .await;
    assert_eq!(
        common::rows(&c, "FETCH 2 FROM cur").await,
        common::table(&[&["NaN", "NaN", "2"], &["2", "2", "1"]])
    );
}

/// A stream's `timestamp(0)` TIMESTAMPCOLUMN and `timestamptz(1)` column store their
/// values rounded half away from zero, through INSERT and COPY alike, so the window a
/// tuple falls in is the rounded time's (PostgreSQL's AdjustTimestampForTypmod).
#[tokio::test]
async fn stream_time_columns_round_to_their_digits() {
    let port = common::start_server();
    let c = common::connect(port).await;
    common::exec(&c, "SET TimeZone = 'UTC'").await;
    common::exec(
        &c,
        "CREATE STREAM s (ts timestamp(0) TIMESTAMPCOLUMN, v timestamptz(1))",
    )
    .await;
    common::exec(
        &c,
        "BEGIN; DECLARE cur CURSOR FOR SELECT ts, v, wtime(*) FROM s \
         [RANGE BY '10 seconds' START AT '2001-01-01 00:00:00']",
    )
    .await;
    let writer = common::connect(port).await;
    common::exec(
        &writer,
        "INSERT INTO s VALUES ('2001-01-01 00:00:09.5', '2001-01-01 10:00:00.06+00')",
    )
    .await;
    copy_in(
        &writer,
        "COPY s FROM STDIN (FORMAT csv)",
        b"2001-01-01 00:00:19.4,1960-06-01 00:00:00.25+00\n2001-01-01 00:00:40,2001-01-01 00:00:00+00\n",
    )
    .await
    .unwrap();
    assert_eq!(
        common::rows(&c, "FETCH 2 FROM cur").await,
        common::table(&[
            // 9.5 s rounds to 10 s: the tuple belongs to [10, 20).
            &[
                "2001-01-01 00:00:10",
                "2001-01-01 10:00:00.1+00",
                "2001-01-01 00:00:20"
            ],
            // Before 2000 the rounding is away from zero on the time before 2000-01-01:
            // .25 s past a second there is .75 s before the next, which rounds to .8.
            &[
                "2001-01-01 00:00:19",
                "1960-06-01 00:00:00.2+00",
                "2001-01-01 00:00:20"
            ],
        ])
    );
}
