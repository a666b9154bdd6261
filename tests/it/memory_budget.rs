//! The global memory budget (issue 11, `memory_limit_bytes`, `tcqd --memory-limit`): the
//! query, Parse or COPY that would take the server's tracked memory past the limit is the
//! one that pays (53200, or a COPY staged to disk early), the others and ingest go on, and
//! `tcq_memory` shows the tracked bytes going back to zero once the holders are gone.

use crate::common;

use std::time::Duration;

use tcq::engine::{Config, Limits};
use tokio_postgres::Client;

fn config(memory_limit_bytes: usize) -> Config {
    Config {
        limits: Limits {
            memory_limit_bytes,
            ..Limits::default()
        },
    }
}

/// `tcq_memory` as (kind, bytes), read with the simple protocol (a prepared statement
/// would be tracked itself).
async fn memory(c: &Client) -> Vec<(String, i64)> {
    common::rows(c, "SELECT kind, bytes FROM tcq_memory")
        .await
        .into_iter()
        .map(|r| (r[0].clone(), r[1].parse().unwrap()))
        .collect()
}

async fn tracked(c: &Client, kind: &str) -> i64 {
    memory(c)
        .await
        .into_iter()
        .find(|(k, _)| k == kind)
        .unwrap_or_else(|| panic!("tcq_memory has no row {kind}"))
        .1
}

