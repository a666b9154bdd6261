//! Time and window semantics over the wire (docs/sql.md, Windows), with exact values.
//!
//! Each test registers a continuous query through a cursor (BEGIN; DECLARE; ...; FETCH n),
//! feeds tuples on the same or another connection, and compares the rows of each slide event
//! with values worked out by hand from the semantics: instances `[o + m*s, o + m*s + r)`,
//! current time = highest timestamp consumed, one slide event per instance end passed.

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

const STREAM: &str = "CREATE STREAM s (ts timestamp TIMESTAMPCOLUMN, k text, v integer)";

#[tokio::test]
async fn tumbling_windows_emit_every_slide_event_including_empty_ones() {
    let port = start_server();
    let c = connect(port).await;
    exec(&c, STREAM).await;
    let got = cursor_rows(
        &c,
        "SELECT count(*), sum(v), wstart(*), wtime(*) FROM s [RANGE BY '10 seconds' START AT '2001-01-01 00:00:00']",
        &["INSERT INTO s VALUES ('2001-01-01 00:00:01','a',1), ('2001-01-01 00:00:09','a',2), \
           ('2001-01-01 00:00:10','b',4), ('2001-01-01 00:00:35','a',8)"],
        3,
    )
    .await;
    // t = 10 closes [0,10) (the tuple at 10 belongs to [10,20)); t = 35 closes [10,20) and
    // the empty [20,30): count 0, sum NULL.
    assert_eq!(
        got,
        table(&[
            &["2", "3", "2001-01-01 00:00:00", "2001-01-01 00:00:10"],
            &["1", "4", "2001-01-01 00:00:10", "2001-01-01 00:00:20"],
            &["0", "NULL", "2001-01-01 00:00:20", "2001-01-01 00:00:30"],
        ])
    );
}

#[tokio::test]
async fn hopping_windows_group_by_with_postgresql_result_types() {
    let port = start_server();
    let c = connect(port).await;
    exec(&c, STREAM).await;
    let got = cursor_rows(
        &c,
        "SELECT k, count(*), avg(v), max(v), wtime(*) FROM s \
         [RANGE BY '10 seconds' SLIDE BY '5 seconds' START AT '2001-01-01 00:00:00'] GROUP BY k ORDER BY k",
        &["INSERT INTO s VALUES ('2001-01-01 00:00:01','a',1), ('2001-01-01 00:00:06','a',2), \
           ('2001-01-01 00:00:07','b',5), ('2001-01-01 00:00:12','a',4), ('2001-01-01 00:00:30','z',0)"],
        5,
    )
    .await;
    // Instances [0,10), [5,15), [10,20), [15,25), [20,30) end at 10, 15, 20, 25, 30;
    // [15,25) and [20,30) are empty, and a grouped query emits nothing for them.
    assert_eq!(
        got,
        table(&[
            &["a", "2", "1.5000000000000000", "2", "2001-01-01 00:00:10"],
            &["b", "1", "5.0000000000000000", "5", "2001-01-01 00:00:10"],
            &["a", "2", "3.0000000000000000", "4", "2001-01-01 00:00:15"],
            &["b", "1", "5.0000000000000000", "5", "2001-01-01 00:00:15"],
            &["a", "1", "4.0000000000000000", "4", "2001-01-01 00:00:20"],
        ])
    );
}

#[tokio::test]
async fn jumping_windows_ignore_tuples_in_gaps() {
    let port = start_server();
    let c = connect(port).await;
    exec(&c, STREAM).await;
    let got = cursor_rows(
        &c,
        "SELECT count(*), sum(v), wstart(*), wtime(*) FROM s [RANGE BY '2 seconds' SLIDE BY '5 seconds' START AT '2001-01-01 00:00:00']",
        &["INSERT INTO s VALUES ('2001-01-01 00:00:01','a',1), ('2001-01-01 00:00:03','a',10), \
           ('2001-01-01 00:00:05','a',100), ('2001-01-01 00:00:06','a',1000), ('2001-01-01 00:00:12','a',0)"],
        3,
    )
    .await;
    // Instances [0,2), [5,7), [10,12); t = 3 lies in a gap.
    assert_eq!(
        got,
        table(&[
            &["1", "1", "2001-01-01 00:00:00", "2001-01-01 00:00:02"],
            &["2", "1100", "2001-01-01 00:00:05", "2001-01-01 00:00:07"],
            &["0", "NULL", "2001-01-01 00:00:10", "2001-01-01 00:00:12"],
        ])
    );
}

