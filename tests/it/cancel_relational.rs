//! A plain SELECT over tables runs off the server's async workers and can be stopped: a
//! CancelRequest, `pg_cancel_backend` and `statement_timeout` end it with 57014, and
//! while such statements run, other sessions connect, query and stream as usual. This
//! holds for both plans of a finite SELECT: the relational evaluator (joins, subqueries)
//! and the single-table scan (filter, grouping, sort).

use crate::common;

use std::time::Duration;

use common::{connect, sqlstate, start_server};
use tokio_postgres::{Client, NoTls};

const LIMIT: Duration = Duration::from_secs(30);

/// A correlated subquery inside a correlated subquery over 1,500 rows: about 3.4e9
/// evaluations, far longer than any test waits.
const SLOW: &str = "SELECT count(*) FROM t a WHERE (SELECT count(*) FROM t b \
    WHERE b.i < a.i + (SELECT count(*) FROM t c WHERE c.i > b.i)) > 0";

/// A single-table SELECT (the scan plan, no subquery) evaluating a 1,200-character md5 per
/// row of a million and sorting by it: about a minute in a debug build.
const SLOW_SCAN: &str = "SELECT i FROM big ORDER BY md5(repeat(i::text, 200)) LIMIT 1";

/// A server with table `t(i int)` holding 1..=1500; returns its port.
async fn server_with_table() -> u16 {
    let port = start_server();
    let c = connect(port).await;
    c.batch_execute("CREATE TABLE t (i int)").await.unwrap();
    let values: Vec<String> = (1..=1500).map(|i| format!("({i})")).collect();
    c.batch_execute(&format!("INSERT INTO t VALUES {}", values.join(",")))
        .await
        .unwrap();
    let n: i64 = c
        .query_one("SELECT count(*) FROM t", &[])
        .await
        .unwrap()
        .get(0);
    assert_eq!(n, 1500);
    port
}

/// A server with table `big(i int)` holding 1..=1,000,000; returns its port.
async fn server_with_big_table() -> u16 {
    let port = start_server();
    let c = connect(port).await;
    c.batch_execute("CREATE TABLE big (i int)").await.unwrap();
    let data: String = (1..=1_000_000).map(|i| format!("{i}\n")).collect();
    let n = common::copy_in(&c, "COPY big FROM STDIN", data.as_bytes(), 1 << 16)
        .await
        .unwrap();
    assert_eq!(n, 1_000_000);
    port
}

async fn pid(c: &Client) -> i32 {
    c.query_one("SELECT pg_backend_pid()", &[])
        .await
        .unwrap()
        .get(0)
}

