//! Slow subscribers stall neither ingest nor other subscribers for long (issue 11): output
//! queues are bounded in bytes per subscriber; a subscriber whose queue is full and who takes
//! nothing for `output_stall_timeout` is cut off with 54000, or, if it chose
//! `SET tcq.output_overflow = 'skip'`, skips at once and is told how many rows. A reader
//! that keeps reading is waited for.

use crate::common;

use std::time::Duration;

use futures::{SinkExt, StreamExt};
use tcq::engine::{Config, Limits};
use tokio_postgres::{AsyncMessage, NoTls, SimpleQueryMessage};

const STATEMENTS: i64 = 40;
const ROWS_PER_STATEMENT: i64 = 500;

/// A connection whose NOTICEs are forwarded to the returned receiver.
async fn connect_with_notices(
    port: u16,
) -> (
    tokio_postgres::Client,
    tokio::sync::mpsc::UnboundedReceiver<String>,
) {
    let (client, mut connection) = tokio_postgres::connect(&common::conn_string(port), NoTls)
        .await
        .unwrap();
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
    tokio::spawn(async move {
        let mut messages = futures::stream::poll_fn(move |cx| connection.poll_message(cx));
        while let Some(Ok(msg)) = messages.next().await {
            if let AsyncMessage::Notice(n) = msg {
                let _ = tx.send(n.message().to_string());
            }
        }
    });
    (client, rx)
}

fn data_rows(messages: &[SimpleQueryMessage]) -> Vec<i64> {
    messages
        .iter()
        .filter_map(|m| match m {
            SimpleQueryMessage::Row(r) => Some(r.get(0).unwrap().parse().unwrap()),
            _ => None,
        })
        .collect()
}

/// Feed `STATEMENTS` INSERTs of `ROWS_PER_STATEMENT` consecutive values each; panics if
/// the whole feed takes more than 10 s (before the fix, every full queue held ingest for
/// 10 s). With `progress`, each statement waits until a reader has seen its rows, so that
/// reader never falls behind by more than one statement.
async fn feed(port: u16, mut progress: Option<tokio::sync::watch::Receiver<usize>>) {
    let feeder = common::connect(port).await;
    let all = async {
        for i in 0..STATEMENTS {
            let values: Vec<String> = (0..ROWS_PER_STATEMENT)
                .map(|j| format!("({})", i * ROWS_PER_STATEMENT + j))
                .collect();
            feeder
                .batch_execute(&format!("INSERT INTO s VALUES {}", values.join(",")))
                .await
                .unwrap();
            if let Some(p) = progress.as_mut() {
                let want = ((i + 1) * ROWS_PER_STATEMENT) as usize;
                p.wait_for(|&n| n >= want).await.expect("reader alive");
            }
        }
    };
    tokio::time::timeout(Duration::from_secs(10), all)
        .await
        .expect("ingest stalled behind a subscriber that reads nothing");
}

fn small_queues() -> Config {
    Config {
        limits: Limits {
            output_queue_bytes: 64 << 10,
            ..Limits::default()
        },
    }
}

/// A cursor nobody fetches from sits beside a reading subscriber: ingest goes on at once,
/// the reader gets every row in order, and the idle cursor is cut off with 54000 naming
/// the bound (after the rows that fitted, which it still gets).
#[tokio::test]
async fn a_non_reading_subscriber_is_cut_off_and_stalls_no_one() {
    let port = common::start_server_with(small_queues());
    let admin = common::connect(port).await;
    admin
        .batch_execute("CREATE STREAM s (v bigint)")
        .await
        .unwrap();
    let idle = common::connect(port).await;
    idle.batch_execute("BEGIN; DECLARE c CURSOR FOR SELECT v FROM s")
        .await
        .unwrap();
    let reader = common::connect(port).await;
    let total = (STATEMENTS * ROWS_PER_STATEMENT) as usize;
    let (progress_tx, progress) = tokio::sync::watch::channel(0usize);
    let reading = tokio::spawn(async move {
        let stream = reader
            .query_raw("SELECT v FROM s", Vec::<i64>::new())
            .await
            .unwrap();
        tokio::pin!(stream);
        let mut seen = Vec::with_capacity(total);
        while seen.len() < total {
            let row = stream.next().await.expect("row").expect("no error");
            seen.push(row.get::<_, i64>(0));
            progress_tx.send_replace(seen.len());
        }
        seen
    });
    common::wait_for_queries(&admin, 2).await;
    feed(port, Some(progress)).await;
    let seen = tokio::time::timeout(Duration::from_secs(10), reading)
        .await
        .expect("the reading subscriber got every row")
        .unwrap();
    assert_eq!(seen, (0..total as i64).collect::<Vec<_>>());

    let err = idle.simple_query("FETCH ALL FROM c").await.unwrap_err();
    assert_eq!(common::sqlstate(&err), "54000");
    let message = err.as_db_error().unwrap().message().to_string();
    assert!(
        message.contains("fell behind") && message.contains("output_queue_bytes (65536 bytes)"),
        "{message}"
    );
    // Once the idle cursor's transaction ends, its query is gone; the reading one runs on.
    idle.batch_execute("ROLLBACK").await.unwrap();
    let queries = admin
        .simple_query("SELECT id FROM tcq_queries")
        .await
        .unwrap();
    assert_eq!(
        queries
            .iter()
            .filter(|m| matches!(m, SimpleQueryMessage::Row(_)))
            .count(),
        1
    );
}