#[tokio::test]
async fn late_tuples_join_open_instances_and_are_counted() {
    let port = start_server();
    let c = connect(port).await;
    exec(&c, STREAM).await;
    let got = cursor_rows(
        &c,
        "SELECT count(*), wtime(*) FROM s [RANGE BY '10 seconds' SLIDE BY '5 seconds' START AT '2001-01-01 00:00:00']",
        // t = 12 closes [0,10); the late t = 7 misses it but joins [5,15).
        &["INSERT INTO s VALUES ('2001-01-01 00:00:01','a',1), ('2001-01-01 00:00:12','a',1), \
           ('2001-01-01 00:00:07','a',1), ('2001-01-01 00:00:15','a',1)"],
        2,
    )
    .await;
    assert_eq!(
        got,
        table(&[&["1", "2001-01-01 00:00:10"], &["2", "2001-01-01 00:00:15"]])
    );
}

#[tokio::test]
async fn where_rejected_tuples_still_advance_time() {
    let port = start_server();
    let c = connect(port).await;
    exec(&c, STREAM).await;
    let got = cursor_rows(
        &c,
        "SELECT count(*), wtime(*) FROM s [RANGE BY '10 seconds' START AT '2001-01-01 00:00:00'] WHERE k = 'a'",
        &["INSERT INTO s VALUES ('2001-01-01 00:00:01','a',1), ('2001-01-01 00:00:11','b',1)"],
        1,
    )
    .await;
    assert_eq!(got, table(&[&["1", "2001-01-01 00:00:10"]]));
}

#[tokio::test]
async fn epoch_grid_covers_times_before_1970() {
    let port = start_server();
    let c = connect(port).await;
    exec(&c, STREAM).await;
    let got = cursor_rows(
        &c,
        "SELECT count(*), wstart(*), wtime(*) FROM s [RANGE BY '1 hour' START AT 'epoch']",
        &["INSERT INTO s VALUES ('1969-12-31 23:30:00','a',1), ('1970-01-01 00:10:00','a',1), ('1970-01-01 01:00:00','a',1)"],
        2,
    )
    .await;
    assert_eq!(
        got,
        table(&[
            &["1", "1969-12-31 23:00:00", "1970-01-01 00:00:00"],
            &["1", "1970-01-01 00:00:00", "1970-01-01 01:00:00"]
        ])
    );
}

#[tokio::test]
async fn windowed_query_without_aggregates_emits_live_tuples() {
    let port = start_server();
    let c = connect(port).await;
    exec(&c, STREAM).await;
    let got = cursor_rows(
        &c,
        "SELECT k, v, wtime(*) FROM s [RANGE BY '10 seconds' SLIDE BY '5 seconds' START AT '2001-01-01 00:00:00']",
        &["INSERT INTO s VALUES ('2001-01-01 00:00:01','a',1), ('2001-01-01 00:00:07','b',2), ('2001-01-01 00:00:15','c',3)"],
        3,
    )
    .await;
    assert_eq!(
        got,
        table(&[
            &["a", "1", "2001-01-01 00:00:10"],
            &["b", "2", "2001-01-01 00:00:10"],
            &["b", "2", "2001-01-01 00:00:15"]
        ])
    );
}

#[tokio::test]
async fn query_without_window_passes_tuples_through() {
    let port = start_server();
    let c = connect(port).await;
    exec(&c, STREAM).await;
    let got = cursor_rows(
        &c,
        "SELECT v * 2, k FROM s WHERE v > 1",
        &["INSERT INTO s VALUES ('2001-01-01 00:00:01','a',1), ('2001-01-01 00:00:02','b',2), ('2001-01-01 00:00:00','c',3)"],
        2,
    )
    .await;
    assert_eq!(got, table(&[&["4", "b"], &["6", "c"]]));
}

/// LIKE|ILIKE ANY|ALL in a continuous query, filter and projection, with PostgreSQL's
/// answers: NULL elements and operands, escapes in the elements, an empty array.
#[tokio::test]
async fn like_any_and_all_filter_and_project_stream_tuples() {
    let port = start_server();
    let c = connect(port).await;
    exec(&c, STREAM).await;
    let got = cursor_rows(
        &c,
        "SELECT v, k ILIKE ANY (ARRAY['X%', NULL]), k NOT LIKE ALL (ARRAY['a%', '%\\_%']), \
         k LIKE ALL (ARRAY[]::text[]) FROM s WHERE k LIKE ANY (ARRAY['a%', '%\\_%', 'x%'])",
        &["INSERT INTO s VALUES ('2001-01-01 00:00:01','abc',1), ('2001-01-01 00:00:02','b',2), \
           ('2001-01-01 00:00:03','x_y',3), ('2001-01-01 00:00:04',NULL,4), ('2001-01-01 00:00:05','xy',5)"],
        3,
    )
    .await;
    assert_eq!(
        got,
        table(&[
            &["1", "NULL", "f", "t"],
            &["3", "t", "f", "t"],
            &["5", "t", "t", "t"],
        ])
    );
}

