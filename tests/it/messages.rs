//! Messages that misled a newcomer (issue 29), each pinned over a real socket: a back-fill
//! with an explicit START AT told the user to give a START AT (and replayed the whole log
//! to find the days it asked for); EXPLAIN's period R beside figures per hour; `\d` showed
//! neither a table's DEFAULT nor an archived stream's retention; a misspelt window clause
//! gave a syntax error without a position or hint; tcqd wrote ANSI colours into log files.

use crate::common;

use std::time::Duration;

use futures::StreamExt;
use tcq::engine::Config;
use tokio_postgres::{AsyncMessage, Client};

/// A connection whose NOTICEs arrive on the returned channel.
async fn connect_with_notices(port: u16) -> (Client, tokio::sync::mpsc::UnboundedReceiver<String>) {
    let (client, mut connection) =
        tokio_postgres::connect(&common::conn_string(port), tokio_postgres::NoTls)
            .await
            .unwrap();
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
    tokio::spawn(async move {
        let mut messages = futures::stream::poll_fn(move |cx| connection.poll_message(cx));
        while let Some(Ok(m)) = messages.next().await {
            if let AsyncMessage::Notice(n) = m {
                let _ = tx.send(n.message().to_string());
            }
        }
    });
    (client, rx)
}

/// 50 tuples on each day of January 2001, one INSERT a day, into stream `s`.
async fn fill_january(c: &Client) {
    for day in 1..=31 {
        let values: Vec<String> = (0..50)
            .map(|i| format!("('2001-01-{day:02} {:02}:{:02}:00', {i})", i / 3, i % 60))
            .collect();
        common::exec(c, &format!("INSERT INTO s VALUES {}", values.join(","))).await;
    }
}

/// A back-fill from an explicit START AT replays only the tuples from it on (the log is
/// filtered by time, so the first 29 days never reach the query) and sends no NOTICE
/// telling the user to give a START AT.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_backfill_from_start_at_replays_from_it_without_a_notice() {
    let dir = common::data_dir();
    let port = common::start_server_on(Config::default(), dir.path());
    let c = common::connect(port).await;
    common::exec(
        &c,
        "CREATE STREAM s (ts timestamp TIMESTAMPCOLUMN, v integer) TYPE ARCHIVED",
    )
    .await;
    fill_january(&c).await;
    let (reader, mut notices) = connect_with_notices(port).await;
    let query = tokio::spawn(async move {
        common::rows(
            &reader,
            "SELECT count(*), wtime(*) FROM s [RANGE BY '1 day' START AT '2001-01-30'] LIMIT 1",
        )
        .await
    });
    assert_eq!(
        query.await.unwrap(),
        common::table(&[&["50", "2001-01-31 00:00:00"]])
    );
    // A query that stays: what its back-fill replayed.
    let (reader, mut more) = connect_with_notices(port).await;
    tokio::spawn(async move {
        let _ = reader
            .simple_query("SELECT count(*) FROM s [RANGE BY '1 day' START AT '2001-01-30']")
            .await;
    });
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    let replayed = loop {
        let r = common::rows(&c, "SELECT backfill, backfill_tuples FROM tcq_queries").await;
        if r.first().is_some_and(|r| r[0] == "done") {
            break r[0][1].clone();
        }
        assert!(std::time::Instant::now() < deadline, "{r:?}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    assert_eq!(
        replayed, "100",
        "the 50 tuples of each of January 30 and 31"
    );
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert_eq!(notices.try_recv().ok(), None);
    assert_eq!(more.try_recv().ok(), None);
}

/// A live tuple before an explicit START AT gets a NOTICE that names the START AT, without
/// the hint to give one; without a START AT the hint stays.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tuple_before_start_at_is_told_so_without_the_start_at_hint() {
    let port = common::start_server();
    let c = common::connect(port).await;
    common::exec(
        &c,
        "CREATE STREAM t (ts timestamp TIMESTAMPCOLUMN, v integer)",
    )
    .await;
    let (reader, mut notices) = connect_with_notices(port).await;
    tokio::spawn(async move {
        let _ = reader
            .simple_query("SELECT count(*) FROM t [RANGE BY '1 hour' START AT '2001-01-02']")
            .await;
    });
    common::wait_for_queries(&c, 1).await;
    common::exec(&c, "INSERT INTO t VALUES ('2001-01-01 00:22:00', 1)").await;
    let notice = tokio::time::timeout(Duration::from_secs(10), notices.recv())
        .await
        .expect("a NOTICE")
        .unwrap();
    assert_eq!(
        notice,
        "tuple at 2001-01-01 00:22:00 precedes the first window of this query, which starts at 2001-01-02 00:00:00 (its START AT): the tuple is in no window"
    );
}

