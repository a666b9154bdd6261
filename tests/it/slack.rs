//! Out-of-order tolerance: `SLACK '<interval>'` in the window clause and
//! `CREATE STREAM ... WITH (slack = '...')`. A stream's time in a query is its highest
//! timestamp consumed minus the slack, so windows close that much later and a tuple up to
//! the slack behind is on time. Values worked out by hand.

use crate::common;

use common::{connect, exec, rows, sqlstate, start_server, table, wait_for_queries};

/// Tuples at 1, 12, 8, 15, 3, 26 seconds (v = the second).
const FEED: &str = "VALUES ('2001-01-01 00:00:01', 1), ('2001-01-01 00:00:12', 12), \
                    ('2001-01-01 00:00:08', 8), ('2001-01-01 00:00:15', 15), \
                    ('2001-01-01 00:00:03', 3), ('2001-01-01 00:00:26', 26)";

/// Run `query` over stream `s` fed [`FEED`]; returns two slide events' rows and the
/// query's late-tuple count.
async fn run(create: &str, query: &str) -> (Vec<Vec<String>>, String) {
    let port = start_server();
    let c = connect(port).await;
    let feeder = connect(port).await;
    exec(&c, create).await;
    exec(&c, &format!("BEGIN; DECLARE c CURSOR FOR {query}")).await;
    wait_for_queries(&feeder, 1).await;
    exec(&feeder, &format!("INSERT INTO s {FEED}")).await;
    let got = rows(&c, "FETCH 2 FROM c").await;
    let late = rows(&feeder, "SELECT late_tuples FROM tcq_queries").await;
    exec(&c, "CLOSE c; COMMIT").await;
    (got, late[0][0].clone())
}

const STREAM: &str = "CREATE STREAM s (ts timestamp TIMESTAMPCOLUMN, v integer)";
const STREAM_SLACK: &str =
    "CREATE STREAM s (ts timestamp TIMESTAMPCOLUMN, v integer) WITH (slack = '5 seconds')";
const WINDOW: &str = "[RANGE BY '10 seconds' START AT '2001-01-01 00:00:00'";

#[tokio::test]
async fn slack_in_the_window_clause_keeps_windows_open_that_much_longer() {
    // Time = highest - 5 s: 12 -> 7 keeps [0,10) open, so 8 is on time; 15 -> 10 closes
    // [0,10) = {1, 8}; 3 is late; 26 -> 21 closes [10,20) = {12, 15}.
    let (got, late) = run(
        STREAM,
        &format!("SELECT count(*), sum(v), wtime(*) FROM s {WINDOW} SLACK '5 seconds']"),
    )
    .await;
    assert_eq!(
        got,
        table(&[
            &["2", "9", "2001-01-01 00:00:10"],
            &["2", "27", "2001-01-01 00:00:20"]
        ])
    );
    assert_eq!(late, "1");
}

#[tokio::test]
async fn without_slack_the_same_arrivals_are_late() {
    // 12 closes [0,10) = {1}; 8 and 3 are late; 26 closes [10,20) = {12, 15}.
    let (got, late) = run(
        STREAM,
        &format!("SELECT count(*), sum(v), wtime(*) FROM s {WINDOW}]"),
    )
    .await;
    assert_eq!(
        got,
        table(&[
            &["1", "1", "2001-01-01 00:00:10"],
            &["2", "27", "2001-01-01 00:00:20"]
        ])
    );
    assert_eq!(late, "2");
}

#[tokio::test]
async fn a_stream_default_slack_applies_and_a_window_slack_overrides_it() {
    let (got, late) = run(
        STREAM_SLACK,
        &format!("SELECT count(*), sum(v), wtime(*) FROM s {WINDOW}]"),
    )
    .await;
    assert_eq!(
        (got, late),
        (
            table(&[
                &["2", "9", "2001-01-01 00:00:10"],
                &["2", "27", "2001-01-01 00:00:20"]
            ]),
            "1".to_string()
        )
    );
    let (got, late) = run(
        STREAM_SLACK,
        &format!("SELECT count(*), sum(v), wtime(*) FROM s {WINDOW} SLACK '0 seconds']"),
    )
    .await;
    assert_eq!(
        (got, late),
        (
            table(&[
                &["1", "1", "2001-01-01 00:00:10"],
                &["2", "27", "2001-01-01 00:00:20"]
            ]),
            "2".to_string()
        )
    );
}

#[tokio::test]
async fn slack_on_one_stream_of_a_join_holds_its_time_back() {
    let port = start_server();
    let c = connect(port).await;
    exec(
        &c,
        "CREATE STREAM a (ts timestamp TIMESTAMPCOLUMN, k text, v integer); \
         CREATE STREAM b (ts timestamp TIMESTAMPCOLUMN, k text, w integer)",
    )
    .await;
    exec(
        &c,
        "BEGIN; DECLARE c CURSOR FOR SELECT count(*), wtime(*) FROM \
         a [RANGE BY '10 seconds' START AT '2001-01-01 00:00:00' SLACK '5 seconds'] \
         JOIN b [RANGE BY '10 seconds' START AT '2001-01-01 00:00:00'] ON a.k = b.k",
    )
    .await;
    // b at 30; a at 12 -> its time is 7, so global time is 7 and a's late 8 is on time.
    exec(
        &c,
        "INSERT INTO b VALUES ('2001-01-01 00:00:02', 'x', 0), ('2001-01-01 00:00:30', 'q', 0); \
         INSERT INTO a VALUES ('2001-01-01 00:00:12', 'y', 0), ('2001-01-01 00:00:08', 'x', 0), \
                              ('2001-01-01 00:00:16', 'z', 0)",
    )
    .await;
    let got = rows(&c, "FETCH 1 FROM c").await;
    assert_eq!(got, table(&[&["1", "2001-01-01 00:00:10"]]));
    let times = rows(&c, "SELECT \"current_time\", stream_times FROM tcq_queries").await;
    assert_eq!(
        times,
        table(&[&[
            "2001-01-01 00:00:11",
            "a: 2001-01-01 00:00:11, b: 2001-01-01 00:00:30"
        ]])
    );
    exec(&c, "CLOSE c; COMMIT").await;
}

#[tokio::test]
async fn bad_slack_values_are_refused() {
    let port = start_server();
    let c = connect(port).await;
    exec(&c, STREAM).await;
    for (sql, state) in [
        (
            "SELECT count(*) FROM s [RANGE BY '1 minute' SLACK '-1 second']",
            "22023",
        ),
        (
            "SELECT count(*) FROM s [RANGE BY '1 minute' SLACK '1 month']",
            "22023",
        ),
        (
            "SELECT count(*) FROM s [RANGE BY '1 minute' SLACK]",
            "42601",
        ),
        (
            "CREATE STREAM t (ts timestamp TIMESTAMPCOLUMN) WITH (delay = '1 second')",
            "22023",
        ),
        (
            "CREATE STREAM t (ts timestamp TIMESTAMPCOLUMN) WITH (slack = '-5 seconds')",
            "22023",
        ),
    ] {
        let e = c.simple_query(sql).await.expect_err(sql);
        assert_eq!(sqlstate(&e), state, "{sql}: {e}");
    }
}