/// `op ANY|ALL` over a constant array in a continuous query (`'{a,b}'::text[]`, a CAST,
/// an untyped literal read as the left side's type, a multidimensional one, an empty
/// one), with PostgreSQL 15's answers over the same rows; a value of another type is
/// refused as PostgreSQL refuses it.
#[tokio::test]
async fn any_and_all_over_constant_arrays_filter_and_project_stream_tuples() {
    let port = start_server();
    let c = connect(port).await;
    exec(&c, STREAM).await;
    let got = cursor_rows(
        &c,
        "SELECT v, k = ANY ('{a,b}'::text[]), k LIKE ALL ('{%,\"a%\"}'::text[]), \
         v = ANY ('{1,NULL}'), v <> ALL (CAST('{{1,2},{3,4}}' AS integer[])), \
         k ILIKE ANY ('{X%}'::text[]), v = ANY ('{}'::int[]) \
         FROM s WHERE k LIKE ANY ('{a%,b,x%}'::text[]) OR v = ANY ('{7}')",
        &["INSERT INTO s VALUES ('2001-01-01 00:00:01','abc',1), ('2001-01-01 00:00:02','b',2), \
           ('2001-01-01 00:00:03','x_y',3), ('2001-01-01 00:00:04',NULL,4), ('2001-01-01 00:00:05','zz',7)"],
        4,
    )
    .await;
    assert_eq!(
        got,
        table(&[
            &["1", "f", "t", "t", "f", "f", "f"],
            &["2", "t", "f", "NULL", "f", "f", "f"],
            &["3", "f", "f", "NULL", "f", "t", "f"],
            &["7", "f", "f", "NULL", "t", "f", "f"],
        ])
    );
    for (sql, code) in [
        ("SELECT v FROM s WHERE v = ANY ('{a}'::text[])", "42883"),
        ("SELECT v FROM s WHERE v = ANY ('{x}')", "22P02"),
        ("SELECT v FROM s WHERE v = ANY ('{1,2')", "22P02"),
        ("SELECT v FROM s WHERE v LIKE ANY ('{}'::text[])", "42883"),
        // Subqueries are finite queries' only, LIKE ALL's too.
        ("SELECT v FROM s WHERE k LIKE ALL (SELECT 'a%')", "0A000"),
    ] {
        let e = c.simple_query(sql).await.expect_err(sql);
        assert_eq!(e.code().map(|c| c.code()), Some(code), "{sql}: {e}");
    }
}

#[tokio::test]
async fn limit_ends_the_query_with_command_complete() {
    let port = start_server();
    let c = connect(port).await;
    exec(&c, STREAM).await;
    let feeder = connect(port).await;
    let q = tokio::spawn(async move {
        rows(
            &c,
            "SELECT count(*) FROM s [RANGE BY '1 second' START AT '2001-01-01 00:00:00'] LIMIT 2",
        )
        .await
    });
    common::wait_for_queries(&feeder, 1).await;
    exec(
        &feeder,
        "INSERT INTO s VALUES ('2001-01-01 00:00:00.5','a',1), ('2001-01-01 00:00:05','a',1)",
    )
    .await;
    let got = tokio::time::timeout(Duration::from_secs(10), q)
        .await
        .expect("LIMIT ends the query")
        .unwrap();
    assert_eq!(got, table(&[&["1"], &["0"]]));
}

#[tokio::test]
async fn drop_stream_ends_its_queries() {
    let port = start_server();
    let c = connect(port).await;
    exec(&c, STREAM).await;
    let admin = connect(port).await;
    let q =
        tokio::spawn(async move { rows(&c, "SELECT count(*) FROM s [RANGE BY '1 second']").await });
    common::wait_for_queries(&admin, 1).await;
    exec(&admin, "DROP STREAM s").await;
    let got = tokio::time::timeout(Duration::from_secs(10), q)
        .await
        .expect("DROP ends the query")
        .unwrap();
    assert!(got.is_empty());
    let err = admin
        .simple_query("INSERT INTO s VALUES (now(), 'a', 1)")
        .await
        .unwrap_err();
    assert_eq!(sqlstate(&err), "42P01");
}