/// EXPLAIN's period line says why events per R and per hour differ.
#[tokio::test]
async fn explain_says_what_per_r_and_per_hour_count() {
    let port = common::start_server();
    let c = common::connect(port).await;
    common::exec(&c, "CREATE STREAM flights (ts timestamp TIMESTAMPCOLUMN, delay integer, distance integer, origin text, destination text)").await;
    let plan = common::rows(
        &c,
        "EXPLAIN SELECT origin, count(*), avg(delay), max(delay), wtime(*) FROM flights \
         [RANGE BY '1 hour' SLIDE BY '10 minutes' START AT '2001-01-01 00:00:00'] GROUP BY origin",
    )
    .await;
    let lines: Vec<&str> = plan.iter().map(|r| r[0].as_str()).collect();
    assert!(
        lines.contains(
            &"  Period R: 1 hour (events per R: the paper's cost, n = 1 + (R - r) / s instances of a window in one period; per hour: the long-run rate over every instance, which ranks the plans)"
        ),
        "{lines:#?}"
    );
    // The figures it explains: one instance of the 1-hour window lies within R, six close
    // every hour.
    assert!(
        lines
            .iter()
            .any(|l| l.contains("w1 <- raw: 3600000 events per R, 21600000 per hour")),
        "{lines:#?}"
    );
}

/// `pg_attrdef` and `atthasdef` hold a table's DEFAULTs, and psql's `\d` shows them; `\d`
/// of an archived stream shows its retention among its options.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn describe_shows_defaults_and_retention() {
    let dir = common::data_dir();
    let port = common::start_server_on(Config::default(), dir.path());
    let c = common::connect(port).await;
    common::exec(
        &c,
        "CREATE TABLE airports (code text PRIMARY KEY, hubs integer DEFAULT 0, name text DEFAULT 'unknown'); \
         CREATE STREAM a2 (ts timestamp TIMESTAMPCOLUMN, v integer) TYPE ARCHIVED WITH (retention = '30 days')",
    )
    .await;
    assert_eq!(
        common::rows(
            &c,
            "SELECT a.attname, a.atthasdef, pg_get_expr(d.adbin, d.adrelid) FROM pg_attribute a \
             LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum \
             WHERE a.attrelid = (SELECT oid FROM pg_class WHERE relname = 'airports') \
             ORDER BY a.attnum"
        )
        .await,
        common::table(&[
            &["code", "f", "NULL"],
            &["hubs", "t", "0"],
            &["name", "t", "'unknown'"]
        ])
    );
    assert_eq!(
        common::rows(&c, "SELECT ftoptions FROM pg_foreign_table").await,
        common::table(&[&["{timestampcolumn=ts,type=archived,\"retention=30 days\"}"]])
    );
    if !common::psql_installed() {
        return;
    }
    let out = common::psql::command(port)
        .args(["-X", "-c", "\\d airports", "-c", "\\d a2"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains(" hubs   | integer |           |          | 0"),
        "{text}"
    );
    assert!(
        text.contains(" name   | text    |           |          | 'unknown'"),
        "{text}"
    );
    assert!(
        text.contains("FDW options: (timestampcolumn 'ts', type 'archived', retention '30 days')"),
        "{text}"
    );
}

