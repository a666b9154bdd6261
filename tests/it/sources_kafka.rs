//! Issue 31, Kafka: a stream fed from a real broker (Tansu) with two partitions. Exact rows,
//! bad messages counted with their partition and offset, lag, `start`, exactly once into
//! an archived stream across a SIGKILL of tcqd, and a broker killed and started again
//! (its records kept in moto's S3) recovered without loss. Skipped with a message when
//! Tansu is not installed.

use crate::common::kafka::{flight, Broker};
use crate::common::sources::{fetch, resume_and_fetch_ids, source_row, wait_source};
use crate::common::{self, connect, exec};

const COLUMNS: &str = "ts timestamp TIMESTAMPCOLUMN, id bigint, origin text";

/// `rows` sorted (the partitions' records interleave in no fixed order).
fn sorted(mut rows: Vec<Vec<String>>) -> Vec<Vec<String>> {
    rows.sort();
    rows
}

/// `CREATE STREAM name` of the flights' columns reading `broker`'s topic `name` from its
/// start, paused until `resume_and_fetch_ids` resumes it.
async fn create_paused_source(c: &tokio_postgres::Client, broker: &Broker, name: &str) {
    exec(
        c,
        &format!(
            "CREATE STREAM {name} ({COLUMNS}) WITH (connector = 'kafka', topic = '{name}', \
             bootstrap_servers = '{}', timestamp_format = 'epoch_s', paused = true)",
            broker.bootstrap()
        ),
    )
    .await;
}

#[tokio::test]
async fn two_partitions_exact_rows_bad_messages_lag_and_start() {
    let Some(broker) = Broker::start() else {
        return;
    };
    broker.create_topic("flights", 2).await;
    broker.produce("flights", 0, &[flight(1), flight(3)]).await;
    broker
        .produce(
            "flights",
            1,
            &[
                flight(2),
                "{\"ts\": 978307204, \"id\": \"four\"}".into(),
                flight(5),
            ],
        )
        .await;
    let port = common::start_server();
    let c = connect(port).await;
    exec(
        &c,
        &format!(
            "CREATE STREAM k ({COLUMNS}) WITH (connector = 'kafka', topic = 'flights', \
             bootstrap_servers = '{}', format = 'json', timestamp_format = 'epoch_s', paused = true)",
            broker.bootstrap()
        ),
    )
    .await;
    exec(
        &c,
        "BEGIN; DECLARE q CURSOR FOR SELECT ts, id, origin FROM k; ALTER STREAM k RESUME",
    )
    .await;
    let rows = sorted(fetch(&c, "q", 4, 20).await);
    assert_eq!(
        rows,
        common::table(&[
            &["2001-01-01 00:00:01", "1", "A1"],
            &["2001-01-01 00:00:02", "2", "A2"],
            &["2001-01-01 00:00:03", "3", "A3"],
            &["2001-01-01 00:00:05", "5", "A5"],
        ])
    );
    let r = wait_source(&c, "k", 20, |r| r.messages == 4 && r.lag == Some(0)).await;
    assert_eq!(r.state, "running");
    assert_eq!(r.bad_messages, 1);
    assert_eq!(
        r.last_error.as_deref(),
        Some("partition 1 offset 1: column \"id\": invalid input syntax for type bigint: \"four\"")
    );
    // New records are read as they come, from both partitions.
    broker.produce("flights", 0, &[flight(6)]).await;
    broker.produce("flights", 1, &[flight(7)]).await;
    assert_eq!(
        sorted(fetch(&c, "q", 2, 20).await),
        common::table(&[
            &["2001-01-01 00:00:06", "6", "A6"],
            &["2001-01-01 00:00:07", "7", "A0"],
        ])
    );
    exec(&c, "COMMIT").await;

    // start = 'latest' reads only what comes after it started.
    exec(
        &c,
        &format!(
            "CREATE STREAM l ({COLUMNS}) WITH (connector = 'kafka', topic = 'flights', \
             bootstrap_servers = '{}', timestamp_format = 'epoch_s', start = 'latest')",
            broker.bootstrap()
        ),
    )
    .await;
    wait_source(&c, "l", 20, |r| r.lag == Some(0)).await;
    exec(&c, "BEGIN; DECLARE l CURSOR FOR SELECT id FROM l").await;
    broker.produce("flights", 1, &[flight(8)]).await;
    assert_eq!(fetch(&c, "l", 1, 20).await, common::table(&[&["8"]]));
    exec(&c, "COMMIT").await;
    // The options are shown without the secrets.
    let r = source_row(&c, "l").await.unwrap();
    assert!(r.options.contains("topic = 'flights'"), "{}", r.options);
}

