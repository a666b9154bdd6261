//! Windowed joins over the wire, with values worked out by hand from the semantics
//! (TelegraphCQ's window semantics; docs/sql.md, Windows): the global current time is
//! the lowest of the streams' times; a base tuple is live from the end of its first
//! instance to the end of the instance after its last; a join tuple from the max of its
//! components' births to the min of their deaths; one slide event per distinct window end.

use crate::common;

use std::time::Duration;

use common::{connect, exec, rows, sqlstate, start_server, table, wait_for_queries};
use tokio_postgres::Client;

/// Register `query` as cursor `c`, run `feed`, fetch `n` rows.
async fn cursor_rows(c: &Client, query: &str, feed: &[&str], n: usize) -> Vec<Vec<String>> {
    exec(c, &format!("BEGIN; DECLARE c CURSOR FOR {query}")).await;
    for f in feed {
        exec(c, f).await;
    }
    let out = rows(c, &format!("FETCH {n} FROM c")).await;
    exec(c, "CLOSE c; COMMIT").await;
    out
}

const STREAMS: &str = "CREATE STREAM a (ts timestamp TIMESTAMPCOLUMN, k text, v integer); \
                       CREATE STREAM b (ts timestamp TIMESTAMPCOLUMN, k text, w integer)";

/// `2001-01-01 00:00:<s>` (s may carry a fraction).
fn at(s: &str) -> String {
    format!("'2001-01-01 00:00:{s}'")
}

#[tokio::test]
async fn current_time_one_and_a_half_seconds_is_inside_window_one() {
    let port = start_server();
    let c = connect(port).await;
    exec(&c, STREAMS).await;
    let got = cursor_rows(
        &c,
        "SELECT count(*), sum(v + w), wtime(*) FROM a [RANGE BY '1 second' START AT '2001-01-01 00:00:00'] \
         JOIN b [RANGE BY '1 second' START AT '2001-01-01 00:00:00'] ON a.k = b.k",
        &[
            &format!("INSERT INTO a VALUES ({}, 'x', 1), ({}, 'x', 2)", at("00.2"), at("01.5")),
            &format!("INSERT INTO b VALUES ({}, 'x', 10), ({}, 'y', 20)", at("00.5"), at("01.5")),
            // Current time is now 1.5 s: the current windows are [0,1) (window 1), so only
            // the slide event at 1 s has happened; a heartbeat on both to 2 s closes [1,2).
            "SELECT tcq_advance('a', '2001-01-01 00:00:02')",
            "SELECT tcq_advance('b', '2001-01-01 00:00:02')",
        ],
        2,
    )
    .await;
    assert_eq!(
        got,
        table(&[
            &["1", "11", "2001-01-01 00:00:01"],
            // In [1,2): a's 2 (k x) and b's 20 (k y) do not join.
            &["0", "NULL", "2001-01-01 00:00:02"],
        ])
    );
}