#[tokio::test]
async fn copy_is_all_or_nothing_and_names_the_line() {
    use futures::SinkExt;
    let port = start_server();
    let c = connect(port).await;
    exec(&c, STREAM).await;
    exec(&c, "BEGIN; DECLARE c CURSOR FOR SELECT count(*), wtime(*) FROM s [RANGE BY '10 seconds' START AT '2001-01-01 00:00:00']").await;
    let feeder = connect(port).await;
    let sink = feeder
        .copy_in("COPY s FROM STDIN WITH (FORMAT csv)")
        .await
        .unwrap();
    futures::pin_mut!(sink);
    sink.send(bytes::Bytes::from_static(
        b"2001-01-01 00:00:01,a,1\n2001-01-01 00:00:02,a,2\n2001-01-01 00:00:30,a,oops\n",
    ))
    .await
    .unwrap();
    let err = sink.finish().await.unwrap_err();
    assert_eq!(sqlstate(&err), "22P02");
    let db = err.as_db_error().unwrap();
    assert_eq!(
        db.message(),
        "invalid input syntax for type integer: \"oops\""
    );
    assert_eq!(db.where_(), Some("COPY s, line 3, column v: \"oops\""));
    // Nothing of the failed COPY reached the query: the next COPY's rows alone count.
    let sink = feeder
        .copy_in("COPY s FROM STDIN WITH (FORMAT csv)")
        .await
        .unwrap();
    futures::pin_mut!(sink);
    sink.send(bytes::Bytes::from_static(
        b"2001-01-01 00:00:05,a,1\n2001-01-01 00:00:10,a,1\n",
    ))
    .await
    .unwrap();
    assert_eq!(sink.finish().await.unwrap(), 2);
    assert_eq!(
        rows(&c, "FETCH 1 FROM c").await,
        table(&[&["1", "2001-01-01 00:00:10"]])
    );
    exec(&c, "COMMIT").await;
}

#[tokio::test]
async fn heartbeat_closes_windows_of_an_idle_stream() {
    let port = start_server();
    let c = connect(port).await;
    exec(&c, STREAM).await;
    let got = cursor_rows(
        &c,
        "SELECT count(*), wtime(*) FROM s [RANGE BY '10 seconds' START AT '2001-01-01 00:00:00']",
        &[
            "INSERT INTO s VALUES ('2001-01-01 00:00:01','a',1)",
            "SELECT tcq_advance('s', '2001-01-01 00:00:10')",
        ],
        1,
    )
    .await;
    assert_eq!(got, table(&[&["1", "2001-01-01 00:00:10"]]));
}

/// `tcq_queries.slide_events` counts the instants at which a window of the query closed.
/// Under windows of 20, 30 and 40 seconds the optimizer adds a 10-second factor window
/// (paper section 4); its instances closing alone (at 10, 50, 70 and 110 s) are not slide
/// events of the query, nor are instances before the first one shown.
#[tokio::test]
async fn slide_events_count_the_querys_windows_not_factor_windows() {
    for share in ["on", "off"] {
        slide_events_of_factor_windows(share).await;
    }
}

/// [`slide_events_count_the_querys_windows_not_factor_windows`] with cross-query sharing
/// `share` (on: the query runs as the one member of a shared plan; off: on its own).
async fn slide_events_of_factor_windows(share: &str) {
    let port = start_server();
    let (c, feeder) = (connect(port).await, connect(port).await);
    exec(&c, STREAM).await;
    exec(&c, &format!("SET tcq.share_across_queries = {share}")).await;
    let o = "START AT '2001-01-01 00:00:00'";
    let query = format!(
        "SELECT count(*), wtime(*) FROM s [RANGE BY '20 seconds' {o}] \
         [RANGE BY '30 seconds' {o}] [RANGE BY '40 seconds' {o}]"
    );
    let plan = rows(&c, &format!("EXPLAIN {query}"))
        .await
        .concat()
        .join("\n");
    assert!(
        plan.contains("factor"),
        "no factor window in the plan:\n{plan}"
    );
    exec(&c, &format!("BEGIN; DECLARE c CURSOR FOR {query}")).await;
    wait_for_queries(&feeder, 1).await;
    // One tuple a second from 0 s to 120 s: current time 120 s.
    let values: Vec<String> = (0..=120)
        .map(|i| format!("('2001-01-01 00:{:02}:{:02}','a',1)", i / 60, i % 60))
        .collect();
    exec(
        &feeder,
        &format!("INSERT INTO s VALUES {}", values.join(", ")),
    )
    .await;
    // 6 + 4 + 3 instances have ended by 120 s, at 8 distinct instants.
    let got = rows(&c, "FETCH 13 FROM c").await;
    assert_eq!(got.len(), 13, "{got:?}");
    let mut ends: Vec<&str> = got.iter().map(|r| r[1].as_str()).collect();
    ends.dedup();
    assert_eq!(ends.len(), 8, "{ends:?}");
    let q = rows(&feeder, "SELECT slide_events, rows_out FROM tcq_queries").await;
    assert_eq!(
        q,
        table(&[&["8", "13"]]),
        "tcq.share_across_queries = {share}"
    );
    exec(&c, "CLOSE c; COMMIT").await;
}

