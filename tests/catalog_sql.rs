//! Plain SQL over the system catalogs through tokio-postgres: the extended protocol with
//! bound parameters and binary results (every value arrives with the type RowDescription
//! announced), a cursor over a catalog query, and catalog errors with their SQLSTATEs.

mod common;

use common::{connect, sqlstate, start_server};

#[tokio::test]
async fn catalog_queries_bind_parameters_and_decode_in_binary() {
    let port = start_server();
    let c = connect(port).await;
    c.batch_execute(
        "CREATE STREAM flights (ts timestamptz TIMESTAMPCOLUMN, delay integer, origin varchar(3))",
    )
    .await
    .unwrap();
    // tokio-postgres prepares (Parse/Describe), then reads every column in binary.
    let rows = c
        .query(
            "SELECT c.oid, a.attnum, a.attname, pg_catalog.format_type(a.atttypid, a.atttypmod), \
                    a.attnotnull, t.typlen \
             FROM pg_catalog.pg_class c \
             JOIN pg_catalog.pg_attribute a ON a.attrelid = c.oid \
             JOIN pg_catalog.pg_type t ON t.oid = a.atttypid \
             WHERE c.relname = $1 AND a.attnum > $2 ORDER BY a.attnum",
            &[&"flights", &0i16],
        )
        .await
        .unwrap();
    let got: Vec<(i64, i16, String, String, bool, i16)> = rows
        .iter()
        .map(|r| (r.get(0), r.get(1), r.get(2), r.get(3), r.get(4), r.get(5)))
        .collect();
    assert_eq!(
        got,
        vec![
            (
                16384,
                1,
                "ts".into(),
                "timestamp with time zone".into(),
                true,
                8
            ),
            (16384, 2, "delay".into(), "integer".into(), false, 4),
            (
                16384,
                3,
                "origin".into(),
                "character varying(3)".into(),
                false,
                -1
            ),
        ]
    );
    // Aggregates and regclass casts keep their announced types in binary too.
    let row = c
        .query_one(
            "SELECT count(*), sum(a.attnum), max(a.attname), 'flights'::regclass::oid, \
                    'flights'::regclass \
             FROM pg_catalog.pg_attribute a WHERE a.attrelid = 'flights'::regclass",
            &[],
        )
        .await
        .unwrap();
    assert_eq!(row.get::<_, i64>(0), 3);
    assert_eq!(row.get::<_, i64>(1), 6);
    assert_eq!(row.get::<_, String>(2), "ts");
    assert_eq!(row.get::<_, i64>(3), 16384);
    assert_eq!(row.get::<_, String>(4), "flights");
}

#[tokio::test]
async fn a_cursor_reads_a_catalog_query_and_errors_keep_their_class() {
    let port = start_server();
    let c = connect(port).await;
    c.batch_execute("CREATE STREAM s (ts timestamp TIMESTAMPCOLUMN, v integer)")
        .await
        .unwrap();
    let rows = common::rows(
        &c,
        "BEGIN; DECLARE cur CURSOR FOR SELECT attname FROM pg_attribute \
         WHERE attrelid = 's'::regclass ORDER BY attnum DESC; FETCH 1 FROM cur",
    )
    .await;
    assert_eq!(rows, vec![vec!["v".to_string()]]);
    let rows = common::rows(&c, "FETCH 5 FROM cur").await;
    assert_eq!(rows, vec![vec!["ts".to_string()]]);
    c.batch_execute("COMMIT").await.unwrap();
    for (sql, code) in [
        ("SELECT 'nope'::regclass", "42P01"),
        ("SELECT 'nope'::regtype", "42704"),
        ("SELECT nope FROM pg_class", "42703"),
        ("SELECT (SELECT relname FROM pg_class)", "21000"),
        ("SELECT relname FROM pg_class WHERE count(*) > 0", "42803"),
        (
            "SELECT count(*) FROM pg_attribute a, pg_attribute b, pg_attribute c",
            "54000",
        ),
        ("SELECT 1 = ANY('{')", "22P02"),
        ("SELECT * FROM pg_class LIMIT -1", "2201W"),
    ] {
        let e = c.simple_query(sql).await.unwrap_err();
        assert_eq!(sqlstate(&e), code, "{sql}: {e}");
    }
    // The server serves on.
    let n = c
        .query_one("SELECT count(*) FROM pg_namespace", &[])
        .await
        .unwrap();
    assert_eq!(n.get::<_, i64>(0), 3);
}