#[tokio::test]
async fn different_ranges_and_slides_jumping_windows_and_ties() {
    let port = start_server();
    let c = connect(port).await;
    exec(&c, STREAMS).await;
    // a: tumbling 10 s, ends 10, 20, 30, 40. b: RANGE 4 SLIDE 6 (jumping), instances
    // [0,4), [6,10), [12,16), [18,22), ... ends 4, 10, 16, 22, 28, 34, 40. Slide events:
    // 4, 10 (both windows: one event), 16, 20, 22, ...
    // a1@1 [0,10): born 10, dies 20. a2@15 [10,20): born 20, dies 30.
    // b1@2 [0,4): born 4, dies 10. b3@5: in a gap, never born. b2@7 [6,10): born 10, dies
    // 16. b4@13 [12,16): born 16, dies 22.
    // Join tuples (all k = x): a1-b1 [10,10) never live; a1-b2 [10,16); a1-b4 [16,20)
    // (components born at different slide events); a2-b4 [20,22); a2-b2 [20,16) never.
    let got = cursor_rows(
        &c,
        "SELECT count(*), sum(v * w), wtime(*) FROM a [RANGE BY '10 seconds' START AT '2001-01-01 00:00:00'] \
         JOIN b [RANGE BY '4 seconds' SLIDE BY '6 seconds' START AT '2001-01-01 00:00:00'] USING (k)",
        &[
            &format!("INSERT INTO a VALUES ({}, 'x', 1), ({}, 'x', 2)", at("01"), at("15")),
            &format!(
                "INSERT INTO b VALUES ({}, 'x', 10), ({}, 'x', 1000), ({}, 'x', 100), ({}, 'x', 10000)",
                at("02"),
                at("05"),
                at("07"),
                at("13")
            ),
            &format!("INSERT INTO a VALUES ({}, 'y', 0)", at("40")),
            &format!("INSERT INTO b VALUES ({}, 'z', 0)", at("40")),
        ],
        6,
    )
    .await;
    assert_eq!(
        got,
        table(&[
            &["0", "NULL", "2001-01-01 00:00:04"],
            &["1", "100", "2001-01-01 00:00:10"],
            &["1", "10000", "2001-01-01 00:00:16"],
            &["1", "20000", "2001-01-01 00:00:20"],
            &["0", "NULL", "2001-01-01 00:00:22"],
            &["0", "NULL", "2001-01-01 00:00:28"],
        ])
    );
}

#[tokio::test]
async fn without_aggregates_every_live_join_tuple_is_emitted_per_slide_event() {
    let port = start_server();
    let c = connect(port).await;
    exec(&c, STREAMS).await;
    // a: RANGE 10 SLIDE 5 (each tuple lives two slide events), b: tumbling 5.
    // a1@3 in [-5,5)? no: START AT 0, so [0,10) only: born 10, dies 15.
    // a2@7 in [0,10), [5,15): born 10, dies 20. b1@8 [5,10): born 10, dies 15.
    // b2@12 [10,15): born 15, dies 20.
    // Event 10: a1-b1, a2-b1. Event 15: a2-b2. Event 20: nothing.
    let got = cursor_rows(
        &c,
        "SELECT a.v, b.w, wtime(*) FROM a [RANGE BY '10 seconds' SLIDE BY '5 seconds' START AT '2001-01-01 00:00:00'], \
         b [RANGE BY '5 seconds' START AT '2001-01-01 00:00:00'] WHERE a.k = b.k ORDER BY a.v",
        &[
            &format!("INSERT INTO a VALUES ({}, 'x', 1), ({}, 'x', 2)", at("03"), at("07")),
            &format!("INSERT INTO b VALUES ({}, 'x', 10), ({}, 'x', 20)", at("08"), at("12")),
            &format!("INSERT INTO a VALUES ({}, 'q', 0)", at("30")),
            &format!("INSERT INTO b VALUES ({}, 'r', 0)", at("30")),
        ],
        3,
    )
    .await;
    assert_eq!(
        got,
        table(&[
            &["1", "10", "2001-01-01 00:00:10"],
            &["2", "10", "2001-01-01 00:00:10"],
            &["2", "20", "2001-01-01 00:00:15"],
        ])
    );
}

#[tokio::test]
async fn an_idle_stream_holds_back_global_time_until_a_heartbeat() {
    let port = start_server();
    let c = connect(port).await;
    let feeder = connect(port).await;
    exec(&c, STREAMS).await;
    exec(
        &c,
        "BEGIN; DECLARE c CURSOR FOR SELECT count(*), wtime(*) FROM a [RANGE BY '10 seconds' START AT '2001-01-01 00:00:00'] \
         JOIN b [RANGE BY '10 seconds' START AT '2001-01-01 00:00:00'] ON a.k = b.k",
    )
    .await;
    wait_for_queries(&feeder, 1).await;
    exec(
        &feeder,
        &format!(
            "INSERT INTO b VALUES ({}, 'x', 1); INSERT INTO a VALUES ({}, 'x', 1), ({}, 'x', 1)",
            at("02"),
            at("03"),
            at("45")
        ),
    )
    .await;
    // a is at 45 s, b at 2 s: global time is 2 s and no window has closed.
    let q = rows(
        &feeder,
        "SELECT \"current_time\", slide_events, stream_times FROM tcq_queries",
    )
    .await;
    assert_eq!(
        q,
        table(&[&[
            "2001-01-01 00:00:02",
            "0",
            "a: 2001-01-01 00:00:45, b: 2001-01-01 00:00:02"
        ]])
    );
    exec(&feeder, "SELECT tcq_advance('b', '2001-01-01 00:00:31')").await;
    let got = rows(&c, "FETCH 3 FROM c").await;
    assert_eq!(
        got,
        table(&[
            &["1", "2001-01-01 00:00:10"],
            &["0", "2001-01-01 00:00:20"],
            &["0", "2001-01-01 00:00:30"],
        ])
    );
    exec(&c, "CLOSE c; COMMIT").await;
}