#[tokio::test]
async fn far_future_jump_keeps_the_server_responsive() {
    let port = start_server();
    let c = connect(port).await;
    exec(&c, STREAM).await;
    // Grouped: empty instances emit nothing, the jump costs nothing.
    exec(&c, "BEGIN; DECLARE g CURSOR FOR SELECT k, count(*), wtime(*) FROM s [RANGE BY '1 second' START AT '2001-01-01'] GROUP BY k").await;
    // Ungrouped: one row per instance, bounded by empty_slide_events_max, then a NOTICE.
    exec(&c, "DECLARE u CURSOR FOR SELECT count(*), wtime(*) FROM s [RANGE BY '1 second' START AT '2001-01-01']").await;
    exec(&c, "INSERT INTO s VALUES ('2001-01-01 00:00:00','a',1), ('2101-01-01 00:00:00','a',1), ('2101-01-01 00:00:01','a',1)").await;
    let other = connect(port).await;
    assert_eq!(rows(&other, "SELECT 1").await, table(&[&["1"]]));
    let g = rows(&c, "FETCH 2 FROM g").await;
    assert_eq!(
        g,
        table(&[
            &["a", "1", "2001-01-01 00:00:01"],
            &["a", "1", "2101-01-01 00:00:01"]
        ])
    );
    let u = rows(&c, "FETCH 1 FROM u").await;
    assert_eq!(u, table(&[&["1", "2001-01-01 00:00:01"]]));
    exec(&c, "COMMIT").await;
}

/// Regression (found by trying to break the server): a 1,500-term chain of `+` overflowed
/// the worker's stack and aborted the whole server. Deep expressions now bind on a stack of
/// their own and are refused past 1,000 levels with 54001, as PostgreSQL's stack depth
/// limit does; the server stays up.
#[tokio::test]
async fn very_deep_expressions_are_refused_not_fatal() {
    let port = start_server();
    let c = connect(port).await;
    let ok = vec!["1"; 990].join("+");
    assert_eq!(rows(&c, &format!("SELECT {ok}")).await, table(&[&["990"]]));
    for n in [1_500, 20_000] {
        let deep = vec!["1"; n].join("+");
        let err = c.simple_query(&format!("SELECT {deep}")).await.unwrap_err();
        assert_eq!(sqlstate(&err), "54001");
        let ors: Vec<String> = (0..n).map(|i| format!("v = {i}")).collect();
        exec(
            &c,
            "CREATE STREAM IF NOT EXISTS d (ts timestamp TIMESTAMPCOLUMN, v integer)",
        )
        .await;
        let err = c
            .simple_query(&format!(
                "SELECT count(*) FROM d [RANGE BY '1 second'] WHERE {}",
                ors.join(" OR ")
            ))
            .await
            .unwrap_err();
        assert_eq!(sqlstate(&err), "54001");
    }
    assert_eq!(rows(&c, "SELECT 1").await, table(&[&["1"]]));
    // A continuous query just under the limit is evaluated per tuple on its stream's own
    // thread, which has the workers' stack.
    let near = vec!["1"; 980].join(" + ");
    let got = cursor_rows(
        &c,
        &format!(
            "SELECT count(*), sum(v + {near}), wtime(*) FROM d [RANGE BY '1 second' START AT '2001-01-01'] WHERE v + {near} > 982"
        ),
        &["INSERT INTO d VALUES ('2001-01-01 00:00:00.5', 1), ('2001-01-01 00:00:00.7', 3), \
           ('2001-01-01 00:00:00.9', 5), ('2001-01-01 00:00:01', 0)"],
        1,
    )
    .await;
    assert_eq!(got, table(&[&["2", "1968", "2001-01-01 00:00:01"]]));
}

/// Regression (found by trying to break the server): a reader that fell behind used to see
/// a silently truncated result ending in success. A reader that stops reading now gets the
/// queued rows and then SQLSTATE 54000, and other sessions are unaffected.
#[tokio::test]
async fn a_stalled_reader_gets_an_error_not_a_truncated_success() {
    use tcq::engine::{Config, Limits};
    // Room for one slide event's row only.
    let limits = Limits {
        output_queue_bytes: 1,
        output_stall_timeout: Duration::from_millis(50),
        ..Limits::default()
    };
    let port = common::start_server_with(Config { limits });
    let reader = connect(port).await;
    exec(&reader, STREAM).await;
    exec(&reader, "BEGIN; DECLARE c CURSOR FOR SELECT count(*), wtime(*) FROM s [RANGE BY '1 second' START AT '2001-01-01']").await;
    let feeder = connect(port).await;
    // Ten slide events for a queue of one: the second waits for a reader that never comes.
    exec(
        &feeder,
        "INSERT INTO s VALUES ('2001-01-01 00:00:00','a',1), ('2001-01-01 00:00:10','a',1)",
    )
    .await;
    let other = connect(port).await;
    assert_eq!(rows(&other, "SELECT 1").await, table(&[&["1"]]));
    // A system view passes a barrier through the stream's queue, so it answers once the
    // ingest task has given up on the reader, which took nothing for output_stall_timeout.
    // (A reader that kept fetching would have been waited for.)
    rows(&other, "SELECT id FROM tcq_queries").await;
    let err = tokio::time::timeout(
        Duration::from_secs(5),
        reader.simple_query("FETCH ALL FROM c"),
    )
    .await
    .expect("FETCH ends")
    .unwrap_err();
    assert_eq!(sqlstate(&err), "54000");
    assert!(
        err.as_db_error()
            .unwrap()
            .message()
            .contains("output_queue_bytes (1 bytes)"),
        "{err}"
    );
}

