//! Issue 31, Kafka consumer groups: a source with `group_id` commits the offsets it has
//! made durable to the group, as read back by a standard client (confluent-kafka, which
//! does not join the group), and a source with `start = 'group'` starts from them; a group
//! that refuses the commits (it has a member of its own) never stops the source. Against
//! Tansu; skipped with a message when Tansu or confluent-kafka is not installed.

use std::time::{Duration, Instant};

use tcq::engine::Config;

use crate::common::kafka::{flight, Broker};
use crate::common::sources::{resume_and_fetch_ids, wait_source};
use crate::common::{self, connect, exec};

const COLUMNS: &str = "ts timestamp TIMESTAMPCOLUMN, id bigint, origin text";

/// Flight `id` as a JSON message.
/// Whether confluent-kafka imports; skipped with a message when it does not.
fn confluent_kafka() -> bool {
    let ok = std::process::Command::new("python3")
        .args(["-c", "import confluent_kafka"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        common::skip(
            "confluent-kafka is not installed (pip install confluent-kafka; scripts/test.sh does)",
        );
    }
    ok
}

/// Run a Python `script` with `args` (`python3 -c`), asserting it succeeds; its stdout.
async fn python(script: &'static str, args: Vec<String>) -> Vec<u8> {
    let out = tokio::task::spawn_blocking(move || {
        std::process::Command::new("python3")
            .args(["-c", script])
            .args(args)
            .output()
            .expect("python3")
    })
    .await
    .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

/// The offsets `group` has committed for partitions 0 and 1 of `topic`, read with
/// confluent-kafka's `Consumer.committed` (OffsetFetch through the group's coordinator);
/// -1001 (librdkafka's OFFSET_INVALID) for a partition without one.
async fn committed(bootstrap: &str, group: &str, topic: &str) -> Vec<i64> {
    const SCRIPT: &str = r#"
import json, sys
from confluent_kafka import Consumer, TopicPartition
bootstrap, group, topic = sys.argv[1:4]
c = Consumer({"bootstrap.servers": bootstrap, "group.id": group, "enable.auto.commit": False})
tps = c.committed([TopicPartition(topic, 0), TopicPartition(topic, 1)], timeout=10)
print(json.dumps([tp.offset for tp in tps]))
c.close()
"#;
    let out = python(SCRIPT, vec![bootstrap.into(), group.into(), topic.into()]).await;
    serde_json::from_slice(&out).expect("a JSON list of offsets")
}

/// Poll the group's committed offsets until they are `want` (at most `secs` seconds).
async fn wait_committed(bootstrap: &str, group: &str, topic: &str, want: &[i64], secs: u64) {
    let start = Instant::now();
    loop {
        let got = committed(bootstrap, group, topic).await;
        if got == want {
            return;
        }
        assert!(
            start.elapsed() < Duration::from_secs(secs),
            "group {group} committed {got:?}, not {want:?}, after {secs} s"
        );
        tokio::time::sleep(Duration::from_millis(300)).await;
    }
}

#[tokio::test]
async fn durable_offsets_are_committed_and_start_group_resumes_from_them() {
    let Some(broker) = Broker::start() else {
        return;
    };
    if !confluent_kafka() {
        return;
    }
    let bootstrap = broker.bootstrap();
    broker.create_topic("g", 2).await;
    broker.produce_split("g", 0, 30).await;
    assert_eq!(committed(&bootstrap, "tcq-a", "g").await, [-1001, -1001]);

    // An archived stream: its offsets are committed once in the log.
    let data = common::data_dir();
    let c = connect(common::start_server_on(Config::default(), data.path())).await;
    exec(
        &c,
        &format!(
            "CREATE STREAM a ({COLUMNS}) TYPE ARCHIVED WITH (connector = 'kafka', topic = 'g', \
             bootstrap_servers = '{bootstrap}', timestamp_format = 'epoch_s', group_id = 'tcq-a')"
        ),
    )
    .await;
    let r = wait_source(&c, "a", 30, |r| r.messages == 30 && r.lag == Some(0)).await;
    assert_eq!(r.bad_messages, 0);
    wait_committed(&bootstrap, "tcq-a", "g", &[15, 15], 30).await;

    // Paused, it commits nothing more; what comes meanwhile is read by a new stream that
    // starts from the group's offsets (unarchived: committed once its position is saved).
    exec(&c, "ALTER STREAM a PAUSE").await;
    wait_source(&c, "a", 10, |r| r.state == "paused").await;
    broker.produce_split("g", 30, 35).await;
    exec(
        &c,
        &format!(
            "CREATE STREAM b ({COLUMNS}) WITH (connector = 'kafka', topic = 'g', \
             bootstrap_servers = '{bootstrap}', timestamp_format = 'epoch_s', \
             group_id = 'tcq-a', start = 'group', paused = true)"
        ),
    )
    .await;
    let mut ids = resume_and_fetch_ids(&c, "b", 5, 30).await;
    ids.sort_unstable();
    assert_eq!(ids, [30, 31, 32, 33, 34], "only what came after the commit");
    let r = wait_source(&c, "b", 20, |r| r.lag == Some(0)).await;
    assert_eq!((r.messages, r.bad_messages), (5, 0));
    exec(&c, "COMMIT").await;
    wait_committed(&bootstrap, "tcq-a", "g", &[18, 17], 30).await;
    let commit_errors: i64 = c
        .query_one(
            "SELECT sum(commit_errors)::bigint FROM tcq_sources WHERE stream IN ('a', 'b')",
            &[],
        )
        .await
        .unwrap()
        .get(0);
    assert_eq!(commit_errors, 0);
}

#[tokio::test]
async fn start_group_needs_a_group_id() {
    let c = connect(common::start_server()).await;
    let e = c
        .batch_execute(&format!(
            "CREATE STREAM s ({COLUMNS}) WITH (connector = 'kafka', topic = 't', \
             bootstrap_servers = '127.0.0.1:9', start = 'group')"
        ))
        .await
        .unwrap_err();
    assert_eq!(common::sqlstate(&e), "22023");
    let message = e.as_db_error().unwrap().message().to_string();
    assert_eq!(
        message,
        "start = 'group' needs group_id: the consumer group whose offsets to start from"
    );
    let e = c
        .batch_execute(&format!(
            "CREATE STREAM s ({COLUMNS}) WITH (connector = 'kafka', topic = 't', \
             bootstrap_servers = '127.0.0.1:9', group_id = '')"
        ))
        .await
        .unwrap_err();
    assert_eq!(common::sqlstate(&e), "22023");
}

/// Commit `offsets` (partitions 0, 1, ...) of `topic` to `group` with confluent-kafka, as
/// another consumer of the group would.
async fn commit_with_confluent_kafka(bootstrap: &str, group: &str, topic: &str, offsets: &[i64]) {
    const SCRIPT: &str = r#"
import json, sys
from confluent_kafka import Consumer, TopicPartition
bootstrap, group, topic, offsets = sys.argv[1], sys.argv[2], sys.argv[3], json.loads(sys.argv[4])
c = Consumer({"bootstrap.servers": bootstrap, "group.id": group, "enable.auto.commit": False})
c.commit(offsets=[TopicPartition(topic, p, o) for p, o in enumerate(offsets)], asynchronous=False)
c.close()
"#;
    let offsets = serde_json::to_string(offsets).unwrap();
    python(
        SCRIPT,
        vec![bootstrap.into(), group.into(), topic.into(), offsets],
    )
    .await;
}

/// docs/connectors.md's consumer-group example, run as written (the broker's address put
/// in): another consumer of the group committed offsets 1 and 2, so the stream reads only
/// what is after them, and commits its own progress to the group.
#[tokio::test]
async fn the_consumer_group_example() {
    let Some(broker) = Broker::start() else {
        return;
    };
    if !confluent_kafka() {
        return;
    }
    let bootstrap = broker.bootstrap();
    broker.create_topic("departures", 2).await;
    let m = |origin: &str, delay: i64| {
        format!("{{\"ts\": \"2001-01-01 00:00:00\", \"delay\": {delay}, \"origin\": \"{origin}\"}}")
    };
    broker
        .produce("departures", 0, &[m("SFO", 1), m("SFO", 2), m("SFO", 3)])
        .await;
    broker
        .produce("departures", 1, &[m("JFK", 4), m("JFK", 5), m("JFK", 6)])
        .await;
    commit_with_confluent_kafka(&bootstrap, "tcq-departures", "departures", &[1, 2]).await;
    let page = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/connectors.md"))
        .unwrap();
    let sql = page
        .split("```sql\n")
        .map(|b| b.split("\n```").next().unwrap())
        .find(|b| b.contains("start = 'group'"))
        .expect("the consumer-group example in docs/connectors.md")
        .replace("127.0.0.1:9092", &bootstrap);
    let c = connect(common::start_server()).await;
    exec(&c, &sql).await;
    // SFO 2 and 3, JFK 6: the messages after the group's offsets, and no more.
    let r = wait_source(&c, "departures", 30, |r| r.lag == Some(0) && r.messages > 0).await;
    assert_eq!((r.messages, r.tuples, r.bad_messages), (3, 3, 0));
    wait_committed(&bootstrap, "tcq-departures", "departures", &[3, 3], 30).await;
}

/// A confluent-kafka consumer that has joined `group` (subscribed to `topic`, polling)
/// until dropped. With a member in it, the group refuses standalone commits.
struct Member(std::process::Child);

impl Member {
    /// Join; returns once a standalone commit to the group is refused (at most 60 s).
    fn join(bootstrap: &str, group: &str, topic: &str) -> Member {
        use std::io::BufRead;
        const SCRIPT: &str = r#"
import sys, time
from confluent_kafka import Consumer, KafkaException, TopicPartition
bootstrap, group, topic = sys.argv[1:4]
member = Consumer({"bootstrap.servers": bootstrap, "group.id": group, "enable.auto.commit": False})
member.subscribe([topic])
other = Consumer({"bootstrap.servers": bootstrap, "group.id": group, "enable.auto.commit": False})
refused, start = False, time.time()
while True:
    member.poll(0.5)
    if not refused:
        try:
            other.commit(offsets=[TopicPartition(topic, 0, 0)], asynchronous=False)
        except KafkaException:
            refused = True
            print("refused", flush=True)
        if not refused and time.time() - start > 60:
            print("never refused", flush=True)
            sys.exit(1)
"#;
        let mut child = std::process::Command::new("python3")
            .args(["-c", SCRIPT, bootstrap, group, topic])
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("python3");
        let out = child.stdout.take().unwrap();
        let line = std::io::BufReader::new(out).lines().next();
        let member = Member(child);
        let line = line.and_then(Result::ok).unwrap_or_default();
        assert_eq!(
            line, "refused",
            "the group never refused a standalone commit"
        );
        member
    }
}

impl Drop for Member {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A group with a member of its own refuses tcq's standalone commits: each refusal is
/// counted and shown as the last error, and the source goes on consuming.
#[tokio::test]
async fn a_refused_commit_is_counted_and_the_source_goes_on() {
    let Some(broker) = Broker::start() else {
        return;
    };
    if !confluent_kafka() {
        return;
    }
    let bootstrap = broker.bootstrap();
    broker.create_topic("busy", 2).await;
    let b = bootstrap.clone();
    let member = tokio::task::spawn_blocking(move || Member::join(&b, "busy", "busy"))
        .await
        .unwrap();
    broker
        .produce("busy", 0, &(0..10).map(flight).collect::<Vec<_>>())
        .await;
    broker
        .produce("busy", 1, &(10..20).map(flight).collect::<Vec<_>>())
        .await;
    let c = connect(common::start_server()).await;
    exec(
        &c,
        &format!(
            "CREATE STREAM s ({COLUMNS}) WITH (connector = 'kafka', topic = 'busy', \
             bootstrap_servers = '{bootstrap}', timestamp_format = 'epoch_s', group_id = 'busy')"
        ),
    )
    .await;
    let r = wait_source(&c, "s", 30, |r| {
        r.messages == 20 && r.lag == Some(0) && r.last_error.is_some()
    })
    .await;
    assert_eq!(r.state, "running");
    let error = r.last_error.unwrap();
    assert!(
        error.starts_with("committing offsets to consumer group \"busy\": ")
            && error.contains("OffsetCommit of partition")
            && error.contains("UnknownMemberId (25)"),
        "{error}"
    );
    let commit_errors: i64 = c
        .query_one(
            "SELECT commit_errors FROM tcq_sources WHERE stream = 's'",
            &[],
        )
        .await
        .unwrap()
        .get(0);
    assert!(commit_errors >= 1, "{commit_errors}");
    // Still consuming: new messages arrive while the commits keep failing.
    broker.produce("busy", 1, &[flight(20)]).await;
    wait_source(&c, "s", 20, |r| r.messages == 21).await;
    assert_eq!(committed(&bootstrap, "busy", "busy").await, [-1001, -1001]);
    drop(member);
}