#[tokio::test]
async fn late_rows_join_events_not_yet_emitted_and_are_counted() {
    let port = start_server();
    let c = connect(port).await;
    let feeder = connect(port).await;
    exec(&c, STREAMS).await;
    exec(
        &c,
        "BEGIN; DECLARE c CURSOR FOR SELECT count(*), sum(v), wtime(*) FROM a [RANGE BY '10 seconds' START AT '2001-01-01 00:00:00'] \
         JOIN b [RANGE BY '10 seconds' START AT '2001-01-01 00:00:00'] ON a.k = b.k",
    )
    .await;
    wait_for_queries(&feeder, 1).await;
    exec(
        &feeder,
        &format!(
            "INSERT INTO a VALUES ({}, 'x', 1), ({}, 'x', 2); INSERT INTO b VALUES ({}, 'x', 0), ({}, 'x', 0)",
            at("01"),
            at("25"),
            at("04"),
            at("12")
        ),
    )
    .await;
    // Global time 12: event 10 emitted (a1-b1). Now a late a@5 (misses event 10: late, not
    // emitted) and a@11, behind a's own time (25) but not behind any event: it joins b@12
    // at event 20. Then both streams move to 30.
    exec(
        &feeder,
        &format!(
            "INSERT INTO a VALUES ({}, 'x', 100), ({}, 'x', 1000); INSERT INTO b VALUES ({}, 'y', 0); \
             INSERT INTO a VALUES ({}, 'z', 0)",
            at("05"),
            at("11"),
            at("30"),
            at("30")
        ),
    )
    .await;
    let got = rows(&c, "FETCH 3 FROM c").await;
    assert_eq!(
        got,
        table(&[
            &["1", "1", "2001-01-01 00:00:10"],
            &["1", "1000", "2001-01-01 00:00:20"],
            &["0", "NULL", "2001-01-01 00:00:30"],
        ])
    );
    let q = rows(&feeder, "SELECT late_tuples, tuples_in FROM tcq_queries").await;
    assert_eq!(q, table(&[&["1", "8"]]));
    exec(&c, "CLOSE c; COMMIT").await;
}

#[tokio::test]
async fn self_join_under_two_windows_with_aliases() {
    let port = start_server();
    let c = connect(port).await;
    exec(
        &c,
        "CREATE STREAM flights (ts timestamp TIMESTAMPCOLUMN, origin text, destination text)",
    )
    .await;
    // Connections: a flight into X (a) and a flight out of X (b) within the windows.
    // a: RANGE 20 s SLIDE 10 s from -10 s, b: tumbling 10 s from 0.
    // f1@2 A->X: a instances [-10,10), [0,20): born 10, dies 30; b [0,10): born 10, dies 20.
    // f2@5 X->B: a born 10 dies 30; b born 10 dies 20.
    // f3@14 X->C: a [0,20),[10,30): born 20, dies 40; b [10,20): born 20, dies 30.
    // Pairs a.destination = b.origin: (f1,f2) [10,20); (f1,f3) [20,30).
    let got = cursor_rows(
        &c,
        "SELECT a.origin, b.destination, count(*) AS n, wtime(*) FROM \
         flights a [RANGE BY '20 seconds' SLIDE BY '10 seconds' START AT '2000-12-31 23:59:50'], \
         flights b [RANGE BY '10 seconds' START AT '2001-01-01 00:00:00'] \
         WHERE a.destination = b.origin GROUP BY a.origin, b.destination",
        &[&format!(
            "INSERT INTO flights VALUES ({}, 'A', 'X'), ({}, 'X', 'B'), ({}, 'X', 'C'), ({}, 'Q', 'R')",
            at("02"),
            at("05"),
            at("14"),
            at("59")
        )],
        2,
    )
    .await;
    assert_eq!(
        got,
        table(&[
            &["A", "B", "1", "2001-01-01 00:00:10"],
            &["A", "C", "1", "2001-01-01 00:00:20"],
        ])
    );
}