/// DECLARE ... WITH HOLD keeps the cursor after COMMIT (and may be used outside a
/// transaction block); a plain cursor ends with its transaction.
#[tokio::test]
async fn held_cursors_outlive_their_transaction() {
    let port = start_server();
    let c = connect(port).await;
    exec(&c, STREAM).await;
    exec(&c, "BEGIN; DECLARE h CURSOR WITH HOLD FOR SELECT count(*), wtime(*) FROM s [RANGE BY '10 seconds' START AT '2001-01-01']; DECLARE p CURSOR FOR SELECT k FROM s; COMMIT").await;
    exec(
        &c,
        "INSERT INTO s VALUES ('2001-01-01 00:00:01','a',1), ('2001-01-01 00:00:10','a',1)",
    )
    .await;
    assert_eq!(
        rows(&c, "FETCH 1 FROM h").await,
        table(&[&["1", "2001-01-01 00:00:10"]])
    );
    let err = c.simple_query("FETCH 1 FROM p").await.unwrap_err();
    assert_eq!(sqlstate(&err), "34000");
    exec(
        &c,
        "DECLARE h2 CURSOR WITH HOLD FOR SELECT 1; CLOSE h2; CLOSE h",
    )
    .await;
}

/// A COPY larger than `statement_staging_memory_bytes` moves its first batches to a
/// temporary file and keeps the rest in memory; the query must still see every row in
/// arrival order, so a late tuple in the middle stays late. (Issue 7: staged columnar
/// batches, spilled past the limit.)
#[tokio::test]
async fn a_copy_past_staging_memory_keeps_arrival_order() {
    use futures::SinkExt;
    use tcq::engine::{Config, Limits};
    let limits = Limits {
        statement_staging_memory_bytes: 1,
        ..Limits::default()
    };
    let port = common::start_server_with(Config { limits });
    let c = connect(port).await;
    exec(&c, STREAM).await;
    exec(&c, "BEGIN; DECLARE c CURSOR FOR SELECT count(*), sum(v), min(k), max(k), wtime(*) FROM s [RANGE BY '10 seconds' START AT '2001-01-01 00:00:00']").await;
    // 50,000 tuples a millisecond apart (v = i, k cycles n0..n6), and after the 30,000th a
    // tuple at 5 s: the instance [0 s, 10 s) has closed by then, so it counts nowhere.
    let mut data = String::new();
    for i in 0..50_000u32 {
        if i == 30_000 {
            data.push_str("2001-01-01 00:00:05,late,1000000\n");
        }
        let (s, ms) = (i / 1000, i % 1000);
        data.push_str(&format!("2001-01-01 00:00:{s:02}.{ms:03},n{},{i}\n", i % 7));
    }
    let feeder = connect(port).await;
    let sink = feeder
        .copy_in("COPY s FROM STDIN WITH (FORMAT csv)")
        .await
        .unwrap();
    futures::pin_mut!(sink);
    sink.send(bytes::Bytes::from(data)).await.unwrap();
    assert_eq!(sink.finish().await.unwrap(), 50_001);
    exec(&feeder, "SELECT tcq_advance('s', '2001-01-01 00:01:00')").await;
    // Instance m holds v = 10,000m .. 10,000m + 9,999: the sum is 10,000 * 10,000m + 49,995,000.
    let expected: Vec<Vec<String>> = (0..5u64)
        .map(|m| {
            vec![
                "10000".to_string(),
                (100_000_000 * m + 49_995_000).to_string(),
                "n0".to_string(),
                "n6".to_string(),
                format!("2001-01-01 00:00:{}0", m + 1),
            ]
        })
        .collect();
    assert_eq!(rows(&c, "FETCH 5 FROM c").await, expected);
    let late = rows(&c, "SELECT late_tuples FROM tcq_queries").await;
    assert_eq!(late, table(&[&["1"]]));
    exec(&c, "COMMIT").await;
}

