//! Issue 31, MQTT: a stream fed from a real mosquitto at QoS 1: wildcard filters, the
//! topic as a column, exact rows, bad messages counted with their topic, messages kept
//! by the broker while the source is paused, and a broker stopped and started again
//! recovered without loss. Skipped with a message when mosquitto is not installed.

use crate::common::mqtt::Mosquitto;
use crate::common::sources::{fetch, wait_source};
use crate::common::{self, connect, exec};

fn reading(t: i64, temp: f64) -> String {
    format!("{{\"ts\": \"2001-01-01T00:00:{t:02}Z\", \"temp\": {temp}}}")
}

/// The source subscribes once it is connected: publish probes (negative temperatures) on
/// `topic` until one comes through the cursor `probes`. Probes still in flight when the
/// first arrives go to that cursor, never to the one the test checks.
async fn wait_subscribed(broker: &Mosquitto, c: &tokio_postgres::Client, topic: &str) {
    let start = std::time::Instant::now();
    loop {
        broker.publish(&[(topic, reading(0, -99.0))]).await;
        if !fetch(c, "probes", 1, 1).await.is_empty() {
            return;
        }
        assert!(start.elapsed().as_secs() < 20, "no message through");
    }
}

#[tokio::test]
async fn wildcards_topic_column_bad_messages_and_pause() {
    let Some(broker) = Mosquitto::start() else {
        return;
    };
    let port = common::start_server();
    let c = connect(port).await;
    exec(
        &c,
        &format!(
            "CREATE STREAM m (ts timestamptz TIMESTAMPCOLUMN, temp double precision, topic text) \
             WITH (connector = 'mqtt', url = 'tcp://127.0.0.1:{}', topic = 'sensors/+/temp', \
             topic_column = 'topic', format = 'json')",
            broker.port
        ),
    )
    .await;
    wait_source(&c, "m", 20, |r| r.state == "running").await;
    exec(
        &c,
        "SET TimeZone = 'UTC'; BEGIN; \
         DECLARE probes CURSOR FOR SELECT temp FROM m WHERE topic = 'sensors/z/temp'; \
         DECLARE q CURSOR FOR SELECT ts, temp, topic FROM m WHERE topic <> 'sensors/z/temp'",
    )
    .await;
    wait_subscribed(&broker, &c, "sensors/z/temp").await;
    broker
        .publish(&[
            ("sensors/a/temp", reading(1, 20.5)),
            ("sensors/b/temp", reading(2, 21.0)),
            ("sensors/b/humidity", reading(3, 50.0)),
            (
                "sensors/a/temp",
                "{\"ts\": \"2001-01-01T00:00:04Z\", \"temp\": \"hot\"}".into(),
            ),
            ("sensors/c/temp", reading(5, -1.25)),
        ])
        .await;
    let mut rows = fetch(&c, "q", 3, 20).await;
    rows.sort();
    assert_eq!(
        rows,
        common::table(&[
            &["2001-01-01 00:00:01+00", "20.5", "sensors/a/temp"],
            &["2001-01-01 00:00:02+00", "21", "sensors/b/temp"],
            &["2001-01-01 00:00:05+00", "-1.25", "sensors/c/temp"],
        ])
    );
    let r = wait_source(&c, "m", 20, |r| r.bad_messages == 1).await;
    assert_eq!(
        r.last_error.as_deref(),
        Some("topic sensors/a/temp: column \"temp\": invalid input syntax for type double precision: \"hot\"")
    );
    // Paused: the broker keeps what is published meanwhile; resumed, it all arrives.
    exec(&c, "ALTER STREAM m PAUSE").await;
    wait_source(&c, "m", 20, |r| r.state == "paused").await;
    let later: Vec<(&str, String)> = (10..40)
        .map(|i| ("sensors/p/temp", reading(i, i as f64)))
        .collect();
    broker.publish(&later).await;
    assert!(fetch(&c, "q", 1, 1).await.is_empty());
    exec(&c, "ALTER STREAM m RESUME").await;
    let rows = fetch(&c, "q", 30, 20).await;
    let temps: Vec<String> = rows.iter().map(|r| r[1].clone()).collect();
    assert_eq!(temps, (10..40).map(|i| i.to_string()).collect::<Vec<_>>());
    exec(&c, "COMMIT").await;
}