#[tokio::test]
async fn three_streams_with_a_general_predicate() {
    let port = start_server();
    let c = connect(port).await;
    exec(&c, STREAMS).await;
    exec(
        &c,
        "CREATE STREAM z (ts timestamp TIMESTAMPCOLUMN, k text, u integer)",
    )
    .await;
    let got = cursor_rows(
        &c,
        "SELECT count(*), sum(v + w + u), wtime(*) FROM a [RANGE BY '10 seconds' START AT '2001-01-01 00:00:00'] \
         JOIN b [RANGE BY '10 seconds' START AT '2001-01-01 00:00:00'] ON a.k = b.k \
         JOIN z [RANGE BY '10 seconds' START AT '2001-01-01 00:00:00'] ON abs(z.u - b.w) < 5",
        &[
            &format!("INSERT INTO a VALUES ({}, 'x', 1), ({}, 'y', 2)", at("01"), at("02")),
            &format!("INSERT INTO b VALUES ({}, 'x', 10), ({}, 'y', 20)", at("03"), at("04")),
            &format!("INSERT INTO z VALUES ({}, 'q', 12), ({}, 'q', 30)", at("05"), at("06")),
            &format!("INSERT INTO a VALUES ({}, 'x', 0)", at("10")),
            &format!("INSERT INTO b VALUES ({}, 'x', 0)", at("10")),
            &format!("INSERT INTO z VALUES ({}, 'x', 0)", at("10")),
        ],
        1,
    )
    .await;
    // Only (a x 1, b x 10, z 12) satisfies both predicates: |12 - 10| < 5.
    assert_eq!(got, table(&[&["1", "23", "2001-01-01 00:00:10"]]));
}

#[tokio::test]
async fn join_errors_are_clear() {
    let port = start_server();
    let c = connect(port).await;
    exec(&c, STREAMS).await;
    exec(&c, "CREATE TABLE t (k text)").await;
    let cases = [
        (
            "SELECT count(*) FROM a [RANGE BY '1 minute'] JOIN b ON a.k = b.k",
            "0A000",
        ),
        (
            "SELECT count(*) FROM a [RANGE BY '1 minute'] LEFT JOIN b [RANGE BY '1 minute'] ON a.k = b.k",
            "0A000",
        ),
        (
            "SELECT k FROM a [RANGE BY '1 minute'] JOIN b [RANGE BY '1 minute'] ON a.k = b.k",
            "42702",
        ),
        (
            "SELECT count(*) FROM a [RANGE BY '1 minute'], a [RANGE BY '1 minute']",
            "42712",
        ),
        (
            "SELECT wstart(*) FROM a [RANGE BY '1 minute'] JOIN b [RANGE BY '2 minutes'] ON a.k = b.k",
            "0A000",
        ),
        (
            "SELECT count(*) FROM a [RANGE BY '1 minute'] [RANGE BY '2 minutes'] JOIN b [RANGE BY '1 minute'] [RANGE BY '3 minutes'] USING (k)",
            "0A000",
        ),
        (
            "SELECT count(*) FROM a [RANGE BY '1 minute'] JOIN b [RANGE BY '1 minute'] USING (nope)",
            "42703",
        ),
        (
            "SELECT count(*) FROM a [RANGE BY '1 minute'] [RANGE BY '2 minutes'] JOIN t USING (k)",
            "0A000",
        ),
    ];
    for (sql, state) in cases {
        let e = c.simple_query(sql).await.expect_err(sql);
        assert_eq!(sqlstate(&e), state, "{sql}: {e}");
        if sql.contains("'2 minutes'] JOIN") {
            // The multi-window refusals say which limit was hit.
            let msg = e.as_db_error().unwrap().message();
            assert!(msg.contains("several window clauses"), "{sql}: {msg}");
        }
    }
}