/// `COPY ... WITH (FORMAT csv, LIVE)`: rows reach the query as each CopyData message
/// arrives, so a window closes while the COPY is still open (a line split across two
/// messages counts once whole); a bad row ends the COPY with its line and the number of
/// rows before it, which stay. (Issue 7: live COPY for a never-ending feed.)
#[tokio::test]
async fn live_copy_delivers_each_message_and_keeps_the_rows_before_a_bad_one() {
    use futures::SinkExt;
    let port = start_server();
    let c = connect(port).await;
    exec(&c, STREAM).await;
    exec(&c, "BEGIN; DECLARE c CURSOR FOR SELECT count(*), sum(v), wtime(*) FROM s [RANGE BY '10 seconds' START AT '2001-01-01 00:00:00']").await;
    let feeder = connect(port).await;
    let sink = feeder
        .copy_in("COPY s FROM STDIN WITH (FORMAT csv, LIVE)")
        .await
        .unwrap();
    futures::pin_mut!(sink);
    sink.send(bytes::Bytes::from_static(
        b"2001-01-01 00:00:01,a,1\n2001-01-01 00:00:02,a,2\n2001-01-01 00:00:11,a,",
    ))
    .await
    .unwrap();
    sink.send(bytes::Bytes::from_static(b"4\n")).await.unwrap();
    // The COPY is still open: the first window has closed all the same.
    assert_eq!(
        rows(&c, "FETCH 1 FROM c").await,
        table(&[&["2", "3", "2001-01-01 00:00:10"]])
    );
    let _ = sink
        .send(bytes::Bytes::from_static(
            b"2001-01-01 00:00:12,a,8\n2001-01-01 00:00:25,a,oops\n2001-01-01 00:00:26,a,1\n",
        ))
        .await;
    let err = sink.finish().await.unwrap_err();
    assert_eq!(sqlstate(&err), "22P02");
    let db = err.as_db_error().unwrap();
    assert!(
        db.message().contains("the 4 rows before it were accepted"),
        "{db:?}"
    );
    assert_eq!(db.where_(), Some("COPY s, line 5, column v: \"oops\""));
    // The rows before the bad one stay (12 s too, sent in the bad row's message); the row
    // after it does not.
    exec(&feeder, "SELECT tcq_advance('s', '2001-01-01 00:00:30')").await;
    assert_eq!(
        rows(&c, "FETCH 2 FROM c").await,
        table(&[
            &["2", "12", "2001-01-01 00:00:20"],
            &["0", "NULL", "2001-01-01 00:00:30"]
        ])
    );
    exec(&c, "COMMIT").await;
    // A LIVE COPY that ends well reports every row.
    let sink = feeder
        .copy_in("COPY s FROM STDIN (FORMAT csv, LIVE true)")
        .await
        .unwrap();
    futures::pin_mut!(sink);
    sink.send(bytes::Bytes::from_static(b"2001-01-01 00:00:31,a,1\n"))
        .await
        .unwrap();
    sink.send(bytes::Bytes::from_static(b"2001-01-01 00:00:32,a,1"))
        .await
        .unwrap();
    assert_eq!(sink.finish().await.unwrap(), 2);
}

/// The two-argument statistics (`corr`, `regr_*`, `covar_*`) and the ordered-set
/// aggregates (`percentile_cont ... WITHIN GROUP`) are computed by finite queries only: a
/// continuous query over a window refuses them with 0A000 naming the aggregate, while the
/// same call over a table answers.
#[tokio::test]
async fn statistics_and_ordered_set_aggregates_are_finite_only() {
    let port = start_server();
    let c = connect(port).await;
    exec(&c, STREAM).await;
    for (call, name) in [
        ("corr(v, v)", "corr()"),
        ("regr_slope(v, v)", "regr_slope()"),
        ("covar_samp(v, v)", "covar_samp()"),
        (
            "percentile_cont(0.5) WITHIN GROUP (ORDER BY v)",
            "percentile_cont(...)",
        ),
        ("mode() WITHIN GROUP (ORDER BY k)", "mode(...)"),
    ] {
        let sql = format!("SELECT {call} FROM s [RANGE BY '10 seconds']");
        let err = c
            .simple_query(&format!("BEGIN; DECLARE c CURSOR FOR {sql}"))
            .await
            .expect_err(&sql);
        assert_eq!(sqlstate(&err), "0A000", "{sql}");
        let message = err.as_db_error().map(|d| d.message().to_string());
        assert!(
            message
                .as_deref()
                .is_some_and(|m| m.starts_with(name) && m.contains("finite queries only")),
            "{sql}: {message:?}"
        );
        exec(&c, "ROLLBACK").await;
    }
    exec(&c, "CREATE TABLE pairs (x float8, y float8)").await;
    exec(
        &c,
        "INSERT INTO pairs VALUES (1, 3), (2, 5), (3, 7), (NULL, 1)",
    )
    .await;
    assert_eq!(
        rows(
            &c,
            "SELECT corr(y, x), regr_slope(y, x), regr_intercept(y, x), regr_count(y, x), \
             percentile_cont(0.5) WITHIN GROUP (ORDER BY y), mode() WITHIN GROUP (ORDER BY x) \
             FROM pairs"
        )
        .await,
        table(&[&["1", "2", "1", "3", "4", "1"]])
    );
}

