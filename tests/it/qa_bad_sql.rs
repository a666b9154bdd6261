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

/// A chain of set operations nests one level per operation in the parsed statement; the
/// binder walked it without growing its stack, so 800 `UNION ALL`s overflowed a worker
/// thread's stack and aborted the process. PostgreSQL answers 5,000 of them.
#[tokio::test]
async fn long_chains_of_set_operations() {
    let (t, c) = server().await;
    for (op, n, count) in [
        ("UNION ALL", 5_000, "5000"),
        ("UNION", 5_000, "1"),
        ("INTERSECT", 3_000, "1"),
        ("EXCEPT", 3_000, "0"),
    ] {
        let chain = vec!["SELECT 1"; n].join(&format!(" {op} "));
        let sql = format!("SELECT count(*) FROM ({chain}) AS u");
        assert_eq!(rows(&c, &sql).await, table(&[&[count]]), "{op} x {n}");
    }
    // Far longer chains are refused with PostgreSQL's stack depth error, never a crash.
    let chain = vec!["SELECT 1"; 60_000].join(" UNION ALL ");
    let (code, _) = error(&c, &chain).await;
    assert_eq!(code, "54001");
    alive(&t).await;
}

/// Parentheses, calls, CASE and NOT nest as deep as expressions may (1,000 levels, as the
/// SQL reference says), not the parser's former 50; deeper is 54001, never a crash.
#[tokio::test]
async fn nesting_as_deep_as_documented() {
    let (t, c) = server().await;
    let nested = |open: &str, inner: &str, close: &str, n: usize| {
        format!("SELECT {}{inner}{}", open.repeat(n), close.repeat(n))
    };
    assert_eq!(
        rows(&c, &nested("(", "1", ")", 900)).await,
        table(&[&["1"]])
    );
    assert_eq!(
        rows(&c, &nested("abs(", "-2", ")", 900)).await,
        table(&[&["2"]])
    );
    assert_eq!(
        rows(&c, &nested("CASE WHEN true THEN ", "4", " END", 400)).await,
        table(&[&["4"]])
    );
    assert_eq!(
        rows(&c, &nested("NOT ", "true", "", 600)).await,
        table(&[&["t"]])
    );
    assert_eq!(
        rows(&c, &nested("(SELECT ", "3", ")", 60)).await,
        table(&[&["3"]])
    );
    // Subqueries have a limit of their own (64 levels, 54001).
    assert_eq!(
        error(&c, &nested("(SELECT ", "3", ")", 70)).await.0,
        "54001"
    );
    for sql in [
        nested("(", "1", ")", 1_100),
        nested("abs(", "1", ")", 5_000),
        nested("(SELECT ", "1", ")", 100_000),
        nested("CASE WHEN true THEN ", "1", " END", 5_000),
        nested("NOT ", "true", "", 5_000),
    ] {
        assert_eq!(error(&c, &sql).await.0, "54001");
    }
    alive(&t).await;
}

/// The SQLSTATEs PostgreSQL gives for bad regular expressions, substrings, LIKE escapes
/// and numbers beyond numeric's range.
#[tokio::test]
async fn errors_carry_postgres_sqlstates() {
    let (t, c) = server().await;
    for (sql, code) in [
        ("SELECT 'a' ~ '('", "2201B"),
        ("SELECT 'a' ~* '[z-a]'", "2201B"),
        ("SELECT substring('abc' from 1 for -1)", "22011"),
        ("SELECT substr('abc', 1, -1)", "22011"),
        ("SELECT 'abc' LIKE 'a\\'", "22025"),
        ("SELECT 'abc' LIKE 'a' ESCAPE 'xx'", "22025"),
        ("SELECT 'abc' ILIKE 'a!' ESCAPE '!'", "22025"),
        ("SELECT 1e131072", "22003"),
        ("SELECT '1e400'::numeric", "22003"),
        ("SELECT '-1e99999999999999999999'::numeric", "22003"),
        ("SELECT '1e'::numeric", "22P02"),
        ("SELECT 'e5'::numeric", "22P02"),
    ] {
        assert_eq!(error(&c, sql).await.0, code, "{sql}");
    }
    // A stream keeps no rows to constrain: a column constraint is refused as such, not
    // read as part of the type's name (`type "integer NOT NULL" does not exist`).
    for sql in [
        "CREATE STREAM c (ts timestamp TIMESTAMPCOLUMN, v integer NOT NULL)",
        "CREATE STREAM c (ts timestamp TIMESTAMPCOLUMN, v integer DEFAULT 5)",
        "CREATE STREAM c (ts timestamp TIMESTAMPCOLUMN, v numeric(5, 2) PRIMARY KEY)",
        "CREATE STREAM c (ts timestamp TIMESTAMPCOLUMN NOT NULL, v integer)",
    ] {
        let (code, message) = error(&c, sql).await;
        assert_eq!(code, "0A000", "{sql}: {message}");
        assert!(message.starts_with("column constraints are not supported in a stream"));
    }
    // A numeric with more digits after the point than numeric keeps is rounded, with an
    // exponent as without one.
    assert_eq!(
        rows(
            &c,
            "SELECT '1e-30'::numeric, '0.000000000000000000000000000001'::numeric, \
             '-1.5e3'::numeric, '25e-1'::numeric, 'a!%' LIKE 'a!!!%' ESCAPE '!'"
        )
        .await,
        table(&[&[
            "0.0000000000000000000000000000",
            "0.0000000000000000000000000000",
            "-1500",
            "2.5",
            "t"
        ]])
    );
    alive(&t).await;
}

/// The limit on a window's open instances names the window as it was written, not as the
/// executor's internal form (`<range 3600000000us, slide 1us, start epoch>`). A join keeps
/// every open instance of its windows; a single-stream aggregate slides over panes and is
/// accepted with the same window.
#[tokio::test]
async fn window_limits_name_the_window_as_written() {
    let (t, c) = server().await;
    exec(&c, "CREATE STREAM a (ts timestamp TIMESTAMPCOLUMN, k int)").await;
    exec(&c, "CREATE STREAM b (ts timestamp TIMESTAMPCOLUMN, k int)").await;
    let (code, message) = error(
        &c,
        "SELECT count(*) FROM a [RANGE BY '1 hour' SLIDE BY '1 microsecond'] \
         JOIN b [RANGE BY '1 hour' SLIDE BY '1 microsecond'] ON a.k = b.k",
    )
    .await;
    assert_eq!(code, "54000");
    assert_eq!(
        message,
        "window [RANGE BY '1 hour' SLIDE BY '1 microsecond'] keeps 3600000001 instances open; \
         the limit is 100000 (open_instances_max)"
    );
    let plan = c
        .simple_query("EXPLAIN SELECT count(*) FROM a [RANGE BY '1 hour' SLIDE BY '1 microsecond']")
        .await
        .expect("a sliding aggregate over a long window is planned");
    assert!(!plan.is_empty());
    alive(&t).await;
}
