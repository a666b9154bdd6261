//! Per-server and per-connection limits (issue 11): each is configurable and refused with
//! its own message naming the number and the right SQLSTATE (53300 too many connections,
//! 54000 program limit exceeded, 53200 out of memory), and the server serves on.

use crate::common;

use std::time::Duration;

use bytes::Bytes;
use futures::{SinkExt, StreamExt};
use tcq::engine::{Config, Limits};
use tokio_postgres::NoTls;

fn config(f: impl FnOnce(&mut Limits)) -> Config {
    let mut limits = Limits::default();
    f(&mut limits);
    Config { limits }
}

fn message(e: &tokio_postgres::Error) -> String {
    e.as_db_error()
        .expect("a server error")
        .message()
        .to_string()
}

#[tokio::test]
async fn connections_beyond_max_connections_get_53300() {
    let port = common::start_server_with(config(|l| l.connections_max = 3));
    let mut open = Vec::new();
    for _ in 0..3 {
        open.push(common::connect(port).await);
    }
    let err = tokio_postgres::connect(&common::conn_string(port), NoTls)
        .await
        .err()
        .expect("a fourth connection is refused");
    assert_eq!(common::sqlstate(&err), "53300");
    assert_eq!(
        message(&err),
        "sorry, too many clients already: max_connections is 3"
    );
    // Closing one makes room (the count drops when the server sees the close).
    drop(open.pop());
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    loop {
        match tokio_postgres::connect(&common::conn_string(port), NoTls).await {
            Ok((client, conn)) => {
                tokio::spawn(conn);
                assert_eq!(
                    client
                        .query_one("SELECT 1", &[])
                        .await
                        .unwrap()
                        .get::<_, i32>(0),
                    1
                );
                break;
            }
            Err(e) => {
                assert_eq!(common::sqlstate(&e), "53300");
                assert!(
                    std::time::Instant::now() < deadline,
                    "no room after a close"
                );
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        }
    }
    for c in &open {
        assert_eq!(
            c.query_one("SELECT 1", &[]).await.unwrap().get::<_, i32>(0),
            1
        );
    }
}

/// Issue 11: one connection could take all 1,024 query slots with WITH HOLD cursors.
#[tokio::test]
async fn one_connection_cannot_take_every_query_slot() {
    let port = common::start_server_with(config(|l| l.queries_per_connection_max = 2));
    let c = common::connect(port).await;
    c.batch_execute("CREATE STREAM s (v integer)")
        .await
        .unwrap();
    c.batch_execute("DECLARE a CURSOR WITH HOLD FOR SELECT v FROM s")
        .await
        .unwrap();
    c.batch_execute("DECLARE b CURSOR WITH HOLD FOR SELECT v FROM s")
        .await
        .unwrap();
    let err = c
        .batch_execute("DECLARE c CURSOR WITH HOLD FOR SELECT v FROM s")
        .await
        .unwrap_err();
    assert_eq!(common::sqlstate(&err), "54000");
    assert_eq!(
        message(&err),
        "more than 2 continuous queries and cursors on one connection (queries_per_connection_max)"
    );
    // Another connection is not affected, and closing a cursor frees its slot.
    let other = common::connect(port).await;
    other
        .batch_execute("DECLARE c CURSOR WITH HOLD FOR SELECT v FROM s")
        .await
        .unwrap();
    c.batch_execute("CLOSE a").await.unwrap();
    c.batch_execute("DECLARE c CURSOR WITH HOLD FOR SELECT v FROM s")
        .await
        .unwrap();
}

#[tokio::test]
async fn prepared_statements_are_bounded_in_number_and_text() {
    let port = common::start_server_with(config(|l| {
        l.prepared_statements_max = 3;
        l.prepared_statement_bytes_max = 2_000;
    }));
    let c = common::connect(port).await;
    let mut kept = Vec::new();
    for i in 0..3 {
        kept.push(c.prepare(&format!("SELECT {i}")).await.unwrap());
    }
    let err = c.prepare("SELECT 4").await.unwrap_err();
    assert_eq!(common::sqlstate(&err), "54000");
    assert_eq!(
        message(&err),
        "more than 3 prepared statements on one connection (prepared_statements_max)"
    );
    drop(kept);
    // Dropping a tokio-postgres Statement closes it on the server; the next Parse fits.
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    while c.prepare("SELECT 4").await.is_err() {
        assert!(std::time::Instant::now() < deadline);
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let long = format!("SELECT {}", vec!["1"; 1_500].join(","));
    let err = c.prepare(&long).await.unwrap_err();
    assert_eq!(common::sqlstate(&err), "53200");
    assert!(
        message(&err).contains("more than 2000 bytes of SQL text (prepared_statement_bytes_max)"),
        "{}",
        message(&err)
    );
    assert_eq!(
        c.query_one("SELECT 1", &[]).await.unwrap().get::<_, i32>(0),
        1
    );
}

#[tokio::test]
async fn a_copy_line_longer_than_the_limit_rejects_the_copy() {
    let port = common::start_server_with(config(|l| l.copy_line_bytes_max = 100));
    let c = common::connect(port).await;
    c.batch_execute("CREATE STREAM s (t text)").await.unwrap();
    let sink = c.copy_in("COPY s FROM STDIN").await.unwrap();
    futures::pin_mut!(sink);
    let mut data = b"short\n".to_vec();
    data.extend(std::iter::repeat_n(b'x', 150));
    // The long line is never ended: the limit applies to what is buffered.
    let sent = sink.send(Bytes::from(data)).await;
    let err = match sent {
        Err(e) => e,
        Ok(()) => sink.finish().await.unwrap_err(),
    };
    assert_eq!(common::sqlstate(&err), "54000");
    assert_eq!(
        message(&err),
        "COPY s line 2 is longer than copy_line_bytes_max (100 bytes)"
    );
    let rows = c
        .query("SELECT tuples FROM tcq_streams", &[])
        .await
        .unwrap();
    assert_eq!(
        rows[0].get::<_, i64>(0),
        0,
        "nothing of the rejected COPY arrived"
    );
}

/// A complete long line inside one CopyData message is refused as one cut across messages
/// is, in text, CSV (a quoted field) and LIVE COPY, and at the end of the data without a
/// newline; a LIVE COPY keeps the rows before it.
#[tokio::test]
async fn a_long_line_inside_one_message_is_refused_in_every_format() {
    let port = common::start_server_with(config(|l| l.copy_line_bytes_max = 100));
    let c = common::connect(port).await;
    c.batch_execute("CREATE STREAM s (t text)").await.unwrap();
    let long = "x".repeat(150);
    for (copy, data, line, kept) in [
        ("COPY s FROM STDIN", format!("short\n{long}\nafter\n"), 2, 0),
        (
            "COPY s FROM STDIN WITH (FORMAT csv)",
            format!("a\nb\n\"{long}\"\n"),
            3,
            0,
        ),
        ("COPY s FROM STDIN", format!("short\n{long}"), 2, 0),
        (
            "COPY s FROM STDIN WITH (FORMAT csv, LIVE)",
            format!("a\n{long}\nz\n"),
            2,
            1,
        ),
    ] {
        let before: i64 = c
            .query_one("SELECT tuples FROM tcq_streams", &[])
            .await
            .unwrap()
            .get(0);
        let sink = c.copy_in(copy).await.unwrap();
        futures::pin_mut!(sink);
        let err = match sink.send(Bytes::from(data.clone())).await {
            Err(e) => e,
            Ok(()) => sink.finish().await.expect_err(copy),
        };
        assert_eq!(common::sqlstate(&err), "54000", "{copy}: {}", message(&err));
        assert!(
            message(&err).starts_with(&format!(
                "COPY s line {line} is longer than copy_line_bytes_max (100 bytes)"
            )),
            "{copy}: {}",
            message(&err)
        );
        let after: i64 = c
            .query_one("SELECT tuples FROM tcq_streams", &[])
            .await
            .unwrap()
            .get(0);
        assert_eq!(after - before, kept, "{copy}: rows kept");
    }
}

#[tokio::test]
async fn count_distinct_state_is_bounded() {
    let port = common::start_server_with(config(|l| l.distinct_values_max = 3));
    let c = common::connect(port).await;
    c.batch_execute("CREATE STREAM s (ts timestamp TIMESTAMPCOLUMN, v integer)")
        .await
        .unwrap();
    let reader = common::connect(port).await;
    let rows = reader
        .query_raw(
            "SELECT count(DISTINCT v) FROM s [RANGE BY '1 minute' START AT '2001-01-01']",
            Vec::<i32>::new(),
        )
        .await
        .unwrap();
    common::wait_for_queries(&c, 1).await;
    c.batch_execute(
        "INSERT INTO s VALUES ('2001-01-01 00:00:01', 1), ('2001-01-01 00:00:02', 2), ('2001-01-01 00:00:03', 3), ('2001-01-01 00:00:04', 1)",
    )
    .await
    .unwrap();
    c.batch_execute("INSERT INTO s VALUES ('2001-01-01 00:01:00', 9)")
        .await
        .unwrap();
    futures::pin_mut!(rows);
    let first = rows.next().await.unwrap().unwrap();
    assert_eq!(first.get::<_, i64>(0), 3, "three distinct values fit");
    c.batch_execute(
        "INSERT INTO s VALUES ('2001-01-01 00:01:01', 1), ('2001-01-01 00:01:02', 2), ('2001-01-01 00:01:03', 3)",
    )
    .await
    .unwrap();
    let err = tokio::time::timeout(Duration::from_secs(10), rows.next())
        .await
        .expect("the query ends")
        .unwrap()
        .unwrap_err();
    assert_eq!(common::sqlstate(&err), "54000");
    assert!(
        message(&err).contains("more than 3 distinct values"),
        "{}",
        message(&err)
    );
    assert_eq!(
        c.query_one("SELECT 1", &[]).await.unwrap().get::<_, i32>(0),
        1
    );
}

/// A query whose every tuple is expensive (a 1-hour window sliding by 1 second keeps 3,600
/// instances open, and each tuple is folded into all of them: a float sum, which no sliding
/// aggregator computes exactly, so the plan keeps panes) takes a large batch in
/// steps: `tcq_queries` sees its progress part way through the batch (the view reads the
/// query's counters between steps, where before it waited for the whole batch), a cancel
/// ends it there, and the stream serves the next query.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_expensive_query_takes_a_large_batch_in_steps_and_a_cancel_ends_it_there() {
    let port = common::start_server();
    let admin = common::connect(port).await;
    common::exec(
        &admin,
        "CREATE STREAM s (ts timestamp TIMESTAMPCOLUMN, v integer, g text)",
    )
    .await;
    let (reader, _handle) = common::connect_with_handle(port).await;
    let cancel = reader.cancel_token();
    let run = tokio::spawn(async move {
        reader
            .simple_query(
                "SELECT g, count(*), sum(v::float8) FROM s [RANGE BY '1 hour' SLIDE BY '1 second' \
                 START AT '2024-01-01 00:00:00'] GROUP BY g",
            )
            .await
    });
    common::wait_for_queries(&admin, 1).await;
    // One batch: an INSERT of 16,000 tuples a second apart reaches the query whole.
    let values: Vec<String> = (0..16_000)
        .map(|i| {
            format!(
                "('2024-01-01 {:02}:{:02}:{:02}',{i},'g{}')",
                i / 3600,
                i / 60 % 60,
                i % 60,
                i % 10
            )
        })
        .collect();
    common::exec(
        &admin,
        &format!("INSERT INTO s VALUES {}", values.join(",")),
    )
    .await;
    let progress = loop {
        let r = common::rows(&admin, "SELECT tuples_in FROM tcq_queries").await;
        let n: u64 = r[0][0].parse().unwrap();
        if n > 0 {
            break n;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    };
    assert!(
        progress < 16_000,
        "the view saw the query part way through its batch, not {progress} tuples"
    );
    cancel.cancel_query(NoTls).await.unwrap();
    let err = tokio::time::timeout(Duration::from_secs(20), run)
        .await
        .expect("the cancel ends the query within the batch")
        .unwrap()
        .expect_err("the query was cancelled");
    assert_eq!(common::sqlstate(&err), "57014");
    let left = common::rows(&admin, "SELECT count(*) FROM tcq_queries").await;
    assert_eq!(left, [["0"]]);
    // The stream serves the next query: a count over the same tuples, replayed to it
    // by a heartbeat past them is not needed; new tuples reach it.
    let (next, _h2) = common::connect_with_handle(port).await;
    let q = tokio::spawn(async move {
        next.simple_query(
            "SELECT count(*) FROM s [RANGE BY '1 hour' START AT '2024-01-02 00:00:00'] LIMIT 1",
        )
        .await
    });
    common::wait_for_queries(&admin, 1).await;
    common::exec(
        &admin,
        "INSERT INTO s VALUES ('2024-01-02 00:10:00', 1, 'a'), ('2024-01-02 01:00:00', 2, 'b')",
    )
    .await;
    let msgs = tokio::time::timeout(Duration::from_secs(20), q)
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    let counts: Vec<String> = msgs
        .iter()
        .filter_map(|m| match m {
            tokio_postgres::SimpleQueryMessage::Row(r) => Some(r.get(0).unwrap().to_string()),
            _ => None,
        })
        .collect();
    assert_eq!(counts, ["1"]);
}

/// Functions that build text from a client's numbers (`repeat`, `lpad`, `format`'s field
/// width) refuse a result past the text limit with 54000 instead of allocating gigabytes,
/// in a query over a table (the relational path) as in a plain SELECT; the server serves
/// on.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn text_built_from_a_client_number_is_bounded() {
    let port = common::start_server();
    let c = common::connect(port).await;
    c.batch_execute("CREATE TABLE one (k integer); INSERT INTO one VALUES (1)")
        .await
        .unwrap();
    for q in [
        "SELECT repeat('x', 2000000000)",
        "SELECT lpad('x', 2000000000)",
        "SELECT format('%2000000000s', 'x')",
        "SELECT format('%-*s', 2000000000, 'x') FROM one",
        "SELECT format('%2000000000s', k) FROM one",
    ] {
        let err = c.simple_query(q).await.unwrap_err();
        assert_eq!(common::sqlstate(&err), "54000", "{q}: {err}");
    }
    let rows = c.simple_query("SELECT format('%5s|', 'ab')").await.unwrap();
    let tokio_postgres::SimpleQueryMessage::Row(r) = &rows[1] else {
        panic!("a row: {rows:?}");
    };
    assert_eq!(r.get(0), Some("   ab|"));
}