/// A misspelt window clause is a syntax error at the token where it goes wrong, with the
/// clause's shape as a HINT (psql draws the caret and prints the HINT).
#[tokio::test]
async fn a_misspelt_window_clause_points_at_the_mistake_with_a_hint() {
    let port = common::start_server();
    let c = common::connect(port).await;
    common::exec(
        &c,
        "CREATE STREAM s (ts timestamp TIMESTAMPCOLUMN, v integer)",
    )
    .await;
    let hint = "A window clause is [RANGE BY 'interval' [SLIDE BY 'interval'] [START AT 'timestamp'] [SLACK 'interval']], after a stream in FROM.";
    for (sql, near, position) in [
        (
            "SELECT count(*) FROM s [RANGE BY '1 hour' SLIDE '10 minutes']",
            "'10 minutes'",
            49,
        ),
        ("SELECT count(*) FROM s [RANG BY '1 hour']", "RANG", 25),
        ("SELECT count(*) FROM s [RANGE '1 hour']", "'1 hour'", 31),
        (
            "SELECT count(*) FROM s [RANGE BY '1 hour' START '2001-01-01']",
            "'2001-01-01'",
            49,
        ),
    ] {
        let e = c.simple_query(sql).await.expect_err(sql);
        let db = e.as_db_error().expect("a server error");
        assert_eq!(db.code().code(), "42601", "{sql}");
        assert_eq!(
            db.message(),
            format!("syntax error at or near \"{near}\""),
            "{sql}"
        );
        assert_eq!(
            db.position(),
            Some(&tokio_postgres::error::ErrorPosition::Original(position)),
            "{sql}"
        );
        assert_eq!(db.hint(), Some(hint), "{sql}");
    }
    if !common::psql_installed() {
        return;
    }
    let out = common::psql::command(port)
        .args(["-X", "-c", "SELECT count(*) FROM s [RANG BY '1 hour']"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        text,
        format!(
            "ERROR:  syntax error at or near \"RANG\"\n\
             LINE 1: SELECT count(*) FROM s [RANG BY '1 hour']\n\
             {}^\n\
             HINT:  {hint}\n",
            " ".repeat("LINE 1: SELECT count(*) FROM s [".len())
        )
    );
}

/// tcqd's log has no ANSI colour codes when its stderr is not a terminal (a file, a pipe).
#[test]
fn the_log_has_no_colour_codes_off_a_terminal() {
    let server = common::tcqd::Tcqd::start(["--memory-only", "--http", "off"]);
    let log = server.log_text();
    assert!(log.contains("tcq listening on"), "{log}");
    assert!(!log.contains('\x1b'), "ANSI escapes in: {log:?}");
}

/// Each `(sql, SQLSTATE, message, hint)` of `cases` fails on `c` with exactly that error.
async fn assert_errors(c: &tokio_postgres::Client, cases: &[(&str, &str, &str, Option<&str>)]) {
    for (sql, code, message, hint) in cases {
        let e = c.simple_query(sql).await.expect_err(sql);
        let db = e.as_db_error().expect("a server error");
        assert_eq!((db.code().code(), db.message()), (*code, *message), "{sql}");
        assert_eq!(db.hint(), *hint, "{sql}");
    }
}

/// Operator and condition type errors carry PostgreSQL 15's SQLSTATE, message and hint in
/// both plans (a stream's continuous query, a table's finite one, a constant SELECT):
/// LIKE names its operands as written (`unknown` for an untyped literal), every missing
/// operator says how to go on (the singular for a prefix operator), an empty array still
/// types the left side, and a condition of any typed expression that is not boolean is
/// 42804 rather than no row.
#[tokio::test]
async fn operator_and_condition_type_errors_say_what_postgresql_says() {
    let port = common::start_server();
    let c = common::connect(port).await;
    common::exec(
        &c,
        "CREATE STREAM s (ts timestamp TIMESTAMPCOLUMN, k text, v integer); \
         CREATE TABLE t (k text, v integer)",
    )
    .await;
    let plural = "No operator matches the given name and argument types. You might need to add explicit type casts.";
    let singular = "No operator matches the given name and argument type. You might need to add an explicit type cast.";
    let cases: &[(&str, &str, &str, Option<&str>)] = &[
        (
            "SELECT 1 LIKE 'a'",
            "42883",
            "operator does not exist: integer ~~ unknown",
            Some(plural),
        ),
        (
            "SELECT 'a' LIKE 1",
            "42883",
            "operator does not exist: unknown ~~ integer",
            Some(plural),
        ),
        (
            "SELECT v FROM s WHERE v NOT ILIKE 'a'",
            "42883",
            "operator does not exist: integer !~~* unknown",
            Some(plural),
        ),
        (
            "SELECT v FROM t WHERE k LIKE v",
            "42883",
            "operator does not exist: text ~~ integer",
            Some(plural),
        ),
        (
            "SELECT 1 ~ 'a'",
            "42883",
            "operator does not exist: integer ~ unknown",
            Some(plural),
        ),
        (
            "SELECT v FROM s WHERE v SIMILAR TO 'a'",
            "42883",
            "operator does not exist: integer ~ text",
            Some(plural),
        ),
        (
            "SELECT - 'a'::text",
            "42883",
            "operator does not exist: - text",
            Some(singular),
        ),
        (
            "SELECT 1 + 'a'::text",
            "42883",
            "operator does not exist: integer + text",
            Some(plural),
        ),
        (
            "SELECT v FROM s WHERE v LIKE ANY (ARRAY[]::text[])",
            "42883",
            "operator does not exist: integer ~~ text",
            Some(plural),
        ),
        (
            "SELECT 1 LIKE ANY (ARRAY[]::text[])",
            "42883",
            "operator does not exist: integer ~~ text",
            Some(plural),
        ),
        (
            "SELECT v FROM s WHERE v = ANY (ARRAY[]::text[])",
            "42883",
            "operator does not exist: integer = text",
            Some(plural),
        ),
        (
            "SELECT v FROM t WHERE abs(v)",
            "42804",
            "argument of WHERE must be type boolean, not type integer",
            None,
        ),
        (
            "SELECT v FROM s WHERE abs(v)",
            "42804",
            "argument of WHERE must be type boolean, not type integer",
            None,
        ),
        (
            "SELECT v FROM t WHERE CASE WHEN v > 0 THEN k END",
            "42804",
            "argument of WHERE must be type boolean, not type text",
            None,
        ),
        (
            "SELECT 1 FROM t a JOIN t b ON a.v + b.v",
            "42804",
            "argument of JOIN/ON must be type boolean, not type integer",
            None,
        ),
        (
            "SELECT count(*) FILTER (WHERE length(k)) FROM t",
            "42804",
            "argument of FILTER must be type boolean, not type integer",
            None,
        ),
        (
            "SELECT k FROM t GROUP BY k HAVING sum(v) * 2",
            "42804",
            "argument of HAVING must be type boolean, not type bigint",
            None,
        ),
        (
            "SELECT v FROM t WHERE (SELECT 1)",
            "42804",
            "argument of WHERE must be type boolean, not type integer",
            None,
        ),
    ];
    assert_errors(&c, cases).await;
}

/// Errors of forms PostgreSQL's grammar and input functions refuse, each with its
/// SQLSTATE and message, over a stream (the continuous plan) and a table (the relational
/// plan) where the form applies: COALESCE/NULLIF of the wrong arity are syntax errors at
/// the token where the list goes wrong, a month above 12 carries the DateStyle hint, a
/// numeric beyond a float names its text, `time + time` is ambiguous, WITH TIES needs
/// ORDER BY, and a set operation's ORDER BY names only output columns.
#[tokio::test]
async fn grammar_and_input_errors_say_what_postgresql_says() {
    let port = common::start_server();
    let c = common::connect(port).await;
    common::exec(
        &c,
        "CREATE STREAM s (ts timestamp TIMESTAMPCOLUMN, k text, v integer); \
         CREATE TABLE t (k text, v integer)",
    )
    .await;
    let datestyle = "Perhaps you need a different \"datestyle\" setting.";
    let ambiguous =
        "Could not choose a best candidate operator. You might need to add explicit type casts.";
    let cases: &[(&str, &str, &str, Option<&str>)] = &[
        (
            "SELECT coalesce() FROM s",
            "42601",
            "syntax error at or near \")\"",
            None,
        ),
        (
            "SELECT nullif(v) FROM s",
            "42601",
            "syntax error at or near \")\"",
            None,
        ),
        (
            "SELECT nullif(v, 1, 2) FROM t",
            "42601",
            "syntax error at or near \",\"",
            None,
        ),
        (
            "SELECT greatest( ) FROM t",
            "42601",
            "syntax error at or near \")\"",
            None,
        ),
        (
            "SELECT v FROM s WHERE ts < '13/02/2024'",
            "22008",
            "date/time field value out of range: \"13/02/2024\"",
            Some(datestyle),
        ),
        (
            "SELECT '2024-13-01'::date",
            "22008",
            "date/time field value out of range: \"2024-13-01\"",
            Some(datestyle),
        ),
        (
            "SELECT 1e39::real",
            "22003",
            "\"1000000000000000000000000000000000000000\" is out of range for type real",
            None,
        ),
        (
            "SELECT factorial(-1)",
            "22003",
            "factorial of a negative number is undefined",
            None,
        ),
        (
            "SELECT v FROM s WHERE time '01:00' + time '02:00' > time '00:00'",
            "42725",
            "operator is not unique: time without time zone + time without time zone",
            Some(ambiguous),
        ),
        (
            "SELECT v FROM t FETCH FIRST 2 ROWS WITH TIES",
            "42601",
            "WITH TIES cannot be specified without ORDER BY clause",
            None,
        ),
        (
            "SELECT v AS a FROM t UNION SELECT v AS b FROM t ORDER BY b",
            "42703",
            "column \"b\" does not exist",
            None,
        ),
        (
            "SELECT substring('abcd' from 'a#\"b#\"c#\"d' for '#')",
            "2200C",
            "SQL regular expression may not contain more than two escape-double-quote separators",
            None,
        ),
    ];
    assert_errors(&c, cases).await;
}

/// Function resolution, date/time units, trigonometric domains, PostgreSQL 15's regular
/// expression parameters, LIMIT and FROM alias errors carry PostgreSQL 15's SQLSTATE and
/// message: a bigint or numeric where a function takes an integer is 42883 naming the
/// whole call, over a stream (the continuous plan) and over a table (the finite one).
#[tokio::test]
async fn function_resolution_and_unit_errors_say_what_postgresql_says() {
    let port = common::start_server();
    let c = common::connect(port).await;
    common::exec(
        &c,
        "CREATE STREAM s (ts timestamp TIMESTAMPCOLUMN, k text, v integer); \
         CREATE TABLE t (k text, v integer)",
    )
    .await;
    let no_function = |call: &str| format!("function {call} does not exist");
    let mut cases: Vec<(String, &str, String)> = Vec::new();
    for from in ["s", "t"] {
        for (sql, call) in [
            ("SELECT repeat(k, v::bigint)", "repeat(text, bigint)"),
            (
                "SELECT lpad(k, 3::bigint, 'x')",
                "lpad(text, bigint, unknown)",
            ),
            ("SELECT substr(k, 1, 2.5)", "substr(text, integer, numeric)"),
            ("SELECT sin(k)", "sin(text)"),
            (
                "SELECT regexp_count(k, 'a', v::bigint)",
                "regexp_count(text, unknown, bigint)",
            ),
            ("SELECT log(v::float8, 2)", "log(double precision, integer)"),
            (
                "SELECT make_date(v::bigint, 1, 1)",
                "make_date(bigint, integer, integer)",
            ),
        ] {
            cases.push((format!("{sql} FROM {from}"), "42883", no_function(call)));
        }
    }
    let table_and_constant: &[(&str, &str, &str)] = &[
        (
            "SELECT left(k, 2::bigint) FROM t",
            "42883",
            "function left(text, bigint) does not exist",
        ),
        (
            "SELECT concat_ws(',')",
            "42883",
            "function concat_ws(unknown) does not exist",
        ),
        (
            "SELECT v FROM t LIMIT v",
            "42P10",
            "argument of LIMIT must not contain variables",
        ),
        (
            "SELECT * FROM t AS q(a, b, c)",
            "42P10",
            "table \"q\" has 2 columns available but 3 columns specified",
        ),
        (
            "SELECT v FROM t FETCH FIRST 10 PERCENT ROWS ONLY",
            "42601",
            "syntax error at or near \"PERCENT\"",
        ),
        (
            "SELECT extract(hour from date '2024-06-15')",
            "0A000",
            "unit \"hour\" not supported for type date",
        ),
        (
            "SELECT date_part('dow', interval '1 day')",
            "0A000",
            "unit \"dow\" not supported for type interval",
        ),
        (
            "SELECT date_part('fortnight', now())",
            "22023",
            "unit \"fortnight\" not recognized for type timestamp with time zone",
        ),
        ("SELECT acos(2)", "22003", "input is out of range"),
        (
            "SELECT regexp_count('abc', 'b', 0)",
            "22023",
            "invalid value for parameter \"start\": 0",
        ),
        (
            "SELECT to_char(1, 'S9PL')",
            "42601",
            "cannot use \"S\" and \"PL\" together",
        ),
        ("SELECT log(1, 10)", "22012", "division by zero"),
    ];
    for (sql, code, message) in table_and_constant {
        cases.push((sql.to_string(), code, message.to_string()));
    }
    // PostgreSQL's hint for a function no overload of which fits.
    let hint = "No function matches the given name and argument types. You might need to add explicit type casts.";
    let cases: Vec<(&str, &str, &str, Option<&str>)> = cases
        .iter()
        .map(|(s, c, m)| (s.as_str(), *c, m.as_str(), (*c == "42883").then_some(hint)))
        .collect();
    assert_errors(&c, &cases).await;
}