/// An archived stream fed from Kafka: tcqd is killed (SIGKILL) while it consumes and
/// started again; every record is in the archive exactly once, since each batch's
/// offsets are in the commit record of the statement holding its tuples.
#[tokio::test]
async fn archived_kafka_source_is_exactly_once_across_sigkill() {
    let Some(broker) = Broker::start() else {
        return;
    };
    broker.create_topic("f", 2).await;
    let data = common::data_dir();
    let args = ["--data-dir", data.path().to_str().unwrap()];
    broker.produce_split("f", 0, 20_000).await;
    let server = common::tcqd::Tcqd::start(args);
    let c = connect(server.port).await;
    exec(
        &c,
        &format!(
            "CREATE STREAM a ({COLUMNS}) TYPE ARCHIVED WITH (connector = 'kafka', topic = 'f', \
             bootstrap_servers = '{}', timestamp_format = 'epoch_s')",
            broker.bootstrap()
        ),
    )
    .await;
    wait_source(&c, "a", 30, |r| r.messages > 0).await;
    drop(c);
    drop(server); // SIGKILL
    broker.produce_split("f", 20_000, 30_000).await;
    let server = common::tcqd::Tcqd::start(args);
    let c = connect(server.port).await;
    wait_source(&c, "a", 60, |r| r.lag == Some(0) && r.state == "running").await;
    let tuples: i64 = c
        .query_one("SELECT tuples FROM tcq_streams WHERE name = 'a'", &[])
        .await
        .unwrap()
        .get(0);
    assert_eq!(tuples, 30_000);
    drop(c);
    drop(server);
    let columns = vec![
        tcq::types::Column::new("ts", tcq::types::DataType::Timestamp),
        tcq::types::Column::new("id", tcq::types::DataType::Int8),
        tcq::types::Column::new("origin", tcq::types::DataType::Text),
    ];
    let dir = tcq::engine::archive::stream_dir(data.path(), "a");
    let batches = tcq::engine::archive::read_archive(&dir, &columns, Some(0)).unwrap();
    let mut ids: Vec<i64> = batches
        .iter()
        .flat_map(|b| {
            let rows = b.to_rows();
            (0..rows.len())
                .map(|i| rows.row(i)[1].as_i64().unwrap())
                .collect::<Vec<_>>()
        })
        .collect();
    ids.sort_unstable();
    assert_eq!(
        ids,
        (0..30_000).collect::<Vec<_>>(),
        "nothing lost, nothing twice"
    );
}

/// The broker is killed and started again (its records in moto's S3): the source says it
/// is retrying, then goes on from where it was with nothing lost or read twice.
#[tokio::test]
async fn a_broker_killed_and_restarted_is_recovered_without_loss() {
    let Some((mut broker, _s3)) = Broker::start_on_s3() else {
        return;
    };
    broker.create_topic("r", 2).await;
    broker
        .produce("r", 0, &(0..50).map(flight).collect::<Vec<_>>())
        .await;
    broker
        .produce("r", 1, &(50..100).map(flight).collect::<Vec<_>>())
        .await;
    let port = common::start_server();
    let c = connect(port).await;
    create_paused_source(&c, &broker, "r").await;
    let mut ids = resume_and_fetch_ids(&c, "r", 100, 30).await;
    assert_eq!(ids.len(), 100);
    broker.kill();
    wait_source(&c, "r", 60, |r| r.state == "retrying").await;
    broker.restart();
    broker
        .produce("r", 0, &(100..150).map(flight).collect::<Vec<_>>())
        .await;
    broker
        .produce("r", 1, &(150..200).map(flight).collect::<Vec<_>>())
        .await;
    ids.extend(
        fetch(&c, "q", 100, 60)
            .await
            .iter()
            .map(|r| r[0].parse::<i64>().unwrap()),
    );
    ids.sort_unstable();
    assert_eq!(ids, (0..200).collect::<Vec<_>>());
    let r = wait_source(&c, "r", 30, |r| r.state == "running" && r.lag == Some(0)).await;
    assert_eq!(r.messages, 200);
    exec(&c, "COMMIT").await;
}