/// A subscriber that chose to skip keeps its query: it gets the rows that fitted, a NOTICE
/// saying how many rows it missed, and then every row that arrives once it reads again.
#[tokio::test]
async fn a_skipping_subscriber_is_told_how_much_it_missed() {
    let port = common::start_server_with(small_queues());
    let admin = common::connect(port).await;
    admin
        .batch_execute("CREATE STREAM s (v bigint)")
        .await
        .unwrap();
    let (idle, mut notices) = connect_with_notices(port).await;
    idle.batch_execute(
        "SET tcq.output_overflow = 'skip'; BEGIN; DECLARE c CURSOR FOR SELECT v FROM s",
    )
    .await
    .unwrap();
    common::wait_for_queries(&admin, 1).await;
    feed(port, None).await;
    // Dropping the stream ends the query, so FETCH ALL returns what was queued.
    admin.batch_execute("DROP STREAM s").await.unwrap();
    let got = data_rows(&idle.simple_query("FETCH ALL FROM c").await.unwrap());
    // Every row is either fetched, in order, or counted in a NOTICE where it was skipped.
    assert!(got.windows(2).all(|w| w[0] < w[1]), "rows in order");
    assert_eq!(
        &got[..ROWS_PER_STATEMENT as usize],
        &(0..ROWS_PER_STATEMENT).collect::<Vec<_>>()[..]
    );
    let mut skipped = 0;
    while let Ok(notice) = notices.try_recv() {
        let words: Vec<&str> = notice.split(' ').collect();
        assert_eq!(words[0], "skipped", "{notice}");
        assert!(
            notice.ends_with("the client fell behind and its output queue reached output_queue_bytes (65536 bytes)"),
            "{notice}"
        );
        skipped += words[1].parse::<i64>().unwrap();
    }
    assert!(skipped > 0, "no NOTICE of skipped rows");
    assert_eq!(got.len() as i64 + skipped, STATEMENTS * ROWS_PER_STATEMENT);
}

/// Regression: with ingest never waiting on a reader, one all-or-nothing COPY whose rows
/// outgrew the output queue cut off a reader that was reading as fast as it could (the
/// README's demo failed with 54000). A reader that keeps taking rows is now waited for, so
/// a burst many times the queue's size arrives whole.
#[tokio::test]
async fn a_reader_that_keeps_reading_gets_a_burst_larger_than_its_queue() {
    let port = common::start_server_with(small_queues());
    let admin = common::connect(port).await;
    admin
        .batch_execute("CREATE STREAM s (v bigint)")
        .await
        .unwrap();
    let reader = common::connect(port).await;
    const TOTAL: i64 = 40_000;
    let reading = tokio::spawn(async move {
        let stream = reader
            .query_raw("SELECT v FROM s", Vec::<i64>::new())
            .await
            .unwrap();
        tokio::pin!(stream);
        let mut seen = Vec::with_capacity(TOTAL as usize);
        while seen.len() < TOTAL as usize {
            let row = stream.next().await.expect("row").expect("no error");
            seen.push(row.get::<_, i64>(0));
            if seen.len() % 2_000 == 0 {
                // A slow but steady reader.
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
        }
        seen
    });
    common::wait_for_queries(&admin, 1).await;
    let data: String = (0..TOTAL).map(|v| format!("{v}\n")).collect();
    let sink = admin.copy_in("COPY s FROM STDIN").await.unwrap();
    futures::pin_mut!(sink);
    sink.send(bytes::Bytes::from(data)).await.unwrap();
    assert_eq!(sink.finish().await.unwrap(), TOTAL as u64);
    let seen = tokio::time::timeout(Duration::from_secs(30), reading)
        .await
        .expect("the reader got every row")
        .unwrap();
    assert_eq!(seen, (0..TOTAL).collect::<Vec<_>>());
}