#[tokio::test]
async fn using_merges_the_column_and_star_lists_it_once() {
    let port = start_server();
    let c = connect(port).await;
    exec(&c, STREAMS).await;
    let got = cursor_rows(
        &c,
        "SELECT * FROM a [RANGE BY '10 seconds' START AT '2001-01-01 00:00:00'] \
         JOIN b [RANGE BY '10 seconds' START AT '2001-01-01 00:00:00'] USING (k) WHERE k = 'x'",
        &[
            &format!(
                "INSERT INTO a VALUES ({}, 'x', 1), ({}, 'y', 1)",
                at("01"),
                at("10")
            ),
            &format!(
                "INSERT INTO b VALUES ({}, 'x', 2), ({}, 'y', 1)",
                at("02"),
                at("10")
            ),
        ],
        1,
    )
    .await;
    assert_eq!(
        got,
        table(&[&["x", "2001-01-01 00:00:01", "1", "2001-01-01 00:00:02", "2"]])
    );
}

#[tokio::test]
async fn explain_shows_inputs_windows_and_hash_keys() {
    let port = start_server();
    let c = connect(port).await;
    exec(
        &c,
        "CREATE STREAM flights (ts timestamp TIMESTAMPCOLUMN, origin text, destination text)",
    )
    .await;
    let plan: Vec<String> = rows(
        &c,
        "EXPLAIN SELECT b.origin, count(*) FROM flights a [RANGE BY '10 minutes' START AT 'epoch'] \
         JOIN flights b [RANGE BY '10 minutes' START AT '2001-01-01 00:00:00'] ON a.destination = b.origin GROUP BY b.origin",
    )
    .await
    .into_iter()
    .map(|r| r[0].clone())
    .collect();
    assert_eq!(
        plan,
        vec![
            "Windowed join of 2 inputs (symmetric hash join; slide events at every window end)",
            "  Input 1: flights AS a  window RANGE 10 minutes SLIDE 10 minutes  instances unbounded (START AT 'epoch')",
            "  Input 2: flights AS b  window RANGE 10 minutes SLIDE 10 minutes START AT '2001-01-01 00:00:00'  instances from 2001-01-01 00:00:00",
            "  Arrival on flights AS a: hash probe flights AS b on b.origin = a.destination",
            "  Arrival on flights AS b: hash probe flights AS a on a.destination = b.origin",
            "  Count the live join tuples at each slide event as the product of each key's live tuples on both sides (no join tuple is formed)",
        ]
    );
}

/// A multi-window join, worked by hand. a under W1 = tumbling 10 s and W2 = RANGE 20 s
/// SLIDE 10 s, both from 0; b tumbling 10 s from 0. Slide events 10, 20, 30 (W2's first
/// end is 20). a1@1 (x, 1): W1 [10,20), W2 [20,30). a2@12 (x, 2): W1 [20,30), W2 [20,40).
/// b1@3 (x, 10): [10,20). b2@15 (x, 100): [20,30). The tuples at 30 (keys y, z) are born
/// at 40 and only move time to 30.
const MULTI: &str = "SELECT wrange(*), count(*), sum(v * w), wtime(*), wstart(*) FROM \
                     a [RANGE BY '10 seconds' START AT '2001-01-01 00:00:00'] \
                       [RANGE BY '20 seconds' SLIDE BY '10 seconds' START AT '2001-01-01 00:00:00'] \
                     JOIN b [RANGE BY '10 seconds' START AT '2001-01-01 00:00:00'] USING (k)";