/// `op ANY|ALL` in a continuous query over arrays built from each tuple:
/// `string_to_array` (a NULL-marker argument, a NULL separator: characters),
/// `regexp_split_to_array`, and a text column cast to an array type (multidimensional,
/// empty, with NULL elements), in the filter and the projection, with PostgreSQL 15's
/// answers over the same rows; operands of other types are refused as PostgreSQL
/// refuses them.
#[tokio::test]
async fn any_and_all_over_row_arrays_filter_and_project_stream_tuples() {
    let port = start_server();
    let c = connect(port).await;
    exec(&c, STREAM).await;
    let got = cursor_rows(
        &c,
        "SELECT v, 'b' = ANY (string_to_array(k, ',')), 'x' <> ALL (string_to_array(k, ',', '')), \
         k LIKE ANY (regexp_split_to_array('a%|z%', '\\|')), \
         k NOT ILIKE ALL (string_to_array('A%,%X', ',')), k = ANY (regexp_split_to_array('a,b', ',')), \
         v::text = ANY (string_to_array(k, NULL)) FROM s \
         WHERE v < 10 AND ('b' = ANY (string_to_array(k, ',')) \
         OR k LIKE ANY (regexp_split_to_array('z%;1%;', ';')) OR k IS NULL OR k = '')",
        &["INSERT INTO s VALUES ('2001-01-01 00:00:01','a,b',1), ('2001-01-01 00:00:02','b',2), \
           ('2001-01-01 00:00:03','1,2',3), ('2001-01-01 00:00:04',NULL,4), \
           ('2001-01-01 00:00:05','z,,x',5), ('2001-01-01 00:00:06','',6), \
           ('2001-01-01 00:00:07','c',7), ('2001-01-01 00:00:08','b',20)"],
        6,
    )
    .await;
    assert_eq!(
        got,
        table(&[
            &["1", "t", "t", "t", "f", "f", "f"],
            &["2", "t", "t", "f", "t", "t", "f"],
            &["3", "f", "t", "f", "t", "f", "f"],
            &["4", "NULL", "NULL", "NULL", "NULL", "NULL", "NULL"],
            &["5", "f", "f", "t", "f", "f", "f"],
            &["6", "f", "t", "f", "t", "f", "f"],
        ])
    );
    exec(
        &c,
        "CREATE STREAM a (ts timestamp TIMESTAMPCOLUMN, arr text, v integer)",
    )
    .await;
    let got = cursor_rows(
        &c,
        "SELECT v, v = ANY (arr::int[]), v <> ALL (arr::integer[]), 2 >= ANY (CAST(arr AS bigint[])), \
         '3' = ANY (arr::text[]) FROM a WHERE v >= ALL (arr::int[]) OR arr IS NULL OR v = 9",
        &["INSERT INTO a VALUES ('2001-01-01 00:00:01','{1,2}',1), ('2001-01-01 00:00:02','{}',2), \
           ('2001-01-01 00:00:03',NULL,3), ('2001-01-01 00:00:04','{3,NULL}',3), \
           ('2001-01-01 00:00:05','{{1,2},{3,4}}',4), ('2001-01-01 00:00:06','{5}',9)"],
        4,
    )
    .await;
    assert_eq!(
        got,
        table(&[
            &["2", "f", "t", "f", "f"],
            &["3", "NULL", "NULL", "NULL", "NULL"],
            &["4", "t", "f", "t", "t"],
            &["9", "f", "t", "f", "f"],
        ])
    );
    for (q, state, message) in [
        (
            "SELECT 1 = ANY (string_to_array(k, ',')) FROM s",
            "42883",
            "operator does not exist: integer = text",
        ),
        (
            "SELECT k = ANY (v::int[]) FROM s",
            "42846",
            "cannot cast type integer to integer[]",
        ),
        (
            "SELECT 1 = ANY (string_to_array(v, ',')) FROM s",
            "42883",
            "function string_to_array(integer, unknown) does not exist",
        ),
        (
            "SELECT v LIKE ANY (string_to_array(k, ',')) FROM s",
            "42883",
            "operator does not exist: integer ~~ text",
        ),
    ] {
        let err = c.simple_query(q).await.expect_err(q);
        let db = err.as_db_error().expect("a server error");
        assert_eq!((db.code().code(), db.message()), (state, message), "{q}");
    }
}