/// A topic deleted and made again under a running source: its log now ends before the
/// source's offsets, which the broker (Tansu) answers without OFFSET_OUT_OF_RANGE. The
/// source used to wait there for good, reading none of the new records; it goes on from
/// the new log's first record.
#[tokio::test]
async fn a_topic_deleted_and_made_again_is_read_from_its_start() {
    let Some(broker) = Broker::start() else {
        return;
    };
    broker.create_topic("d", 1).await;
    broker
        .produce("d", 0, &(0..20).map(flight).collect::<Vec<_>>())
        .await;
    let port = common::start_server();
    let c = connect(port).await;
    create_paused_source(&c, &broker, "d").await;
    let ids = resume_and_fetch_ids(&c, "d", 20, 30).await;
    assert_eq!(ids, (0..20).collect::<Vec<_>>());
    broker.delete_topic("d").await;
    broker.create_topic("d", 1).await;
    broker
        .produce("d", 0, &(100..105).map(flight).collect::<Vec<_>>())
        .await;
    let ids: Vec<i64> = fetch(&c, "q", 5, 60)
        .await
        .iter()
        .map(|r| r[0].parse().unwrap())
        .collect();
    assert_eq!(ids, (100..105).collect::<Vec<_>>());
    let r = wait_source(&c, "d", 30, |r| r.messages == 25).await;
    assert_eq!(r.state, "running");
    exec(&c, "COMMIT").await;
}

/// A record longer than a Fetch's answer may be (64 MiB) is a bad message at its offset
/// and the source goes on after it: it used to fail every Fetch at that offset, the source
/// retrying there for good with every later record behind it; and then, with the huge
/// record in one batch with others (one produce request), every record of that batch was
/// bad. The batch is now read record by record: only the huge one is bad.
#[tokio::test]
async fn a_record_longer_than_a_fetch_reads_is_bad_and_the_source_goes_on() {
    let Some(broker) = Broker::start() else {
        return;
    };
    broker.create_topic("huge", 1).await;
    broker.produce("huge", 0, &[flight(0)]).await;
    let huge = format!("{{\"note\": \"{}\"}}", "x".repeat(65 << 20));
    // One batch: 1, the huge record, 3.
    broker
        .produce_batch("huge", 0, &[flight(1), huge.clone(), flight(3)])
        .await;
    // A batch of the huge record alone.
    broker.produce("huge", 0, &[huge]).await;
    broker.produce("huge", 0, &[flight(5)]).await;
    // One batch of 7 records of 10 MiB: each fits, the batch does not; the answer is read
    // in two parts (at most 64 MiB of values kept from one).
    let padded: Vec<String> = (6..13)
        .map(|i| {
            let f = flight(i);
            format!(
                "{}, \"pad\": \"{}\"}}",
                &f[..f.len() - 1],
                "y".repeat(10 << 20)
            )
        })
        .collect();
    broker.produce_batch("huge", 0, &padded).await;
    broker.produce("huge", 0, &[flight(13)]).await;
    let port = common::start_server();
    let c = connect(port).await;
    create_paused_source(&c, &broker, "huge").await;
    let ids = resume_and_fetch_ids(&c, "huge", 12, 60).await;
    assert_eq!(ids, [0, 1, 3, 5, 6, 7, 8, 9, 10, 11, 12, 13]);
    let r = wait_source(&c, "huge", 30, |r| r.messages == 12).await;
    assert_eq!((r.state.as_str(), r.bad_messages), ("running", 2));
    let error = r.last_error.unwrap_or_default();
    assert!(
        error.starts_with("partition 0 offset 4: a record of ")
            && error.ends_with(" bytes is longer than the 67108864 bytes a Fetch reads"),
        "{error}"
    );
    exec(&c, "COMMIT").await;
}