#[tokio::test]
async fn a_multi_window_join_gives_one_row_set_per_window() {
    let port = start_server();
    let c = connect(port).await;
    exec(&c, STREAMS).await;
    let feed = [
        format!(
            "INSERT INTO a VALUES ({}, 'x', 1), ({}, 'x', 2)",
            at("01"),
            at("12")
        ),
        format!(
            "INSERT INTO b VALUES ({}, 'x', 10), ({}, 'x', 100)",
            at("03"),
            at("15")
        ),
        format!("INSERT INTO a VALUES ({}, 'y', 0)", at("30")),
        format!("INSERT INTO b VALUES ({}, 'z', 0)", at("30")),
    ];
    let feed: Vec<&str> = feed.iter().map(String::as_str).collect();
    let got = cursor_rows(&c, MULTI, &feed, 6).await;
    let expected = table(&[
        // Event 10: W1 has a1-b1; W2 has no instance ended yet (wstart is wtime - RANGE).
        &[
            "00:00:10",
            "1",
            "10",
            "2001-01-01 00:00:10",
            "2001-01-01 00:00:00",
        ],
        &[
            "00:00:20",
            "0",
            "NULL",
            "2001-01-01 00:00:10",
            "2000-12-31 23:59:50",
        ],
        // Event 20: W1 has a2-b2; W2 has a1-b2 and a2-b2 in its instance [0,20).
        &[
            "00:00:10",
            "1",
            "200",
            "2001-01-01 00:00:20",
            "2001-01-01 00:00:10",
        ],
        &[
            "00:00:20",
            "2",
            "300",
            "2001-01-01 00:00:20",
            "2001-01-01 00:00:00",
        ],
        // Event 30: b2 died at 30, so nothing joins under either window.
        &[
            "00:00:10",
            "0",
            "NULL",
            "2001-01-01 00:00:30",
            "2001-01-01 00:00:20",
        ],
        &[
            "00:00:20",
            "0",
            "NULL",
            "2001-01-01 00:00:30",
            "2001-01-01 00:00:10",
        ],
    ]);
    assert_eq!(got, expected);
    // LIMIT counts the rows of both windows: the third row ends the query (the same feed,
    // read by a new query).
    let got = cursor_rows(&c, &format!("{MULTI} LIMIT 3"), &feed, 10).await;
    assert_eq!(got, expected[..3]);
    // A driver's Describe: wrange(*) is an interval, wstart(*) and wtime(*) timestamps.
    let st = c.prepare(MULTI).await.unwrap();
    let types: Vec<String> = st
        .columns()
        .iter()
        .map(|c| c.type_().name().to_string())
        .collect();
    assert_eq!(
        types,
        ["interval", "int8", "int8", "timestamp", "timestamp"]
    );
    let plan: Vec<String> = rows(&c, &format!("EXPLAIN {MULTI}"))
        .await
        .into_iter()
        .map(|r| r[0].clone())
        .collect();
    let win =
        |r: u32| format!("RANGE {r}0 seconds SLIDE 10 seconds START AT '2001-01-01 00:00:00'");
    let mut want = vec![
        "Multi-window join: 2 windows on input 1 (a), one row set per window, each window its own join (no state shared between them)".to_string(),
        "  Window coverage graph of a's windows (partitioned by, 1 edge):".to_string(),
        "    Window 2 <- Window 1 (M = 2)".to_string(),
        "    not followed by the join: a join tuple lives by every input's windows, so a window's live join tuples at its slide event are not the union of another window's".to_string(),
    ];
    for (i, r) in [1, 2].into_iter().enumerate() {
        want.extend([
            format!("  Window {}: {}", i + 1, win(r)),
            "    Windowed join of 2 inputs (symmetric hash join; slide events at every window end)".into(),
            format!("      Input 1: a  window {}  instances from 2001-01-01 00:00:00", win(r)),
            format!("      Input 2: b  window {}  instances from 2001-01-01 00:00:00", win(1)),
            "      Arrival on a: hash probe b on b.k = a.k".into(),
            "      Arrival on b: hash probe a on a.k = b.k".into(),
            "      Aggregate over the live join tuples at each slide event (partials by birth and death)".into(),
        ]);
    }
    assert_eq!(plan, want);
}