#[tokio::test]
async fn a_broker_stopped_and_restarted_is_recovered_without_loss() {
    let Some(mut broker) = Mosquitto::start() else {
        return;
    };
    let port = common::start_server();
    let c = connect(port).await;
    exec(
        &c,
        &format!(
            "CREATE STREAM r (ts timestamptz TIMESTAMPCOLUMN, temp double precision) \
             WITH (connector = 'mqtt', url = 'tcp://127.0.0.1:{}', topic = 'plant/#')",
            broker.port
        ),
    )
    .await;
    wait_source(&c, "r", 20, |r| r.state == "running").await;
    exec(
        &c,
        "BEGIN; DECLARE probes CURSOR FOR SELECT temp FROM r WHERE temp < 0; \
         DECLARE q CURSOR FOR SELECT temp FROM r WHERE temp >= 0",
    )
    .await;
    wait_subscribed(&broker, &c, "plant/probe").await;
    let first: Vec<(&str, String)> = (0..20).map(|i| ("plant/a", reading(i, i as f64))).collect();
    broker.publish(&first).await;
    let got = fetch(&c, "q", 20, 20).await;
    let mut temps: Vec<i64> = got.iter().map(|r| r[0].parse().unwrap()).collect();
    assert_eq!(temps, (0..20).collect::<Vec<_>>());
    broker.restart_after(|| std::thread::sleep(std::time::Duration::from_millis(500)));
    let second: Vec<(&str, String)> = (20..40)
        .map(|i| ("plant/b/c", reading(i, i as f64)))
        .collect();
    broker.publish(&second).await;
    // At least once: the messages whose acknowledgements the stopped broker had not
    // received yet come again; nothing is lost.
    while !(20..40).all(|i| temps.contains(&i)) {
        let missing = (20..40).filter(|i| !temps.contains(i)).count();
        let more = fetch(&c, "q", missing, 30).await;
        assert!(!more.is_empty(), "lost: {temps:?}");
        temps.extend(more.iter().map(|r| r[0].parse::<i64>().unwrap()));
    }
    let (before, after): (Vec<i64>, Vec<i64>) = temps[20..].iter().partition(|&&t| t < 20);
    assert_eq!(
        after,
        (20..40).collect::<Vec<_>>(),
        "after the restart, in order, once"
    );
    assert!(before.iter().all(|t| (0..20).contains(t)), "{before:?}");
    exec(&c, "COMMIT").await;
}

/// An empty CSV message is one blank line, as COPY reads it: for a stream of several
/// columns a bad message (22P04's "missing data"), counted, never a message of no rows;
/// so is a blank line within a message. The good messages around them arrive whole.
#[tokio::test]
async fn an_empty_csv_message_is_a_bad_message() {
    let Some(broker) = Mosquitto::start() else {
        return;
    };
    let port = common::start_server();
    let c = connect(port).await;
    exec(
        &c,
        &format!(
            "CREATE STREAM e (ts timestamptz TIMESTAMPCOLUMN, temp double precision) \
             WITH (connector = 'mqtt', url = 'tcp://127.0.0.1:{}', topic = 'csv/#', \
             format = 'csv')",
            broker.port
        ),
    )
    .await;
    wait_source(&c, "e", 20, |r| r.state == "running").await;
    exec(
        &c,
        "SET TimeZone = 'UTC'; BEGIN; \
         DECLARE probes CURSOR FOR SELECT temp FROM e WHERE temp < 0; \
         DECLARE q CURSOR FOR SELECT ts, temp FROM e WHERE temp >= 0",
    )
    .await;
    let start = std::time::Instant::now();
    loop {
        broker
            .publish(&[("csv/probe", "2001-01-01T00:00:00Z,-99".to_string())])
            .await;
        if !fetch(&c, "probes", 1, 1).await.is_empty() {
            break;
        }
        assert!(start.elapsed().as_secs() < 20, "no message through");
    }
    let before = wait_source(&c, "e", 20, |_| true).await.bad_messages;
    broker
        .publish(&[
            ("csv/a", "2001-01-01T00:00:01Z,1.5".to_string()),
            ("csv/a", String::new()),
            (
                "csv/a",
                "2001-01-01T00:00:02Z,2\n\n2001-01-01T00:00:03Z,3\n".to_string(),
            ),
            ("csv/a", "\n".to_string()),
            ("csv/a", "2001-01-01T00:00:04Z,4\r\n".to_string()),
        ])
        .await;
    let rows = fetch(&c, "q", 2, 20).await;
    assert_eq!(
        rows,
        common::table(&[
            &["2001-01-01 00:00:01+00", "1.5"],
            &["2001-01-01 00:00:04+00", "4"],
        ])
    );
    let r = wait_source(&c, "e", 20, |r| r.bad_messages == before + 3).await;
    assert!(
        r.last_error
            .as_deref()
            .is_some_and(|e| e.contains("1 fields where the stream takes 2")),
        "{:?}",
        r.last_error
    );
    assert!(
        fetch(&c, "q", 1, 1).await.is_empty(),
        "nothing of the bad messages"
    );
    exec(&c, "COMMIT").await;
}