/// `tcqd demo --kafka`: the demo's query fed from a topic instead of its data file; it
/// ends once the source has caught up.
#[tokio::test]
async fn the_demo_reads_a_kafka_topic() {
    let Some(broker) = Broker::start() else {
        return;
    };
    broker.create_topic("demo", 2).await;
    let flight = |i: i64| {
        format!(
            "{{\"ts\":\"2001-01-01 {:02}:{:02}:00\",\"delay\":{},\"distance\":100,\"origin\":\"A{}\",\"destination\":\"B\"}}",
            i / 60,
            i % 60,
            i % 10,
            i % 3
        )
    };
    broker
        .produce(
            "demo",
            0,
            &(0..300)
                .filter(|i| i % 2 == 0)
                .map(flight)
                .collect::<Vec<_>>(),
        )
        .await;
    broker
        .produce(
            "demo",
            1,
            &(0..300)
                .filter(|i| i % 2 == 1)
                .map(flight)
                .collect::<Vec<_>>(),
        )
        .await;
    let bootstrap = broker.bootstrap();
    let out = tokio::task::spawn_blocking(move || {
        std::process::Command::new(env!("CARGO_BIN_EXE_tcqd"))
            .args([
                "demo",
                "--quiet",
                "--listen",
                "127.0.0.1:0",
                "--kafka",
                &bootstrap,
                "--topic",
                "demo",
            ])
            .output()
            .unwrap()
    })
    .await
    .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("tuples ingested        300\n"), "{stdout}");
    // 300 flights over five hours: every one counted by the windows that closed.
    assert!(stdout.contains("sum of count(*)"), "{stdout}");
}

/// Each partition decodes its own records: a bad message in each of two partitions is
/// counted once, with its own partition and offset, whether skipped or stopped on. With
/// `on_error = 'stop'` the source stops at each in turn, every good record before it
/// delivered, and each RESUME goes on past the one it stopped on: every good record
/// arrives exactly once.
#[tokio::test]
async fn a_bad_message_in_each_partition_is_counted_once_and_stopped_on_in_turn() {
    let Some(broker) = Broker::start() else {
        return;
    };
    broker.create_topic("b", 2).await;
    let bad = "{\"ts\": 978307202, \"id\": \"two\"}".to_string();
    broker.produce("b", 0, &[flight(1), bad, flight(3)]).await;
    broker
        .produce("b", 1, &[flight(4), "not json".into(), flight(6)])
        .await;
    let errors = [
        "partition 0 offset 1: column \"id\": invalid input syntax for type bigint: \"two\"",
        "partition 1 offset 1: not a JSON object: expected ident at line 1 column 2",
    ];
    let port = common::start_server();
    let c = connect(port).await;
    for (name, on_error) in [("skipping", "skip"), ("stopping", "stop")] {
        exec(
            &c,
            &format!(
                "CREATE STREAM {name} ({COLUMNS}) WITH (connector = 'kafka', topic = 'b', \
                 bootstrap_servers = '{}', timestamp_format = 'epoch_s', on_error = '{on_error}', \
                 paused = true)",
                broker.bootstrap()
            ),
        )
        .await;
    }
    exec(
        &c,
        "BEGIN; DECLARE s CURSOR FOR SELECT id FROM skipping; \
         DECLARE t CURSOR FOR SELECT id FROM stopping; \
         ALTER STREAM skipping RESUME; ALTER STREAM stopping RESUME",
    )
    .await;
    let ids = |rows: Vec<Vec<String>>| sorted(rows).concat();
    assert_eq!(ids(fetch(&c, "s", 4, 20).await), ["1", "3", "4", "6"]);
    let r = wait_source(&c, "skipping", 20, |r| r.messages == 4 && r.lag == Some(0)).await;
    assert_eq!((r.bad_messages, r.tuples), (2, 4));
    assert!(errors.contains(&r.last_error.as_deref().unwrap()), "{r:?}");

    // Stopped at one partition's bad message, then at the other's.
    let mut seen = Vec::new();
    for n in 1..=2 {
        let r = wait_source(&c, "stopping", 20, |r| {
            r.state == "failed" && r.bad_messages == n
        })
        .await;
        let e = r.last_error.unwrap();
        assert!(errors.contains(&e.as_str()) && !seen.contains(&e), "{e}");
        seen.push(e);
        exec(&c, "ALTER STREAM stopping RESUME").await;
    }
    let r = wait_source(&c, "stopping", 20, |r| r.messages == 4 && r.lag == Some(0)).await;
    assert_eq!(
        (r.state.as_str(), r.bad_messages, r.tuples),
        ("running", 2, 4)
    );
    assert_eq!(ids(fetch(&c, "t", 4, 20).await), ["1", "3", "4", "6"]);
    exec(&c, "COMMIT").await;
}
