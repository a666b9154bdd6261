//! Statements that once ended the whole `tcqd` process, and statements whose error was not
//! PostgreSQL's. The server runs as a child process, so that a regression shows as a dead
//! server (and this test failing) rather than as the test binary aborting; after each
//! group of cases a `SELECT 1` proves the server still serves.

use crate::common;

use common::tcqd::Tcqd;
use common::{exec, rows, sqlstate, table};

/// A `tcqd` in memory without a console, and a client connected to it.
async fn server() -> (Tcqd, tokio_postgres::Client) {
    let t = Tcqd::start(["--memory-only", "--http", "off"]);
    let c = common::connect(t.port).await;
    (t, c)
}

/// The SQLSTATE and message of a simple query that must fail.
async fn error(c: &tokio_postgres::Client, sql: &str) -> (String, String) {
    let e = c
        .simple_query(sql)
        .await
        .expect_err(&format!("{} must fail", &sql[..sql.len().min(80)]));
    let message = e
        .as_db_error()
        .map_or(String::new(), |d| d.message().into());
    (sqlstate(&e), message)
}

/// The server still answers, on a fresh connection.
async fn alive(t: &Tcqd) {
    let c = common::connect(t.port).await;
    assert_eq!(rows(&c, "SELECT 1").await, table(&[&["1"]]));
}

/// `$n` names a parameter: a number no Bind could fill (more than 65,535, the protocol's
/// 16-bit count) used to size the statement's parameter list, so `SELECT $99999999999`
/// asked for 800 GB and aborted the process. Now, as in PostgreSQL, such a number, `$0`,
/// and any `$n` of a simple query (which has no parameters) are 42P02.
#[tokio::test]
async fn parameter_numbers_are_bounded() {
    let (t, c) = server().await;
    for (sql, n) in [
        ("SELECT $99999999999", "$99999999999"),
        ("SELECT $65536", "$65536"),
        ("SELECT $0", "$0"),
        ("SELECT $1", "$1"),
        ("SELECT $2", "$2"),
        ("SELECT 1 UNION SELECT $1000000000", "$1000000000"),
        (
            "SELECT * FROM pg_class WHERE oid = $99999999999",
            "$99999999999",
        ),
    ] {
        assert_eq!(
            error(&c, sql).await,
            ("42P02".into(), format!("there is no parameter {n}")),
            "{sql}"
        );
    }
    let e = c
        .prepare("SELECT $4294967296::int")
        .await
        .expect_err("past the protocol's parameters");
    assert_eq!(sqlstate(&e), "42P02");
    exec(&c, "CREATE STREAM s (ts timestamp TIMESTAMPCOLUMN, v int)").await;
    assert_eq!(
        error(&c, "INSERT INTO s VALUES ('2001-01-01', $1)").await.0,
        "42P02"
    );
    assert_eq!(
        error(&c, "SELECT v FROM s [RANGE BY '1 second'] WHERE v = $1").await,
        ("42P02".into(), "there is no parameter $1".into())
    );
    assert_eq!(
        error(&c, "CREATE TABLE t (a int DEFAULT $1)").await.0,
        "42P02"
    );
    // Through the extended protocol the same statements take their values.
    let r = c
        .query_one("SELECT $2::int + 0 * $1::int", &[&1i32, &7i32])
        .await
        .unwrap();
    assert_eq!(r.get::<_, i32>(0), 7);
    alive(&t).await;
}