/// Wait until session `pid` runs statement `slow`: `pg_stat_activity` shows it active
/// with that text. (Its earlier statement can still show as active until the server has
/// read that statement's Sync, and a cancel sent then is rightly forgotten.)
async fn wait_active(watcher: &Client, pid: i32, slow: &str) {
    loop {
        let n: i64 = watcher
            .query_one(
                "SELECT count(*) FROM pg_stat_activity \
                 WHERE pid = $1 AND state = 'active' AND query = $2",
                &[&pid, &slow],
            )
            .await
            .unwrap()
            .get(0);
        if n == 1 {
            return;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// The session still answers after its statement was stopped.
async fn assert_usable(c: &Client) {
    let one: i32 = c.query_one("SELECT 1", &[]).await.unwrap().get(0);
    assert_eq!(one, 1);
}

fn assert_canceled(e: &tokio_postgres::Error, message: &str) {
    assert_eq!(sqlstate(e), "57014", "{e:?}");
    assert_eq!(e.as_db_error().unwrap().message(), message);
}

async fn cancel_request_stops_a_slow_table_select_body(port: u16, slow: &'static str) {
    let reader = std::sync::Arc::new(connect(port).await);
    let watcher = connect(port).await;
    let reader_pid = pid(&reader).await;
    let token = reader.cancel_token();
    // The extended protocol starts watching for a cancel before it reports `active`.
    let running = tokio::spawn({
        let reader = reader.clone();
        async move { reader.query(slow, &[]).await }
    });
    wait_active(&watcher, reader_pid, slow).await;
    token.cancel_query(NoTls).await.expect("cancel request");
    let e = tokio::time::timeout(LIMIT, running)
        .await
        .expect("the cancel is answered")
        .unwrap()
        .expect_err("cancelled");
    assert_canceled(&e, "canceling statement due to user request");
    assert_usable(&reader).await;
}

async fn pg_cancel_backend_stops_a_slow_table_select_body(port: u16, slow: &'static str) {
    let reader = std::sync::Arc::new(connect(port).await);
    let admin = connect(port).await;
    let reader_pid = pid(&reader).await;
    let mut running = tokio::spawn({
        let reader = reader.clone();
        async move { reader.simple_query(slow).await }
    });
    wait_active(&admin, reader_pid, slow).await;
    // The simple protocol reports `active` just before it watches for a cancel: a signal
    // in between is forgotten, so signal until the statement ends.
    let outcome = tokio::time::timeout(LIMIT, async {
        loop {
            let sent: bool = admin
                .query_one("SELECT pg_cancel_backend($1)", &[&reader_pid])
                .await
                .unwrap()
                .get(0);
            assert!(sent);
            tokio::select! {
                r = &mut running => return r.unwrap(),
                () = tokio::time::sleep(Duration::from_secs(1)) => {}
            }
        }
    })
    .await
    .expect("the cancel is answered");
    let e = outcome.expect_err("cancelled");
    assert_canceled(&e, "canceling statement due to user request");
    assert_usable(&reader).await;
}

async fn statement_timeout_stops_a_slow_table_select_body(port: u16, slow: &'static str) {
    let reader = connect(port).await;
    reader
        .batch_execute("SET statement_timeout = 300")
        .await
        .unwrap();
    let e = tokio::time::timeout(LIMIT, reader.simple_query(slow))
        .await
        .expect("the timeout fires")
        .expect_err("timed out");
    assert_canceled(&e, "canceling statement due to statement timeout");
    reader
        .batch_execute("SET statement_timeout = 0")
        .await
        .unwrap();
    assert_usable(&reader).await;
}

/// Two slow statements (as many as the test server's async workers) leave the server
/// answering: a new connection runs `SELECT 1`, a continuous query's COPY streams every
/// row of a stream fed meanwhile; then both statements are cancelled.
async fn slow_table_selects_leave_the_server_responsive_body() {
    let port = server_with_table().await;
    let admin = connect(port).await;
    let mut slow = Vec::new();
    for _ in 0..2 {
        let c = std::sync::Arc::new(connect(port).await);
        let p = pid(&c).await;
        let task = tokio::spawn({
            let c = c.clone();
            async move { c.query(SLOW, &[]).await }
        });
        wait_active(&admin, p, SLOW).await;
        slow.push((c, task));
    }
    tokio::time::timeout(LIMIT, async {
        let third = connect(port).await;
        assert_usable(&third).await;
        third
            .batch_execute("CREATE STREAM s (v integer)")
            .await
            .unwrap();
        let reader = connect(port).await;
        let copied = tokio::spawn(async move {
            let sql = "COPY (SELECT v * 2 FROM s LIMIT 100) TO STDOUT";
            String::from_utf8(common::copy_out_bytes(&reader, sql).await).unwrap()
        });
        common::wait_for_queries(&third, 1).await;
        for v in 0..100 {
            third
                .batch_execute(&format!("INSERT INTO s VALUES ({v})"))
                .await
                .unwrap();
        }
        let expected: String = (0..100).map(|v| format!("{}\n", v * 2)).collect();
        assert_eq!(copied.await.unwrap(), expected);
    })
    .await
    .expect("the server answers while slow statements run");
    for (c, task) in slow {
        c.cancel_token().cancel_query(NoTls).await.unwrap();
        let e = tokio::time::timeout(LIMIT, task)
            .await
            .expect("the cancel is answered")
            .unwrap()
            .expect_err("cancelled");
        assert_canceled(&e, "canceling statement due to user request");
        assert_usable(&c).await;
    }
}

/// The blocking thread evaluates in the session's time zone and settings, as the async
/// worker did.
async fn relational_select_keeps_the_session_zone_body() {
    let port = server_with_table().await;
    let c = connect(port).await;
    c.batch_execute("SET TimeZone = 'Asia/Tokyo'; SET application_name = 'zoned'")
        .await
        .unwrap();
    let row = c
        .query_one(
            "SELECT (timestamptz '2001-01-01 00:00:00+00')::text, \
             current_setting('application_name') FROM t a JOIN t b ON a.i = b.i WHERE a.i = 1",
            &[],
        )
        .await
        .unwrap();
    assert_eq!(row.get::<_, String>(0), "2001-01-01 09:00:00+09");
    assert_eq!(row.get::<_, String>(1), "zoned");
}

/// Run a test body, failing instead of hanging if the server stops answering (as it did
/// when these statements held its async workers).
async fn bounded(body: impl std::future::Future<Output = ()>) {
    tokio::time::timeout(4 * LIMIT, body)
        .await
        .expect("the server answers within the limit");
}

#[tokio::test]
async fn cancel_request_stops_a_slow_table_select() {
    let port = server_with_table().await;
    bounded(cancel_request_stops_a_slow_table_select_body(port, SLOW)).await;
}

#[tokio::test]
async fn pg_cancel_backend_stops_a_slow_table_select() {
    let port = server_with_table().await;
    bounded(pg_cancel_backend_stops_a_slow_table_select_body(port, SLOW)).await;
}

#[tokio::test]
async fn statement_timeout_stops_a_slow_table_select() {
    let port = server_with_table().await;
    bounded(statement_timeout_stops_a_slow_table_select_body(port, SLOW)).await;
}

#[tokio::test]
async fn cancel_request_stops_a_slow_single_table_scan() {
    let port = server_with_big_table().await;
    bounded(cancel_request_stops_a_slow_table_select_body(
        port, SLOW_SCAN,
    ))
    .await;
}

#[tokio::test]
async fn pg_cancel_backend_stops_a_slow_single_table_scan() {
    let port = server_with_big_table().await;
    bounded(pg_cancel_backend_stops_a_slow_table_select_body(
        port, SLOW_SCAN,
    ))
    .await;
}

#[tokio::test]
async fn statement_timeout_stops_a_slow_single_table_scan() {
    let port = server_with_big_table().await;
    bounded(statement_timeout_stops_a_slow_table_select_body(
        port, SLOW_SCAN,
    ))
    .await;
}

#[tokio::test]
async fn slow_table_selects_leave_the_server_responsive() {
    bounded(slow_table_selects_leave_the_server_responsive_body()).await;
}

#[tokio::test]
async fn relational_select_keeps_the_session_zone() {
    bounded(relational_select_keeps_the_session_zone_body()).await;
}