/// A message longer than the source decodes (16 MiB) is a bad message, counted with its
/// topic and acknowledged, and the source goes on: it used to be over the client's packet
/// limit, which failed the connection before the message could be acknowledged, so the
/// persistent session sent it again on every reconnect and no later message arrived. A
/// JSON message of no object (empty, or blanks) is bad too, not a message of no rows.
#[tokio::test]
async fn an_over_long_or_empty_message_is_bad_and_the_source_goes_on() {
    let Some(broker) = Mosquitto::start() else {
        return;
    };
    let port = common::start_server();
    let c = connect(port).await;
    exec(
        &c,
        &format!(
            "CREATE STREAM big (ts timestamptz TIMESTAMPCOLUMN, temp double precision, note text) \
             WITH (connector = 'mqtt', url = 'tcp://127.0.0.1:{}', topic = 'big/#', \
             format = 'json')",
            broker.port
        ),
    )
    .await;
    wait_source(&c, "big", 20, |r| r.state == "running").await;
    exec(
        &c,
        "SET TimeZone = 'UTC'; BEGIN; \
         DECLARE probes CURSOR FOR SELECT temp FROM big WHERE temp < 0; \
         DECLARE q CURSOR FOR SELECT ts, temp, length(note) FROM big WHERE temp >= 0",
    )
    .await;
    wait_subscribed(&broker, &c, "big/probe").await;
    let note = |n: usize| {
        format!(
            "{{\"ts\": \"2001-01-01T00:00:02Z\", \"temp\": 2, \"note\": \"{}\"}}",
            "x".repeat(n)
        )
    };
    broker
        .publish(&[
            ("big/a", reading(1, 1.0)),
            ("big/a", note(17 << 20)),
            ("big/b", String::new()),
            ("big/b", " \n ".to_string()),
            ("big/a", note(1 << 20)),
            ("big/a", reading(3, 3.0)),
        ])
        .await;
    let rows = fetch(&c, "q", 3, 30).await;
    assert_eq!(
        rows,
        common::table(&[
            &["2001-01-01 00:00:01+00", "1", "NULL"],
            &["2001-01-01 00:00:02+00", "2", "1048576"],
            &["2001-01-01 00:00:03+00", "3", "NULL"],
        ])
    );
    let r = wait_source(&c, "big", 20, |r| r.bad_messages == 3).await;
    assert_eq!(r.state, "running");
    assert_eq!(
        r.last_error.as_deref(),
        Some("topic big/b: not a JSON object: the message is empty")
    );
    exec(&c, "COMMIT").await;
}

/// Two MQTT sources of one broker with one client id would take turns for good (a broker
/// closes a client's connection when another connects with its id), both `retrying` and
/// sharing the session's messages: the second is refused with 42710, whether its id is
/// the first one's default (`tcq-<stream>`) or given to both. Another id, or the same id
/// on another broker, is fine; and the first source keeps reading.
#[tokio::test]
async fn a_client_id_another_source_of_the_broker_uses_is_refused() {
    let Some(broker) = Mosquitto::start() else {
        return;
    };
    let c = connect(common::start_server()).await;
    let url = format!("tcp://127.0.0.1:{}", broker.port);
    let create = |name: &str, extra: &str| {
        format!(
            "CREATE STREAM {name} (ts timestamptz TIMESTAMPCOLUMN, temp double precision) \
             WITH (connector = 'mqtt', url = '{url}', topic = 'clash/{name}', format = 'json'{extra})"
        )
    };
    exec(&c, &create("m1", "")).await;
    exec(&c, &create("m2", ", client_id = 'shared'")).await;
    for (name, id, other) in [("m3", "tcq-m1", "m1"), ("m4", "shared", "m2")] {
        let sql = create(name, &format!(", client_id = '{id}'"));
        let e = c.batch_execute(&sql).await.expect_err(&sql);
        assert_eq!(common::sqlstate(&e), "42710", "{sql}");
        assert_eq!(
            e.as_db_error().map(|d| d.message().to_string()),
            Some(format!(
                "MQTT client id \"{id}\" is already used by the source of stream \"{other}\" \
                 on 127.0.0.1:{}: give this one another client_id",
                broker.port
            ))
        );
    }
    exec(&c, &create("m5", ", client_id = 'tcq-m1-other'")).await;
    exec(
        &c,
        "CREATE STREAM m6 (ts timestamptz TIMESTAMPCOLUMN, temp double precision) WITH \
         (connector = 'mqtt', url = 'tcp://127.0.0.1:1', topic = 'x', client_id = 'tcq-m1')",
    )
    .await;
    exec(&c, "BEGIN; DECLARE probes CURSOR FOR SELECT temp FROM m1").await;
    wait_subscribed(&broker, &c, "clash/m1").await;
    let r = wait_source(&c, "m1", 10, |r| r.messages >= 1).await;
    assert_eq!(r.state, "running");
    exec(&c, "COMMIT").await;
}
