//! Issue 31, Kafka sinks against a real broker (Tansu, started by the test; skipped with
//! a message when it is not installed): each row a message keyed by its slide event's
//! instant and its GROUP BY keys, each group in one partition in order; and after a
//! SIGKILL of tcqd, with the sink's own position lost as well, no message is written
//! twice or lost (the sink reads each partition's last message back).

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use rskafka::client::partition::UnknownTopicHandling;

use crate::common::kafka::{flight, free_port, Broker};
use crate::common::sinks::wait_sink;
use crate::common::sinks::{tuples, STREAM};
use crate::common::sources::wait_source;
use crate::common::{self, connect, exec};

const QUERY: &str = "SELECT origin, count(*) AS n, wtime(*) FROM s \
                     [RANGE BY '10 minutes' START AT '2001-01-01'] GROUP BY origin";

/// The messages of the windows `0..n` as (key, value), sorted.
fn expected(n: i64) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for w in 0..n {
        let end = (w + 1) * 10;
        let wtime = format!("2001-01-01T{:02}:{:02}:00", end / 60, end % 60);
        for (i, origin) in ["SFO", "LAX", "ORD"].iter().enumerate() {
            let count = (w * 10..w * 10 + 10).filter(|m| m % 3 == i as i64).count();
            out.push((
                format!("{{\"wtime\":\"{wtime}\",\"origin\":\"{origin}\"}}"),
                format!("{{\"origin\":\"{origin}\",\"n\":{count},\"wtime\":\"{wtime}\"}}"),
            ));
        }
    }
    out.sort();
    out
}