/// EXPLAIN names the WCG of a multi-window input under the relation its aggregates allow:
/// min under "covered by" (an overlapping cover), count under "partitioned by" (where the
/// same windows have no edge), none without aggregates.
#[tokio::test]
async fn explain_shows_the_coverage_graph_of_a_multi_window_input() {
    let port = start_server();
    let c = connect(port).await;
    exec(&c, STREAMS).await;
    let coverage = |select: &str| {
        format!(
            "EXPLAIN SELECT {select} FROM \
             a [RANGE BY '20 seconds' SLIDE BY '10 seconds' START AT '2001-01-01 00:00:00'] \
               [RANGE BY '30 seconds' SLIDE BY '10 seconds' START AT '2001-01-01 00:00:00'] \
             JOIN b [RANGE BY '10 seconds' START AT '2001-01-01 00:00:00'] USING (k)"
        )
    };
    let lines = |plan: Vec<Vec<String>>| -> Vec<String> {
        plan.into_iter()
            .map(|r| r[0].clone())
            .filter(|l| l.starts_with("  Window coverage") || l.starts_with("    Window "))
            .collect()
    };
    assert_eq!(
        lines(rows(&c, &coverage("min(w), wtime(*)")).await),
        [
            "  Window coverage graph of a's windows (covered by, 1 edge):",
            "    Window 2 <- Window 1 (M = 2)",
        ]
    );
    assert_eq!(
        lines(rows(&c, &coverage("count(*), wtime(*)")).await),
        ["  Window coverage graph of a's windows (partitioned by, 0 edges):"]
    );
    assert_eq!(
        lines(rows(&c, &coverage("a.v, b.w")).await),
        ["  Window coverage graph of a's windows: none (no aggregate whose partials could be shared)"]
    );
}

/// The join of `a` and `b` the client-path tests read, and what it emits for [`FEED`].
const JOIN: &str = "SELECT a.k, count(*) AS n, sum(v * w) AS s, wtime(*) FROM \
                    a [RANGE BY '10 seconds' START AT '2001-01-01 00:00:00'] \
                    JOIN b [RANGE BY '10 seconds' START AT '2001-01-01 00:00:00'] ON a.k = b.k \
                    GROUP BY a.k ORDER BY a.k";

const FEED: &str = "INSERT INTO a VALUES ('2001-01-01 00:00:01', 'x', 2), ('2001-01-01 00:00:02', 'y', 3); \
                    INSERT INTO b VALUES ('2001-01-01 00:00:03', 'x', 5), ('2001-01-01 00:00:04', 'x', 7), \
                                         ('2001-01-01 00:00:05', 'y', 1); \
                    INSERT INTO a VALUES ('2001-01-01 00:00:12', 'x', 1); \
                    INSERT INTO b VALUES ('2001-01-01 00:00:11', 'x', 1)";

#[tokio::test]
async fn a_driver_reads_a_join_with_the_extended_protocol_and_typed_values() {
    use futures::StreamExt;
    let port = start_server();
    let reader = connect(port).await;
    let feeder = connect(port).await;
    exec(&reader, STREAMS).await;
    let got = tokio::time::timeout(Duration::from_secs(30), async {
        let params: Vec<&(dyn tokio_postgres::types::ToSql + Sync)> = vec![];
        let stream = reader.query_raw(JOIN, params).await.unwrap();
        futures::pin_mut!(stream);
        wait_for_queries(&feeder, 1).await;
        exec(&feeder, FEED).await;
        let mut got = Vec::new();
        while got.len() < 2 {
            let row = stream.next().await.expect("row").expect("no error");
            got.push((
                row.get::<_, String>(0),
                row.get::<_, i64>(1),
                row.get::<_, i64>(2),
            ));
        }
        got
    })
    .await
    .expect("the join's rows arrive while it runs");
    // [0,10): x joins 2*5 + 2*7 = 24 over 2 pairs; y 3*1 over 1.
    assert_eq!(got, vec![("x".to_string(), 2, 24), ("y".to_string(), 1, 3)]);
}