/// Wait (10 s at most) until `tcq_memory` reports nothing tracked.
async fn wait_for_nothing_tracked(c: &Client) {
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    loop {
        let m = memory(c).await;
        if m.iter().all(|(_, b)| *b == 0) {
            return;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "tracked memory not given back: {m:?}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

const START: &str = "2024-01-01 00:00:00";
/// Rows fed, one per millisecond of stream time, each its own group key.
const STATEMENTS: i64 = 200;
const ROWS_PER_STATEMENT: i64 = 1000;

/// `INSERT INTO {stream} VALUES` statement `i`: `ROWS_PER_STATEMENT` rows one millisecond
/// apart, row `n` with key `n` and value `v(n)`.
fn insert_statement(stream: &str, i: i64, v: impl Fn(i64) -> i64) -> String {
    let values: Vec<String> = (0..ROWS_PER_STATEMENT)
        .map(|j| {
            let n = i * ROWS_PER_STATEMENT + j;
            format!(
                "(TIMESTAMP '{START}' + interval '{n} milliseconds', {n}, {})",
                v(n)
            )
        })
        .collect();
    format!("INSERT INTO {stream} VALUES {}", values.join(", "))
}

/// Feed `stream` (one key per row, value 1) until `query` ends or `STATEMENTS` statements
/// are in; the query must end within 60 s with 53200 whose message names the limit. The
/// message is returned.
async fn feed_until_53200(
    c: &Client,
    stream: &str,
    query: tokio::task::JoinHandle<
        Result<Vec<tokio_postgres::SimpleQueryMessage>, tokio_postgres::Error>,
    >,
    limit: usize,
) -> String {
    for i in 0..STATEMENTS {
        if query.is_finished() {
            break;
        }
        common::exec(c, &insert_statement(stream, i, |_| 1)).await;
    }
    let err = tokio::time::timeout(Duration::from_secs(60), query)
        .await
        .expect("the query ends")
        .unwrap()
        .expect_err("the query ends with an error");
    assert_eq!(common::sqlstate(&err), "53200");
    let message = err.as_db_error().unwrap().message().to_string();
    assert!(
        message.contains(&format!("past memory_limit ({limit} bytes)")),
        "{message}"
    );
    message
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_query_whose_groups_explode_ends_with_53200_and_the_others_go_on() {
    let limit = 4 << 20;
    let port = common::start_server_with(config(limit));
    let admin = common::connect(port).await;
    common::exec(
        &admin,
        "CREATE STREAM s (ts timestamp TIMESTAMPCOLUMN, k bigint, v integer)",
    )
    .await;
    assert_eq!(
        common::rows(&admin, "SELECT kind, bytes, limit_bytes FROM tcq_memory").await,
        common::table(&[
            &["query_state", "0", "4194304"],
            &["output_queues", "0", "4194304"],
            &["copy_staging", "0", "4194304"],
            &["prepared_statements", "0", "4194304"],
            &["total", "0", "4194304"],
        ])
    );

    // One group per tuple inside one open hour: the group table grows without end.
    let explode = common::connect(port).await;
    let exploding = tokio::spawn(async move {
        explode
            .simple_query(&format!(
                "SELECT k, count(*) FROM s [RANGE BY '1 hour' START AT '{START}'] GROUP BY k"
            ))
            .await
    });
    // A small query over the same stream: one row per second.
    let steady = common::connect(port).await;
    let steady_rows = tokio::spawn(async move {
        common::rows_within(
            &steady,
            &format!(
                "SELECT count(*), sum(v) FROM s [RANGE BY '1 second' START AT '{START}'] LIMIT {STATEMENTS}"
            ),
            120,
        )
        .await
    });
    common::wait_for_queries(&admin, 2).await;

    let feeder = common::connect(port).await;
    for i in 0..STATEMENTS {
        common::exec(&feeder, &insert_statement("s", i, |n| n % 7)).await;
    }
    // Closes the last one-second window.
    let end = STATEMENTS * ROWS_PER_STATEMENT;
    common::exec(
        &feeder,
        &format!(
            "INSERT INTO s VALUES (TIMESTAMP '{START}' + interval '{end} milliseconds', -1, 0)"
        ),
    )
    .await;

    let err = tokio::time::timeout(Duration::from_secs(60), exploding)
        .await
        .expect("the exploding query ends")
        .unwrap()
        .expect_err("the exploding query ends with an error");
    assert_eq!(common::sqlstate(&err), "53200");
    let message = err.as_db_error().unwrap().message().to_string();
    assert!(
        message.starts_with("the state of ")
            && message.contains(
                "would take the server's tracked memory past memory_limit (4194304 bytes)"
            ),
        "{message}"
    );

    // The steady query saw every tuple: 1,000 per second, v = n % 7 summed.
    let got = steady_rows.await.unwrap();
    let expected: Vec<Vec<String>> = (0..STATEMENTS)
        .map(|sec| {
            let sum: i64 = (sec * 1000..(sec + 1) * 1000).map(|n| n % 7).sum();
            vec!["1000".to_string(), sum.to_string()]
        })
        .collect();
    assert_eq!(got.len(), expected.len());
    assert_eq!(got, expected);

    // Both queries are gone: every tracked byte is given back, and a new query runs.
    wait_for_nothing_tracked(&admin).await;
    assert_eq!(
        common::rows(&admin, "SELECT count(*) FROM tcq_queries").await,
        common::table(&[&["0"]])
    );
}

#[tokio::test]
async fn a_parse_past_the_budget_gets_53200_and_the_connection_goes_on() {
    use tcq::engine::memory::prepared_statement_bytes;
    let small = format!("SELECT '{}'", "x".repeat(1000));
    let big = format!("SELECT '{}'", "y".repeat(1500));
    // Each fits alone, not both.
    let limit = prepared_statement_bytes(big.len()) + prepared_statement_bytes(small.len()) - 1;
    let port = common::start_server_with(config(limit));
    let c = common::connect(port).await;
    let stmt = c.prepare(&small).await.unwrap();
    assert_eq!(
        tracked(&c, "prepared_statements").await,
        prepared_statement_bytes(small.len()) as i64
    );
    let err = c.prepare(&big).await.expect_err("refused");
    assert_eq!(common::sqlstate(&err), "53200");
    assert_eq!(
        err.as_db_error().unwrap().message(),
        format!(
            "a prepared statement would take the server's tracked memory past memory_limit ({limit} bytes): {} bytes in use, {} more asked",
            prepared_statement_bytes(small.len()),
            prepared_statement_bytes(big.len())
        )
    );
    assert_eq!(common::rows(&c, "SELECT 1").await, common::table(&[&["1"]]));
    // Closing the statement gives its bytes back.
    drop(stmt);
    wait_for_nothing_tracked(&c).await;
    c.prepare(&big).await.unwrap();
}

#[tokio::test]
async fn a_copy_past_the_budget_is_staged_on_disk_and_commits_whole() {
    let port = common::start_server_with(config(256 << 10));
    let c = common::connect(port).await;
    common::exec(
        &c,
        "CREATE STREAM s (ts timestamp TIMESTAMPCOLUMN, v integer)",
    )
    .await;
    let reader = common::connect(port).await;
    let counted = tokio::spawn(async move {
        common::rows_within(
            &reader,
            &format!(
                "SELECT count(*), sum(v) FROM s [RANGE BY '1 hour' START AT '{START}'] LIMIT 1"
            ),
            60,
        )
        .await
    });
    common::wait_for_queries(&c, 1).await;
    let rows = 100_000i64;
    let mut data = String::new();
    for n in 0..rows {
        data.push_str(&format!(
            "2024-01-01 00:{:02}:{:02}\t{n}\n",
            n / 60_000,
            (n / 1000) % 60
        ));
    }
    // One more row an hour later closes the window.
    data.push_str("2024-01-01 01:00:00\t0\n");
    let sink = c.copy_in("COPY s FROM STDIN").await.unwrap();
    futures::pin_mut!(sink);
    use futures::SinkExt;
    for chunk in data.as_bytes().chunks(64 << 10) {
        sink.send(bytes::Bytes::copy_from_slice(chunk))
            .await
            .unwrap();
    }
    assert_eq!(sink.finish().await.unwrap(), rows as u64 + 1);
    assert_eq!(
        counted.await.unwrap(),
        vec![vec![rows.to_string(), (rows * (rows - 1) / 2).to_string()]]
    );
    wait_for_nothing_tracked(&c).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_join_whose_stored_tuples_explode_ends_with_53200() {
    let port = common::start_server_with(config(4 << 20));
    let c = common::connect(port).await;
    common::exec(
        &c,
        "CREATE STREAM a (ts timestamp TIMESTAMPCOLUMN, k bigint, v integer); \
         CREATE STREAM b (ts timestamp TIMESTAMPCOLUMN, k bigint, v integer)",
    )
    .await;
    let reader = common::connect(port).await;
    let join = tokio::spawn(async move {
        reader
            .simple_query(&format!(
                "SELECT sum(a.v) FROM a [RANGE BY '1 hour' START AT '{START}'] \
                 JOIN b [RANGE BY '1 hour' START AT '{START}'] ON a.k = b.k"
            ))
            .await
    });
    common::wait_for_queries(&c, 1).await;
    // Every tuple of a stays stored for the hour: 200,000 of them pass 4 MiB.
    let message = feed_until_53200(&c, "a", join, 4 << 20).await;
    assert!(message.starts_with("the state of query "), "{message}");
    wait_for_nothing_tracked(&c).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_distinct_set_that_explodes_ends_with_53200() {
    let port = common::start_server_with(config(4 << 20));
    let c = common::connect(port).await;
    common::exec(
        &c,
        "CREATE STREAM s (ts timestamp TIMESTAMPCOLUMN, k bigint, v integer)",
    )
    .await;
    let reader = common::connect(port).await;
    let distinct = tokio::spawn(async move {
        reader
            .simple_query(&format!(
                "SELECT count(DISTINCT k) FROM s [RANGE BY '1 hour' START AT '{START}']"
            ))
            .await
    });
    common::wait_for_queries(&c, 1).await;
    // One group whose set of distinct k grows by 1,000 a statement.
    feed_until_53200(&c, "s", distinct, 4 << 20).await;
    wait_for_nothing_tracked(&c).await;
}

/// The COPY staging threshold is `statement_staging_memory_bytes` of parsed rows, as
/// `tcq_memory`'s `copy_staging` counts them (columnar batches), not of COPY text (issue 29:
/// the docs said a COPY over 32 MiB stages; 43 and 162 MB COPYs stayed in memory). With the
/// threshold set to 4 MiB, a COPY holds up to 4 MiB in memory and no staging file, then
/// moves everything to a file under the data directory's `staging/` once its batches pass it;
/// the default is 160 MiB.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_copy_stages_to_disk_past_statement_staging_memory_bytes() {
    use futures::SinkExt;
    const THRESHOLD: usize = 4 << 20;
    assert_eq!(Limits::default().statement_staging_memory_bytes, 160 << 20);
    let dir = common::data_dir();
    let config = Config {
        limits: Limits {
            statement_staging_memory_bytes: THRESHOLD,
            ..Limits::default()
        },
    };
    let port = common::start_server_on(config, dir.path());
    let c = common::connect(port).await;
    common::exec(
        &c,
        "CREATE STREAM s (ts timestamp TIMESTAMPCOLUMN, v bigint, t text)",
    )
    .await;
    let staging = dir.path().join("staging");
    let staged_files = || std::fs::read_dir(&staging).unwrap().count();
    let in_memory = || async {
        common::rows(
            &c,
            "SELECT bytes FROM tcq_memory WHERE kind = 'copy_staging'",
        )
        .await[0][0]
            .parse::<usize>()
            .unwrap()
    };
    let (copier, connection) =
        tokio_postgres::connect(&common::conn_string(port), tokio_postgres::NoTls)
            .await
            .unwrap();
    tokio::spawn(connection);
    let sink = copier
        .copy_in::<_, bytes::Bytes>("COPY s FROM STDIN")
        .await
        .unwrap();
    let mut sink = Box::pin(sink);
    // COPY text is parsed a megabyte at a time; after each message, wait a little for
    // the parsed batches to change, and note what stays in memory.
    let (mut sent_rows, mut sent_bytes, mut held) = (0u64, 0usize, 0usize);
    let mut max_held = 0;
    for message in 0.. {
        assert!(
            message < 100,
            "no staging file after {sent_bytes} bytes of COPY text"
        );
        let text: String = (0..16_384)
            .map(|i| {
                format!(
                    "2024-01-01 00:00:{:02}\t{}\tpad-{i:08}\n",
                    i % 60,
                    sent_rows + i
                )
            })
            .collect();
        sent_rows += 16_384;
        sent_bytes += text.len();
        sink.send(bytes::Bytes::from(text)).await.unwrap();
        sink.as_mut().flush().await.unwrap();
        let deadline = std::time::Instant::now() + Duration::from_millis(500);
        let now = loop {
            let now = in_memory().await;
            if now != held || staged_files() > 0 || std::time::Instant::now() > deadline {
                break now;
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        };
        if now > THRESHOLD || staged_files() > 0 {
            // Past the threshold the batches move to a staging file and leave memory (the
            // bytes are counted a moment before the file is written).
            let deadline = std::time::Instant::now() + Duration::from_secs(10);
            while staged_files() == 0 || in_memory().await != 0 {
                assert!(
                    std::time::Instant::now() < deadline,
                    "staged batches stay in memory"
                );
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
            break;
        }
        assert!(
            now <= THRESHOLD,
            "{now} bytes held in memory without staging"
        );
        held = now;
        max_held = max_held.max(now);
    }
    // Up to the threshold the batches stayed in memory: more than 3 of its 4 MiB.
    assert!(
        max_held > THRESHOLD * 3 / 4,
        "at most {max_held} bytes held before staging"
    );
    assert_eq!(sink.as_mut().finish().await.unwrap(), sent_rows);
    assert_eq!(staged_files(), 0, "the staging file goes with the COPY");
}