/// Every message of `topic` by partition, (key, value) in offset order, once there are
/// `n` in all (at most 30 s).
async fn consume(broker: &Broker, topic: &str, n: usize) -> BTreeMap<i32, Vec<(String, String)>> {
    let client = broker.client().await;
    let start = Instant::now();
    loop {
        let mut all = BTreeMap::new();
        let topics = client.list_topics().await.unwrap();
        let partitions: Vec<i32> = topics
            .iter()
            .find(|t| t.name == topic)
            .map(|t| t.partitions.iter().copied().collect())
            .unwrap_or_default();
        for p in partitions {
            let pc = client
                .partition_client(topic, p, UnknownTopicHandling::Retry)
                .await
                .unwrap();
            let (records, _) = pc.fetch_records(0, 1..16 << 20, 100).await.unwrap();
            let text =
                |b: &Option<Vec<u8>>| String::from_utf8(b.clone().unwrap_or_default()).unwrap();
            all.insert(
                p,
                records
                    .iter()
                    .map(|r| (text(&r.record.key), text(&r.record.value)))
                    .collect::<Vec<_>>(),
            );
        }
        let total: usize = all.values().map(Vec::len).sum();
        if total >= n {
            return all;
        }
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "{total} of {n} messages in {topic} after 30 s: {all:?}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

fn flatten(by_partition: &BTreeMap<i32, Vec<(String, String)>>) -> Vec<(String, String)> {
    let mut all: Vec<(String, String)> = by_partition.values().flatten().cloned().collect();
    all.sort();
    all
}

/// Each row a message with the window end and group key as its key, into a topic the
/// sink creates with two partitions; a group's messages stay in one partition, in order.
#[tokio::test]
async fn a_kafka_sink_keys_each_row_by_window_end_and_group() {
    let Some(broker) = Broker::start() else {
        return;
    };
    let c = connect(common::start_server()).await;
    exec(&c, STREAM).await;
    exec(
        &c,
        &format!(
            "CREATE SINK k AS {QUERY} WITH (connector = 'kafka', topic = 'busy', \
             bootstrap_servers = '{}', partitions = 2)",
            broker.bootstrap()
        ),
    )
    .await;
    exec(&c, &tuples(0, 50)).await;
    exec(&c, &tuples(55, 56)).await;
    let got = consume(&broker, "busy", 15).await;
    assert_eq!(flatten(&got), expected(5));
    for (p, messages) in &got {
        let mut last: BTreeMap<String, String> = BTreeMap::new();
        for (key, _) in messages {
            let k: serde_json::Value = serde_json::from_str(key).unwrap();
            let origin = k["origin"].as_str().unwrap().to_string();
            let wtime = k["wtime"].as_str().unwrap().to_string();
            for (q, others) in &got {
                if q != p {
                    assert!(
                        !others
                            .iter()
                            .any(|(k, _)| k.contains(&format!("\"{origin}\""))),
                        "{origin} in two partitions"
                    );
                }
            }
            if let Some(prev) = last.insert(origin, wtime.clone()) {
                assert!(prev < wtime, "out of order in partition {p}");
            }
        }
    }
    let r = wait_sink(&c, "k", 10, |r| r.slide_events == 5).await;
    assert_eq!((r.rows, r.errors), (15, 0));
}

/// SIGKILL of tcqd, and the sink's position file removed while it is down (as if the
/// kill came between a write and its record): after the restart the sink replays the
/// archive from the start, reads back what each partition holds, and writes only what is
/// missing. Every message once.
#[tokio::test]
async fn a_kafka_sink_writes_each_message_once_across_sigkill() {
    let Some(broker) = Broker::start() else {
        return;
    };
    let data = common::data_dir();
    let args = ["--data-dir", data.path().to_str().unwrap()];
    let server = common::tcqd::Tcqd::start(args);
    let c = connect(server.port).await;
    exec(&c, &format!("{STREAM} TYPE ARCHIVED")).await;
    exec(
        &c,
        &format!(
            "CREATE SINK k AS {QUERY} WITH (connector = 'kafka', topic = 'once', \
             bootstrap_servers = '{}', partitions = 2)",
            broker.bootstrap()
        ),
    )
    .await;
    exec(&c, &tuples(0, 25)).await;
    wait_sink(&c, "k", 20, |r| r.rows == 6).await;
    drop(server);
    let position = data.path().join("sinks").join("k.position");
    assert!(position.exists(), "the sink kept its position");
    std::fs::remove_file(&position).unwrap();
    let server = common::tcqd::Tcqd::start(args);
    let c = connect(server.port).await;
    exec(&c, &tuples(25, 50)).await;
    exec(&c, &tuples(55, 56)).await;
    wait_sink(&c, "k", 30, |r| r.slide_events >= 3).await;
    let got = consume(&broker, "once", 15).await;
    // Nothing more comes: every message once.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let got_later = consume(&broker, "once", 15).await;
    assert_eq!(got, got_later);
    assert_eq!(flatten(&got), expected(5));
}

/// A Kafka sink and a Kafka source whose broker refuses connections say so within a
/// second or so (`connection refused`, not "no answer within 10 s" as the sink did), stay
/// `retrying`, and once a broker listens there the sink delivers what waited and the
/// source reads the topic.
#[tokio::test]
async fn a_refused_connection_is_said_at_once_and_retried_until_the_broker_listens() {
    let port = free_port();
    let c = connect(common::start_server()).await;
    exec(&c, STREAM).await;
    let addr = format!("127.0.0.1:{port}");
    exec(
        &c,
        &format!(
            "CREATE SINK k AS {QUERY} WITH (connector = 'kafka', topic = 'late', \
             bootstrap_servers = '{addr}'); \
             CREATE STREAM ks (ts timestamp TIMESTAMPCOLUMN, id bigint, origin text) WITH \
             (connector = 'kafka', topic = 'in', bootstrap_servers = '{addr}', \
             timestamp_format = 'epoch_s')"
        ),
    )
    .await;
    exec(&c, &tuples(0, 11)).await;
    let refused = format!("kafka {addr}: connection refused");
    // Well within the 10 s of a request's timeout (the sink said nothing sooner).
    let r = wait_sink(&c, "k", 5, |r| r.errors >= 1).await;
    assert_eq!(r.state, "retrying");
    assert_eq!(r.last_error.as_deref(), Some(refused.as_str()));
    let s = wait_source(&c, "ks", 5, |r| r.last_error.is_some()).await;
    assert_eq!(s.state, "retrying");
    assert_eq!(s.last_error.as_deref(), Some(refused.as_str()));
    let Some(broker) = Broker::start_on(port) else {
        return;
    };
    broker.create_topic("in", 1).await;
    broker.produce("in", 0, &[flight(1), flight(2)]).await;
    let got = consume(&broker, "late", 3).await;
    assert_eq!(flatten(&got), expected(1));
    let r = wait_sink(&c, "k", 30, |r| r.slide_events == 1).await;
    assert_eq!((r.state.as_str(), r.rows), ("running", 3));
    let s = wait_source(&c, "ks", 30, |r| r.tuples == 2).await;
    assert_eq!((s.state.as_str(), s.bad_messages), ("running", 0));
}