#[tokio::test]
async fn psql_copy_to_stdout_prints_a_join_as_windows_close() {
    let port = start_server();
    let c = connect(port).await;
    exec(&c, STREAMS).await;
    let child = std::process::Command::new("psql")
        .args([
            "-h",
            "127.0.0.1",
            "-p",
            &port.to_string(),
            "-U",
            "tcq",
            "-d",
            "tcq",
            "-X",
            "-c",
            &format!("COPY ({JOIN}) TO STDOUT WITH (FORMAT csv)"),
        ])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn();
    let Ok(child) = child else {
        common::skip("psql is not installed (apt-get install postgresql-client)");
        return;
    };
    wait_for_queries(&c, 1).await;
    exec(&c, FEED).await;
    // Dropping a stream of the join ends the query (and psql) after the rows emitted.
    exec(&c, "DROP STREAM b").await;
    let out = tokio::task::spawn_blocking(move || child.wait_with_output())
        .await
        .unwrap()
        .expect("psql ends once the join's stream is dropped");
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "x,2,24,2001-01-01 00:00:10\ny,1,3,2001-01-01 00:00:10\n",
        "stderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[tokio::test]
async fn a_join_counts_among_each_of_its_streams_queries_and_ends_when_one_is_dropped() {
    let port = start_server();
    let c = connect(port).await;
    let feeder = connect(port).await;
    exec(&c, STREAMS).await;
    exec(&c, &format!("BEGIN; DECLARE c CURSOR FOR {JOIN}")).await;
    wait_for_queries(&feeder, 1).await;
    assert_eq!(
        rows(
            &feeder,
            "SELECT name, queries FROM tcq_streams ORDER BY name"
        )
        .await,
        table(&[&["a", "1"], &["b", "1"]])
    );
    exec(&feeder, FEED).await;
    exec(&feeder, "DROP STREAM a").await;
    // FETCH ALL ends: the rows of the closed window, then the end of the query.
    let got = rows(&c, "FETCH ALL FROM c").await;
    assert_eq!(
        got,
        table(&[
            &["x", "2", "24", "2001-01-01 00:00:10"],
            &["y", "1", "3", "2001-01-01 00:00:10"]
        ])
    );
    exec(&c, "COMMIT").await;
    assert_eq!(
        rows(&feeder, "SELECT name, queries FROM tcq_streams").await,
        table(&[&["b", "0"]])
    );
}

#[tokio::test]
async fn streams_stamped_on_arrival_join_on_the_server_clock() {
    let port = start_server();
    let c = connect(port).await;
    let feeder = connect(port).await;
    exec(
        &c,
        "CREATE STREAM p (k text, v integer); CREATE STREAM q (k text, w integer)",
    )
    .await;
    // No timestamp columns: both streams run on the server clock, which also moves their
    // time while they are idle, so the join's windows close without further tuples.
    exec(
        &c,
        "BEGIN; DECLARE c CURSOR FOR SELECT count(*), sum(v + w) FROM \
         p [RANGE BY '2 seconds' SLIDE BY '1 second'] JOIN q [RANGE BY '2 seconds' SLIDE BY '1 second'] \
         ON p.k = q.k",
    )
    .await;
    wait_for_queries(&feeder, 1).await;
    exec(
        &feeder,
        "INSERT INTO p VALUES ('x', 1), ('y', 2); INSERT INTO q VALUES ('x', 10)",
    )
    .await;
    // The first instance starts at submission (rounded down to the second) and ends two
    // seconds later; from then on a slide event comes every second, and the pair is live
    // in the two that follow its birth.
    let mut seen = Vec::new();
    for _ in 0..30 {
        let row = rows(&c, "FETCH 1 FROM c").await.remove(0);
        seen.push(row.clone());
        if row[0] != "0" {
            break;
        }
    }
    assert_eq!(
        seen.last().unwrap(),
        &vec!["1".to_string(), "11".to_string()],
        "{seen:?}"
    );
    exec(&c, "CLOSE c; COMMIT").await;
}
